/* series_item.c - one mail → a cover, a patch, a report or a skip
 * (series_item.h): what git mailinfo does to one message. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "wrap/mbox.h"
#include "kernel/lkp_report.h"
#include "kernel/series_body.h"
#include "kernel/series_item.h"
#include "kernel/series_line.h"
#include "kernel/series_tags.h"

/* A reply's trailer lines: unquoted "Reviewed-by: Name <addr>" lines of
 * the keys above, anywhere in its text (b4 takes them so). */
static void reply_trailers(struct item *it, const char *t, size_t len)
{
	struct line l;

	for (size_t off = 0; line_at(&l, t, len, off); off = l.next) {
		size_t k;
		if (!series_trailer_key_len(l.p, l.len, &k) || !series_reply_trailer_key(l.p, k) ||
		    !memchr(l.p, '@', l.len))
			continue;
		it->rtrailers = xrealloc(it->rtrailers, (it->nrtrailers + 1) * sizeof(*it->rtrailers));
		it->rtrailers[it->nrtrailers].key = xstrndup(l.p, k);
		it->rtrailers[it->nrtrailers].value = trim_dup(l.p + k + 1, l.len - k - 1);
		it->nrtrailers++;
	}
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
	series_trailers_parse(p, body);
	free(body);
	p->notes = b->notes_off < b->notes_end ?
		text_slice(t, b->notes_off, b->notes_end, part->charset) : xstrdup("");
	p->diff = xstrndup(t + b->diff_off, b->diff_end - b->diff_off);
	p->files = b->files;
	p->nfiles = b->nfiles;
	p->corrupt = b->corrupt ? xstrdup(b->corrupt) : NULL;
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

void series_item_from_mail(struct item *it, const struct mail *m)
{
	const struct mail_part *text = NULL, *diffp = NULL;
	struct body b = { 0 };
	size_t off;

	series_tags_parse(&it->tags, m->subject);
	for (size_t i = 0; i < m->nparts; i++) {
		if (!text && (!m->parts[i].attachment || i == 0))
			text = &m->parts[i];
		if (!diffp && series_has_diff(m->parts[i].text, m->parts[i].len))
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
	off = series_inbody_headers(&b, diffp->text, diffp->len, 0);
	if (it->tags.reply && !(diffp != text && b.subject)) {
		it->kind = ITEM_SKIP;
		it->skip_why = xasprintf("'%s' is a reply", m->subject);
		series_body_release(&b);
		return;
	}
	if (b.subject)
		series_tags_inbody(&it->tags, b.subject);
	series_body_split(&b, diffp->text, diffp->len, off);
	if (b.diff_off == b.diff_end) {
		it->kind = ITEM_SKIP;
		it->skip_why = xasprintf("'%s' has no diff after its message", m->subject);
		series_body_release(&b);
		return;
	}

	struct patch *p = xcalloc(1, sizeof(*p));
	size_t emb = series_embedded_format_patch(diffp->text, b.notes_off, b.notes_end);
	if (emb != (size_t)-1) {
		/* git am would commit the prose before '---'; the author put the
		 * real commit (headers, message) after it: take that. */
		struct body e = { 0 };
		size_t eoff = series_inbody_headers(&e, diffp->text, b.notes_end, emb);
		series_body_split(&e, diffp->text, b.notes_end, eoff);
		free(b.from);
		free(b.date);
		b.from = e.from, e.from = NULL;
		b.date = e.date, e.date = NULL;
		if (e.subject)
			series_tags_inbody(&it->tags, e.subject);
		b.msg_off = e.msg_off;
		b.msg_end = e.msg_end;
		b.notes_off = e.notes_off;
		series_body_release(&e);
		p->warning = xstrdup("the commit message comes from the format-patch embedded "
				     "after '---' (git am would take the prose before it)");
	} else if (diffp != text && text && !b.subject) {
		/* diff in an attachment without headers: the message is the body */
		struct body mb = { 0 };
		size_t moff = series_inbody_headers(&mb, text->text, text->len, 0);
		series_body_split(&mb, text->text, text->len, moff);
		free(b.from);
		b.from = mb.from, mb.from = NULL;
		char *msg = text_slice(text->text, mb.msg_off, mb.msg_end, text->charset);
		series_body_release(&mb);
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
		series_trailers_parse(p, msg);
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
	series_body_release(&b);
	p->k = it->tags.k;
	p->m = it->tags.m;
	note_quoted_crlf(p, diffp);
	it->patch = p;
}

void series_item_release(struct item *it)
{
	series_tags_release(&it->tags);
	if (it->patch) {
		series_patch_release(it->patch);
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
