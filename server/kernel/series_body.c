/* series_body.c - one message's body: in-body headers, message, notes,
 * and the diff scanner (series_body.h). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "wrap/mbox.h"
#include "kernel/series_body.h"
#include "kernel/series_line.h"

void series_body_release(struct body *b)
{
	free(b->from);
	free(b->date);
	free(b->subject);
	strv_free(b->files, b->nfiles);
	free(b->corrupt);
	memset(b, 0, sizeof(*b));
}

/* "From <40 hex> Mon Sep 17 00:00:00 2001": git format-patch's From_ line. */
static bool is_format_patch_from(const struct line *l)
{
	if (l->len < 45 || !starts(l->p, l->len, "From "))
		return false;
	for (size_t i = 5; i < 45; i++)
		if (!isxdigit((unsigned char)l->p[i]))
			return false;
	return l->p[45] == ' ' && mbox_is_from_line(l->p, l->len);
}

/* Where the message ends (git mailinfo's patchbreak()): "---" followed by
 * nothing but whitespace, "--- " followed by a name, "diff -", "Index: ". */
static bool is_patchbreak(const struct line *l)
{
	if (starts(l->p, l->len, "---")) {
		if (l->len > 4 && l->p[3] == ' ' && !isspace((unsigned char)l->p[4]))
			return true;
		for (size_t i = 3; i < l->len; i++)
			if (!isspace((unsigned char)l->p[i]))
				return false;
		return true;
	}
	return starts(l->p, l->len, "diff -") || starts(l->p, l->len, "Index: ");
}

static bool is_diff_start(const char *t, size_t len, const struct line *l)
{
	struct line nx;

	if (starts(l->p, l->len, "diff --git "))
		return true;
	if (!line_at(&nx, t, len, l->next))
		return false;
	if (starts(l->p, l->len, "--- ") && starts(nx.p, nx.len, "+++ "))
		return true;
	return starts(l->p, l->len, "Index: ") && starts(nx.p, nx.len, "====");
}

/* Read "Key: value" with continuation lines starting at l; returns the
 * unfolded value and moves *off past it. */
static char *header_value(const char *t, size_t len, const struct line *l, size_t klen,
			  size_t *off)
{
	struct buf v = BUF_INIT;
	struct line c;

	buf_append(&v, l->p + klen, l->len - klen);
	*off = l->next;
	while (line_at(&c, t, len, *off) && c.len && (c.p[0] == ' ' || c.p[0] == '\t')) {
		buf_append(&v, c.p, c.len);
		*off = c.next;
	}
	char *r = trim_dup(buf_str(&v), v.len);
	buf_release(&v);
	return r;
}

/* In-body headers at the start of a body (git mailinfo): an optional
 * format-patch From_ line, then From:/Date:/Subject: lines. Returns the
 * offset after them (and the blank lines that follow). */
size_t series_inbody_headers(struct body *b, const char *t, size_t len, size_t off)
{
	struct line l;
	bool any = false;

	while (line_at(&l, t, len, off) && blank(&l))
		off = l.next;
	if (line_at(&l, t, len, off) && is_format_patch_from(&l)) {
		off = l.next;
		any = true;
	}
	while (line_at(&l, t, len, off)) {
		char **slot = NULL;
		size_t klen = 0;
		if (starts_ci(l.p, l.len, "From:"))
			slot = &b->from, klen = 5;
		else if (starts_ci(l.p, l.len, "Date:"))
			slot = &b->date, klen = 5;
		else if (starts_ci(l.p, l.len, "Subject:"))
			slot = &b->subject, klen = 8;
		if (!slot)
			break;
		free(*slot);
		*slot = header_value(t, len, &l, klen, &off);
		any = true;
	}
	if (any)
		while (line_at(&l, t, len, off) && blank(&l))
			off = l.next;
	return off;
}

/* "a/foo/bar.c" → "foo/bar.c" (-p1); a trailing tab and timestamp go. */
static char *strip_p1(const char *s, size_t n)
{
	const char *tab = memchr(s, '\t', n);
	const char *sl;

	if (tab)
		n = (size_t)(tab - s);
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	sl = memchr(s, '/', n);
	if (sl) {
		n -= (size_t)(sl + 1 - s);
		s = sl + 1;
	}
	return xstrndup(s, n);
}

/* "diff --git a/X b/Y": the b side. Prefer the split where both sides match. */
static char *git_b_name(const char *s, size_t n)
{
	const char *best = NULL;

	for (size_t i = 0; i + 3 <= n; i++) {
		if (memcmp(s + i, " b/", 3))
			continue;
		if (!best)
			best = s + i;
		size_t alen = i, blen = n - i - 1;
		if (alen >= 2 && alen == blen && !memcmp(s + 2, s + i + 3, alen - 2))
			return xstrndup(s + i + 3, n - i - 3);
	}
	if (best)
		return xstrndup(best + 3, n - (size_t)(best + 3 - s));
	return NULL;
}

static void file_add(struct body *b, char *name)
{
	if (!name)
		return;
	if (!*name || strv_has(b->files, b->nfiles, name))
		free(name);
	else
		strv_push(&b->files, &b->nfiles, name);
}

static const char *const diff_header_prefixes[] = {
	"diff ", "index ", "--- ", "+++ ", "old mode ", "new mode ", "deleted file mode ",
	"new file mode ", "similarity index ", "dissimilarity index ", "rename from ",
	"rename to ", "copy from ", "copy to ", "Index: ", "====", "Binary files ",
	"Only in ", "\\ ", NULL,
};

/* The first reason wins; later ones are consequences of it. */
static void set_corrupt(struct body *b, char *why)
{
	if (b->corrupt)
		free(why);
	else
		b->corrupt = why;
}

/* "diff --git a/x b/x index 5877974ece92..aac91466279f 100644": a mailer
 * joined two lines (Outlook does; see the C5 test mail). */
static bool joined_index_line(const char *p, size_t n)
{
	for (size_t i = 0; i + 8 < n; i++) {
		if (memcmp(p + i, " index ", 7))
			continue;
		size_t j = i + 7, h = 0;
		while (j < n && isxdigit((unsigned char)p[j]))
			j++, h++;
		if (h >= 4 && j + 1 < n && p[j] == '.' && p[j + 1] == '.')
			return true;
	}
	return false;
}

/* One "a[,b]" of a hunk header at *p (before end): b in *count (left as it
 * is without one); *p moves past it. false when it is no such range. */
static bool hunk_range(const char **p, const char *end, long *count)
{
	char *e;

	strtol(*p, &e, 10);
	if (e == *p || e > end)
		return false;
	*p = e;
	if (**p == ',') {
		*count = strtol(*p + 1, &e, 10);
		if (e == *p + 1 || e > end)
			return false;
		*p = e;
	}
	return true;
}

/* Parse "@@ -a[,b] +c[,d] @@" counts. */
static bool hunk_counts(const struct line *l, long *old_n, long *new_n)
{
	const char *p = l->p + 4, *end = l->p + l->len;

	*old_n = *new_n = 1;
	if (!hunk_range(&p, end, old_n))
		return false;
	if (p + 2 > end || p[0] != ' ' || p[1] != '+')
		return false;
	p += 2;
	if (!hunk_range(&p, end, new_n))
		return false;
	return p + 3 <= end && !memcmp(p, " @@", 3) && *old_n >= 0 && *new_n >= 0;
}

/* The diff scanner's state: where the diff ends so far, the line's number
 * in the diff, the lines the current hunk still has on each side, and the
 * current file ("diff --git" b side, else "+++ "), "--- " name and hunk
 * header. */
struct diff_scan {
	struct body *b;
	size_t end, lineno;
	long old_n, new_n;
	bool in_hunk, binary, git_block;
	char *cur, *minus, *hunk_hdr;
};

/* What a line was to the scanner: taken (go on), damage (stop: the diff
 * runs to the end of the text), or none of its lines. */
enum scan_step { SCAN_NEXT, SCAN_STOP, SCAN_OTHER };

/* A line inside a hunk, counted against the hunk's header. */
static enum scan_step scan_hunk_line(struct diff_scan *s, const struct line *l)
{
	char c = l->len ? l->p[0] : ' ';  /* an empty line: empty context */

	if (c == ' ')
		s->old_n--, s->new_n--;
	else if (c == '-')
		s->old_n--;
	else if (c == '+')
		s->new_n--;
	else if (c != '\\') {
		set_corrupt(s->b, xasprintf("corrupt patch at diff line %zu: '%.*s' in hunk '%s' "
					  "is not a context, '+' or '-' line "
					  "(whitespace-damaged by the mailer?)",
					  s->lineno, (int)(l->len > 40 ? 40 : l->len), l->p,
					  s->hunk_hdr ? s->hunk_hdr : ""));
		return SCAN_STOP;
	}
	s->end = l->next;
	if (s->old_n <= 0 && s->new_n <= 0)
		s->in_hunk = false;
	if (s->old_n < 0 || s->new_n < 0) {
		set_corrupt(s->b, xasprintf("corrupt patch at diff line %zu: hunk '%s' has "
					  "more lines than its header says",
					  s->lineno, s->hunk_hdr ? s->hunk_hdr : ""));
		return SCAN_STOP;
	}
	return SCAN_NEXT;
}

/* "@@ -a,b +c,d @@": a hunk starts. */
static enum scan_step scan_hunk_header(struct diff_scan *s, const struct line *l)
{
	if (!hunk_counts(l, &s->old_n, &s->new_n)) {
		set_corrupt(s->b, xasprintf("corrupt patch at diff line %zu: bad hunk header '%.*s'",
					  s->lineno, (int)(l->len > 60 ? 60 : l->len), l->p));
		return SCAN_STOP;
	}
	free(s->hunk_hdr);
	s->hunk_hdr = xstrndup(l->p, l->len > 80 ? 80 : l->len);
	s->in_hunk = s->old_n > 0 || s->new_n > 0;
	s->binary = false;
	s->end = l->next;
	return SCAN_NEXT;
}

/* "+++ b/x": the new side's name is the file's (the "--- " one when the
 * file is deleted); outside a "diff --git" block it starts a file. */
static void scan_plus_line(struct diff_scan *s, const struct line *l)
{
	char *plus = strip_p1(l->p + 4, l->len - 4);

	if (!s->git_block && s->cur) {
		file_add(s->b, s->cur);
		s->cur = NULL;
	}
	if (!strncmp(l->p + 4, "/dev/null", 9)) {
		free(plus);
		plus = s->minus;
		s->minus = NULL;
	}
	if (plus) {
		free(s->cur);
		s->cur = plus;
	}
}

/* A line of a file's header ("diff --git", "--- ", "+++ ", "rename to ",
 * "copy to ", "GIT binary patch") or a hunk's header; SCAN_OTHER when it
 * is none of these. */
static enum scan_step scan_file_line(struct diff_scan *s, const struct line *l)
{
	if (starts(l->p, l->len, "@@ -"))
		return scan_hunk_header(s, l);
	if (starts(l->p, l->len, "diff --git ")) {
		if (joined_index_line(l->p, l->len))
			set_corrupt(s->b, xasprintf("corrupt patch at diff line %zu: its 'index' line is "
						  "joined onto the 'diff --git' line "
						  "(whitespace-damaged by the mailer)", s->lineno));
		if (s->cur)
			file_add(s->b, s->cur);
		s->cur = git_b_name(l->p + 11, l->len - 11);
		s->git_block = true;
		s->binary = false;
	} else if (starts(l->p, l->len, "--- ")) {
		free(s->minus);
		s->minus = strip_p1(l->p + 4, l->len - 4);
	} else if (starts(l->p, l->len, "+++ ")) {
		scan_plus_line(s, l);
	} else if (starts(l->p, l->len, "rename to ") || starts(l->p, l->len, "copy to ")) {
		size_t k = l->p[0] == 'r' ? 10 : 8;
		free(s->cur);
		s->cur = xstrndup(l->p + k, l->len - k);
	} else if (starts(l->p, l->len, "GIT binary patch")) {
		s->binary = true;
	} else {
		return SCAN_OTHER;
	}
	s->end = l->next;
	return SCAN_NEXT;
}

/*
 * Walk the diff from b->diff_off, hunk by hunk (so a "-- " inside a hunk is
 * a removed line, and one after the last hunk is the signature), collecting
 * the files and noticing hunks that do not add up (whitespace damage): a
 * small state machine (file header, hunk, after the last hunk) whose
 * states share struct diff_scan.
 */
static void scan_diff(struct body *b, const char *t, size_t len)
{
	struct diff_scan s = { .b = b, .end = b->diff_off };
	struct line l;
	size_t off = b->diff_off;

	while (line_at(&l, t, len, off)) {
		enum scan_step step;

		s.lineno++;
		off = l.next;
		step = s.in_hunk ? scan_hunk_line(&s, &l) : scan_file_line(&s, &l);
		if (step == SCAN_STOP) {
			s.end = len;
			break;
		}
		if (step == SCAN_NEXT)
			continue;
		/* the mail signature ends the diff */
		if ((l.len == 3 && !memcmp(l.p, "-- ", 3)) || (l.len == 2 && !memcmp(l.p, "--", 2)))
			break;
		if (s.binary) {
			if (l.len)
				s.end = l.next;
			continue;
		}
		bool hdr = false;
		for (const char *const *p = diff_header_prefixes; *p && !hdr; p++)
			hdr = starts(l.p, l.len, *p);
		if (hdr) {
			s.end = l.next;
			continue;
		}
		if (l.len == 0)
			continue;
		/* prose after the diff (b4's "base-commit:", "Best regards") */
		break;
	}
	if (s.in_hunk)
		set_corrupt(b, xasprintf("corrupt patch: hunk '%s' is truncated (%ld old and %ld new "
				       "lines missing)", s.hunk_hdr ? s.hunk_hdr : "",
				       s.old_n > 0 ? s.old_n : 0, s.new_n > 0 ? s.new_n : 0));
	if (s.cur)
		file_add(b, s.cur);
	free(s.minus);
	free(s.hunk_hdr);
	b->diff_end = s.end;
	b->tail_off = s.end;
}

/* Split a body (from off) into message, notes and diff. */
void series_body_split(struct body *b, const char *t, size_t len, size_t off)
{
	struct line l;
	bool broke = false;

	b->msg_off = b->msg_end = off;
	b->notes_off = b->notes_end = b->diff_off = b->diff_end = b->tail_off = len;
	while (line_at(&l, t, len, off)) {
		if (!broke && is_patchbreak(&l)) {
			broke = true;
			b->msg_end = l.off;
			b->notes_off = is_diff_start(t, len, &l) ? l.off : l.next;
		}
		if (broke && is_diff_start(t, len, &l)) {
			b->notes_end = l.off;
			b->diff_off = l.off;
			scan_diff(b, t, len);
			return;
		}
		off = l.next;
	}
	if (!broke)
		b->msg_end = len;
	else
		b->notes_end = len;
}

/* Does an unquoted diff start anywhere in this text? */
bool series_has_diff(const char *t, size_t len)
{
	struct line l;

	for (size_t off = 0; line_at(&l, t, len, off); off = l.next)
		if (is_diff_start(t, len, &l))
			return true;
	return false;
}

/* Offset of an embedded format-patch ("From <sha> Mon Sep 17 …" then
 * headers) inside [a, b), or (size_t)-1. */
size_t series_embedded_format_patch(const char *t, size_t a, size_t b)
{
	struct line l, nx;

	for (size_t off = a; line_at(&l, t, b, off); off = l.next)
		if (is_format_patch_from(&l) && line_at(&nx, t, b, l.next) &&
		    (starts_ci(nx.p, nx.len, "From:") || starts_ci(nx.p, nx.len, "Subject:") ||
		     starts_ci(nx.p, nx.len, "Date:")))
			return l.off;
	return (size_t)-1;
}
