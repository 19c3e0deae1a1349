/* series.c - patch series from mail (see series.h): what git mailinfo does
 * to one message (subject tags, in-body headers, the '---' split, the diff,
 * trailers) and what b4 does to a thread (cover letter, k/M order, vN).
 */
#define LOG_MODULE "series"
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "wrap/mbox.h"
#include "kernel/lkp_report.h"
#include "kernel/series.h"

/* ---- small string helpers ------------------------------------------- */

static bool starts(const char *s, size_t n, const char *pfx)
{
	size_t k = strlen(pfx);
	return n >= k && !memcmp(s, pfx, k);
}

static bool starts_ci(const char *s, size_t n, const char *pfx)
{
	size_t k = strlen(pfx);
	return n >= k && !strncasecmp(s, pfx, k);
}

/* Collapse whitespace runs to one space, trim both ends. */
static char *collapse_ws(const char *s)
{
	char *r = xmalloc(strlen(s) + 1), *o = r;
	bool sp = false;

	for (; *s; s++) {
		if (isspace((unsigned char)*s)) {
			sp = o != r;
			continue;
		}
		if (sp)
			*o++ = ' ';
		sp = false;
		*o++ = *s;
	}
	*o = '\0';
	return r;
}

static char *trim_dup(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return xstrndup(s, n);
}

static void strv_push(char ***v, size_t *n, char *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = s;
}

static bool strv_has(char **v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

static void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

struct line {
	const char *p;
	size_t len;     /* without '\n' */
	size_t off;     /* offset of the line */
	size_t next;    /* offset of the next line */
};

static bool line_at(struct line *l, const char *t, size_t len, size_t off)
{
	if (off >= len)
		return false;
	const char *nl = memchr(t + off, '\n', len - off);
	l->p = t + off;
	l->off = off;
	l->len = nl ? (size_t)(nl - l->p) : len - off;
	l->next = nl ? off + l->len + 1 : len;
	return true;
}

static bool blank(const struct line *l)
{
	for (size_t i = 0; i < l->len; i++)
		if (!isspace((unsigned char)l->p[i]))
			return false;
	return true;
}

/* ---- subject tags ----------------------------------------------------- */

struct tags {
	int k, m;               /* -1 when absent */
	int version;            /* 0 when absent */
	bool rfc, patch_tag, reply;
	char *extra;            /* other tags, space separated */
	char *title;            /* subject without prefixes, collapsed */
};

static void tags_release(struct tags *t)
{
	free(t->extra);
	free(t->title);
}

static bool all_digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

static int small_int(const char *s, size_t n)
{
	int v = 0;

	for (size_t i = 0; i < n && v < 100000; i++)
		v = v * 10 + (s[i] - '0');
	return v;
}

/* One token of a [...] group. Returns true when it is a patch tag. */
static bool tag_token(struct tags *t, const char *s, size_t n, struct buf *extra)
{
	const char *slash = memchr(s, '/', n);

	if (n == 5 && !strncasecmp(s, "PATCH", 5))
		return t->patch_tag = true;
	if (n > 5 && !strncasecmp(s, "PATCH", 5)) {   /* PATCHv2, PATCH-v2 */
		size_t i = 5 + (s[5] == '-');
		if (i < n && (s[i] == 'v' || s[i] == 'V') && all_digits(s + i + 1, n - i - 1)) {
			t->version = small_int(s + i + 1, n - i - 1);
			return t->patch_tag = true;
		}
	}
	if (n == 3 && !strncasecmp(s, "RFC", 3))
		return t->rfc = true;
	size_t i = s[0] == '-';
	if (n > i + 1 && (s[i] == 'v' || s[i] == 'V') && all_digits(s + i + 1, n - i - 1)) {
		t->version = small_int(s + i + 1, n - i - 1);
		return true;
	}
	if (slash && all_digits(s, (size_t)(slash - s)) &&
	    all_digits(slash + 1, n - (size_t)(slash - s) - 1)) {
		t->k = small_int(s, (size_t)(slash - s));
		t->m = small_int(slash + 1, n - (size_t)(slash - s) - 1);
		return true;
	}
	if (extra->len)
		buf_puts(extra, " ");
	buf_append(extra, s, n);
	return false;
}

/* Parse "Re: [PATCH net-next v3 2/5] foo: bar" (git mailinfo strips every
 * leading [...] group and Re:; we read the tags out of them first). */
static void tags_parse(struct tags *t, const char *subject)
{
	struct buf extra = BUF_INIT;
	const char *s = subject;

	memset(t, 0, sizeof(*t));
	t->k = t->m = -1;
	for (;;) {
		while (isspace((unsigned char)*s))
			s++;
		if (!strncasecmp(s, "re:", 3) || !strncasecmp(s, "aw:", 3)) {
			/* a reply only when nothing but other prefixes came first */
			t->reply = true;
			s += 3;
			continue;
		}
		if (!strncasecmp(s, "fwd:", 4)) {
			s += 4;
			continue;
		}
		if (*s != '[')
			break;
		const char *end = strchr(s, ']');
		if (!end)
			break;
		struct buf grp = BUF_INIT;
		const char *p = s + 1;
		while (p < end) {
			while (p < end && (isspace((unsigned char)*p) || *p == ','))
				p++;
			const char *q = p;
			while (q < end && !isspace((unsigned char)*q) && *q != ',')
				q++;
			if (q > p)
				tag_token(t, p, (size_t)(q - p), &grp);
			p = q;
		}
		if (grp.len) {
			if (extra.len)
				buf_puts(&extra, " ");
			buf_puts(&extra, grp.ptr);
		}
		buf_release(&grp);
		s = end + 1;
	}
	if (t->k >= 0 || t->version || t->rfc)
		t->patch_tag = true;
	t->extra = buf_detach(&extra);
	t->title = collapse_ws(s);
}

/* ---- one message's body: in-body headers, message, notes, diff ------- */

struct body {
	char *from;             /* in-body From: value, raw; NULL if none */
	char *date;             /* in-body Date: */
	char *subject;          /* in-body Subject: */
	size_t msg_off, msg_end;     /* commit message body (after headers) */
	size_t notes_off, notes_end; /* after '---' up to the diff */
	size_t diff_off, diff_end;   /* the diff (diff_off == diff_end: none) */
	size_t tail_off;             /* after the diff (signature, b4 trailers) */
	char **files; size_t nfiles;
	char *corrupt;
};

static void body_release(struct body *b)
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
static size_t inbody_headers(struct body *b, const char *t, size_t len, size_t off)
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

/* Parse "@@ -a[,b] +c[,d] @@" counts. */
static bool hunk_counts(const struct line *l, long *old_n, long *new_n)
{
	const char *p = l->p + 4, *end = l->p + l->len;
	char *e;

	*old_n = *new_n = 1;
	strtol(p, &e, 10);
	if (e == p || e > end)
		return false;
	p = e;
	if (*p == ',') {
		*old_n = strtol(p + 1, &e, 10);
		if (e == p + 1 || e > end)
			return false;
		p = e;
	}
	if (p + 2 > end || p[0] != ' ' || p[1] != '+')
		return false;
	p += 2;
	strtol(p, &e, 10);
	if (e == p || e > end)
		return false;
	p = e;
	if (*p == ',') {
		*new_n = strtol(p + 1, &e, 10);
		if (e == p + 1 || e > end)
			return false;
		p = e;
	}
	return p + 3 <= end && !memcmp(p, " @@", 3) && *old_n >= 0 && *new_n >= 0;
}

/*
 * Walk the diff from b->diff_off, hunk by hunk (so a "-- " inside a hunk is
 * a removed line, and one after the last hunk is the signature), collecting
 * the files and noticing hunks that do not add up (whitespace damage).
 */
/* reason: one pass over the diff as a small state machine (file header, hunk, after the
 * last hunk); its states share the position, the hunk counts and the current file. */
static void scan_diff(struct body *b, const char *t, size_t len)
{
	struct line l;
	size_t off = b->diff_off, end = b->diff_off, lineno = 0;
	long old_n = 0, new_n = 0;
	bool in_hunk = false, binary = false, git_block = false;
	char *cur = NULL, *minus = NULL, *hunk_hdr = NULL;

	while (line_at(&l, t, len, off)) {
		lineno++;
		off = l.next;
		if (in_hunk) {
			char c = l.len ? l.p[0] : ' ';  /* an empty line: empty context */
			if (c == ' ')
				old_n--, new_n--;
			else if (c == '-')
				old_n--;
			else if (c == '+')
				new_n--;
			else if (c != '\\') {
				set_corrupt(b, xasprintf("corrupt patch at diff line %zu: '%.*s' in hunk '%s' "
						       "is not a context, '+' or '-' line "
						       "(whitespace-damaged by the mailer?)",
						       lineno, (int)(l.len > 40 ? 40 : l.len), l.p,
						       hunk_hdr ? hunk_hdr : ""));
				end = len;
				break;
			}
			end = l.next;
			if (old_n <= 0 && new_n <= 0)
				in_hunk = false;
			if (old_n < 0 || new_n < 0) {
				set_corrupt(b, xasprintf("corrupt patch at diff line %zu: hunk '%s' has "
						       "more lines than its header says",
						       lineno, hunk_hdr ? hunk_hdr : ""));
				end = len;
				break;
			}
			continue;
		}
		if (starts(l.p, l.len, "@@ -")) {
			if (!hunk_counts(&l, &old_n, &new_n)) {
				set_corrupt(b, xasprintf("corrupt patch at diff line %zu: bad hunk header '%.*s'",
						       lineno, (int)(l.len > 60 ? 60 : l.len), l.p));
				end = len;
				break;
			}
			free(hunk_hdr);
			hunk_hdr = xstrndup(l.p, l.len > 80 ? 80 : l.len);
			in_hunk = old_n > 0 || new_n > 0;
			binary = false;
			end = l.next;
			continue;
		}
		if (starts(l.p, l.len, "diff --git ")) {
			if (joined_index_line(l.p, l.len))
				set_corrupt(b, xasprintf("corrupt patch at diff line %zu: its 'index' line is "
						       "joined onto the 'diff --git' line "
						       "(whitespace-damaged by the mailer)", lineno));
			if (cur)
				file_add(b, cur);
			cur = git_b_name(l.p + 11, l.len - 11);
			git_block = true;
			binary = false;
			end = l.next;
			continue;
		}
		if (starts(l.p, l.len, "--- ")) {
			free(minus);
			minus = strip_p1(l.p + 4, l.len - 4);
			end = l.next;
			continue;
		}
		if (starts(l.p, l.len, "+++ ")) {
			char *plus = strip_p1(l.p + 4, l.len - 4);
			if (!git_block && cur) {
				file_add(b, cur);
				cur = NULL;
			}
			if (!strncmp(l.p + 4, "/dev/null", 9)) {
				free(plus);
				plus = minus;
				minus = NULL;
			}
			if (plus) {
				free(cur);
				cur = plus;
			}
			end = l.next;
			continue;
		}
		if (starts(l.p, l.len, "rename to ") || starts(l.p, l.len, "copy to ")) {
			size_t k = l.p[0] == 'r' ? 10 : 8;
			free(cur);
			cur = xstrndup(l.p + k, l.len - k);
			end = l.next;
			continue;
		}
		if (starts(l.p, l.len, "GIT binary patch")) {
			binary = true;
			end = l.next;
			continue;
		}
		/* the mail signature ends the diff */
		if ((l.len == 3 && !memcmp(l.p, "-- ", 3)) || (l.len == 2 && !memcmp(l.p, "--", 2)))
			break;
		if (binary) {
			if (l.len)
				end = l.next;
			continue;
		}
		bool hdr = false;
		for (const char *const *p = diff_header_prefixes; *p && !hdr; p++)
			hdr = starts(l.p, l.len, *p);
		if (hdr) {
			end = l.next;
			continue;
		}
		if (l.len == 0)
			continue;
		/* prose after the diff (b4's "base-commit:", "Best regards") */
		break;
	}
	if (in_hunk)
		set_corrupt(b, xasprintf("corrupt patch: hunk '%s' is truncated (%ld old and %ld new "
				       "lines missing)", hunk_hdr ? hunk_hdr : "",
				       old_n > 0 ? old_n : 0, new_n > 0 ? new_n : 0));
	if (cur)
		file_add(b, cur);
	free(minus);
	free(hunk_hdr);
	b->diff_end = end;
	b->tail_off = end;
}

/* Split a body (from off) into message, notes and diff. */
static void body_split(struct body *b, const char *t, size_t len, size_t off)
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
static bool has_diff(const char *t, size_t len)
{
	struct line l;

	for (size_t off = 0; line_at(&l, t, len, off); off = l.next)
		if (is_diff_start(t, len, &l))
			return true;
	return false;
}

/* ---- trailers --------------------------------------------------------- */

static bool trailer_key_len(const char *p, size_t n, size_t *klen)
{
	size_t i = 0;

	while (i < n && (isalnum((unsigned char)p[i]) || p[i] == '-'))
		i++;
	if (i == 0 || i >= n || p[i] != ':')
		return false;
	*klen = i;
	return true;
}

/* Trailers of a commit message body: its last paragraph, when it is all
 * trailers, or when a quarter of it is and one is a Signed-off-by (the rule
 * of git interpret-trailers). */
static void parse_trailers(struct patch *p, const char *body)
{
	size_t len = strlen(body), para = 0, ntr = 0, nlines = 0;
	bool sob = false;
	struct line l;

	for (size_t off = 0; line_at(&l, body, len, off); off = l.next)
		if (blank(&l) && l.next < len)
			para = l.next;
	for (size_t off = para; line_at(&l, body, len, off); off = l.next) {
		size_t k;
		if (blank(&l))
			continue;
		if (l.p[0] == ' ' || l.p[0] == '\t')
			continue;
		nlines++;
		if (trailer_key_len(l.p, l.len, &k)) {
			ntr++;
			sob |= starts_ci(l.p, l.len, "Signed-off-by:");
		}
	}
	if (!ntr || (ntr != nlines && !(sob && ntr * 4 >= nlines)))
		return;
	for (size_t off = para; line_at(&l, body, len, off); off = l.next) {
		size_t k;
		if (blank(&l))
			continue;
		if ((l.p[0] == ' ' || l.p[0] == '\t') && p->ntrailers) {
			struct trailer *tr = &p->trailers[p->ntrailers - 1];
			char *c = trim_dup(l.p, l.len);
			char *v = xasprintf("%s %s", tr->value, c);
			free(tr->value);
			free(c);
			tr->value = v;
			continue;
		}
		if (!trailer_key_len(l.p, l.len, &k))
			continue;
		p->trailers = xrealloc(p->trailers, (p->ntrailers + 1) * sizeof(*p->trailers));
		p->trailers[p->ntrailers].key = xstrndup(l.p, k);
		p->trailers[p->ntrailers].value = trim_dup(l.p + k + 1, l.len - k - 1);
		p->ntrailers++;
	}
}

/* ---- one mail → cover or patch --------------------------------------- */

enum item_kind { ITEM_SKIP, ITEM_COVER, ITEM_PATCH, ITEM_REPORT };

struct item {
	enum item_kind kind;
	struct tags tags;
	struct patch *patch;            /* ITEM_PATCH */
	char *cover_body;               /* ITEM_COVER, UTF-8 */
	char *skip_why;                 /* ITEM_SKIP */
	struct lkp_report *report;      /* ITEM_REPORT */
	struct trailer *rtrailers;      /* a reply's own trailer lines (b4's */
	size_t nrtrailers;              /* "Reviewed-by: …" given in a reply) */
	char *tail;                     /* ITEM_PATCH: text after the diff */
	char *source;
	const char *message_id, *in_reply_to;   /* borrowed from the patch / mail */
	size_t order;
};

/* The keys b4 collects from replies (b4's "person trailers"). */
static bool reply_trailer_key(const char *p, size_t k)
{
	static const char *const keys[] = { "Reviewed-by", "Acked-by", "Tested-by",
					    "Reported-by", "Suggested-by", "Co-developed-by", NULL };

	for (const char *const *x = keys; *x; x++)
		if (strlen(*x) == k && !strncasecmp(p, *x, k))
			return true;
	return false;
}

/* A reply's trailer lines: unquoted "Reviewed-by: Name <addr>" lines of
 * the keys above, anywhere in its text (b4 takes them so). */
static void reply_trailers(struct item *it, const char *t, size_t len)
{
	struct line l;

	for (size_t off = 0; line_at(&l, t, len, off); off = l.next) {
		size_t k;
		if (!trailer_key_len(l.p, l.len, &k) || !reply_trailer_key(l.p, k) ||
		    !memchr(l.p, '@', l.len))
			continue;
		it->rtrailers = xrealloc(it->rtrailers, (it->nrtrailers + 1) * sizeof(*it->rtrailers));
		it->rtrailers[it->nrtrailers].key = xstrndup(l.p, k);
		it->rtrailers[it->nrtrailers].value = trim_dup(l.p + k + 1, l.len - k - 1);
		it->nrtrailers++;
	}
}

static void patch_release(struct patch *p)
{
	if (!p)
		return;
	free(p->subject);
	free(p->author_name);
	free(p->author_email);
	free(p->message_id);
	free(p->in_reply_to);
	free(p->message);
	free(p->notes);
	free(p->diff);
	strv_free(p->files, p->nfiles);
	for (size_t i = 0; i < p->nreply_trailers; i++) {
		free(p->reply_trailers[i].key);
		free(p->reply_trailers[i].value);
		free(p->reply_trailers[i].from);
	}
	free(p->reply_trailers);
	for (size_t i = 0; i < p->ntrailers; i++) {
		free(p->trailers[i].key);
		free(p->trailers[i].value);
	}
	free(p->trailers);
	free(p->corrupt);
	free(p->warning);
	free(p->source);
}

/* The body text between [a, b) as UTF-8, blank lines trimmed at both ends,
 * each line's trailing whitespace kept. */
static char *text_slice(const char *t, size_t a, size_t b, const char *charset)
{
	struct line l;

	/* leading blank lines */
	while (a < b && line_at(&l, t, b, a) && blank(&l))
		a = l.next;
	/* trailing blank lines and whitespace */
	while (b > a && isspace((unsigned char)t[b - 1]))
		b--;
	return mail_text_utf8(t + a, b - a, charset);
}

/* Fill a patch from the chosen part; b has been split already. */
static void patch_fill(struct patch *p, const struct mail *m, const struct tags *tg,
		       const struct body *b, const struct mail_part *part)
{
	const char *t = part->text;
	char *body;

	p->subject = xstrdup(tg->title);
	if (!b->from || mail_parse_address(&p->author_name, &p->author_email, b->from) < 0) {
		p->author_name = xstrdup(m->from_name);
		p->author_email = xstrdup(m->from_email);
	}
	if (!b->date || mail_parse_date(&p->date_s, &p->tz_offset_min, b->date) < 0) {
		p->date_s = m->has_date ? m->date_s : 0;
		p->tz_offset_min = m->has_date ? m->tz_offset_min : 0;
	}
	p->message_id = xstrdup(m->message_id);
	p->in_reply_to = xstrdup(m->in_reply_to);
	body = text_slice(t, b->msg_off, b->msg_end, part->charset);
	p->message = *body ? xasprintf("%s\n\n%s\n", p->subject, body) : xasprintf("%s\n", p->subject);
	parse_trailers(p, body);
	free(body);
	p->notes = b->notes_off < b->notes_end ?
		text_slice(t, b->notes_off, b->notes_end, part->charset) : xstrdup("");
	p->diff = xstrndup(t + b->diff_off, b->diff_end - b->diff_off);
	p->files = b->files;
	p->nfiles = b->nfiles;
	p->corrupt = b->corrupt ? xstrdup(b->corrupt) : NULL;
}

/* Offset of an embedded format-patch ("From <sha> Mon Sep 17 …" then
 * headers) inside [a, b), or (size_t)-1. */
static size_t embedded_format_patch(const char *t, size_t a, size_t b)
{
	struct line l, nx;

	for (size_t off = a; line_at(&l, t, b, off); off = l.next)
		if (is_format_patch_from(&l) && line_at(&nx, t, b, l.next) &&
		    (starts_ci(nx.p, nx.len, "From:") || starts_ci(nx.p, nx.len, "Subject:") ||
		     starts_ci(nx.p, nx.len, "Date:")))
			return l.off;
	return (size_t)-1;
}

/* Decode an in-body Subject: and read its tags; mail tags stay when it
 * has none of its own. */
static void apply_inbody_subject(struct tags *tg, const char *raw)
{
	char *dec = mail_decode_header(raw);
	struct tags in;

	tags_parse(&in, dec);
	free(dec);
	free(tg->title);
	tg->title = in.title;
	in.title = NULL;
	if (in.k >= 0 || in.version || in.patch_tag) {
		tg->k = in.k;
		tg->m = in.m;
		tg->version = in.version;
		tg->rfc = in.rfc;
		tg->reply = in.reply;
		tg->patch_tag = true;
		free(tg->extra);
		tg->extra = in.extra;
		in.extra = NULL;
	}
	tags_release(&in);
}

/* Not a patch, but not to be dropped in silence either: a test robot's
 * report becomes an ITEM_REPORT. */
static bool is_report(struct item *it, const struct mail *m, const struct mail_part *text)
{
	char *t = text_slice(text->text, 0, text->len, text->charset);
	int r = lkp_report_parse(&it->report, m->subject, t, m->message_id);

	free(t);
	if (r)
		return false;
	it->kind = ITEM_REPORT;
	return true;
}

/* git am stops at CRLF inside an encoded body ("quoted CRLF detected");
 * we read it as --quoted-cr=strip does, and say so. */
static void note_quoted_crlf(struct patch *p, const struct mail_part *diffp)
{
	char *w;

	if (!diffp->quoted_crlf)
		return;
	w = xasprintf("%s%squoted CRLF detected: %zu CRLF line ends inside the encoded body "
		      "were made LF (as git am --quoted-cr=strip)", p->warning ? p->warning : "",
		      p->warning ? "; " : "", diffp->quoted_crlf);
	free(p->warning);
	p->warning = w;
}

static void item_from_mail(struct item *it, const struct mail *m)
{
	const struct mail_part *text = NULL, *diffp = NULL;
	struct body b = { 0 };
	size_t off;

	tags_parse(&it->tags, m->subject);
	for (size_t i = 0; i < m->nparts; i++) {
		if (!text && (!m->parts[i].attachment || i == 0))
			text = &m->parts[i];
		if (!diffp && has_diff(m->parts[i].text, m->parts[i].len))
			diffp = &m->parts[i];
	}
	if (!text && m->nparts)
		text = &m->parts[0];
	if (it->tags.reply && text)
		reply_trailers(it, text->text, text->len);

	if (it->tags.k == 0 && !it->tags.reply) {
		it->kind = ITEM_COVER;
		it->cover_body = text ? text_slice(text->text, 0, text->len, text->charset) : xstrdup("");
		return;
	}
	if (!diffp && text && !it->tags.reply && is_report(it, m, text))
		return;
	if (!diffp) {
		it->kind = ITEM_SKIP;
		it->skip_why = xasprintf("'%s' has no diff", m->subject);
		return;
	}
	/* The part with the diff: either the body itself, or an attachment. */
	off = inbody_headers(&b, diffp->text, diffp->len, 0);
	if (it->tags.reply && !(diffp != text && b.subject)) {
		it->kind = ITEM_SKIP;
		it->skip_why = xasprintf("'%s' is a reply", m->subject);
		body_release(&b);
		return;
	}
	if (b.subject)
		apply_inbody_subject(&it->tags, b.subject);
	body_split(&b, diffp->text, diffp->len, off);
	if (b.diff_off == b.diff_end) {
		it->kind = ITEM_SKIP;
		it->skip_why = xasprintf("'%s' has no diff after its message", m->subject);
		body_release(&b);
		return;
	}

	struct patch *p = xcalloc(1, sizeof(*p));
	size_t emb = embedded_format_patch(diffp->text, b.notes_off, b.notes_end);
	if (emb != (size_t)-1) {
		/* git am would commit the prose before '---'; the author put the
		 * real commit (headers, message) after it: take that. */
		struct body e = { 0 };
		size_t eoff = inbody_headers(&e, diffp->text, b.notes_end, emb);
		body_split(&e, diffp->text, b.notes_end, eoff);
		free(b.from);
		free(b.date);
		b.from = e.from, e.from = NULL;
		b.date = e.date, e.date = NULL;
		if (e.subject)
			apply_inbody_subject(&it->tags, e.subject);
		b.msg_off = e.msg_off;
		b.msg_end = e.msg_end;
		b.notes_off = e.notes_off;
		body_release(&e);
		p->warning = xstrdup("the commit message comes from the format-patch embedded "
				     "after '---' (git am would take the prose before it)");
	} else if (diffp != text && text && !b.subject) {
		/* diff in an attachment without headers: the message is the body */
		struct body mb = { 0 };
		size_t moff = inbody_headers(&mb, text->text, text->len, 0);
		body_split(&mb, text->text, text->len, moff);
		free(b.from);
		b.from = mb.from, mb.from = NULL;
		char *msg = text_slice(text->text, mb.msg_off, mb.msg_end, text->charset);
		body_release(&mb);
		if (it->tags.k < 0)
			it->tags.k = it->tags.m = 1;
		it->kind = ITEM_PATCH;
		patch_fill(p, m, &it->tags, &b, diffp);
		free(p->message);
		p->message = *msg ? xasprintf("%s\n\n%s\n", p->subject, msg) :
				    xasprintf("%s\n", p->subject);
		for (size_t i = 0; i < p->ntrailers; i++) {
			free(p->trailers[i].key);
			free(p->trailers[i].value);
		}
		free(p->trailers);
		p->trailers = NULL;
		p->ntrailers = 0;
		parse_trailers(p, msg);
		free(msg);
		goto done;
	}
	if (it->tags.k < 0)
		it->tags.k = it->tags.m = 1;
	it->kind = ITEM_PATCH;
	patch_fill(p, m, &it->tags, &b, diffp);
done:
	it->tail = text_slice(diffp->text, b.tail_off, diffp->len, diffp->charset);
	b.files = NULL;
	b.nfiles = 0;
	body_release(&b);
	p->k = it->tags.k;
	p->m = it->tags.m;
	note_quoted_crlf(p, diffp);
	it->patch = p;
}

/* ---- series ----------------------------------------------------------- */

static char *stable_review_release(const char *tags, const char *title);

static void scan_cover_trailers(struct series *s, const char *t)
{
	size_t len = strlen(t);
	struct line l;

	for (size_t off = 0; line_at(&l, t, len, off); off = l.next) {
		char **slot = NULL;
		size_t k = 0;
		if (starts(l.p, l.len, "base-commit:"))
			slot = &s->base_commit, k = 12;
		else if (starts(l.p, l.len, "change-id:"))
			slot = &s->change_id, k = 10;
		else if (starts(l.p, l.len, "prerequisite-patch-id:")) {
			char *v = trim_dup(l.p + 22, l.len - 22);
			if (*v && !strv_has(s->prerequisite_patch_ids, s->nprereq, v))
				strv_push(&s->prerequisite_patch_ids, &s->nprereq, v);
			else
				free(v);
			continue;
		} else if (starts(l.p, l.len, "prerequisite-change-id:")) {
			char *v = trim_dup(l.p + 23, l.len - 23);
			if (*v && !strv_has(s->prerequisite_change_ids, s->nprereq_change, v))
				strv_push(&s->prerequisite_change_ids, &s->nprereq_change, v);
			else
				free(v);
			continue;
		}
		if (!slot || *slot)
			continue;
		char *v = trim_dup(l.p + k, l.len - k);
		if (*v)
			*slot = v;
		else
			free(v);
	}
}

/* b4 change-id "20260926-wb-dying-cgwb-flush-06e260e2abad" → the slug. */
static char *slug_from_change_id(const char *cid)
{
	size_t n = strlen(cid);
	const char *s = cid;

	if (n > 9 && all_digits(s, 8) && s[8] == '-')
		s += 9, n -= 9;
	if (n > 13 && s[n - 13] == '-') {
		bool hex = true;
		for (size_t i = n - 12; i < n; i++)
			hex &= isxdigit((unsigned char)s[i]) != 0;
		if (hex)
			n -= 13;
	}
	return n ? xstrndup(s, n) : NULL;
}

static char *slugify(const char *title)
{
	char *r = xmalloc(strlen(title) + 1), *o = r;
	bool dash = false;

	for (const char *p = title; *p; p++) {
		if (isalnum((unsigned char)*p)) {
			if (dash && o != r)
				*o++ = '-';
			dash = false;
			*o++ = (char)tolower((unsigned char)*p);
			if (o - r >= 60) {
				/* cut at a word boundary when there is one */
				*o = '\0';
				char *d = strrchr(r, '-');
				if (isalnum((unsigned char)p[1]) && d && d - r >= 20)
					o = d;
				break;
			}
		} else {
			dash = true;
		}
	}
	*o = '\0';
	if (!*r) {
		free(r);
		return xstrdup("series");
	}
	return r;
}

struct group {
	struct item *cover;
	struct item **patches; size_t npatches;
	int version, m;
	size_t order;
};

void series_free(struct series *s)
{
	if (!s)
		return;
	free(s->name);
	free(s->prefix_tags);
	free(s->cover_subject);
	free(s->cover_body);
	free(s->cover_message_id);
	free(s->base_commit);
	free(s->change_id);
	strv_free(s->prerequisite_patch_ids, s->nprereq);
	strv_free(s->prerequisite_change_ids, s->nprereq_change);
	free(s->stable_review);
	free(s->missing);
	lkp_report_free(s->report);
	for (size_t i = 0; i < s->npatches; i++)
		patch_release(&s->patches[i]);
	free(s->patches);
	free(s);
}

void series_free_all(struct series **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		series_free(v[i]);
	free(v);
}

static int cmp_item_k(const void *a, const void *b)
{
	const struct item *x = *(struct item *const *)a, *y = *(struct item *const *)b;

	if (x->tags.k != y->tags.k)
		return x->tags.k < y->tags.k ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_series(const void *a, const void *b)
{
	const struct series *x = *(struct series *const *)a, *y = *(struct series *const *)b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return (x->version > y->version) - (x->version < y->version);
}

/* Build one series from a group; checks k = 1..M, each once. */
static int group_to_series(struct series **out, struct group *g, struct buf *err)
{
	struct series *s = xcalloc(1, sizeof(*s));
	struct item *first = g->npatches ? g->patches[0] : g->cover;
	const struct tags *tg = g->cover ? &g->cover->tags : &first->tags;
	int m = g->m;

	if (!g->npatches && m < 1) {
		buf_printf(err, "no patches in series '%s' of '%s'", g->cover->tags.title,
			   g->cover->source);
		series_free(s);
		return -EINVAL;
	}
	if (g->npatches)
		qsort(g->patches, g->npatches, sizeof(*g->patches), cmp_item_k);
	s->version = tg->version ? tg->version : 1;
	s->rfc = tg->rfc;
	s->prefix_tags = xstrdup(tg->extra ? tg->extra : "");
	if (g->cover) {
		s->cover_subject = xstrdup(g->cover->tags.title);
		s->cover_body = xstrdup(g->cover->cover_body);
		s->cover_message_id = xstrdup(g->cover->message_id);
		scan_cover_trailers(s, s->cover_body);
	}
	for (size_t i = 0; i < g->npatches; i++) {
		struct item *it = g->patches[i];
		struct patch *p = it->patch;
		if (it->tags.m != m) {
			buf_printf(err, "'%s' is patch %d/%d but its series '%s' has %d patches",
				   it->source, it->tags.k, it->tags.m, g->cover ? g->cover->source :
				   g->patches[0]->source, m);
			goto fail;
		}
		if (p->k < 1 || p->k > m) {
			buf_printf(err, "'%s' is patch %d/%d: k must be 1..%d", it->source, p->k, m, m);
			goto fail;
		}
		if (i > 0 && g->patches[i - 1]->tags.k == p->k) {
			buf_printf(err, "patch %d/%d is duplicated: '%s' and '%s' ('%s')", p->k, m,
				   g->patches[i - 1]->source, it->source, p->subject);
			goto fail;
		}
		if (!g->cover) {
			/* no cover: b4 puts base-commit: in the notes or after the
			 * diff of a lone patch */
			scan_cover_trailers(s, p->notes);
			scan_cover_trailers(s, it->tail ? it->tail : "");
		}
	}
	s->m = m;
	for (int k = 1; k <= m && g->npatches; k++) {
		bool have = false;
		for (size_t i = 0; i < g->npatches && !have; i++)
			have = g->patches[i]->tags.k == k;
		if (!have) {
			s->missing = xrealloc(s->missing, (s->nmissing + 1) * sizeof(*s->missing));
			s->missing[s->nmissing++] = k;
		}
	}
	if (s->nmissing) {
		/* a warning, not an error: one patch of a larger series is what
		 * it is (b4 am takes it too); apply asks for --allow-missing */
		struct buf ks = BUF_INIT;
		for (size_t i = 0; i < s->nmissing; i++)
			buf_printf(&ks, "%s%d", i ? ", " : "", s->missing[i]);
		buf_printf(err, "%spatch%s %s of %d of '%s' v%d %s missing (series from '%s')",
			   err->len ? "\n" : "", s->nmissing > 1 ? "es" : "", buf_str(&ks), m,
			   g->cover ? g->cover->tags.title : first->tags.title, s->version,
			   s->nmissing > 1 ? "are" : "is", first->source);
		buf_release(&ks);
	}
	s->patches = xcalloc(g->npatches + 1, sizeof(*s->patches));
	for (size_t i = 0; i < g->npatches; i++) {
		s->patches[i] = *g->patches[i]->patch;
		s->patches[i].source = g->patches[i]->source;
		g->patches[i]->source = NULL;
		free(g->patches[i]->patch);
		g->patches[i]->patch = NULL;
	}
	s->npatches = g->npatches;
	char *slug = s->change_id ? slug_from_change_id(s->change_id) : NULL;
	s->name = slug ? slug : slugify(g->cover ? g->cover->tags.title : s->patches[0].subject);
	s->cover_only = g->npatches == 0;
	if (s->cover_only)
		s->stable_review = stable_review_release(s->prefix_tags, s->cover_subject);
	*out = s;
	return 0;
fail:
	series_free(s);
	return -EINVAL;
}

/* A stable review cover's release: title "X.Y.Z-rcN review" (the stable
 * maintainers' form) with a subject tag "X.Y" naming its branch; a new
 * string "X.Y.Z-rcN", or NULL when title is not one. */
static char *stable_review_release(const char *tags, const char *title)
{
	size_t n, t = 0;

	if (!title || !tags)
		return NULL;
	n = strspn(title, "0123456789.");
	if (n < 3 || strncmp(title + n, "-rc", 3))
		return NULL;
	n += 3;
	n += strspn(title + n, "0123456789");
	if (strcmp(title + n, " review"))
		return NULL;
	/* the branch tag, "6.12", is the release's first two numbers */
	for (const char *p = tags; *p; p += t ? t : 1) {
		p += strspn(p, " ");
		t = strcspn(p, " ");
		if (t >= 3 && strspn(p, "0123456789.") == t && !strncmp(title, p, t) &&
		    title[t] == '.')
			return xstrndup(title, n);
	}
	return NULL;
}

static void item_release(struct item *it)
{
	tags_release(&it->tags);
	if (it->patch) {
		patch_release(it->patch);
		free(it->patch);
	}
	free(it->cover_body);
	free(it->skip_why);
	lkp_report_free(it->report);
	for (size_t i = 0; i < it->nrtrailers; i++) {
		free(it->rtrailers[i].key);
		free(it->rtrailers[i].value);
	}
	free(it->rtrailers);
	free(it->tail);
	free(it->source);
}

/* Patches whose subject has no version take their first patch's, when
 * that is in the same thread (a reply to it, or a reply to the same
 * message) and has the same M: "[PATCH v2 1/3]" then "[PATCH 2/3]", as
 * the list's threading implies. */
static void inherit_version(struct item *items, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct item *it = &items[i];
		if (it->kind != ITEM_PATCH || it->tags.version || it->tags.m < 2)
			continue;
		for (size_t j = 0; j < n; j++) {
			const struct item *f = &items[j];
			if (j == i || f->kind != ITEM_PATCH || f->tags.k != 1 || !f->tags.version ||
			    f->tags.m != it->tags.m || !*it->in_reply_to)
				continue;
			if (!strcmp(it->in_reply_to, f->message_id) ||
			    (*f->in_reply_to && !strcmp(it->in_reply_to, f->in_reply_to))) {
				it->tags.version = f->tags.version;
				it->tags.rfc = it->tags.rfc || f->tags.rfc;
				break;
			}
		}
	}
}

static void patch_add_reply_trailer(struct patch *p, const struct trailer *t, const char *from)
{
	for (size_t i = 0; i < p->nreply_trailers; i++)
		if (!strcasecmp(p->reply_trailers[i].key, t->key) &&
		    !strcmp(p->reply_trailers[i].value, t->value))
			return;
	for (size_t i = 0; i < p->ntrailers; i++)
		if (!strcasecmp(p->trailers[i].key, t->key) && !strcmp(p->trailers[i].value, t->value))
			return;
	p->reply_trailers = xrealloc(p->reply_trailers,
				     (p->nreply_trailers + 1) * sizeof(*p->reply_trailers));
	p->reply_trailers[p->nreply_trailers].key = xstrdup(t->key);
	p->reply_trailers[p->nreply_trailers].value = xstrdup(t->value);
	p->reply_trailers[p->nreply_trailers].from = xstrdup(from);
	p->nreply_trailers++;
}

/* Trailers given in replies: to the patch replied to, or to every patch
 * of the series whose cover was replied to (as b4 am collects them). */
static void attach_reply_trailers(struct series **v, size_t nv, const struct item *items, size_t n)
{
	/* b4's order: the patch's own replies first, then the cover's */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			const struct item *it = &items[i];
			if (!it->nrtrailers || !it->in_reply_to || !*it->in_reply_to)
				continue;
			for (size_t s = 0; s < nv; s++) {
				struct series *x = v[s];
				bool to_cover = x->cover_message_id &&
						!strcmp(x->cover_message_id, it->in_reply_to);
				if (pass == 1 && !to_cover)
					continue;
				for (size_t k = 0; k < x->npatches; k++) {
					struct patch *p = &x->patches[k];
					if (pass == 0 && strcmp(p->message_id, it->in_reply_to))
						continue;
					for (size_t t = 0; t < it->nrtrailers; t++)
						patch_add_reply_trailer(p, &it->rtrailers[t], it->message_id);
				}
			}
		}
}

/* Items → series: thread by cover letter, else by (version, M). */
static int items_to_series(struct series ***out, size_t *n_out, struct item *items, size_t n,
			   const char *what, struct buf *err)
{
	struct group *groups = NULL;
	size_t ng = 0, nseries = 0;
	struct series **v = NULL;
	const char *skip_why = NULL;
	int ret = 0;

	/* dedupe by Message-ID (the same mail in two files or twice in one) */
	for (size_t i = 0; i < n; i++) {
		if (items[i].kind == ITEM_SKIP || !items[i].message_id || !*items[i].message_id)
			continue;
		for (size_t j = 0; j < i; j++) {
			if (items[j].kind != ITEM_SKIP && items[j].message_id &&
			    !strcmp(items[i].message_id, items[j].message_id)) {
				log_debug("'%s' is the same message as '%s'", items[i].source,
					  items[j].source);
				items[i].kind = ITEM_SKIP;
				break;
			}
		}
	}
	inherit_version(items, n);
	for (size_t i = 0; i < n; i++) {
		if (items[i].kind != ITEM_COVER)
			continue;
		groups = xrealloc(groups, (ng + 1) * sizeof(*groups));
		groups[ng] = (struct group){ .cover = &items[i], .version = items[i].tags.version,
					     .m = items[i].tags.m, .order = i };
		ng++;
	}
	for (size_t i = 0; i < n; i++) {
		struct item *it = &items[i];
		struct group *g = NULL;
		if (it->kind == ITEM_SKIP && !skip_why)
			skip_why = it->skip_why;
		if (it->kind != ITEM_PATCH)
			continue;
		/* (a) threaded to a cover letter */
		for (size_t j = 0; j < ng && !g; j++)
			if (groups[j].cover && *it->in_reply_to &&
			    !strcmp(groups[j].cover->message_id, it->in_reply_to))
				g = &groups[j];
		/* (b) the one cover of the same vN and M */
		if (!g) {
			struct group *only = NULL;
			int count = 0;
			for (size_t j = 0; j < ng; j++)
				if (groups[j].cover && groups[j].version == it->tags.version &&
				    groups[j].m == it->tags.m)
					only = &groups[j], count++;
			if (count == 1)
				g = only;
		}
		/* (c) no cover: by (vN, M); a lone patch (M = 1) is its own series */
		if (!g && it->tags.m > 1)
			for (size_t j = 0; j < ng && !g; j++)
				if (!groups[j].cover && groups[j].version == it->tags.version &&
				    groups[j].m == it->tags.m)
					g = &groups[j];
		if (!g) {
			groups = xrealloc(groups, (ng + 1) * sizeof(*groups));
			groups[ng] = (struct group){ .version = it->tags.version, .m = it->tags.m,
						     .order = i };
			g = &groups[ng++];
		}
		g->patches = xrealloc(g->patches, (g->npatches + 1) * sizeof(*g->patches));
		g->patches[g->npatches++] = it;
	}
	size_t nreports = 0;
	for (size_t i = 0; i < n; i++)
		nreports += items[i].kind == ITEM_REPORT;
	if (!ng && !nreports) {
		buf_printf(err, "no patches in %s%s%s", what, skip_why ? ": " : "",
			   skip_why ? skip_why : "");
		ret = -EINVAL;
		goto out;
	}
	v = xcalloc(ng + nreports, sizeof(*v));
	/* a test robot's report is named as what it is: an entry of its own */
	for (size_t i = 0; i < n; i++) {
		if (items[i].kind != ITEM_REPORT)
			continue;
		struct series *r = xcalloc(1, sizeof(*r));
		r->name = xstrdup("kernel-test-robot-report");
		r->version = 1;
		r->prefix_tags = xstrdup("");
		r->report = items[i].report;
		items[i].report = NULL;
		v[nseries++] = r;
	}
	for (size_t j = 0; j < ng; j++) {
		ret = group_to_series(&v[nseries], &groups[j], err);
		if (ret < 0)
			goto out;
		nseries++;
	}
	qsort(v, nseries, sizeof(*v), cmp_series);
	attach_reply_trailers(v, nseries, items, n);
out:
	for (size_t j = 0; j < ng; j++)
		free(groups[j].patches);
	free(groups);
	if (ret < 0) {
		series_free_all(v, nseries);
		return ret;
	}
	*out = v;
	*n_out = nseries;
	return 0;
}

static void items_add_file(struct item **items, size_t *n, struct mail **mails, size_t nm,
			   const char *name)
{
	*items = xrealloc(*items, (*n + nm) * sizeof(**items));
	for (size_t i = 0; i < nm; i++) {
		struct item *it = &(*items)[*n + i];
		memset(it, 0, sizeof(*it));
		it->order = *n + i;
		it->source = nm > 1 ? xasprintf("%s:%zu", name, mails[i]->line) : xstrdup(name);
		item_from_mail(it, mails[i]);
	}
	*n += nm;
}

/* Message ids are borrowed from the mails; fix them up once all are read. */
static void items_link(struct item *items, size_t n, struct mail **all)
{
	for (size_t i = 0; i < n; i++) {
		items[i].message_id = all[i]->message_id;
		items[i].in_reply_to = all[i]->in_reply_to;
	}
}

static int load(struct series ***out, size_t *n_out, const char *const *datas,
		const size_t *lens, const char *const *names, const bool *mboxrd, size_t nfiles,
		struct buf *err)
{
	struct mail **all = NULL;
	struct item *items = NULL;
	size_t nall = 0, nitems = 0;
	struct buf what = BUF_INIT;
	int ret = 0;

	for (size_t f = 0; f < nfiles; f++) {
		struct mail **mails = NULL;
		size_t nm = 0;
		ret = mbox_parse(&mails, &nm, datas[f], lens[f], names[f], mboxrd && mboxrd[f], err);
		if (ret < 0)
			goto out;
		items_add_file(&items, &nitems, mails, nm, names[f]);
		all = xrealloc(all, (nall + nm + 1) * sizeof(*all));
		if (nm)
			memcpy(all + nall, mails, nm * sizeof(*mails));
		nall += nm;
		free(mails);
		buf_printf(&what, "%s'%s'", f ? ", " : "", names[f]);
	}
	items_link(items, nitems, all);
	ret = items_to_series(out, n_out, items, nitems, buf_str(&what), err);
out:
	for (size_t i = 0; i < nitems; i++)
		item_release(&items[i]);
	free(items);
	mail_free_all(all, nall);
	buf_release(&what);
	return ret;
}

int series_load_buffer(struct series ***out, size_t *n_out, const char *data, size_t len,
		       const char *name, struct buf *err)
{
	struct buf dummy = BUF_INIT;
	static const bool rd = true;
	int ret = load(out, n_out, &data, &len, &name, &rd, 1, err ? err : &dummy);

	buf_release(&dummy);
	return ret;
}

int series_load_buffers(struct series ***out, size_t *n_out, const char *const *datas,
			const size_t *lens, const char *const *names, const bool *mboxrd, size_t n,
			struct buf *err)
{
	struct buf dummy = BUF_INIT;
	int ret = load(out, n_out, datas, lens, names, mboxrd, n, err ? err : &dummy);

	buf_release(&dummy);
	return ret;
}

int series_load(struct series ***out, size_t *n_out, char *const *paths, size_t npaths,
		struct buf *err)
{
	char **datas = xcalloc(npaths + 1, sizeof(*datas));
	size_t *lens = xcalloc(npaths + 1, sizeof(*lens));
	struct buf dummy = BUF_INIT;
	int ret = 0;

	if (!err)
		err = &dummy;
	for (size_t i = 0; i < npaths; i++) {
		/* 256 MiB: far above any series, low enough to refuse a disk image */
		ret = read_file(&datas[i], &lens[i], paths[i], (size_t)256 << 20);
		if (ret < 0) {
			buf_printf(err, "cannot read '%s': %s", paths[i], strerror(-ret));
			goto out;
		}
	}
	ret = load(out, n_out, (const char *const *)datas, lens, (const char *const *)paths,
		   NULL, npaths, err);
out:
	for (size_t i = 0; i < npaths; i++)
		free(datas[i]);
	free(datas);
	free(lens);
	buf_release(&dummy);
	return ret;
}
