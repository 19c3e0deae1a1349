/* lab.c - lab hosts: choosing them, checking one, and placing a job's
 * pending runs on them in parallel (see lab.h). */
#define LOG_MODULE "lab"
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/db_lab.h"
#include "store/db_runs.h"
#include "store/db_compare.h"
#include "error.h"
#include "guest/hostfs.h"
#include "exec/lab.h"
#include "log.h"
#include "judge/progress.h"
#include "guest/runner.h"
#include "judge/stats.h"

/* ---- choosing hosts ---- */

void lab_pool_release(struct lab_pool *p)
{
	for (size_t i = 0; p && i < p->n; i++) {
		free(p->v[i].name);
		free(p->v[i].uri);
	}
	if (p)
		free(p->v);
	if (p)
		memset(p, 0, sizeof(*p));
}

static void pool_add(struct lab_pool *p, const char *name, const char *uri, int slots)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->v[i].name, name))
			return;
	p->v = xrealloc(p->v, (p->n + 1) * sizeof(*p->v));
	p->v[p->n++] = (struct lab_host){ xstrdup(name), xstrdup(uri), slots > 0 ? slots : 1 };
}

static bool has_label(const char *labels_json, const char *key, const char *value)
{
	json_t *o = json_loads(labels_json ? labels_json : "{}", 0, NULL);
	const char *v = json_string_value(json_object_get(o, key));
	bool yes = v && !strcmp(v, value);

	json_decref(o);
	return yes;
}

static const struct db_lab_host *stored(const struct db_lab_host *h, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(h[i].name, name))
			return &h[i];
	return NULL;
}

int lab_select(struct lab_pool *out, struct db *db, const char *spec, const char *default_uri,
	       struct buf *err)
{
	struct db_lab_host *h = NULL;
	size_t n = 0;
	const char *local_uri = default_uri ? default_uri : vm_default_uri();
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = db_lab_hosts(db, &h, &n, err)))
		return r;
	if (!spec || !*spec) {
		const struct db_lab_host *l = stored(h, n, LAB_LOCAL);
		pool_add(out, LAB_LOCAL, l ? l->uri : local_uri, l ? l->slots : 1);
	} else if (!strcmp(spec, "all")) {
		for (size_t i = 0; i < n; i++)
			if (strcmp(h[i].state, "down"))
				pool_add(out, h[i].name, h[i].uri, h[i].slots);
		if (n == 0)
			pool_add(out, LAB_LOCAL, local_uri, 1);
	} else if (strchr(spec, '=')) {
		char *key = xstrndup(spec, strcspn(spec, "="));
		const char *value = spec + strlen(key) + 1;

		for (size_t i = 0; i < n; i++)
			if (strcmp(h[i].state, "down") && has_label(h[i].labels_json, key, value))
				pool_add(out, h[i].name, h[i].uri, h[i].slots);
		free(key);
	} else {
		char *names = xstrdup(spec), *save = NULL;

		for (char *t = strtok_r(names, ",", &save); t && !r; t = strtok_r(NULL, ",", &save)) {
			const struct db_lab_host *s = stored(h, n, t);

			if (s)
				pool_add(out, s->name, s->uri, s->slots);
			else if (!strcmp(t, LAB_LOCAL))
				pool_add(out, LAB_LOCAL, local_uri, 1);
			else
				r = err_setf(err, -ENOENT, "no lab host '%s' (kcanary lab list shows them;"
					     " kcanary lab add NAME URI adds one)", t);
		}
		free(names);
	}
	if (!r && out->n == 0)
		r = err_setf(err, -ENOENT, "no lab host that is not down matches '%s'"
			     " (kcanary lab list)", spec);
	if (r)
		lab_pool_release(out);
	db_lab_hosts_free(h, n);
	return r;
}

/* ---- checking one ---- */

int lab_check(struct db *db, const char *name, struct vm_host_info *info,
	      struct vm_accel_info *ai, bool *ok, struct buf *err)
{
	struct db_lab_host *h = NULL;
	const struct db_lab_host *me;
	struct db_lab_check c = { .cpus = -1, .memory_mib = -1, .free_mib = -1 };
	struct vm_conn *conn = NULL;
	struct buf why = BUF_INIT;
	size_t n = 0;
	int r;

	*ok = false;
	memset(info, 0, sizeof(*info));
	vm_accel_from_caps(ai, NULL, false, NULL);
	if ((r = db_lab_hosts(db, &h, &n, err)))
		return r;
	if (!(me = stored(h, n, name))) {
		r = err_setf(err, -ENOENT, "no lab host '%s' (kcanary lab add NAME URI adds one)", name);
		goto out;
	}
	if (vm_conn_open(&conn, me->uri, &why) == 0 && vm_host_info(info, conn, &why) == 0) {
		c.cpus = info->cpus;
		c.memory_mib = (int64_t)info->memory_mib;
		c.free_mib = (int64_t)info->free_mib;
		c.libvirt_version = info->libvirt_version;
		c.qemu_version = info->hv_version;
		/* the host's own: PVM offers kvm domains that cannot boot a
		 * stock kernel (vm_accel_from_caps()) */
		vm_accel_probe_host(ai, conn, NULL);
		c.accel = vm_accel_name(ai->accel);
		c.ok = info->has_qemu && info->pool_ok;
		if (!info->has_qemu)
			err_setf(&why, -ENODEV, "the host's libvirt (%s driver) cannot run QEMU guests",
				 info->driver);
		else if (!info->pool_ok)
			err_setf(&why, -EIO, "%s", info->pool_why);
	}
	if (why.len)
		why.ptr[strcspn(why.ptr, "\n")] = '\0';   /* the hint is for a terminal */
	c.why = why.len ? buf_str(&why) : NULL;
	*ok = c.ok;
	r = db_lab_host_checked(db, name, &c, err);
	if (!r && !c.ok && err)
		buf_puts(err, buf_str(&why));
out:
	vm_conn_close(conn);
	buf_release(&why);
	db_lab_hosts_free(h, n);
	return r;
}

int lab_probe_accel(struct db *db, const char *name, struct vm_accel_info *ai, struct buf *err)
{
	struct db_lab_host *h = NULL;
	const struct db_lab_host *me;
	struct vm_conn *conn = NULL;
	size_t n = 0;
	int r;

	vm_accel_from_caps(ai, NULL, false, NULL);
	if ((r = db_lab_hosts(db, &h, &n, err)))
		return r;
	if (!(me = stored(h, n, name)))
		r = err_setf(err, -ENOENT, "no lab host '%s' (kcanary lab add NAME URI adds one)", name);
	else if ((r = vm_conn_open(&conn, me->uri, err)) || (r = vm_accel_probe_host(ai, conn, err)))
		r = -EHOSTUNREACH;
	else
		r = db_lab_host_set_accel(db, name, vm_accel_name(ai->accel), err);
	vm_conn_close(conn);
	db_lab_hosts_free(h, n);
	return r;
}

/* ---- builds and runs overlapping ---- */

void lab_builds_init(struct lab_builds *b, bool going, int overlap)
{
	memset(b, 0, sizeof(*b));
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->cond, NULL);
	b->going = going;
	b->overlap = overlap;
}

void lab_builds_release(struct lab_builds *b)
{
	pthread_mutex_destroy(&b->lock);
	pthread_cond_destroy(&b->cond);
	free(b->ready);
	b->ready = NULL;
	b->nready = 0;
}

void lab_builds_ready(struct lab_builds *b, int64_t variant_id)
{
	pthread_mutex_lock(&b->lock);
	b->ready = xrealloc(b->ready, (b->nready + 1) * sizeof(*b->ready));
	b->ready[b->nready++] = variant_id;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

void lab_builds_end(struct lab_builds *b)
{
	pthread_mutex_lock(&b->lock);
	b->going = false;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

int lab_overlap_parse(const char *s)
{
	if (s && !strcmp(s, "yes"))
		return LAB_OVERLAP_YES;
	if (s && !strcmp(s, "no"))
		return LAB_OVERLAP_NO;
	return LAB_OVERLAP_AUTO;
}

static bool is_ready(const int64_t *ready, size_t nready, int64_t variant_id)
{
	for (size_t i = 0; i < nready; i++)
		if (ready[i] == variant_id)
			return true;
	return false;
}

enum lab_pick lab_pick_next(const struct db_pending_run *runs, const bool *taken, size_t n,
			    const int64_t *ready, size_t nready, bool going, bool may_overlap,
			    size_t *idx)
{
	bool left = false;

	if (going && !may_overlap) {
		for (size_t i = 0; i < n; i++)
			if (!taken[i])
				return LAB_PICK_WAIT;
		return LAB_PICK_NONE;
	}
	for (size_t i = 0; i < n; i++) {
		if (taken[i])
			continue;
		if (is_ready(ready, nready, runs[i].variant_id)) {
			*idx = i;
			return LAB_PICK_RUN;
		}
		left = true;
	}
	return left && going ? LAB_PICK_WAIT : LAB_PICK_NONE;
}

/* ---- placing runs ---- */

/* A block: runs to go to one host in this order. */
struct block {
	struct db_pending_run *runs;   /* owned copies */
	size_t n;
	struct block *next;
};

struct host_state {
	const struct lab_host *h;
	struct vm_accel_info ai;       /* the host's, from its last probe (under lock) */
	bool warned;                   /* its TCG warning said */
	int fails;                     /* consecutive infra runs or failed probes */
	bool down;
	bool stored;                   /* a row in lab_hosts */
	bool said_wait;                /* "waits for the builds" said */
};

struct sched {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct block *queue;           /* taken from the head; given back to the head */
	int busy;                      /* workers inside a block */
	bool stop;                     /* interrupted, cancelled or a store error */
	int rc;                        /* the first store error */
	struct buf err;
	const struct lab_job *lj;
	int64_t job_id;
	int total, done;
	struct host_state *hosts;
	size_t nhosts;
	bool parallel;
};

struct worker {
	struct sched *s;
	struct host_state *hs;
	int slot;
	pthread_t t;
};

static void say(const struct sched *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const struct sched *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	progress_vsay(s->lj->o->quiet, fmt, ap);
	va_end(ap);
}

static struct db_pending_run run_copy(const struct db_pending_run *p)
{
	struct db_pending_run c = *p;

	c.variant = p->variant ? xstrdup(p->variant) : NULL;
	c.cell = p->cell ? xstrdup(p->cell) : NULL;
	c.fs = p->fs ? xstrdup(p->fs) : NULL;
	c.params_json = p->params_json ? xstrdup(p->params_json) : NULL;
	c.image_path = p->image_path ? xstrdup(p->image_path) : NULL;
	c.modules_dir = p->modules_dir ? xstrdup(p->modules_dir) : NULL;
	return c;
}

static void block_free(struct block *b)
{
	if (!b)
		return;
	db_pending_runs_free(b->runs, b->n);
	free(b);
}

/* Cut the pending runs into blocks by repeat (stored order kept between
 * blocks), each shuffled by the seed and its repeat (Fisher-Yates). */
static struct block *make_blocks(const struct db_pending_run *p, size_t n, uint64_t seed)
{
	struct block *head = NULL, **tail = &head;

	for (size_t i = 0; i < n;) {
		struct block *b = xcalloc(1, sizeof(*b));
		uint64_t rng = seed ^ (0x9e3779b97f4a7c15ULL * (uint64_t)p[i].repeat_idx);
		size_t j = i;

		while (j < n && p[j].repeat_idx == p[i].repeat_idx)
			j++;
		b->n = j - i;
		b->runs = xcalloc(b->n, sizeof(*b->runs));
		for (size_t k = 0; k < b->n; k++)
			b->runs[k] = run_copy(&p[i + k]);
		for (size_t k = b->n; k > 1; k--) {
			size_t x = stats_rand64(&rng) % k;
			struct db_pending_run t = b->runs[k - 1];
			b->runs[k - 1] = b->runs[x];
			b->runs[x] = t;
		}
		*tail = b;
		tail = &b->next;
		i = j;
	}
	return head;
}

/* Under s->lock. */
static void give_back(struct sched *s, struct block *b)
{
	b->next = s->queue;
	s->queue = b;
	pthread_cond_broadcast(&s->cond);
}

static void set_error(struct sched *s, int rc, const struct buf *err)
{
	pthread_mutex_lock(&s->lock);
	if (!s->rc) {
		s->rc = rc;
		buf_puts(&s->err, buf_str(err));
	}
	s->stop = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/* The host failed (an infra run, a probe): count it; down after
 * LAB_DOWN_AFTER in a row. Stored for a stored host. */
static void host_failed(struct sched *s, struct worker *w, struct db *db, const char *why)
{
	bool down;

	pthread_mutex_lock(&s->lock);
	down = ++w->hs->fails >= LAB_DOWN_AFTER;
	if (down && !w->hs->down) {
		w->hs->down = true;
		say(s, "lab host %s is down: %d failures in a row (%s); 'kcanary lab check %s'"
		    " brings it back", w->hs->h->name, w->hs->fails, why, w->hs->h->name);
	}
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	if (w->hs->stored)
		db_lab_host_run_ended(db, w->hs->h->name, true, LAB_DOWN_AFTER, why, NULL, NULL);
}

static void host_worked(struct sched *s, struct worker *w, struct db *db)
{
	pthread_mutex_lock(&s->lock);
	w->hs->fails = 0;
	pthread_mutex_unlock(&s->lock);
	if (w->hs->stored)
		db_lab_host_run_ended(db, w->hs->h->name, false, LAB_DOWN_AFTER, NULL, NULL, NULL);
}

/* Take a block, or NULL when there is nothing more for this worker. */
static struct block *take(struct sched *s, struct worker *w)
{
	struct block *b = NULL;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		if (s->stop || w->hs->down || runner_interrupted())
			break;
		if (s->queue) {
			b = s->queue;
			s->queue = b->next;
			b->next = NULL;
			s->busy++;
			break;
		}
		if (s->busy == 0)
			break;
		/* another host may give a block back */
		pthread_cond_wait(&s->cond, &s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return b;
}

static void block_done(struct sched *s)
{
	pthread_mutex_lock(&s->lock);
	s->busy--;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/* Ask w's host, before a block goes there: does it answer, and which
 * accelerator does it have (its own, vm_accel_probe_host(): what g's runs
 * there use and record; stored on its row, and its TCG warning said once)? */
static bool probe(struct worker *w, struct db *db, struct guest_ctx *g, struct buf *why)
{
	struct sched *s = w->s;
	struct vm_conn *c = NULL;
	bool warn;
	int r = vm_conn_open(&c, w->hs->h->uri, why);

	if (r == 0)
		guest_ctx_probe_host(g, c);
	vm_conn_close(c);
	if (r)
		return false;
	pthread_mutex_lock(&s->lock);
	w->hs->ai = g->ai;
	warn = g->ai.accel == VM_ACCEL_TCG && !w->hs->warned;
	w->hs->warned = true;
	pthread_mutex_unlock(&s->lock);
	if (warn)
		say(s, "warning: %s (lab host %s: %s)", vm_tcg_warning, w->hs->h->name, g->ai.why);
	if (w->hs->stored && !s->lj->o->accel)
		db_lab_host_set_accel(db, w->hs->h->name, vm_accel_name(g->ai.accel), NULL);
	return true;
}

static bool cancelled(struct db *db, int64_t job_id)
{
	bool yes = false;

	return db_job_is_cancelled(db, job_id, &yes, NULL) == 0 && yes;
}

/* Whether the worker should stop taking runs (interrupted, cancelled,
 * another worker's store error). */
static bool should_stop(struct sched *s, struct db *db)
{
	bool stop;

	pthread_mutex_lock(&s->lock);
	stop = s->stop;
	pthread_mutex_unlock(&s->lock);
	if (stop)
		return true;
	if (cancelled(db, s->job_id) || runner_interrupted()) {
		pthread_mutex_lock(&s->lock);
		s->stop = true;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
		return true;
	}
	return false;
}

/* The next run of b for w (lab_pick_next() on the job's builds; every run
 * is ready without builds). On LAB_PICK_WAIT it has waited up to a second
 * for a build to end; the caller asks again. */
static enum lab_pick next_run(struct worker *w, struct block *b, const bool *taken, size_t *idx)
{
	struct sched *s = w->s;
	struct lab_builds *lb = s->lj->builds;
	bool overlap, say_wait = false;
	enum lab_pick pk;

	if (!lb) {
		for (size_t i = 0; i < b->n; i++)
			if (!taken[i]) {
				*idx = i;
				return LAB_PICK_RUN;
			}
		return LAB_PICK_NONE;
	}
	pthread_mutex_lock(&lb->lock);
	overlap = lb->overlap == LAB_OVERLAP_YES ||
		  (lb->overlap == LAB_OVERLAP_AUTO && !hostfs_uri_local(w->hs->h->uri));
	pk = lab_pick_next(b->runs, taken, b->n, lb->ready, lb->nready, lb->going, overlap, idx);
	if (pk == LAB_PICK_WAIT) {
		struct timespec ts;

		if (!overlap) {
			pthread_mutex_lock(&s->lock);
			say_wait = !w->hs->said_wait;
			w->hs->said_wait = true;
			pthread_mutex_unlock(&s->lock);
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&lb->cond, &lb->lock, &ts);
	}
	pthread_mutex_unlock(&lb->lock);
	if (say_wait)
		say(s, "lab host %s (%s) %s: its runs wait until the kernel builds end"
		    " (--overlap-builds yes overlaps them)", w->hs->h->name, w->hs->h->uri,
		    lb->overlap == LAB_OVERLAP_NO ? "does not overlap builds (--overlap-builds no)"
		    : "is this machine, where the kernels build");
	return pk;
}

/* The untaken runs of b but skip, after first (owned copy) when given:
 * what goes back to the queue. */
static struct block *rest_of(const struct block *b, const bool *taken, size_t skip,
			     const struct db_pending_run *first)
{
	struct block *back = xcalloc(1, sizeof(*back));

	back->runs = xcalloc(b->n + 1, sizeof(*back->runs));
	if (first)
		back->runs[back->n++] = *first;
	for (size_t k = 0; k < b->n; k++)
		if (!taken[k] && k != skip)
			back->runs[back->n++] = run_copy(&b->runs[k]);
	return back;
}

/* Run one run p of b on w's host. *host_fault: it was 'infra' (the caller
 * gives the rest back); *stop: interrupted (rescheduled, stop here).
 * Returns 0, or a store error. */
static int run_one(struct worker *w, struct db *db, struct guest_ctx *g,
		   struct db_pending_run *p, char *status, size_t status_len,
		   char *why, size_t why_len, struct buf *err)
{
	struct sched *s = w->s;
	const char *metric = s->lj->metric;
	struct guest_result res;
	char label[256], val[64] = "";
	int seq, r;
	double v;

	pthread_mutex_lock(&s->lock);
	seq = ++s->done;
	pthread_mutex_unlock(&s->lock);
	snprintf(label, sizeof(label), "run %d/%d %s %s r%d on %s", seq, s->total, p->variant,
		 p->cell && *p->cell ? p->cell : "-", p->repeat_idx, w->hs->h->name);
	say(s, "%s", label);
	if (!p->image_path && (r = db_run_kernel(db, p, err)))
		return r;
	if ((r = db_run_set_lab_host(db, p->id, w->hs->h->name, err)) ||
	    (r = guest_run_pending(&res, g, &s->lj->j, p, s->parallel ? NULL : label, err)))
		return r;
	if (metric && db_run_summary_value(db, p->id, metric, &v, NULL) == 0)
		snprintf(val, sizeof(val), ", %s %.1f", metric, round(v * 1000) / 1000);
	say(s, "  %s (%s)%s%s%s", res.run.status, w->hs->h->name, val,
	    res.run.error[0] ? ": " : "", res.run.error);
	snprintf(status, status_len, "%s", res.run.status);
	snprintf(why, why_len, "%s", res.run.error);
	return 0;
}

/* Run block b on w's host, each run as lab_pick_next() picks it. Returns
 * 0, or a store error. A run the host failed gives back a fresh repeat
 * and the rest of the block. */
static int run_block(struct worker *w, struct db *db, struct guest_ctx *g, struct block *b,
		     struct buf *err)
{
	struct sched *s = w->s;
	bool *taken = xcalloc(b->n ? b->n : 1, sizeof(*taken));
	int r = 0;

	for (;;) {
		char status[32], why[1024];
		struct db_pending_run fresh;
		enum lab_pick pk;
		size_t i = 0;

		if (should_stop(s, db))
			break;
		if ((pk = next_run(w, b, taken, &i)) == LAB_PICK_NONE)
			break;
		if (pk == LAB_PICK_WAIT)
			continue;
		taken[i] = true;
		if ((r = run_one(w, db, g, &b->runs[i], status, sizeof(status), why, sizeof(why), err)))
			break;
		if (!strcmp(status, "interrupted")) {
			/* kept as it was; a fresh repeat waits for resume */
			r = db_run_reschedule(db, b->runs[i].id, err);
			break;
		}
		if (strcmp(status, "infra")) {
			host_worked(s, w, db);
			continue;
		}
		/* the host's fault: a fresh repeat and the rest of the block
		 * go back for any live host */
		fresh = run_copy(&b->runs[i]);
		if ((r = db_run_reschedule_id(db, b->runs[i].id, &fresh.id, err))) {
			db_pending_runs_free(&fresh, 1);
			break;
		}
		{
			struct block *back = rest_of(b, taken, i, &fresh);

			pthread_mutex_lock(&s->lock);
			s->done--;
			give_back(s, back);
			pthread_mutex_unlock(&s->lock);
		}
		host_failed(s, w, db, why);
		break;
	}
	free(taken);
	return r;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct sched *s = w->s;
	struct guest_opts o = *s->lj->o;
	struct buf err = BUF_INIT;
	struct db *db = NULL;
	struct guest_ctx g;
	int r;

	if ((r = db_open(&db, s->lj->db_path, &err))) {
		set_error(s, r, &err);
		goto out;
	}
	o.uri = w->hs->h->uri;
	o.host = w->hs->h->name;
	guest_ctx_init(&g, db, &o, false);
	for (;;) {
		struct block *b = take(s, w);

		if (!b)
			break;
		buf_reset(&err);
		if (!probe(w, db, &g, &err)) {
			pthread_mutex_lock(&s->lock);
			s->busy--;
			give_back(s, b);
			pthread_mutex_unlock(&s->lock);
			host_failed(s, w, db, buf_str(&err));
			sleep(2);
			continue;
		}
		r = run_block(w, db, &g, b, &err);
		block_free(b);
		block_done(s);
		if (r) {
			set_error(s, r, &err);
			break;
		}
	}
	guest_ctx_release(&g);
out:
	db_close(db);
	buf_release(&err);
	return NULL;
}

int lab_run_pending(struct db *db, int64_t job_id, const struct lab_pool *pool,
		    const struct lab_job *lj, struct buf *err)
{
	struct db_pending_run *runs = NULL;
	struct db_lab_host *stored_h = NULL;
	struct worker *w = NULL;
	struct sched s;
	size_t n = 0, nstored = 0, nw = 0;
	int total = 0, done = 0, r;
	bool planned = false;

	memset(&s, 0, sizeof(s));
	if (lj->builds) {
		pthread_mutex_lock(&lj->builds->lock);
		planned = lj->builds->going;
		pthread_mutex_unlock(&lj->builds->lock);
	}
	if ((r = (planned ? db_job_planned_runs : db_job_pending_runs)(db, job_id, &runs, &n,
								   &total, &done, err)))
		goto out;
	if (n == 0)
		goto out;
	if ((r = db_lab_hosts(db, &stored_h, &nstored, err)))
		goto out;
	if ((r = runner_signals_install())) {
		r = err_setf(err, r, "cannot catch signals: %s", strerror(-r));
		goto out;
	}
	pthread_mutex_init(&s.lock, NULL);
	pthread_cond_init(&s.cond, NULL);
	s.lj = lj;
	/* the TCG warning: once per host, from its own probe (probe()) */
	if (lj->o->accel && strcmp(lj->o->accel, "kvm"))
		say(&s, "warning: %s (--accel %s)", vm_tcg_warning, lj->o->accel);
	s.job_id = job_id;
	s.total = total;
	s.done = done;
	s.queue = make_blocks(runs, n, lj->seed);
	s.nhosts = pool->n;
	s.hosts = xcalloc(pool->n, sizeof(*s.hosts));
	for (size_t i = 0; i < pool->n; i++) {
		s.hosts[i].h = &pool->v[i];
		s.hosts[i].stored = stored(stored_h, nstored, pool->v[i].name) != NULL;
		s.hosts[i].warned = lj->warned && lj->warned[i];
		for (int k = 0; k < pool->v[i].slots; k++) {
			w = xrealloc(w, (nw + 1) * sizeof(*w));
			w[nw++] = (struct worker){ .s = &s, .hs = &s.hosts[i], .slot = k };
		}
	}
	s.parallel = nw > 1;
	{
		struct buf names = BUF_INIT;
		for (size_t i = 0; i < pool->n; i++)
			buf_printf(&names, "%s%s (%s, %d slot%s)", i ? ", " : "", pool->v[i].name,
				   pool->v[i].uri, pool->v[i].slots, pool->v[i].slots > 1 ? "s" : "");
		say(&s, "%zu runs on %s", n, buf_str(&names));
		buf_release(&names);
	}
	for (size_t i = 0; i < nw; i++)
		if (pthread_create(&w[i].t, NULL, worker_main, &w[i])) {
			r = err_setf(err, -EAGAIN, "cannot start a worker thread");
			nw = i;
			pthread_mutex_lock(&s.lock);
			s.stop = true;
			pthread_cond_broadcast(&s.cond);
			pthread_mutex_unlock(&s.lock);
			break;
		}
	for (size_t i = 0; i < nw; i++)
		pthread_join(w[i].t, NULL);
	for (size_t i = 0; lj->warned && i < pool->n; i++)
		lj->warned[i] = s.hosts[i].warned;
	if (!r && s.rc)
		r = err_setf(err, s.rc, "%s", buf_str(&s.err));
	else if (!r && runner_interrupted())
		r = err_setf(err, -EINTR, "interrupted: the run in progress is stored as"
			     " 'interrupted'; 'kcanary resume' carries on");
	else if (!r && s.queue && !cancelled(db, job_id))
		r = err_setf(err, -EHOSTDOWN, "every lab host of the job is down with runs left"
			     " (kcanary lab list; kcanary lab check NAME; then kcanary resume)");
	while (s.queue) {
		struct block *b = s.queue;
		s.queue = b->next;
		block_free(b);
	}
	pthread_mutex_destroy(&s.lock);
	pthread_cond_destroy(&s.cond);
out:
	buf_release(&s.err);
	free(s.hosts);
	free(w);
	db_lab_hosts_free(stored_h, nstored);
	db_pending_runs_free(runs, n);
	return r;
}
