/* patch_fit.c - a mailed diff fitted to its files in text: hunk relocation
 * (offsets, never fuzz), the reverse diff, the deleted-file check (see
 * patch_fit.h). Pure: the caller reads the files. */
#include <stdlib.h>
#include <string.h>

#include "wrap/patch_fit.h"
#include "util.h"

/* One line of a text: [p, p + n), without its '\n'. */
struct line {
	const char *p;
	size_t n;
};

/* The line at p: its length without the '\n', whether it has one, and
 * where the next one starts. */
static size_t line_at(const char *p, const char **next, bool *has_nl)
{
	const char *nl = strchr(p, '\n');
	size_t n = nl ? (size_t)(nl - p) : strlen(p);

	*next = nl ? nl + 1 : p + n;
	if (has_nl)
		*has_nl = nl != NULL;
	return n;
}

/* A hunk header "@@ -a,b +c,d @@" (",b" and ",d" default to 1); len: its
 * bytes up to and including the second "@@". */
struct hunk_header {
	long old_start, old_lines, new_start, new_lines;
	size_t len;
};

/* Parse the hunk header at p (a line of n bytes); false when it is not one. */
static bool parse_hunk_header(struct hunk_header *h, const char *p, size_t n)
{
	char *e;

	if (strncmp(p, "@@ -", 4))
		return false;
	h->old_lines = h->new_lines = 1;
	h->old_start = strtol(p + 4, &e, 10);
	if (*e == ',')
		h->old_lines = strtol(e + 1, &e, 10);
	if (strncmp(e, " +", 2))
		return false;
	h->new_start = strtol(e + 2, &e, 10);
	if (*e == ',')
		h->new_lines = strtol(e + 1, &e, 10);
	if (strncmp(e, " @@", 3))
		return false;
	h->len = (size_t)(e + 3 - p);
	return h->len <= n;
}

/* ---- reversal ---- */

/* Swap the two paths of "diff --git a/X b/Y". */
static void reverse_git_line(struct buf *o, const char *l, size_t n)
{
	const char *a = l + strlen("diff --git ");
	const char *end = l + n;
	const char *sp = NULL;

	for (const char *p = a; p + 3 < end; p++)
		if (!strncmp(p, " b/", 3)) {
			sp = p;
			break;
		}
	if (strncmp(a, "a/", 2) || !sp) {
		buf_append(o, l, n);
		return;
	}
	buf_printf(o, "diff --git a/%.*s b/%.*s", (int)(end - sp - 3), sp + 3,
		   (int)(sp - a - 2), a + 2);
}

/* "--- a/X" + "+++ b/Y" -> "--- a/Y" + "+++ b/X" */
static void reverse_file_lines(struct buf *o, const char *minus, size_t minus_len,
			       const char *plus, size_t plus_len)
{
	const char *np = plus + 4, *op = minus + 4;
	size_t nn = plus_len - 4, on = minus_len - 4;

	if (!strncmp(np, "b/", 2))
		buf_printf(o, "--- a/%.*s\n", (int)nn - 2, np + 2);
	else
		buf_printf(o, "--- %.*s\n", (int)nn, np);
	if (!strncmp(op, "a/", 2))
		buf_printf(o, "+++ b/%.*s\n", (int)on - 2, op + 2);
	else
		buf_printf(o, "+++ %.*s\n", (int)on, op);
}

/* One line of a hunk body reversed; counts down the lines left. */
static void reverse_body_line(struct buf *o, const char *p, size_t n, long *old_left,
			      long *new_left)
{
	char c = n ? *p : ' '; /* an empty line is empty context */

	if (c == '+') {
		buf_puts(o, "-");
		buf_append(o, p + 1, n - 1);
		(*new_left)--;
	} else if (c == '-') {
		buf_puts(o, "+");
		buf_append(o, p + 1, n - 1);
		(*old_left)--;
	} else {
		buf_append(o, p, n);
		if (c != '\\') {
			(*old_left)--;
			(*new_left)--;
		}
	}
	buf_puts(o, "\n");
}

/* A header line outside hunks reversed; false when it is not one this
 * knows ("--- " lines are held back in *minus for their "+++ "). */
static bool reverse_header_line(struct buf *o, const char *p, size_t n, const char **minus,
				size_t *minus_len)
{
	if (!strncmp(p, "diff --git ", 11)) {
		reverse_git_line(o, p, n);
		buf_puts(o, "\n");
	} else if (!strncmp(p, "--- ", 4)) {
		*minus = p;
		*minus_len = n;
	} else if (!strncmp(p, "+++ ", 4) && *minus) {
		reverse_file_lines(o, *minus, *minus_len, p, n);
		*minus = NULL;
	} else if (!strncmp(p, "new file mode ", 14)) {
		buf_printf(o, "deleted file mode %.*s\n", (int)n - 14, p + 14);
	} else if (!strncmp(p, "deleted file mode ", 18)) {
		buf_printf(o, "new file mode %.*s\n", (int)n - 18, p + 18);
	} else if (!strncmp(p, "index ", 6) && memmem(p, n, "..", 2)) {
		const char *dots = memmem(p, n, "..", 2);
		const char *b2 = dots + 2;
		size_t bl = strcspn(b2, " \n");

		buf_printf(o, "index %.*s..%.*s%.*s\n", (int)bl, b2, (int)(dots - p - 6), p + 6,
			   (int)(n - (size_t)(b2 + bl - p)), b2 + bl);
	} else {
		return false;
	}
	return true;
}

void patch_reverse(struct buf *o, const char *diff)
{
	const char *p = diff, *minus = NULL, *next;
	size_t minus_len = 0;
	long old_left = 0, new_left = 0;
	struct hunk_header h;

	while (*p) {
		size_t n = line_at(p, &next, NULL);

		if (old_left > 0 || new_left > 0) {
			reverse_body_line(o, p, n, &old_left, &new_left);
		} else if (parse_hunk_header(&h, p, n)) {
			buf_printf(o, "@@ -%ld,%ld +%ld,%ld @@", h.new_start, h.new_lines,
				   h.old_start, h.old_lines);
			buf_append(o, p + h.len, n - h.len);
			buf_puts(o, "\n");
			old_left = h.old_lines;
			new_left = h.new_lines;
		} else if (!reverse_header_line(o, p, n, &minus, &minus_len)) {
			if (minus) { /* a lone "--- " line (the "-- " signature is 3 chars) */
				buf_append(o, minus, minus_len);
				buf_puts(o, "\n");
				minus = NULL;
			}
			buf_append(o, p, n);
			buf_puts(o, "\n");
		}
		p = next;
	}
}

/* ---- hunk relocation ----
 *
 * libgit2 applies a hunk only at the line its header names (its apply.c,
 * find_hunk_linenum(), tries that one position: no offsets, no fuzz), while
 * `git am` finds the context at the nearest position where it matches
 * exactly (an "offset"). Mailed patches against another tree usually need
 * offsets, so before a patch goes to libgit2 each hunk is located here,
 * as git apply does: the nearest exact match of its pre-image (context and
 * '-' lines) to where the header says, after the previous hunk, shifted by
 * the previous hunk's offset. The header is then rewritten to that line.
 * A hunk that matches nowhere is left alone, so libgit2 fails on it and
 * names it. Exact matching only: nothing here is fuzz.
 */

/* Split text into lines (without their '\n'). */
static struct line *split_lines(const char *text, size_t len, size_t *count)
{
	size_t cap = 64, n = 0;
	struct line *v = xmalloc(cap * sizeof(*v));
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (n == cap) {
			cap *= 2;
			v = xrealloc(v, cap * sizeof(*v));
		}
		v[n].p = p;
		v[n].n = l;
		n++;
		p += l + 1;
	}
	*count = n;
	return v;
}

static bool match_at(const struct line *img, size_t nimg, const struct line *pre,
		     size_t npre, size_t at)
{
	if (at + npre > nimg)
		return false;
	for (size_t i = 0; i < npre; i++)
		if (img[at + i].n != pre[i].n || memcmp(img[at + i].p, pre[i].p, pre[i].n))
			return false;
	return true;
}

/* The 0-based line nearest to want, within [lo, nimg - npre], where pre
 * matches img exactly; the earlier one on a tie; -1 when there is none. */
static long nearest_match(const struct line *img, size_t nimg, const struct line *pre,
			  size_t npre, long want, long lo)
{
	long hi = (long)nimg - (long)npre;

	if (want < lo)
		want = lo;
	if (want > hi)
		want = hi;
	for (long dd = 0; hi >= lo && (want - dd >= lo || want + dd <= hi); dd++) {
		if (want - dd >= lo && match_at(img, nimg, pre, npre, (size_t)(want - dd)))
			return want - dd;
		if (dd && want + dd <= hi && match_at(img, nimg, pre, npre, (size_t)(want + dd)))
			return want + dd;
	}
	return -1;
}

/* The pre-image (context and '-' lines) of the hunk whose body starts at
 * body, as h counts its lines; *npre lines, a new array (caller frees). */
static struct line *hunk_preimage(const char *body, const struct hunk_header *h, size_t *npre)
{
	size_t n = 0, cap = 16;
	struct line *pre = xmalloc(cap * sizeof(*pre));
	long old_left = h->old_lines, new_left = h->new_lines;
	const char *hp = body, *next;

	while (*hp && (old_left > 0 || new_left > 0)) {
		size_t hn = line_at(hp, &next, NULL);
		char ch = hn ? *hp : ' ';

		if (ch == ' ' || ch == '-') {
			if (n == cap) {
				cap *= 2;
				pre = xrealloc(pre, cap * sizeof(*pre));
			}
			pre[n].p = hn ? hp + 1 : hp;
			pre[n].n = hn ? hn - 1 : 0;
			n++;
			old_left--;
			if (ch == ' ')
				new_left--;
		} else if (ch == '+') {
			new_left--;
		} else if (ch != '\\') {
			break;
		}
		hp = next;
	}
	*npre = n;
	return pre;
}

/* Where relocation is within one file of the diff. */
struct fit_file {
	struct line *img;	/* its pre-image lines, NULL when not in the tree */
	size_t nimg;
	size_t floor_at;	/* the next hunk starts at or after this line */
	long delta;		/* lines the placed hunks added (new - old) */
	long last_off;		/* the previous hunk's offset */
};

/* A "--- " line: the next file's pre-image from src. */
static void fit_file_start(struct fit_file *f, const char *p, size_t n,
			   const struct patch_fit_source *src)
{
	const char *data;
	size_t len;

	free(f->img);
	memset(f, 0, sizeof(*f));
	if (strncmp(p + 4, "a/", 2))
		return;
	char *path = xstrndup(p + 6, n - 6);
	path[strcspn(path, "\t")] = '\0';
	if (src->read(src->payload, path, &data, &len) == 0)
		f->img = split_lines(data, len, &f->nimg);
	free(path);
}

/* The hunk header h (line p of n bytes, body after it): rewritten to where
 * its pre-image is, into o; false (nothing written) when it cannot be
 * placed. */
static bool fit_hunk(struct buf *o, struct patch_fit_result *res, struct fit_file *f,
		     const struct hunk_header *h, const char *p, size_t n, const char *body)
{
	size_t npre;
	struct line *pre;
	long found;

	if (h->old_lines <= 0) {
		res->unanchored++;
		return false;
	}
	pre = hunk_preimage(body, h, &npre);
	found = nearest_match(f->img, f->nimg, pre, npre, h->old_start - 1 + f->last_off,
			      (long)f->floor_at);
	free(pre);
	if (found < 0) {
		res->unplaced++;
		return false;
	}
	res->placed++;
	if (found != h->old_start - 1)
		res->moved++;
	f->last_off = found - (h->old_start - 1);
	f->floor_at = (size_t)(found + h->old_lines);
	buf_printf(o, "@@ -%ld,%ld +%ld,%ld @@", found + 1, h->old_lines, found + 1 + f->delta,
		   h->new_lines);
	f->delta += h->new_lines - h->old_lines;
	buf_append(o, p + h->len, n - h->len);
	buf_puts(o, "\n");
	return true;
}

/* The end of the body of hunk h that starts at body: after the lines its
 * header counts (or at the first line that cannot be in a hunk). */
static const char *hunk_body_end(const char *body, const struct hunk_header *h)
{
	long old_left = h->old_lines, new_left = h->new_lines;
	const char *p = body, *next;

	while (*p && (old_left > 0 || new_left > 0)) {
		size_t n = line_at(p, &next, NULL);
		char ch = n ? *p : ' ';

		if (ch == ' ' || ch == '-')
			old_left--;
		if (ch == ' ' || ch == '+')
			new_left--;
		else if (ch != '-' && ch != '\\')
			break;
		p = next;
	}
	return p;
}

void patch_fit_hunks(struct buf *o, struct patch_fit_result *res, const char *diff,
		     const struct patch_fit_source *src)
{
	struct patch_fit_result scratch;
	struct fit_file f = { 0 };
	struct hunk_header h;
	const char *p = diff, *next;
	bool nl;

	if (!res)
		res = &scratch;
	memset(res, 0, sizeof(*res));
	while (*p) {
		size_t n = line_at(p, &next, &nl);

		if (parse_hunk_header(&h, p, n)) {
			/* a hunk: its header where it fits, its body as it is (a
			 * removed "-- x" line reads "--- x" and is no file header) */
			const char *end = hunk_body_end(next, &h);

			if (!f.img || !fit_hunk(o, res, &f, &h, p, n, next)) {
				buf_append(o, p, n);
				if (nl)
					buf_puts(o, "\n");
			}
			buf_append(o, next, (size_t)(end - next));
			p = end;
			continue;
		}
		if (!strncmp(p, "--- ", 4))
			fit_file_start(&f, p, n, src);
		buf_append(o, p, n);
		if (nl)
			buf_puts(o, "\n");
		p = next;
	}
	free(f.img);
}

/* ---- deleted files ----
 *
 * libgit2 removes a file for a deletion patch without looking at its
 * content (its apply.c, apply_one(): no hunks are applied to a deleted
 * file), while git apply requires the content to be exactly the patch's
 * '-' lines.
 */

/* The '-' lines of the hunk(s) after a "+++ /dev/null" line at q: the
 * whole file, as the patch has it, into want. */
static void deleted_content(struct buf *want, const char *q)
{
	const char *next;

	while (*q && strncmp(q, "diff --git ", 11)) {
		size_t ql = line_at(q, &next, NULL);

		if (*q == '-') {
			buf_append(want, q + 1, ql - 1);
			buf_puts(want, "\n");
		} else if (*q == '\\' && want->len) {
			want->ptr[--want->len] = '\0';   /* no newline at end */
		} else if (*q != '@') {
			break;
		}
		q = next;
	}
}

bool patch_fit_deletions(struct buf *bad_path, const char *diff,
			 const struct patch_fit_source *src)
{
	const char *p = diff, *next;
	char *old_path = NULL;
	bool ok = true;

	if (bad_path)
		buf_reset(bad_path);
	while (*p && ok) {
		size_t n = line_at(p, &next, NULL);

		if (!strncmp(p, "--- a/", 6)) {
			free(old_path);
			old_path = xstrndup(p + 6, n - 6);
			old_path[strcspn(old_path, "\t")] = '\0';
		} else if (!strncmp(p, "+++ /dev/null", 13) && old_path) {
			struct buf want = BUF_INIT;
			const char *data;
			size_t len;

			deleted_content(&want, next);
			if (src->read(src->payload, old_path, &data, &len) ||
			    len != want.len || memcmp(data, want.ptr ? want.ptr : "", want.len)) {
				if (bad_path)
					buf_puts(bad_path, old_path);
				ok = false;
			}
			buf_release(&want);
		}
		p = next;
	}
	free(old_path);
	return ok;
}
