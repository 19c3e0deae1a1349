/* series.c - patch series from mail (see series.h): what b4 does to a
 * thread (cover letter, k/M order, vN, trailers from replies). Each mail
 * is read first by series_item.c (subject tags and trailers in
 * series_tags.c, the body and its diff in series_body.c).
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
#include "kernel/series_item.h"
#include "kernel/series_line.h"

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
	free(s->mail_from);
	free(s->mail_to);
	free(s->mail_cc);
	free(s->base_commit);
	free(s->change_id);
	strv_free(s->prerequisite_patch_ids, s->nprereq);
	strv_free(s->prerequisite_change_ids, s->nprereq_change);
	free(s->stable_review);
	free(s->missing);
	lkp_report_free(s->report);
	for (size_t i = 0; i < s->npatches; i++)
		series_patch_release(&s->patches[i]);
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
	{	/* who a reply goes to: the cover's, else patch 1's sender and list */
		const struct mail *ml = g->cover ? g->cover->mail : first ? first->mail : NULL;
		s->mail_from = xstrdup(ml ? ml->from : "");
		s->mail_to = xstrdup(ml ? ml->to : "");
		s->mail_cc = xstrdup(ml ? ml->cc : "");
	}
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
		series_item_from_mail(it, mails[i]);
	}
	*n += nm;
}

/* Message ids are borrowed from the mails; fix them up once all are read. */
static void items_link(struct item *items, size_t n, struct mail **all)
{
	for (size_t i = 0; i < n; i++) {
		items[i].message_id = all[i]->message_id;
		items[i].in_reply_to = all[i]->in_reply_to;
		items[i].mail = all[i];
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
		series_item_release(&items[i]);
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
