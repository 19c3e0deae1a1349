/* bisect_exec.c - the real bisection: candidates and the oracle that
 * builds, boots and measures them (see bisect_exec.h). */
#define LOG_MODULE "bisect"
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/bisect_exec.h"
#include "store/db_bisect.h"
#include "store/db_runs.h"
#include "store/db_compare.h"
#include "error.h"
#include "guest/guest_run.h"
#include "exec/lab.h"
#include "log.h"
#include "judge/progress.h"
#include "guest/runner.h"
#include "kernel/variant.h"
#include "kernel/variant_build.h"

/* The first line of a commit message (new string). */
static char *first_line(const char *msg)
{
	return xstrndup(msg, strcspn(msg, "\n"));
}

int bisect_cands_from_repo(struct bisect_cands *out, const char *repo_path,
			   const char *old_rev, const char *new_rev, bool first_parent,
			   struct buf *err)
{
	struct repo *r = NULL;
	char (*v)[KC_OID_HEX] = NULL;
	size_t n = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = repo_open(&r, repo_path, false, err)))
		return rc;
	if ((rc = repo_range(r, &v, &n, old_rev, new_rev, first_parent, err)))
		goto out;
	if (!first_parent) {
		/* The engine needs a line: every commit after the culprit is
		 * new. A linearised DAG breaks that on side branches, so a range
		 * with merges is bisected on its first-parent chain, a merge
		 * standing for its branch (what --first-parent does). */
		size_t merges = 0, all = n;

		for (size_t i = 1; i < n; i++)
			merges += repo_commit_nparents(r, v[i], NULL) > 1;   /* read: in the range */
		if (merges) {
			free(v);
			v = NULL;
			if ((rc = repo_range(r, &v, &n, old_rev, new_rev, true, err)))
				goto out;
			log_warn("the range has %zu merge%s: bisecting its first-parent chain (%zu of "
				 "%zu commits; a merge stands for its branch, as with --first-parent). "
				 "To look inside a culprit merge M, bisect its branch: --good "
				 "$(git merge-base M^1 M^2) --bad M^2", merges, merges == 1 ? "" : "s",
				 n, all);
		}
	}
	out->c = xcalloc(n, sizeof(*out->c));
	out->n = n;
	for (size_t i = 0; i < n; i++) {
		struct bisect_cand *c = &out->c[i];
		char *msg = NULL;

		memcpy(c->sha, v[i], KC_OID_HEX);
		if ((rc = repo_commit_info(r, c->sha, &c->author, &c->date_s, NULL, &msg, err)))
			goto out;
		c->subject = first_line(msg);
		free(msg);
		c->name = xasprintf("%.12s %s", c->sha, c->subject);
	}
	rc = 0;
out:
	if (rc)
		bisect_cands_release(out);
	free(v);
	repo_close(r);
	return rc;
}

int bisect_cands_from_kernels(struct bisect_cands *out, char *const *paths, size_t n,
			      struct buf *err)
{
	memset(out, 0, sizeof(*out));
	if (n < 2) {
		buf_printf(err, "--kernels needs at least 2 images (old first), got %zu", n);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++)
		if (access(paths[i], R_OK)) {
			buf_printf(err, "cannot read kernel image '%s' (--kernels item %zu): %s",
				   paths[i], i + 1, strerror(errno));
			return -EINVAL;
		}
	out->c = xcalloc(n, sizeof(*out->c));
	out->n = n;
	for (size_t i = 0; i < n; i++) {
		out->c[i].kernel = xstrdup(paths[i]);
		out->c[i].name = xasprintf("k%zu %s", i, paths[i]);
	}
	return 0;
}

void bisect_cands_release(struct bisect_cands *cs)
{
	for (size_t i = 0; i < cs->n; i++) {
		struct bisect_cand *c = &cs->c[i];
		free(c->kernel);
		free(c->name);
		free(c->subject);
		free(c->author);
		free(c->why);
		free(c->values);
	}
	free(cs->c);
	memset(cs, 0, sizeof(*cs));
}

/* ---- the oracle ---- */

struct oracle {
	struct db *db;
	int64_t job_id;
	const struct job_spec *spec;
	const char *metric;
	const struct guest_opts *o;
	struct guest_ctx g;
	struct guest_job j;
	struct bisect_cands *cands;
	char *params, *cell, *fs;
	struct buf *log;	/* the engine's log, as it grows */
	struct bisect_totals *t;
	struct buf *abort_why;	/* why the oracle stopped the engine */
	int fail;		/* the store's code when it stopped it for that */
	/* --hosts: every run goes through lab.c's placement on pool */
	bool lab;
	struct lab_pool pool;
	int slots;		/* the pool's slots, summed */
	char *db_path;		/* the store's file, for lab.c's workers */
	bool *warned;		/* per pool host: its TCG warning said (lab.h) */
	struct answer { size_t idx; int rc; double v; } *ready;   /* measured, not yet asked */
	size_t nready;
};

/* Stop the engine because the store failed: -ECANCELED (the engine's stop
 * code, bisect.h), the store's code kept for bisect_execute(). */
static int store_stop(struct oracle *x, int code)
{
	x->fail = code < 0 ? code : -EIO;
	return -ECANCELED;
}

static void save_log(struct oracle *x)
{
	struct buf b = BUF_INIT, err = BUF_INIT;

	for (size_t i = 0; i < x->cands->n; i++)
		buf_printf(&b, "# candidate %zu %s %s\n", i,
			   *x->cands->c[i].sha ? x->cands->c[i].sha : "-", x->cands->c[i].name);
	buf_puts(&b, buf_str(x->log));
	/* the verdict is what the caller reports; a log that cannot be kept
	 * is said here, once */
	if (db_bisect_log_set(x->db, x->job_id, buf_str(&b), &err))
		log_warn("%s", buf_str(&err));
	buf_release(&b);
	buf_release(&err);
}

static void progress(const struct oracle *x, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void progress(const struct oracle *x, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	progress_vsay(x->o->quiet, fmt, ap);
	va_end(ap);
}

/* Candidate i as a variant (variant.h): a prebuilt image, or its commit
 * built in the old end's build dir (each candidate then builds
 * incrementally); subject, author and author_time for the web view's
 * culprit line. */
static void candidate_variant(struct variant *v, const struct bisect_cands *cs, size_t i)
{
	const struct bisect_cand *c = &cs->c[i];

	*v = (struct variant){ .name = xstrdup(c->name) };
	if (c->kernel) {
		v->kind = VARIANT_PREBUILT;
		v->kernel = xstrdup(c->kernel);
		return;
	}
	v->kind = VARIANT_BASE;
	v->base = xstrdup(c->sha);
	v->subject = xstrdup(c->subject);
	v->build_base = xstrdup(cs->c[0].sha);
	v->author = c->author ? xstrdup(c->author) : NULL;
	v->author_time = c->date_s;
}

/* Make candidate i's kernel through the build service (variant_build.h):
 * its spec stored, then prebuilt, or the commit built. */
static int prepare(struct oracle *x, size_t i, struct buf *err)
{
	struct bisect_cand *c = &x->cands->c[i];
	struct variant_build_opts bo = {
		.tree = x->spec->tree, .home = x->o->home, .progress = !x->o->quiet,
		.fragments = (const char *const *)x->spec->config, .nfragments = x->spec->nconfig,
		.distcc = x->spec->distcc,
	};
	struct variant_build *vb;
	struct variant_build_result res;
	struct variant v;
	char *vs_json;
	int r;

	if ((r = db_variant_get(x->db, &c->variant_id, x->job_id, c->name, err)))
		return r;
	candidate_variant(&v, x->cands, i);
	vs_json = variant_to_json(&v);
	r = db_variant_set_spec(x->db, c->variant_id, v.base, NULL, vs_json, err);
	free(vs_json);
	if (r) {
		variant_release(&v);
		return r;
	}
	progress(x, "candidate %zu/%zu %s: %s", i, x->cands->n - 1, c->name,
		 c->kernel ? "prebuilt" : "building");
	x->t->builds++;
	vb = variant_build_new(x->db, &bo);
	r = variant_build_for_job(vb, &res, c->variant_id, &v, NULL, err);
	variant_build_free(vb);
	c->kernel_id = res.kernel_id;
	c->state = res.status == VARIANT_BUILD_OK ? 1 : -1;
	if (c->state < 0) {
		x->t->build_failures++;
		c->why = xstrdup(res.reason);
		progress(x, "  %s: %s (skip: no evidence either way)",
			 variant_build_status_name(res.status), c->why);
	}
	variant_build_result_release(&res);
	variant_release(&v);
	return r;
}

/* The pending run run_id as the executor needs it (kernel image, modules). */
static int pending_run(struct oracle *x, int64_t run_id, struct db_pending_run **out,
		       size_t *n, struct db_pending_run **p, struct buf *err)
{
	int total, done, r;

	*p = NULL;
	if ((r = db_job_pending_runs(x->db, x->job_id, out, n, &total, &done, err)))
		return r;
	for (size_t i = 0; i < *n; i++)
		if ((*out)[i].id == run_id)
			*p = &(*out)[i];
	return *p ? 0 : err_setf(err, -ENOENT, "run %lld is not pending (no kernel?)",
				 (long long)run_id);
}

/* One guest run of candidate idx. Returns 0 with *value_out, -EAGAIN for
 * a skip (*transient: a timeout, a paused guest or a run without the
 * metric, which the machine may cause as well as the kernel), -EINTR
 * (SIGINT/SIGTERM), or store_stop()'s -ECANCELED when the store failed;
 * x->abort_why says why the engine stops. */
static int measure_once(struct oracle *x, size_t idx, double *value_out, bool *transient)
{
	struct bisect_cand *c = &x->cands->c[idx];
	struct db_pending_run *runs = NULL, *p;
	struct guest_result res;
	struct buf why = BUF_INIT;
	size_t nruns = 0;
	int64_t run_id;
	char label[256];
	int r, ret = -EAGAIN;

	*transient = false;
	if ((r = db_run_create(x->db, &run_id, x->job_id, c->variant_id, x->cell, 0, x->fs,
			       x->params, x->abort_why)) ||
	    (r = pending_run(x, run_id, &runs, &nruns, &p, x->abort_why))) {
		err_wrapf(x->abort_why, r, "candidate %zu", idx);
		ret = store_stop(x, r);
		goto out;
	}
	snprintf(label, sizeof(label), "candidate %zu %s r%d", idx, c->name, p->repeat_idx);
	progress(x, "run of %s", label);
	x->t->boots++;
	if ((r = guest_run_pending(&res, &x->g, &x->j, p, label, x->abort_why))) {
		ret = store_stop(x, r);
		goto out;
	}
	if (strcmp(res.run.status, "ok")) {
		if (!strcmp(res.run.status, "interrupted") || runner_interrupted()) {
			ret = err_setf(x->abort_why, -EINTR, "interrupted: the run in progress is "
				       "stored as 'interrupted'");
			goto out;
		}
		*transient = !strcmp(res.run.status, "timeout") || !strcmp(res.run.status, "paused");
		progress(x, "  %s%s%s (skip: no evidence either way)", res.run.status,
			 res.run.error[0] ? ": " : "", res.run.error);
		if (!c->why)
			c->why = xasprintf("run %s%s%.200s", res.run.status,
					   res.run.error[0] ? ": " : "", res.run.error);
		goto out;
	}
	r = db_run_metric(x->db, run_id, x->metric, value_out, &why);
	if (r && r != -ENOENT && r != -EINVAL) {   /* the store failed: stop */
		err_setf(x->abort_why, r, "candidate %zu: %s", idx, buf_str(&why));
		ret = store_stop(x, r);
		goto out;
	}
	if (r) {                                   /* no value: no evidence */
		progress(x, "  ok, but the run has no '%s' (skip: no evidence either way)",
			 x->metric);
		if (!c->why)
			c->why = xasprintf("a run without '%s'", x->metric);
		*transient = true;
		goto out;
	}
	progress(x, "  ok, %s %.6g", x->metric, *value_out);
	ret = 0;
out:
	buf_release(&why);
	db_pending_runs_free(runs, nruns);
	return ret;
}

/* ---- the oracle on a pool of lab hosts (--hosts) ---- */

/* Take the first answer measured for candidate idx: true with *rc and *v,
 * false when there is none. */
static bool take_ready(struct oracle *x, size_t idx, int *rc, double *v)
{
	for (size_t i = 0; i < x->nready; i++) {
		if (x->ready[i].idx != idx)
			continue;
		*rc = x->ready[i].rc;
		*v = x->ready[i].v;
		memmove(&x->ready[i], &x->ready[i + 1], (x->nready - i - 1) * sizeof(*x->ready));
		x->nready--;
		return true;
	}
	return false;
}

static void put_ready(struct oracle *x, size_t idx, int rc, double v)
{
	x->ready = xrealloc(x->ready, (x->nready + 1) * sizeof(*x->ready));
	x->ready[x->nready++] = (struct answer){ idx, rc, v };
}

/* Create one pending run per item (candidate indexes), two candidates a
 * block (one repeat: lab.h places a block whole on one host); *first_id
 * is the first run's id. 0 or a store error (x->abort_why). */
static int create_round(struct oracle *x, const size_t *items, size_t n, int64_t *first_id)
{
	int base, blk = 0, r;
	size_t in_blk = 0, prev = SIZE_MAX;

	if ((r = db_job_next_repeat(x->db, x->job_id, &base, x->abort_why)))
		return r;
	for (size_t i = 0; i < n; i++) {
		int64_t id;

		if (in_blk == 2 || (in_blk == 1 && items[i] == prev)) {
			blk++;
			in_blk = 0;
		}
		if ((r = db_run_create(x->db, &id, x->job_id, x->cands->c[items[i]].variant_id,
				       x->cell, base + blk, x->fs, x->params, x->abort_why)))
			return err_wrapf(x->abort_why, r, "candidate %zu", items[i]);
		if (i == 0)
			*first_id = id;
		prev = items[i];
		in_blk++;
	}
	x->t->boots += (unsigned)n;
	return 0;
}

/* The answer of stored run b of candidate idx, as measure_once() gives it:
 * 0 with *v, -EAGAIN (a skip; *transient as there), -EINTR, or
 * store_stop()'s -ECANCELED. */
static int round_answer(struct oracle *x, size_t idx, const struct db_bisect_run *b,
			double *v, bool *transient)
{
	struct bisect_cand *c = &x->cands->c[idx];
	struct buf why = BUF_INIT;
	int r;

	*transient = false;
	if (!strcmp(b->status, "interrupted"))
		return err_setf(x->abort_why, -EINTR, "interrupted: the run in progress is stored"
				" as 'interrupted'");
	if (strcmp(b->status, "ok")) {
		*transient = !strcmp(b->status, "timeout") || !strcmp(b->status, "paused");
		progress(x, "  candidate %zu on %s: %s%s%s (skip: no evidence either way)", idx,
			 b->lab_host, b->status, *b->error ? ": " : "", b->error);
		if (!c->why)
			c->why = xasprintf("run %s%s%.200s", b->status, *b->error ? ": " : "",
					   b->error);
		return -EAGAIN;
	}
	r = db_run_metric(x->db, b->id, x->metric, v, &why);
	if (r && r != -ENOENT && r != -EINVAL) {
		err_setf(x->abort_why, r, "candidate %zu: %s", idx, buf_str(&why));
		buf_release(&why);
		return store_stop(x, r);
	}
	buf_release(&why);
	if (r) {
		progress(x, "  candidate %zu on %s: ok, but the run has no '%s' (skip: no evidence"
			 " either way)", idx, b->lab_host, x->metric);
		if (!c->why)
			c->why = xasprintf("a run without '%s'", x->metric);
		*transient = true;
		return -EAGAIN;
	}
	progress(x, "  candidate %zu on %s: ok, %s %.6g", idx, b->lab_host, x->metric, *v);
	return 0;
}

/* Measure items (candidate indexes, kernels ready) on the pool at once
 * (lab_run_pending(): a host that fails a run has it placed again on a
 * live one) and put each one's answer in rc[]/v[]/transient[], in item
 * order. 0, or -EINTR / -ECANCELED to stop the engine. */
static int measure_round(struct oracle *x, const size_t *items, size_t n, int *rc, double *v,
			 bool *transient)
{
	struct lab_job lj = { .o = x->o, .j = x->j, .db_path = x->db_path,
			      .seed = x->spec->seed, .metric = NULL, .warned = x->warned };
	struct db_bisect_run *b = NULL;
	size_t nb = 0;
	bool *used = NULL;
	int64_t first = 0;
	int r;

	if ((r = create_round(x, items, n, &first)))
		return store_stop(x, r);
	r = lab_run_pending(x->db, x->job_id, &x->pool, &lj, x->abort_why);
	if (r == -EINTR)
		return r;
	if (r)
		return store_stop(x, r);
	if ((r = db_bisect_runs_since(x->db, x->job_id, first, &b, &nb, x->abort_why)))
		return store_stop(x, r);
	used = xcalloc(nb ? nb : 1, sizeof(*used));
	/* same candidate, same kernel: its results go to its items in run order */
	for (size_t i = 0; i < n && r == 0; i++) {
		size_t k = 0;

		while (k < nb && (used[k] || b[k].variant_id != x->cands->c[items[i]].variant_id))
			k++;
		if (k == nb) {
			r = err_setf(x->abort_why, -ECANCELED, "candidate %zu: its run did not end"
				     " (the job was cancelled?)", items[i]);
			break;
		}
		used[k] = true;
		rc[i] = round_answer(x, items[i], &b[k], &v[i], &transient[i]);
		if (rc[i] == -EINTR || rc[i] == -ECANCELED)
			r = rc[i];
	}
	free(used);
	db_bisect_runs_free(b, nb);
	return r;
}

/* Measure items on the pool, a transient skip tried once more (as
 * measure() does), and queue every answer for the engine's calls. */
static int lab_round(struct oracle *x, const size_t *items, size_t n)
{
	int *rc = xcalloc(n, sizeof(*rc));
	double *v = xcalloc(n, sizeof(*v));
	bool *tr = xcalloc(n, sizeof(*tr));
	size_t *again = xcalloc(n, sizeof(*again)), na = 0;
	int r = measure_round(x, items, n, rc, v, tr);

	for (size_t i = 0; !r && i < n; i++)
		if (rc[i] == -EAGAIN && tr[i])
			again[na++] = i;
	if (!r && na) {
		size_t *it = xcalloc(na, sizeof(*it));
		int *rc2 = xcalloc(na, sizeof(*rc2));
		double *v2 = xcalloc(na, sizeof(*v2));
		bool *tr2 = xcalloc(na, sizeof(*tr2));

		for (size_t i = 0; i < na; i++)
			it[i] = items[again[i]];
		progress(x, "  trying %zu run%s once more", na, na == 1 ? "" : "s");
		r = measure_round(x, it, na, rc2, v2, tr2);
		for (size_t i = 0; !r && i < na; i++) {
			rc[again[i]] = rc2[i];
			v[again[i]] = v2[i];
		}
		free(it);
		free(rc2);
		free(v2);
		free(tr2);
	}
	for (size_t i = 0; !r && i < n; i++)
		put_ready(x, items[i], rc[i], v[i]);
	free(rc);
	free(v);
	free(tr);
	free(again);
	return r;
}

/* Prepare the kernels of items not tried yet: 0 or store_stop()'s code. */
static int prepare_items(struct oracle *x, const size_t *items, size_t n)
{
	int r;

	for (size_t i = 0; i < n; i++)
		if (!x->cands->c[items[i]].state && (r = prepare(x, items[i], x->abort_why))) {
			err_wrapf(x->abort_why, r, "candidate %zu", items[i]);
			return store_stop(x, r);
		}
	return 0;
}

/* The engine's look ahead (bisect_plan_fn): the planned calls not yet
 * answered by runs already measured, measured on the pool at once. A round
 * of old/new pairs smaller than the pool is filled up with more pairs (one
 * pair a block, a block a slot): the engine asks for them in the next
 * rounds, or they are never asked (stored runs the log does not hold). */
static int plan(void *ctx, const size_t *idx, size_t n)
{
	struct oracle *x = ctx;
	size_t *todo, nt = 0, *have = xcalloc(x->cands->n, sizeof(*have));
	int r;

	if (runner_interrupted()) {
		free(have);
		return err_setf(x->abort_why, -EINTR, "interrupted");
	}
	if ((r = prepare_items(x, idx, n))) {
		free(have);
		return r;
	}
	for (size_t i = 0; i < x->nready; i++)
		have[x->ready[i].idx]++;
	todo = xcalloc(2 * n + 2 * (size_t)x->slots, sizeof(*todo));
	for (size_t i = 0; i < n; i++) {
		if (x->cands->c[idx[i]].state < 0)
			continue;
		if (have[idx[i]])
			have[idx[i]]--;
		else
			todo[nt++] = idx[i];
	}
	if (nt == 2 && todo[0] != todo[1])
		while (nt < 2 * (size_t)x->slots) {
			todo[nt] = todo[nt - 2];
			nt++;
		}
	r = nt ? lab_round(x, todo, nt) : 0;
	free(todo);
	free(have);
	return r;
}

/* measure() on the pool: the answer measured ahead, else this one run. */
static int lab_measure(struct oracle *x, size_t idx, double *value_out)
{
	int rc = -EAGAIN, r;

	if (!take_ready(x, idx, &rc, value_out)) {
		if ((r = lab_round(x, &idx, 1)))
			return r;
		take_ready(x, idx, &rc, value_out);
	}
	return rc;
}

/* The engine's oracle: one value of candidate idx (bisect.h's
 * bisect_measure_fn). A run that timed out, paused or lacks the metric is
 * tried once more before it is a skip: one such run at an endpoint would
 * end the bisection, and a loaded host causes them as well as a kernel.
 * Failures that repeat (the kernel does not build or start) are not. */
static int measure(void *ctx, size_t idx, double *value_out)
{
	struct oracle *x = ctx;
	struct bisect_cand *c = &x->cands->c[idx];
	bool transient = false;
	int r, ret = -EAGAIN;

	if (runner_interrupted())
		return err_setf(x->abort_why, -EINTR, "interrupted");
	if (!c->state && (r = prepare(x, idx, x->abort_why))) {
		err_wrapf(x->abort_why, r, "candidate %zu", idx);
		return store_stop(x, r);
	}
	if (c->state < 0)
		goto skip;
	if (x->lab) {
		ret = lab_measure(x, idx, value_out);
		if (ret == -EINTR || ret == -ECANCELED)
			return ret;
	}
	for (int attempt = 0; !x->lab && attempt < 2; attempt++) {
		ret = measure_once(x, idx, value_out, &transient);
		if (ret != -EAGAIN || !transient)
			break;
		if (attempt == 0)
			progress(x, "  trying candidate %zu once more", idx);
	}
	if (ret == 0) {
		c->values = xrealloc(c->values, (c->nvalues + 1) * sizeof(*c->values));
		c->values[c->nvalues++] = *value_out;
		x->t->runs++;
	}
skip:
	if (ret == -EAGAIN) {
		c->nskips++;
		x->t->skips++;
	}
	/* the engine appends this answer after we return: the stored log is
	 * at most one answer behind, and complete at the end */
	save_log(x);
	return ret;
}

/* The oracle's state for one bisection: the job stored, its one cell. */
static int oracle_init(struct oracle *x, struct db *db, struct bisect_cands *cands,
		       const struct bisect_exec_opts *o, struct bisect_exec_out *out,
		       struct buf *err)
{
	const struct job_spec *spec = o->spec;
	char *spec_json = job_spec_to_json(spec);
	json_t *pj;
	const char *fs;
	int r;

	*x = (struct oracle){ .db = db, .spec = spec, .metric = o->metric, .o = o->guest,
			      .cands = cands, .t = &out->totals,
			      .j = { .vcpus = (unsigned)spec->vcpus,
				     .memory_mib = (uint64_t)spec->memory_mb,
				     .disk_bytes = spec->disk_bytes,
				     .watchdog_s = spec->watchdog_s } };
	if (o->guest->hosts && *o->guest->hosts) {
		/* every run through lab.c, whatever the pool's size; the hosts
		 * chosen before anything is stored */
		x->lab = true;
		x->db_path = db_path_in(o->guest->home);
		if ((r = lab_select(&x->pool, db, o->guest->hosts, o->guest->uri, err))) {
			free(spec_json);
			return r;
		}
		for (size_t i = 0; i < x->pool.n; i++)
			x->slots += x->pool.v[i].slots;
		x->warned = xcalloc(x->pool.n, sizeof(*x->warned));
	}
	if ((r = db_job_create(db, &out->job_id, o->name, "bisect", spec_json, err)) ||
	    (r = db_job_set_meta(db, out->job_id, 0, o->metric, err)))
		err_wrapf(err, r, "cannot store the bisection");
	free(spec_json);
	if (r)
		return r;
	x->job_id = x->j.job_id = out->job_id;
	if (o->check)
		job_check_store(db, out->job_id, o->check);	/* logged when it fails */
	x->params = job_cell_params(spec, 0);
	x->cell = job_cell_text(spec, 0);
	pj = json_loads(x->params, 0, NULL);
	fs = json_string_value(json_object_get(pj, "fs"));
	x->fs = xstrdup(fs ? fs : "ext4");
	json_decref(pj);
	if (x->lab)
		return 0;
	guest_ctx_init(&x->g, db, o->guest, true);
	return 0;
}

static void oracle_release(struct oracle *x)
{
	guest_ctx_release(&x->g);
	lab_pool_release(&x->pool);
	free(x->db_path);
	free(x->warned);
	free(x->ready);
	free(x->params);
	free(x->cell);
	free(x->fs);
}

int bisect_execute(struct db *db, struct bisect_cands *cands, const struct bisect_exec_opts *o,
		   struct bisect_exec_out *out, enum bisect_verdict *verdicts, struct buf *err)
{
	struct oracle x = { 0 };
	struct buf log = BUF_INIT, why = BUF_INIT;
	double t0 = clock_mono_s();
	int r;

	memset(out, 0, sizeof(*out));
	if (job_ncells(o->spec) != 1)
		return err_setf(err, -EINVAL, "a bisection measures one setting: give single values"
				" to --set and --fs (no lists)");
	if ((r = oracle_init(&x, db, cands, o, out, err)))
		goto out;
	x.log = &log;
	x.abort_why = &why;
	if ((r = runner_signals_install())) {
		r = err_setf(err, r, "cannot catch signals: %s", strerror(-r));
		goto out;
	}
	if ((r = db_job_set_status(db, out->job_id, "running", NULL, err)))
		goto out;
	r = bisect_run_planned(&out->res, cands->n, o->engine, measure, x.lab ? plan : NULL, &x,
			       &log, verdicts);
	out->totals.wall_s = clock_mono_s() - t0;
	save_log(&x);
	if (r == -ECANCELED && x.fail)
		r = x.fail;
	if (r == -EINTR || (x.fail && r == x.fail)) {
		r = err_setf(err, r, "bisection stopped: %s", why.len ? buf_str(&why) : "aborted");
		db_job_set_status(db, out->job_id, r == -EINTR ? "interrupted" : "failed",
				  buf_str(err), NULL);
		goto out;
	}
	if (r) {
		r = err_setf(err, r, "bisection failed: %s", strerror(-r));
		db_job_set_status(db, out->job_id, "failed", buf_str(err), NULL);
		goto out;
	}
	r = db_job_set_status(db, out->job_id, "done", NULL, err);
out:
	oracle_release(&x);
	buf_release(&log);
	buf_release(&why);
	return r;
}
