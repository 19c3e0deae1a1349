/* series_source.c - see series_source.h: files, stdin and message-ids in;
 * series revisions out; every revision of a series found from one. */
#define LOG_MODULE "series"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "kernel/inbox.h"
#include "log.h"
#include "wrap/mbox.h"
#include "kernel/series_source.h"
#include "util.h"

/* 256 MiB, as series_load: far above any series, low enough to refuse a
 * disk image. */
#define SOURCE_MAX_BYTES ((size_t)256 << 20)

bool series_source_is_ref(const char *arg)
{
	struct stat st;
	char *id = NULL;

	if (!strcmp(arg, "-") || stat(arg, &st) == 0)
		return false;
	if (inbox_ref_parse(&id, arg))
		return false;
	free(id);
	return true;
}

bool series_source_any_ref(char *const *args, size_t nargs)
{
	for (size_t i = 0; i < nargs; i++)
		if (series_source_is_ref(args[i]))
			return true;
	return false;
}

static int read_stdin(char **out, size_t *len, struct buf *err)
{
	struct buf b = BUF_INIT_MAX(SOURCE_MAX_BYTES);
	char chunk[65536];
	ssize_t n;

	while ((n = read(0, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			buf_release(&b);
			return err_setf(err, e, "cannot read standard input: %s", strerror(-e));
		}
		if (buf_append(&b, chunk, (size_t)n)) {
			buf_release(&b);
			return err_setf(err, -EFBIG, "standard input is larger than %zu bytes",
					SOURCE_MAX_BYTES);
		}
	}
	*len = b.len;
	*out = b.ptr ? buf_detach(&b) : xstrdup("");
	return 0;
}

/* The thread of msgid as mbox bytes (*data, *len; caller frees). */
static int fetch_thread(char **data, size_t *len, const char *msgid,
			const struct series_source_opts *o, struct buf *err)
{
	struct inbox ib = { o->db, o->inbox_url, o->refresh };
	struct buf b = BUF_INIT_MAX(SOURCE_MAX_BYTES);
	bool cached = false;
	int r;

	if (!o->db)
		return err_setf(err, -EINVAL, "message <%s>: no store to keep the fetched thread in",
				msgid);
	if ((r = inbox_thread(&ib, &b, &cached, msgid, err))) {
		buf_release(&b);
		return r;
	}
	log_info("thread of <%s>: %zu bytes%s", msgid, b.len, cached ? " (kept copy)" : "");
	*len = b.len;
	*data = b.ptr ? buf_detach(&b) : xstrdup("");
	return 0;
}

/* Does revision s hold the message msgid (its cover or one of its patches)? */
static bool series_has_message(const struct series *s, const char *msgid)
{
	if (s->cover_message_id && !strcmp(s->cover_message_id, msgid))
		return true;
	for (size_t i = 0; i < s->npatches; i++)
		if (s->patches[i].message_id && !strcmp(s->patches[i].message_id, msgid))
			return true;
	return false;
}

/* Keep, of the revisions in v, those of the thread of msgid: version
 * `want`, else the one holding msgid when it is a patch or cover, else the
 * newest. Frees the others. */
static int pick_revision(struct series **v, size_t *n, const char *msgid, int want,
			 struct buf *err)
{
	ssize_t keep = -1;
	struct buf have = BUF_INIT;

	for (size_t i = 0; i < *n; i++) {
		if (v[i]->report)
			continue;
		buf_printf(&have, "%sv%d", i ? ", " : "", v[i]->version);
		if (want ? v[i]->version == want : keep < 0 || v[i]->version > v[keep]->version)
			keep = (ssize_t)i;
	}
	(void)msgid;
	if (keep < 0) {
		int r = err_setf(err, -EINVAL, "-v %d: the thread of <%s> has %s", want, msgid,
				 have.len ? buf_str(&have) : "no revision");
		buf_release(&have);
		return r;
	}
	buf_release(&have);
	for (size_t i = 0; i < *n; i++)
		if ((ssize_t)i != keep)
			series_free(v[i]);
	v[0] = v[keep];
	*n = 1;
	return 0;
}

int series_source_load(struct series ***out, size_t *n_out, char *const *args, size_t nargs,
		       const struct series_source_opts *o, struct buf *err)
{
	char **datas = xcalloc(nargs + 1, sizeof(*datas));
	size_t *lens = xcalloc(nargs + 1, sizeof(*lens));
	char **names = xcalloc(nargs + 1, sizeof(*names));
	bool *rd = xcalloc(nargs + 1, sizeof(*rd));
	char *msgid = NULL;
	struct series **v = NULL;
	size_t n = 0, nref = 0;
	int r = 0;

	for (size_t i = 0; i < nargs; i++) {
		if (!strcmp(args[i], "-")) {
			names[i] = xstrdup("<stdin>");
			rd[i] = o->mboxrd;
			r = read_stdin(&datas[i], &lens[i], err);
		} else if (series_source_is_ref(args[i])) {
			free(msgid);
			inbox_ref_parse(&msgid, args[i]);
			names[i] = xasprintf("<%s>", msgid);
			rd[i] = true; /* public-inbox serves mboxrd */
			r = fetch_thread(&datas[i], &lens[i], msgid, o, err);
			nref++;
		} else {
			names[i] = xstrdup(args[i]);
			rd[i] = o->mboxrd;
			r = read_file(&datas[i], &lens[i], args[i], SOURCE_MAX_BYTES);
			if (r)
				err_setf(err, r, "cannot read '%s': %s", args[i], strerror(-r));
		}
		if (r)
			goto out;
	}
	r = series_load_buffers(&v, &n, (const char *const *)datas, lens,
				(const char *const *)names, rd, nargs, err);
	if (r)
		goto out;
	/* one message-id: the revision it names in its thread */
	if (nref == 1 && nargs == 1 && (r = pick_revision(v, &n, msgid, o->version, err))) {
		series_free_all(v, n);
		goto out;
	}
	*out = v;
	*n_out = n;
out:
	for (size_t i = 0; i < nargs; i++) {
		free(datas[i]);
		free(names[i]);
	}
	free(datas);
	free(lens);
	free(names);
	free(rd);
	free(msgid);
	return r;
}

/* ---- every revision ---- */

struct found {
	struct series_revision *v;
	size_t n;
	char **queue_id, **queue_how; /* message-ids to look at, and how each was found */
	size_t nqueue, qhead;
	char **seen; size_t nseen;   /* message-ids fetched or queued */
	const char *name, *change_id; /* of the series given (borrowed from v[0]) */
};

static bool seen(struct found *f, const char *id)
{
	for (size_t i = 0; i < f->nseen; i++)
		if (!strcmp(f->seen[i], id))
			return true;
	return false;
}

static void mark_seen(struct found *f, const char *id)
{
	if (seen(f, id))
		return;
	f->seen = xrealloc(f->seen, (f->nseen + 1) * sizeof(*f->seen));
	f->seen[f->nseen++] = xstrdup(id);
}

static void enqueue(struct found *f, const char *id, char *how)
{
	if (seen(f, id)) {
		free(how);
		return;
	}
	mark_seen(f, id);
	f->queue_id = xrealloc(f->queue_id, (f->nqueue + 1) * sizeof(*f->queue_id));
	f->queue_how = xrealloc(f->queue_how, (f->nqueue + 1) * sizeof(*f->queue_how));
	f->queue_id[f->nqueue] = xstrdup(id);
	f->queue_how[f->nqueue++] = how;
}

static const char *rev_id(const struct series *s)
{
	return s->cover_message_id ? s->cover_message_id :
	       s->npatches ? s->patches[0].message_id : "";
}

static bool have_revision(const struct found *f, const struct series *s)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->v[i].series && (!strcmp(f->v[i].message_id, rev_id(s)) ||
				       series_has_message(f->v[i].series, rev_id(s))))
			return true;
	return false;
}

static void add_row(struct found *f, struct series *s, const char *id, const char *how)
{
	f->v = xrealloc(f->v, (f->n + 1) * sizeof(*f->v));
	f->v[f->n].series = s;
	f->v[f->n].message_id = xstrdup(id);
	f->v[f->n].found = xstrdup(how);
	f->n++;
}

/* Queue the messages s's cover links to: every URL in it naming a message
 * (inbox_ref_parse), how = "'Link to vN' in vM's cover" or "linked from
 * vM's cover". */
static void queue_links(struct found *f, const struct series *s)
{
	const char *t = s->cover_body, *p;

	if (!t)
		return;
	for (p = t; (p = strstr(p, "http")); ) {
		const char *e = p + strcspn(p, " \t\n<>()[]\"'");
		char *url = xasprintf("%.*s", (int)(e - p), p), *id = NULL;
		const char *bol = p;
		while (bol > t && bol[-1] != '\n')
			bol--;
		if (!inbox_ref_parse(&id, url)) {
			const char *lt = strstr(bol, "Link to v");
			char *how;
			if (lt && lt < p)
				how = xasprintf("'%.*s' in v%d's cover", (int)strcspn(lt, ":"), lt,
						s->version);
			else
				how = xasprintf("linked from v%d's cover", s->version);
			enqueue(f, id, how);
			free(id);
		}
		free(url);
		p = e;
	}
}

static bool same_series(const struct found *f, const struct series *s)
{
	if (f->change_id && s->change_id)
		return !strcmp(f->change_id, s->change_id);
	return !strcmp(f->name, s->name);
}

static void mark_series(struct found *f, const struct series *s);

/* Fetch the thread of the next queued id; add its revisions that belong. */
static void visit(struct found *f, const struct series_source_opts *o, size_t qi)
{
	const char *id = f->queue_id[qi], *how = f->queue_how[qi];
	struct series **v = NULL;
	struct buf why = BUF_INIT;
	char *data = NULL, *name = xasprintf("<%s>", id);
	size_t len = 0, n = 0;
	int r;

	r = fetch_thread(&data, &len, id, o, &why);
	if (r == -ENOENT) {
		add_row(f, NULL, id, how);
		goto out;
	}
	if (r || series_load_buffer(&v, &n, data, len, name, &why)) {
		log_warn("%s (%s): %s", name, how, buf_str(&why));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (!same_series(f, v[i]) || have_revision(f, v[i]))
			continue;
		add_row(f, v[i], rev_id(v[i]), how);
		mark_series(f, v[i]);
		queue_links(f, v[i]);
		v[i] = NULL;
	}
out:
	series_free_all(v, n);
	buf_release(&why);
	free(data);
	free(name);
}

/* Queue the first messages of a search's answer (covers, or first patches
 * of series without one): subjects that are not replies. */
static void search(struct found *f, const struct series_source_opts *o, const char *q)
{
	struct inbox ib = { o->db, o->inbox_url, o->refresh };
	struct buf b = BUF_INIT_MAX(SOURCE_MAX_BYTES), why = BUF_INIT;
	struct mail **m = NULL;
	size_t n = 0;

	if (inbox_search(&ib, &b, NULL, q, &why) ||
	    mbox_parse(&m, &n, b.ptr ? b.ptr : "", b.len, q, true, &why)) {
		log_warn("search '%s': %s", q, buf_str(&why));
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (*m[i]->message_id && strncasecmp(m[i]->subject, "re:", 3))
			enqueue(f, m[i]->message_id, xasprintf("search %s", q));
out:
	mail_free_all(m, n);
	buf_release(&b);
	buf_release(&why);
}

static int cmp_rev(const void *a, const void *b)
{
	const struct series_revision *x = a, *y = b;
	int vx = x->series ? x->series->version : 1 << 30;
	int vy = y->series ? y->series->version : 1 << 30;

	if (vx != vy)
		return vx < vy ? -1 : 1;
	return 0;
}

/* The subject words of s's cover (or first patch), for s:"…". */
static char *subject_query(const struct series *s)
{
	const char *subj = s->cover_subject ? s->cover_subject :
			   s->npatches ? s->patches[0].subject : "";
	struct buf b = BUF_INIT;

	/* the cover_subject keeps its [PATCH …] prefix; the words after it */
	if (*subj == '[' && strchr(subj, ']'))
		subj = strchr(subj, ']') + 1;
	while (*subj == ' ')
		subj++;
	buf_puts(&b, "s:\"");
	for (; *subj; subj++)
		if (*subj != '"')
			buf_append(&b, subj, 1);
	buf_puts(&b, "\"");
	return buf_detach(&b);
}

/* Mark every message of s as seen, so a link to one is not fetched again. */
static void mark_series(struct found *f, const struct series *s)
{
	if (s->cover_message_id)
		mark_seen(f, s->cover_message_id);
	for (size_t i = 0; i < s->npatches; i++)
		if (s->patches[i].message_id && *s->patches[i].message_id)
			mark_seen(f, s->patches[i].message_id);
}

static void drain(struct found *f, const struct series_source_opts *o)
{
	for (; f->qhead < f->nqueue; f->qhead++)
		visit(f, o, f->qhead);
}

int series_revisions(struct series_revision **out, size_t *n_out, const char *ref,
		     const struct series_source_opts *o, struct buf *err)
{
	struct found f = { 0 };
	struct series **v = NULL;
	char *id = NULL, *q, *data = NULL, *name = NULL;
	size_t n = 0, len = 0;
	int r;

	if (inbox_ref_parse(&id, ref))
		return err_setf(err, -EINVAL, "'%s' is not a message-id or a URL naming one", ref);
	name = xasprintf("<%s>", id);
	mark_seen(&f, id);
	if ((r = fetch_thread(&data, &len, id, o, err)) ||
	    (r = series_load_buffer(&v, &n, data, len, name, err)))
		goto out;
	/* every revision in the given thread, the one holding id first */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			if (!v[i] || (pass == 0 && !series_has_message(v[i], id)))
				continue;
			if (!f.n) {
				f.name = v[i]->name;
				f.change_id = v[i]->change_id;
			}
			char *how = f.n ? xasprintf("in the thread of <%s>", id) : xstrdup("given");
			add_row(&f, v[i], rev_id(v[i]), how);
			free(how);
			mark_series(&f, v[i]);
			v[i] = NULL;
		}
	for (size_t i = 0; i < f.n; i++)
		queue_links(&f, f.v[i].series);
	drain(&f, o);
	if (f.change_id) {
		q = xasprintf("\"change-id: %s\"", f.change_id);
		search(&f, o, q);
		free(q);
	}
	q = subject_query(f.v[0].series);
	search(&f, o, q);
	free(q);
	drain(&f, o);
	qsort(f.v, f.n, sizeof(*f.v), cmp_rev);
	*out = f.v;
	*n_out = f.n;
	f.v = NULL;
	f.n = 0;
out:
	series_free_all(v, n);
	free(data);
	free(name);
	free(id);
	series_revisions_free(f.v, f.n);
	for (size_t i = 0; i < f.nqueue; i++) {
		free(f.queue_id[i]);
		free(f.queue_how[i]);
	}
	free(f.queue_id);
	free(f.queue_how);
	for (size_t i = 0; i < f.nseen; i++)
		free(f.seen[i]);
	free(f.seen);
	return r;
}

void series_revisions_free(struct series_revision *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		series_free(v[i].series);
		free(v[i].message_id);
		free(v[i].found);
	}
	free(v);
}
