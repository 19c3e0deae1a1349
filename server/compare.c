/* compare.c - the compare executor (see compare.h). */
#define LOG_MODULE "compare"
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare.h"
#include "db_guest.h"
#include "error.h"
#include "image.h"
#include "job.h"
#include "log.h"
#include "report.h"
#include "runner.h"
#include "variant.h"
#include "variant_build.h"
#include "vm.h"

static void say(const struct compare_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static pthread_mutex_t say_lock = PTHREAD_MUTEX_INITIALIZER;
static bool live_line;   /* a \r progress line is on the terminal */

static void say(const struct compare_opts *o, const char *fmt, ...)
{
	va_list ap;

	if (o->quiet)
		return;
	pthread_mutex_lock(&say_lock);
	if (live_line) {
		fputs("\r\033[K", stderr);
		live_line = false;
	}
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	pthread_mutex_unlock(&say_lock);
}

/* ---- kernels ---- */

int compare_prebuilt_kernel(struct db *db, const char *path, int64_t *kernel_id,
			   struct buf *why)
{
	return variant_prebuilt_kernel(db, path, kernel_id, why);
}

/* Each pending variant's kernel, through the build service (variant_build.h):
 * what became of it is stored on its row; a variant that fails does not
 * stop the others. */
static int resolve_kernels(struct db *db, int64_t job_id, const struct job_spec *spec,
			   const struct compare_opts *o, struct buf *err)
{
	struct variant_build_opts bo = {
		.tree = spec->tree, .home = o->home, .progress = !o->quiet,
		.fragments = (const char *const *)spec->config, .nfragments = spec->nconfig,
	};
	struct variant_build *vb = NULL;
	struct db_variant_row *v = NULL;
	size_t n = 0;
	int r, nok = 0;

	if ((r = db_job_variants(db, job_id, &v, &n)))
		return err_setf(err, r, "cannot read variants: %s", db_errmsg(db));
	vb = variant_build_new(db, &bo);
	for (size_t i = 0; i < n; i++) {
		struct variant var;
		struct variant_build_result res;

		if (!strcmp(v[i].status, "ok")) {
			nok++;
			continue;
		}
		if (strcmp(v[i].status, "pending")) {
			/* failed before: the same inputs fail the same way */
			say(o, "kernel %zu/%zu %s: %s (stored)", i + 1, n, v[i].name, v[i].status);
			continue;
		}
		if ((r = variant_from_json(&var, v[i].name, v[i].spec_json, err))) {
			err_wrapf(err, r, "variant '%s' in the store", v[i].name);
			goto out;
		}
		say(o, "kernel %zu/%zu %s: %s", i + 1, n, v[i].name,
		    var.kind == VARIANT_PREBUILT ? "prebuilt" : "building");
		r = variant_build_for_job(vb, &res, v[i].id, &var, NULL, err);
		if (res.status == VARIANT_BUILD_OK)
			nok++;
		else
			say(o, "  %s: %s", variant_build_status_name(res.status), res.reason);
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

/* ---- runs ---- */

struct run_settings {
	const char *workload;
	const char **knobs;       /* NULL-ended "k=v" */
	const char **sysctls;
	const char *mkfs, *mnt;
	char **owned;
	size_t nowned;
};

static void settings_release(struct run_settings *s)
{
	for (size_t i = 0; i < s->nowned; i++)
		free(s->owned[i]);
	free(s->owned);
	free(s->knobs);
	free(s->sysctls);
}

static const char *keep(struct run_settings *s, char *str)
{
	s->owned = xrealloc(s->owned, (s->nowned + 1) * sizeof(*s->owned));
	s->owned[s->nowned++] = str;
	return str;
}

/* Keys of params_json that are not workload knobs. */
static bool not_a_knob(const char *k)
{
	return !strcmp(k, "workload") || !strcmp(k, "fs") || !strcmp(k, "sysctl") ||
	       !strcmp(k, "mkfs_opts") || !strcmp(k, "mount_opts") || !strcmp(k, "config");
}

static void settings_from_params(struct run_settings *s, json_t *p)
{
	json_t *sys = json_object_get(p, "sysctl"), *v;
	const char *k;
	size_t nk = 0, ns = 0;

	memset(s, 0, sizeof(*s));
	s->workload = json_string_value(json_object_get(p, "workload"));
	if (!s->workload)
		s->workload = "wb-handover";
	s->mkfs = json_string_value(json_object_get(p, "mkfs_opts"));
	s->mnt = json_string_value(json_object_get(p, "mount_opts"));
	s->knobs = xcalloc(json_object_size(p) + 1, sizeof(*s->knobs));
	s->sysctls = xcalloc(json_object_size(sys) + 1, sizeof(*s->sysctls));
	json_object_foreach(p, k, v)
		if (!not_a_knob(k) && json_is_string(v))
			s->knobs[nk++] = keep(s, xasprintf("%s=%s", k, json_string_value(v)));
	json_object_foreach(sys, k, v)
		if (json_is_string(v))
			s->sysctls[ns++] = keep(s, xasprintf("%s=%s", k, json_string_value(v)));
}

/* The live line on a TTY: the run's latest lag sample, read through a
 * connection of its own (a db is one thread's). */
struct live {
	pthread_t thread;
	bool running;
	volatile bool stop;
	char *db_path;
	int64_t job_id;
	char label[256];
};

static void *live_main(void *arg)
{
	struct live *l = arg;
	struct db *db = NULL;

	if (db_open(&db, l->db_path))
		return NULL;
	while (!l->stop) {
		int64_t run;
		char *variant = NULL, *cell = NULL;
		int rep;
		double t, v;
		if (db_run_progress(db, l->job_id, "lag_s", &run, &variant, &cell, &rep, &t, &v) == 0) {
			pthread_mutex_lock(&say_lock);
			if (isnan(t))
				fprintf(stderr, "\r\033[K%s: booting", l->label);
			else
				fprintf(stderr, "\r\033[K%s: t=%.0fs lag %.1fs", l->label, t, v);
			live_line = true;
			pthread_mutex_unlock(&say_lock);
		}
		free(variant);
		free(cell);
		for (int i = 0; i < 10 && !l->stop; i++)
			usleep(100000);
	}
	db_close(db);
	return NULL;
}

static void fmt_run_value(char *out, size_t size, struct db *db, int64_t run_id,
			  const char *metric)
{
	int64_t milli;
	char sql[256], id[32];

	snprintf(id, sizeof(id), "%lld", (long long)run_id);
	snprintf(sql, sizeof(sql), "SELECT CAST(round(value * 1000) AS INTEGER) FROM run_summary"
		 " WHERE run_id = ? AND metric = '%s'", metric);
	if (db_query_int64(db, &milli, sql, id) == 0)
		snprintf(out, size, ", %s %.1f", metric, (double)milli / 1000);
	else
		out[0] = '\0';
}

bool compare_is_compare_job(struct db *db, int64_t job_id)
{
	int64_t n = 0;
	char id[32];
	snprintf(id, sizeof(id), "%lld", (long long)job_id);
	return db_query_int64(db, &n, "SELECT count(*) FROM jobs WHERE id = ? AND kind = 'compare'",
			      id) == 0 && n == 1;
}

static bool job_cancelled(struct db *db, int64_t job_id)
{
	char *owner = NULL, *status = NULL;
	bool c = db_job_owner(db, job_id, &owner, &status) == 0 && !strcmp(status, "cancelled");
	free(owner);
	free(status);
	return c;
}

/* "pid@host" of this process. */
static char *owner_id(void)
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

void compare_guest_init(struct compare_guest *g, const struct compare_opts *o,
			const char *db_path, bool any_runs)
{
	memset(g, 0, sizeof(*g));
	g->agent = o->agent ? xstrdup(o->agent) : image_default_agent();
	g->db_path = xstrdup(db_path);
	vm_accel_probe(&g->ai, NULL);
	if (o->accel)
		g->ai.accel = strcmp(o->accel, "kvm") ? VM_ACCEL_TCG : VM_ACCEL_KVM;
	if (g->ai.accel == VM_ACCEL_TCG && any_runs)
		say(o, "warning: %s (%s)", vm_tcg_warning, g->ai.why);
}

void compare_guest_release(struct compare_guest *g)
{
	free(g->agent);
	free(g->db_path);
	free(g->img_path);
	free(g->img_mod);
	memset(g, 0, sizeof(*g));
}

int compare_boot_run(struct runner_result *res, struct db *db, int64_t job_id,
		     const struct job_spec *spec, const struct db_pending_run *p,
		     const struct compare_opts *o, struct compare_guest *g, const char *label,
		     char *e, size_t esz)
{
	json_t *params = json_loads(p->params_json, 0, NULL);
	struct run_settings rs;
	char *cmdline = NULL;
	double work_s = 0, watchdog_s;
	struct live live = { 0 };
	bool tty = isatty(2) && !o->quiet;
	int r;

	memset(res, 0, sizeof(*res));
	e[0] = '\0';
	settings_from_params(&rs, params);
	if (db_run_set_guest(db, p->id, vm_accel_name(g->ai.accel), NULL, p->kernel_id)) {
		snprintf(e, esz, "cannot store run %lld: %s", (long long)p->id, db_errmsg(db));
		r = -EIO;
		goto out;
	}
	if (runner_workload_s(&work_s, rs.knobs, e, esz))
		goto failed;
	watchdog_s = spec->watchdog_s > 0 ? spec->watchdog_s :
		     work_s + runner_setup_allowance_s(g->ai.accel);
	{
		struct guest_settings gs = {
			.fs = p->fs ? p->fs : "ext4", .mkfs_opts = rs.mkfs, .mount_opts = rs.mnt,
			.sysctls = rs.sysctls, .workload = rs.workload, .knobs = rs.knobs,
			.port = "kcanary",
		};
		if (image_cmdline(&cmdline, &gs, e, esz))
			goto failed;
	}
	/* one image per modules tree: the cache key is their content */
	if (!g->img_path || (p->modules_dir ? !g->img_mod || strcmp(g->img_mod, p->modules_dir) :
			     !!g->img_mod)) {
		struct image_spec is = { .home = o->home, .agent_path = g->agent,
					 .modules_dir = p->modules_dir };
		free(g->img_path);
		free(g->img_mod);
		g->img_path = NULL;
		g->img_mod = p->modules_dir ? xstrdup(p->modules_dir) : NULL;
		if (image_build(&g->img_path, &is, e, esz))
			goto failed;
	}
	if (tty) {
		live.db_path = xstrdup(g->db_path);
		live.job_id = job_id;
		snprintf(live.label, sizeof(live.label), "%s", label);
		live.running = !pthread_create(&live.thread, NULL, live_main, &live);
	}
	{
		struct runner_opts ro = {
			.uri = o->uri, .home = o->home, .kernel = p->image_path,
			.initrd = g->img_path, .cmdline = cmdline, .accel = g->ai.accel,
			.vcpus = (unsigned)spec->vcpus, .memory_mib = (uint64_t)spec->memory_mb,
			.watchdog_s = watchdog_s, .console = o->console,
		};
		r = runner_run(res, db, p->id, &ro);
	}
	if (live.running) {
		live.stop = true;
		pthread_join(live.thread, NULL);
	}
	free(live.db_path);
	if (r)
		snprintf(e, esz, "run %lld: %s", (long long)p->id, res->error);
	goto out;
failed:
	db_run_set_status(db, p->id, "failed", e);
	snprintf(res->status, sizeof(res->status), "failed");
	snprintf(res->error, sizeof(res->error), "%s", e);
	r = COMPARE_RUN_FAILED;
out:
	json_decref(params);
	settings_release(&rs);
	free(cmdline);
	return r;
}

static int run_all(struct db *db, int64_t job_id, const struct job_spec *spec,
		   const struct compare_opts *o, const char *db_path, struct buf *err)
{
	struct db_pending_run *runs = NULL;
	size_t n = 0;
	int total = 0, done = 0, r;
	struct compare_guest g;

	if ((r = db_job_pending_runs(db, job_id, &runs, &n, &total, &done))) {
		buf_printf(err, "cannot read runs: %s", db_errmsg(db));
		db_pending_runs_free(runs, n);
		return r;
	}
	compare_guest_init(&g, o, db_path, n > 0);
	double started_s = clock_mono_s();
	if ((r = runner_signals_install())) {
		buf_printf(err, "cannot catch signals: %s", strerror(-r));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct db_pending_run *p = &runs[i];
		char e[1024] = "", label[256], val[64];
		struct runner_result res;

		if (job_cancelled(db, job_id)) {
			say(o, "job %lld was cancelled: %zu runs not started", (long long)job_id, n - i);
			break;
		}
		snprintf(label, sizeof(label), "run %d/%d %s %s r%d", done + 1, total, p->variant,
			 p->cell && *p->cell ? p->cell : "-", p->repeat_idx);
		if (i > 0) {
			/* the runs so far in this process say how long the rest take */
			double per_run_s = (clock_mono_s() - started_s) / (double)i;
			int left_s = (int)(per_run_s * (double)(n - i));
			say(o, "%s (ETA %dh%02dm)", label, left_s / 3600, left_s / 60 % 60);
		} else {
			say(o, "%s", label);
		}
		r = compare_boot_run(&res, db, job_id, spec, p, o, &g, label, e, sizeof(e));
		if (r == COMPARE_RUN_FAILED) {
			say(o, "  failed: %s", e);
			done++;
			r = 0;
			continue;
		}
		if (r) {
			buf_puts(err, e);
			break;
		}
		fmt_run_value(val, sizeof(val), db, p->id, spec->metric);
		say(o, "  %s%s%s%s", res.status, val, res.error[0] ? ": " : "", res.error);
		done++;
		if (!strcmp(res.status, "interrupted"))
			/* the run is kept as it was; a fresh repeat waits for resume */
			db_run_reschedule(db, p->id);
		if (runner_interrupted()) {
			r = -EINTR;
			buf_puts(err, "interrupted: the run in progress is stored as 'interrupted';"
				 " 'kcanary resume' carries on");
			break;
		}
	}
out:
	db_pending_runs_free(runs, n);
	compare_guest_release(&g);
	return r;
}

int compare_execute(struct db *db, int64_t job_id, const struct compare_opts *o,
		    struct buf *err)
{
	struct job_spec *spec = job_spec_new();
	char *spec_json = NULL, *db_path = NULL, *me = owner_id();
	char *owner = NULL, *status = NULL;
	int r;

	if ((r = db_job_owner(db, job_id, &owner, &status))) {
		buf_printf(err, "no job %lld in the store", (long long)job_id);
		goto out;
	}
	if (!compare_is_compare_job(db, job_id)) {
		buf_printf(err, "job %lld is not a compare job: only compare jobs (kcanary compare,"
			   " POST /api/v1/jobs) can be carried out", (long long)job_id);
		r = -EINVAL;
		goto out;
	}
	if (!strcmp(status, "cancelled")) {
		buf_printf(err, "job %lld was cancelled", (long long)job_id);
		r = -ECANCELED;
		goto out;
	}
	if (owner && strcmp(owner, me) && owner_alive(owner)) {
		buf_printf(err, "job %lld is being carried out by %s", (long long)job_id, owner);
		r = -EBUSY;
		goto out;
	}
	if ((r = db_job_spec(db, job_id, &spec_json)) ||
	    (r = job_spec_from_json(spec, spec_json, err) ? -EINVAL : 0)) {
		if (!err->len)
			buf_printf(err, "cannot read job %lld: %s", (long long)job_id, db_errmsg(db));
		goto out;
	}
	db_job_set_owner(db, job_id, me);
	db_path = xasprintf("%s/kcanary.db", o->home);
	db_job_set_status(db, job_id, "building", NULL);
	if ((r = resolve_kernels(db, job_id, spec, o, err)))
		goto fail;
	db_job_set_status(db, job_id, "running", NULL);
	r = run_all(db, job_id, spec, o, db_path, err);
	if (r == -EINTR) {
		db_job_set_status(db, job_id, "interrupted", buf_str(err));
		goto done;
	}
	if (r)
		goto fail;
	if (!job_cancelled(db, job_id))
		db_job_set_status(db, job_id, "done", NULL);
	goto done;
fail:
	db_job_set_status(db, job_id, "failed", buf_str(err));
done:
	db_job_set_owner(db, job_id, NULL);
out:
	job_spec_free(spec);
	free(spec_json);
	free(db_path);
	free(me);
	free(owner);
	free(status);
	return r;
}

extern char **environ;

/* Run argv, its stderr captured into out (at most 4 KiB kept); returns its
 * exit status, or -errno when it could not be started. */
static int run_capture(char *const argv[], struct buf *out)
{
	posix_spawn_file_actions_t fa;
	int fds[2], status = 0, r;
	pid_t pid;
	char chunk[512];
	ssize_t n;

	if (pipe(fds))
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	r = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (r) {
		close(fds[0]);
		return -r;
	}
	while ((n = read(fds[0], chunk, sizeof(chunk))) > 0)
		if (out->len < 4096)
			buf_append(out, chunk, (size_t)n);
	close(fds[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Where the knob the agent's message names ("knob 'x'", "unknown knob
 * 'x'") was set: the job file's line, or "--set x" (caller frees); NULL
 * when the message names no knob of the spec's. */
static char *knob_where(const struct job_spec *spec, const char *msg)
{
	const char *k = strstr(msg, "knob '"), *w;
	char name[128];
	size_t n;

	if (!k)
		return NULL;
	k += strlen("knob '");
	n = strcspn(k, "'\n");
	if (k[n] != '\'' || n >= sizeof(name))
		return NULL;
	memcpy(name, k, n);
	name[n] = '\0';
	if ((w = job_spec_where(spec, name)))
		return xstrdup(w);
	for (size_t i = 0; i < spec->nknobs; i++)
		if (!strcmp(spec->knobs[i].key, name))
			return xasprintf("--set %s", name);
	for (size_t i = 0; i < spec->ndims; i++)
		if (!strcmp(spec->dims[i].key, name))
			return xasprintf("--set %s", name);
	return NULL;
}

int compare_check_knobs(const struct job_spec *spec, const char *agent, struct buf *err)
{
	char *path = agent ? xstrdup(agent) : image_default_agent();
	size_t nc = job_ncells(spec);
	int ret = 0;

	for (size_t i = 0; i < nc && !ret; i++) {
		json_t *p = NULL;
		char *params = job_cell_params(spec, i);
		struct run_settings rs;
		struct buf out = BUF_INIT;
		size_t nk = 0;

		p = json_loads(params, 0, NULL);
		settings_from_params(&rs, p);
		while (rs.knobs[nk])
			nk++;
		char **argv = xcalloc(nk + 4, sizeof(*argv));
		argv[0] = path;
		argv[1] = (char *)"check";
		argv[2] = (char *)rs.workload;
		for (size_t k = 0; k < nk; k++)
			argv[3 + k] = (char *)rs.knobs[k];
		int rc = run_capture(argv, &out);
		if (rc) {
			char *cell = job_cell_text(spec, i);
			const char *msg = buf_str(&out);
			char *where = NULL;
			const char *prefix = "kcanary-agent: error: ";
			if (!strncmp(msg, prefix, strlen(prefix)))
				msg += strlen(prefix);
			if (rc < 0)
				buf_printf(err, "cannot run the agent '%s' to check knobs: %s", path,
					   strerror(-rc));
			else if ((where = knob_where(spec, msg)))
				buf_printf(err, "%s: %.*s", where, (int)strcspn(msg, "\n"), msg);
			else
				buf_printf(err, "%s%s%s%.*s", *cell ? "matrix cell '" : "", cell,
					   *cell ? "': " : "", (int)strcspn(msg, "\n"), msg);
			free(cell);
			free(where);
			ret = -EINVAL;
		}
		free(argv);
		buf_release(&out);
		settings_release(&rs);
		json_decref(p);
		free(params);
	}
	free(path);
	return ret;
}

int compare_resume(struct db *db, int64_t job_id, size_t *n_interrupted, struct buf *err)
{
	int64_t *ids = NULL;
	size_t n = 0;
	char *owner = NULL, *status = NULL;
	int r;

	if ((r = db_job_owner(db, job_id, &owner, &status))) {
		buf_printf(err, "no job %lld in the store", (long long)job_id);
		return r;
	}
	if (!compare_is_compare_job(db, job_id)) {
		buf_printf(err, "job %lld is not a compare job: only compare jobs can be resumed",
			   (long long)job_id);
		free(owner);
		free(status);
		return -EINVAL;
	}
	if (owner && owner_alive(owner)) {
		buf_printf(err, "job %lld is being carried out by %s: nothing to resume",
			   (long long)job_id, owner);
		free(owner);
		free(status);
		return -EBUSY;
	}
	free(owner);
	free(status);
	r = db_job_interrupt_running(db, job_id, &ids, &n);
	if (r)
		buf_printf(err, "cannot mark interrupted runs: %s", db_errmsg(db));
	free(ids);
	if (n_interrupted)
		*n_interrupted = n;
	return r;
}

/* ---- the queue of `kcanary serve` ---- */

struct compare_worker {
	pthread_t thread;
	struct compare_opts opts;
	char *db_path;
	volatile bool stop;
};

/* Jobs left building or running by a coordinator that died: resume them
 * first (their running runs become interrupted, fresh repeats added). */
static void resume_orphans(struct db *db, struct compare_worker *w)
{
	static const char *const states[] = { "building", "running" };

	for (size_t s = 0; s < 2; s++) {
		int64_t *ids = NULL;
		size_t n = 0;
		if (db_jobs_with_status(db, states[s], &ids, &n, 1000))
			continue;
		for (size_t i = 0; i < n && !w->stop; i++) {
			struct buf err = BUF_INIT;
			size_t k = 0;
			if (compare_resume(db, ids[i], &k, &err) == 0) {
				log_warn("job %lld was left %s by a coordinator that stopped: resuming"
					 " (%zu interrupted runs rescheduled)", (long long)ids[i], states[s], k);
				db_job_set_status(db, ids[i], "pending", NULL);
			}
			buf_release(&err);
		}
		free(ids);
	}
}

static void *worker_main(void *arg)
{
	struct compare_worker *w = arg;
	struct db *db = NULL;

	if (db_open(&db, w->db_path)) {
		log_err("job queue: cannot open the store '%s'", w->db_path);
		return NULL;
	}
	resume_orphans(db, w);
	while (!w->stop) {
		int64_t *ids = NULL;
		size_t n = 0;
		if (db_jobs_with_status(db, "pending", &ids, &n, 1) == 0 && n) {
			struct buf err = BUF_INIT;
			log_info("job queue: carrying out job %lld", (long long)ids[0]);
			int r = compare_execute(db, ids[0], &w->opts, &err);
			if (r && r != -EINTR)
				log_warn("job %lld: %s", (long long)ids[0], buf_str(&err));
			buf_release(&err);
			free(ids);
			continue;
		}
		free(ids);
		for (int i = 0; i < 20 && !w->stop; i++)
			usleep(100000);
	}
	db_close(db);
	return NULL;
}

int compare_worker_start(struct compare_worker **out, const char *db_path,
			 const struct compare_opts *o)
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
