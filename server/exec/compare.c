/* compare.c - the compare executor (see compare.h). */
#define LOG_MODULE "compare"
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/compare.h"
#include "store/db_guest.h"
#include "store/db_runs.h"
#include "store/db_compare.h"
#include "error.h"
#include "guest/guest_run.h"
#include "guest/hostfs.h"
#include "guest/image.h"
#include "exec/job.h"
#include "exec/job_check.h"
#include "exec/lab.h"
#include "log.h"
#include "judge/progress.h"
#include "judge/report.h"
#include "guest/rootfs.h"
#include "guest/runner.h"
#include "kernel/variant.h"
#include "kernel/variant_build.h"

static void say(const struct guest_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void say(const struct guest_opts *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	progress_vsay(o->quiet, fmt, ap);
	va_end(ap);
}

/* ---- kernels ---- */

/* A variant that has no kernel (status apply-failed or build-failed) never
 * runs: its pending runs are stored as skipped, with why, not left as
 * pending work (a finished job says it is finished). */
static int skip_variant_runs(struct db *db, int64_t job_id, int64_t variant_id,
			     const char *name, const char *status, struct buf *err)
{
	char *why = xasprintf("not run: variant '%s' has no kernel (%s: %s)", name, status,
			      !strcmp(status, "apply-failed") ? "its patches did not apply"
			      : "its kernel did not build");
	int r = db_runs_skip_pending(db, job_id, variant_id, why, NULL, err);

	free(why);
	return r;
}

/* Each pending variant's kernel, through the build service (variant_build.h):
 * what became of it is stored on its row; a variant that fails does not
 * stop the others. Each variant with a kernel is published on lb (NULL:
 * none) as soon as it has it, for the runs waiting for it (lab.h). */
static int resolve_kernels(struct db *db, int64_t job_id, const struct job_spec *spec,
			   const struct guest_opts *o, struct lab_builds *lb, struct buf *err)
{
	struct variant_build_opts bo = {
		.tree = spec->tree, .home = o->home, .progress = !o->quiet,
		.fragments = (const char *const *)spec->config, .nfragments = spec->nconfig,
		.distcc = spec->distcc,
	};
	struct variant_build *vb = NULL;
	struct db_variant_row *v = NULL;
	size_t n = 0;
	int r, nok = 0;

	if ((r = db_job_variants(db, job_id, &v, &n, err)))
		return r;
	vb = variant_build_new(db, &bo);
	for (size_t i = 0; i < n; i++) {
		struct variant var;
		struct variant_build_result res;

		if (!strcmp(v[i].status, "ok")) {
			nok++;
			if (lb)
				lab_builds_ready(lb, v[i].id);
			continue;
		}
		if (strcmp(v[i].status, "pending")) {
			/* failed before: the same inputs fail the same way */
			say(o, "kernel %zu/%zu %s: %s (stored)", i + 1, n, v[i].name, v[i].status);
			if ((r = skip_variant_runs(db, job_id, v[i].id, v[i].name, v[i].status, err)))
				goto out;
			continue;
		}
		if ((r = variant_from_json(&var, v[i].name, v[i].spec_json, err))) {
			err_wrapf(err, r, "variant '%s' in the store", v[i].name);
			goto out;
		}
		say(o, "kernel %zu/%zu %s: %s", i + 1, n, v[i].name,
		    var.kind == VARIANT_PREBUILT ? "prebuilt" : "building");
		r = variant_build_for_job(vb, &res, v[i].id, &var, NULL, err);
		if (r)
			;       /* err says why; the variant stays as it was */
		else if (res.status == VARIANT_BUILD_OK) {
			nok++;
			if (lb)
				lab_builds_ready(lb, v[i].id);
		} else {
			say(o, "  %s: %s", variant_build_status_name(res.status), res.reason);
			r = skip_variant_runs(db, job_id, v[i].id, v[i].name,
					      variant_build_status_name(res.status), err);
		}
		variant_build_result_release(&res);
		variant_release(&var);
		if (r)
			goto out;
	}
	if (!nok)
		say(o, "no variant has a kernel: nothing to run");
	r = 0;
out:
	variant_build_free(vb);
	db_variant_rows_free(v, n);
	return r;
}

/* The build thread: resolve_kernels() on its own store connection while
 * the dispatcher (lab_run_pending()) starts the runs whose kernels exist;
 * lab_builds_end() whatever happens, so no run waits for ever. */
struct build_thread {
	pthread_t t;
	const char *db_path;
	int64_t job_id;
	const struct job_spec *spec;
	const struct guest_opts *o;
	struct lab_builds lb;
	int rc;
	struct buf err;
};

static void *build_main(void *arg)
{
	struct build_thread *bt = arg;
	struct db *db = NULL;

	if (!(bt->rc = db_open(&db, bt->db_path, &bt->err)) &&
	    !(bt->rc = resolve_kernels(db, bt->job_id, bt->spec, bt->o, &bt->lb, &bt->err)))
		/* the job is 'building' while a build goes (runs may go too) */
		bt->rc = db_job_set_status(db, bt->job_id, "running", NULL, &bt->err);
	db_close(db);
	lab_builds_end(&bt->lb);
	return NULL;
}

/* ---- runs ---- */

/* Whether job_id is a compare job (kind 'compare'): the only kind the
 * executor carries out or resumes. -EINVAL with err when it is another
 * kind, -ENOENT when there is no such job. */
static int check_compare_job(struct db *db, int64_t job_id, const char *what, struct buf *err)
{
	char *kind = NULL;
	int r;

	if ((r = db_job_kind(db, job_id, &kind, err)))
		return r;
	if (strcmp(kind, "compare"))
		r = err_setf(err, -EINVAL, "job %lld is not a compare job: only compare jobs %s",
			     (long long)job_id, what);
	free(kind);
	return r;
}

static bool job_cancelled(struct db *db, int64_t job_id)
{
	char *owner = NULL, *status = NULL;
	bool c = db_job_owner(db, job_id, &owner, &status, NULL) == 0 && !strcmp(status, "cancelled");
	free(owner);
	free(status);
	return c;
}

char *compare_owner_self(void)
{
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	return xasprintf("%d@%s", (int)getpid(), host);
}

/* Is the coordinator owner (pid@host) alive? Only this host's can be
 * checked; another host's counts as alive. */
static bool owner_alive(const char *owner)
{
	char host[256] = "";
	const char *at = owner ? strchr(owner, '@') : NULL;
	if (!at)
		return false;
	gethostname(host, sizeof(host) - 1);
	if (strcmp(at + 1, host))
		return true;
	int pid = atoi(owner);
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

bool compare_owner_alive(const char *owner)
{
	return !owner || owner_alive(owner);
}

/* The pending runs, on the lab hosts o->hosts names (lab.h: whole blocks
 * per host, parallel across hosts, infra runs placed again); db_path the
 * store's file, for each host worker's connection. */
static int run_all(struct db *db, int64_t job_id, const struct job_spec *spec,
		   const struct guest_opts *o, const char *db_path, struct lab_builds *lb,
		   struct buf *err)
{
	struct lab_job lj = {
		.o = o, .db_path = db_path, .seed = spec->seed, .metric = spec->metric, .builds = lb,
		.j = { .job_id = job_id, .vcpus = (unsigned)spec->vcpus,
		       .memory_mib = (uint64_t)spec->memory_mb, .watchdog_s = spec->watchdog_s,
		       .disk_bytes = spec->disk_bytes,
		       .rootfs = spec->rootfs, .files = (const char *const *)spec->files },
	};
	struct lab_pool pool;
	int r;

	if (!(r = lab_select(&pool, db, o->hosts, o->uri, err))) {
		for (size_t i = 0; !r && rootfs_is_host(spec->rootfs) && i < pool.n; i++)
			if (!hostfs_uri_local(pool.v[i].uri))
				r = err_setf(err, -EINVAL, "--rootfs host shares this machine's / and"
					     " cannot reach lab host '%s' (%s), whose filesystem is"
					     " its own: use --rootfs debian[:PKG,...] there",
					     pool.v[i].name, pool.v[i].uri);
		if (!r)
			r = lab_run_pending(db, job_id, &pool, &lj, err);
		lab_pool_release(&pool);
	}
	if (!r && job_cancelled(db, job_id))
		say(o, "job %lld was cancelled", (long long)job_id);
	return r;
}

/* repeat auto (report.h): look at the complete blocks, and store the next
 * block unless every comparison is decided or the cap is spent. *more
 * says whether a block was stored. The look is the report's replay of the
 * looks (report_seq_look: the runs' headline values only), so a
 * coordinator killed anywhere here looks the same way on resume. */
static int seq_look(struct db *db, int64_t job_id, const struct job_spec *spec,
		    const struct guest_opts *o, bool *more, struct buf *err)
{
	struct report_seq_state st;
	size_t n = 0;
	int r;

	*more = false;
	if ((r = report_seq_look(&st, db, job_id, err)))
		return r;
	if (st.done) {
		char *why = xasprintf("not needed: the sequential test %s after block %d",
				      st.ndecided < st.ncomparisons ? "reached its cap" : "decided",
				      st.blocks);
		say(o, "repeat auto: %zu of %zu comparison%s decided after %d block%s%s",
		    st.ndecided, st.ncomparisons, st.ncomparisons == 1 ? "" : "s", st.blocks,
		    st.blocks == 1 ? "" : "s", st.ndecided < st.ncomparisons ? " (the cap)" : "");
		/* runs stored beyond the deciding block are not pending work */
		r = db_runs_skip_pending(db, job_id, 0, why, NULL, err);
		free(why);
		return r;
	}
	if ((r = job_store_block(db, spec, job_id, st.blocks + 1, &n, err)))
		return r;
	say(o, "repeat auto: %zu of %zu comparison%s decided after %d block%s: block %d (%zu runs)",
	    st.ndecided, st.ncomparisons, st.ncomparisons == 1 ? "" : "s", st.blocks,
	    st.blocks == 1 ? "" : "s", st.blocks + 1, n);
	*more = n > 0;
	return 0;
}

/* The pending runs, and with repeat auto a block at a time until its
 * looks stop. The first round overlaps bt's builds (joined before any
 * look, so a look sees complete blocks only); a build error is the
 * job's error once the runs that could go have gone. */
static int run_blocks(struct db *db, int64_t job_id, const struct job_spec *spec,
		      const struct guest_opts *o, struct build_thread *bt, struct buf *err)
{
	bool more = true, first = true;
	int r;

	while (more) {
		r = run_all(db, job_id, spec, o, bt->db_path, first ? &bt->lb : NULL, err);
		if (first) {
			pthread_join(bt->t, NULL);
			first = false;
			if (!r && bt->rc)
				r = err_setf(err, bt->rc, "%s", buf_str(&bt->err));
		}
		if (r)
			return r;
		if (!spec->repeat_auto || job_cancelled(db, job_id))
			return 0;
		if ((r = seq_look(db, job_id, spec, o, &more, err)))
			return r;
	}
	return 0;
}

int compare_execute(struct db *db, int64_t job_id, const struct guest_opts *o,
		    struct buf *err)
{
	struct job_spec *spec = job_spec_new();
	char *spec_json = NULL, *me = compare_owner_self();
	char *owner = NULL, *status = NULL, *db_path = db_path_in(o->home);
	struct build_thread bt = { .err = BUF_INIT };
	bool have_bt = false;
	int r;

	if ((r = db_job_owner(db, job_id, &owner, &status, err)))
		goto out;
	if ((r = check_compare_job(db, job_id, "(kcanary compare, POST /api/v1/jobs) can be"
				   " carried out", err)))
		goto out;
	if (!strcmp(status, "cancelled")) {
		r = err_setf(err, -ECANCELED, "job %lld was cancelled", (long long)job_id);
		goto out;
	}
	if (owner && strcmp(owner, me) && owner_alive(owner)) {
		r = err_setf(err, -EBUSY, "job %lld is being carried out by %s", (long long)job_id,
			     owner);
		goto out;
	}
	if ((r = db_job_spec(db, job_id, &spec_json, err)) ||
	    (r = job_spec_from_json(spec, spec_json, err) ? -EINVAL : 0))
		goto out;
	/* taken only if nobody took it since it was read: serve's queue and
	 * a `kcanary resume` may both have seen it free */
	if ((r = db_job_claim(db, job_id, me, owner, err)))
		goto out;
	if ((r = db_job_set_status(db, job_id, "building", NULL, err)))
		goto fail;
	bt.db_path = db_path;
	bt.job_id = job_id;
	bt.spec = spec;
	bt.o = o;
	lab_builds_init(&bt.lb, true, lab_overlap_parse(spec->overlap_builds));
	if ((r = -pthread_create(&bt.t, NULL, build_main, &bt))) {
		r = err_setf(err, r, "cannot start the build thread: %s", strerror(-r));
		lab_builds_release(&bt.lb);
		goto fail;
	}
	have_bt = true;
	r = run_blocks(db, job_id, spec, o, &bt, err);
	if (r == -EINTR) {
		db_job_set_status(db, job_id, "interrupted", buf_str(err), NULL);
		goto done;
	}
	if (r)
		goto fail;
	if (!job_cancelled(db, job_id))
		r = db_job_set_status(db, job_id, "done", NULL, err);
	goto done;
fail:
	/* the first error is what is reported; storing the status is tried */
	db_job_set_status(db, job_id, "failed", buf_str(err), NULL);
done:
	db_job_set_owner(db, job_id, NULL, NULL);
out:
	if (have_bt) {
		lab_builds_release(&bt.lb);
		buf_release(&bt.err);
	}
	free(db_path);
	job_spec_free(spec);
	free(spec_json);
	free(me);
	free(owner);
	free(status);
	return r;
}

/* What the dead coordinator's run left on its host: a scratch volume
 * (run_release() never ran) and, rarely, its domain (autodestroy takes it
 * with the connection). Removed by name; a host that does not answer is
 * said and left to `kcanary lab check`, which sweeps stray volumes. */
static void clean_interrupted(struct db *db, int64_t run_id)
{
	char *uri = NULL, *domain = NULL;
	struct buf e = BUF_INIT;
	int n = 0;

	if (db_run_guest_host(db, run_id, &uri, &domain, &e) == 0 && domain) {
		if (runner_clean_host(uri, domain, &n, &e))
			log_warn("run %lld: cannot remove guest '%s' and its scratch volume from '%s': %s"
				 " ('kcanary lab check' sweeps the volume)", (long long)run_id, domain,
				 uri ? uri : "the default host", buf_str(&e));
		else if (n)
			log_info("run %lld: removed %d thing%s the dead coordinator left on '%s' (guest"
				 " '%s', its scratch volume)", (long long)run_id, n, n == 1 ? "" : "s",
				 uri ? uri : "the default host", domain);
	}
	buf_release(&e);
	free(uri);
	free(domain);
}

int compare_resume(struct db *db, int64_t job_id, size_t *n_interrupted, struct buf *err)
{
	int64_t *ids = NULL;
	size_t n = 0;
	char *owner = NULL, *status = NULL;
	int r;

	if ((r = db_job_owner(db, job_id, &owner, &status, err)))
		return r;
	if ((r = check_compare_job(db, job_id, "can be resumed", err)))
		goto out;
	if (owner && owner_alive(owner)) {
		r = err_setf(err, -EBUSY, "job %lld is being carried out by %s: nothing to resume",
			     (long long)job_id, owner);
		goto out;
	}
	if ((r = db_job_interrupt_running(db, job_id, &ids, &n, err)))
		err_wrapf(err, r, "cannot mark the interrupted runs");
	for (size_t i = 0; !r && i < n; i++)
		clean_interrupted(db, ids[i]);
	free(ids);
	if (n_interrupted)
		*n_interrupted = n;
out:
	free(owner);
	free(status);
	return r;
}

/* ---- the queue of `kcanary serve` ---- */

struct compare_worker {
	pthread_t thread;
	struct guest_opts opts;
	char *db_path;
	volatile bool stop;
};

/* One job left `state` by a dead coordinator: its running runs become
 * interrupted, and it goes back to the queue (pending, no coordinator),
 * released only from the dead one it had (db_job_requeue): a `kcanary
 * resume` that took it meanwhile keeps it. A pending job with no
 * coordinator is queued already: left alone. */
static void resume_orphan(struct db *db, int64_t id, const char *state)
{
	struct buf err = BUF_INIT;
	char *owner = NULL, *status = NULL;
	size_t k = 0;

	if (db_job_owner(db, id, &owner, &status, &err) || (!owner && !strcmp(state, "pending")) ||
	    compare_resume(db, id, &k, &err))
		goto out;	/* queued, or not ours to resume: a live coordinator has it */
	log_warn("job %lld was left %s by a coordinator that stopped: resuming (%zu interrupted"
		 " runs rescheduled)", (long long)id, state, k);
	if (db_job_requeue(db, id, owner, &err))
		log_err("job %lld: %s", (long long)id, buf_str(&err));
out:
	buf_release(&err);
	free(owner);
	free(status);
}

/* Jobs left building or running by a coordinator that died: resume them
 * first (their running runs become interrupted, fresh repeats added);
 * and a pending one whose coordinator died before it started it (a
 * `kcanary compare` killed between storing and claiming its job). */
static void resume_orphans(struct db *db, struct compare_worker *w)
{
	static const char *const states[] = { "building", "running", "pending" };

	for (size_t s = 0; s < sizeof(states) / sizeof(*states); s++) {
		int64_t *ids = NULL;
		size_t n = 0;
		struct buf err = BUF_INIT;

		if (db_jobs_with_status(db, states[s], &ids, &n, 1000, &err)) {
			log_err("job queue: %s", buf_str(&err));
			buf_release(&err);
			continue;
		}
		for (size_t i = 0; i < n && !w->stop; i++)
			resume_orphan(db, ids[i], states[s]);
		buf_release(&err);
		free(ids);
	}
}

/* A queued job that failed before it was claimed (a spec that does not
 * read back, say) would be taken again at once, for ever, holding up the
 * jobs behind it: it is stored failed, with why. */
static void drop_unclaimed(struct db *db, int64_t id, const struct buf *why)
{
	char *owner = NULL, *status = NULL;
	struct buf e = BUF_INIT;

	if (db_job_owner(db, id, &owner, &status, &e) == 0 && !owner && !strcmp(status, "pending") &&
	    db_job_set_status(db, id, "failed", buf_str(why), &e))
		log_err("job %lld: %s", (long long)id, buf_str(&e));
	buf_release(&e);
	free(owner);
	free(status);
}

static void *worker_main(void *arg)
{
	struct compare_worker *w = arg;
	struct buf err = BUF_INIT;
	struct db *db = NULL;

	if (db_open(&db, w->db_path, &err)) {
		log_err("job queue: %s", buf_str(&err));
		buf_release(&err);
		return NULL;
	}
	resume_orphans(db, w);
	while (!w->stop) {
		int64_t *ids = NULL;
		size_t n = 0;

		buf_reset(&err);
		/* a store that cannot list the queue is tried again next time:
		 * the job's own writes say what is wrong with it */
		if (db_jobs_queued(db, &ids, &n, 1, NULL) == 0 && n) {
			log_info("job queue: carrying out job %lld", (long long)ids[0]);
			int r = compare_execute(db, ids[0], &w->opts, &err);
			if (r && r != -EINTR) {
				log_warn("job %lld: %s", (long long)ids[0], buf_str(&err));
				if (r != -EBUSY)
					drop_unclaimed(db, ids[0], &err);
			}
			free(ids);
			ids = NULL;
			if (r != -EBUSY)
				continue;	/* a busy store: the wait below first */
		}
		free(ids);
		for (int i = 0; i < 20 && !w->stop; i++)
			usleep(100000);
	}
	buf_release(&err);
	db_close(db);
	return NULL;
}

int compare_worker_start(struct compare_worker **out, const char *db_path,
			 const struct guest_opts *o)
{
	struct compare_worker *w = xcalloc(1, sizeof(*w));
	int r;

	w->opts = *o;
	w->opts.quiet = true;
	w->db_path = xstrdup(db_path);
	if ((r = pthread_create(&w->thread, NULL, worker_main, w))) {
		free(w->db_path);
		free(w);
		return -r;
	}
	*out = w;
	return 0;
}

void compare_worker_stop(struct compare_worker *w)
{
	if (!w)
		return;
	w->stop = true;
	runner_request_stop();
	pthread_join(w->thread, NULL);
	free(w->db_path);
	free(w);
}

int compare_rerun(struct db *db, int64_t job_id, const char *agent, const char *owner, int64_t *new_job,
		  struct buf *err)
{
	struct job_spec *spec = job_spec_new();
	struct job_check chk = { 0 };
	struct buf why = BUF_INIT;
	char *json = NULL;
	bool checked = false;
	int r;

	if ((r = db_job_spec(db, job_id, &json, err)) || (r = job_spec_from_json(spec, json, err)))
		goto out;
	/* the lengths before the job is stored, as compare does; a check that
	 * fails is no reason not to rerun (the job was checked when stored),
	 * but a disk above the cap would fail every run of its cell */
	if ((r = job_check_cells(&chk, spec, agent, &why)) == -EFBIG) {
		err_setf(err, r, "job %lld: %s", (long long)job_id, buf_str(&why));
		goto out;
	}
	if (!(checked = !r))
		log_warn("job %lld: its rerun's runs will ask the agent for their length: %s",
			 (long long)job_id, buf_str(&why));
	if ((r = job_store(db, spec, owner, new_job, err)))
		goto out;
	if (checked)
		job_check_store(db, *new_job, &chk);	/* logged when it fails */
out:
	job_check_release(&chk);
	buf_release(&why);
	free(json);
	job_spec_free(spec);
	return r;
}
