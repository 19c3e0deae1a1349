/* series_tags.c - subject tags and trailers (series_tags.h). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "wrap/mbox.h"
#include "kernel/series_line.h"
#include "kernel/series_tags.h"

/* ---- subject tags ----------------------------------------------------- */

void series_tags_release(struct tags *t)
{
	free(t->extra);
	free(t->title);
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
void series_tags_parse(struct tags *t, const char *subject)
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

/* ---- trailers --------------------------------------------------------- */

bool series_trailer_key_len(const char *p, size_t n, size_t *klen)
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
void series_trailers_parse(struct patch *p, const char *body)
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
		if (series_trailer_key_len(l.p, l.len, &k)) {
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
		if (!series_trailer_key_len(l.p, l.len, &k))
			continue;
		p->trailers = xrealloc(p->trailers, (p->ntrailers + 1) * sizeof(*p->trailers));
		p->trailers[p->ntrailers].key = xstrndup(l.p, k);
		p->trailers[p->ntrailers].value = trim_dup(l.p + k + 1, l.len - k - 1);
		p->ntrailers++;
	}
}

/* The keys b4 collects from replies (b4's "person trailers"). */
bool series_reply_trailer_key(const char *p, size_t k)
{
	static const char *const keys[] = { "Reviewed-by", "Acked-by", "Tested-by",
					    "Reported-by", "Suggested-by", "Co-developed-by", NULL };

	for (const char *const *x = keys; *x; x++)
		if (strlen(*x) == k && !strncasecmp(p, *x, k))
			return true;
	return false;
}

/* Decode an in-body Subject: and read its tags; mail tags stay when it
 * has none of its own. */
void series_tags_inbody(struct tags *tg, const char *raw)
{
	char *dec = mail_decode_header(raw);
	struct tags in;

	series_tags_parse(&in, dec);
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
	series_tags_release(&in);
}
