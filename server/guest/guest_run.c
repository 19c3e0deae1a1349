/* guest_run.c - the run service: a stored run through one guest to its
 * stored outcome (see guest_run.h). */
#define LOG_MODULE "run"
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest/agent_check.h"
#include "store/db_cells.h"
#include "store/db_guest.h"
#include "store/db_overhead.h"
#include "store/db_runs.h"
#include "store/db_compare.h"
#include "store/db_status.h"
#include "error.h"
#include "guest/guest_run.h"
#include "guest/hostfs.h"
#include "log.h"
#include "judge/progress.h"
#include "judge/report.h"
#include "guest/run_params.h"
#include "guest/scratch.h"

void guest_ctx_init(struct guest_ctx *g, struct db *db, const struct guest_opts *o,
		    bool warn_tcg)
{
	memset(g, 0, sizeof(*g));
	g->db = db;
	g->o = *o;
	g->agent = o->agent ? xstrdup(o->agent) : image_default_agent();
	g->db_path = db_path_in(o->home);
	if (o->accel) {
		g->ai.accel = strcmp(o->accel, "kvm") ? VM_ACCEL_TCG : VM_ACCEL_KVM;
		snprintf(g->ai.why, sizeof(g->ai.why), "--accel %s", o->accel);
	} else {
		guest_ctx_probe_host(g, NULL);
	}
	if (g->ai.accel == VM_ACCEL_TCG && warn_tcg)
		progress_say(o->quiet, "warning: %s (%s)", vm_tcg_warning, g->ai.why);
}

void guest_ctx_probe_host(struct guest_ctx *g, struct vm_conn *c)
{
	struct vm_conn *own = NULL;
	struct buf e = BUF_INIT;

	if (g->o.accel)
		return;   /* --accel: forced for every host */
	if (!c && vm_conn_open(&own, g->o.uri, &e) == 0)
		c = own;
	if (!c || vm_accel_probe_host(&g->ai, c, &e)) {
		/* the run finds out about the host itself; until then, this
		 * machine's accelerator when the host is this machine */
		if (vm_uri_is_local(g->o.uri))
			vm_accel_probe(&g->ai, NULL);
		else
			vm_accel_from_caps(&g->ai, NULL, false, NULL);
		char msg[128];
		size_t n = strlen(g->ai.why);

		snprintf(msg, sizeof(msg), "%s", buf_str(&e));
		msg[strcspn(msg, "\n")] = '\0';
		snprintf(g->ai.why + n, sizeof(g->ai.why) - n, " (host not asked: %s)", msg);
	}
	vm_conn_close(own);
	buf_release(&e);
}

void guest_ctx_release(struct guest_ctx *g)
{
	if (!g)
		return;
	free(g->agent);
	free(g->db_path);
	free(g->img_path);
	free(g->img_mod);
	rootfs_image_release(&g->rfs);
	free(g->rfs_key);
	memset(g, 0, sizeof(*g));
}

/* ---- the live line: the run's latest lag sample, on a terminal ---- */

struct live {
	pthread_t thread;
	bool running;
	volatile bool stop;
	const char *db_path;
	int64_t job_id;
	const char *label;
};

/* Reads through a connection of its own: a struct db is one thread's. */
static void *live_main(void *arg)
{
	struct live *l = arg;
	struct db *db = NULL;

	/* the live line is a courtesy: without it the run goes on */
	if (db_open(&db, l->db_path, NULL))
		return NULL;
	while (!l->stop) {
		int64_t run;
		char *variant = NULL, *cell = NULL;
		int rep;
		double t, v;

		if (db_run_progress(db, l->job_id, "lag_s", &run, &variant, &cell, &rep, &t, &v, NULL) == 0) {
			if (isnan(t))
				progress_live("%s: booting", l->label);
			else
				progress_live("%s: t=%.0fs lag %.1fs", l->label, t, v);
		}
		free(variant);
		free(cell);
		for (int i = 0; i < 10 && !l->stop; i++)
			usleep(100000);
	}
	db_close(db);
	return NULL;
}

static void live_start(struct live *l, const struct guest_ctx *g, int64_t job_id,
		       const char *label)
{
	memset(l, 0, sizeof(*l));
	if (!label || g->o.quiet || !isatty(2))
		return;
	l->db_path = g->db_path;
	l->job_id = job_id;
	l->label = label;
	l->running = !pthread_create(&l->thread, NULL, live_main, l);
}

static void live_stop(struct live *l)
{
	if (!l->running)
		return;
	l->stop = true;
	pthread_join(l->thread, NULL);
	l->running = false;
}

/* ---- one run ---- */

/* The initramfs for modules_dir and the run's filesystem (fs, with the
 * --rootfs modules when rootfs): the context's last one when it was built
 * for the same modules tree, fs and rootfs (the cache key is their
 * content), else built or found in the image cache. 0, or -errno with why. */
static int initramfs_for(struct guest_ctx *g, const char *modules_dir, const char *fs,
			 bool rootfs, struct buf *why)
{
	struct image_spec is = { .home = g->o.home, .agent_path = g->agent,
				 .modules_dir = modules_dir, .fs = fs, .rootfs = rootfs };
	char *key = xasprintf("%s\n%s\n%d", modules_dir ? modules_dir : "", fs, rootfs);

	if (g->img_path && g->img_mod && !strcmp(g->img_mod, key)) {
		free(key);
		return 0;
	}
	free(g->img_path);
	free(g->img_mod);
	g->img_path = NULL;
	g->img_mod = key;
	return image_build(&g->img_path, &is, why);
}

/* The root filesystem j asks for: the context's last one when it was made
 * from the same spec and files, else found in the cache or built
 * (rootfs.h). 0, or -errno with why. */
static int rootfs_for(struct guest_ctx *g, const struct guest_job *j, struct buf *why)
{
	struct rootfs_spec rs = { .home = g->o.home, .spec = j->rootfs,
				  .agent_path = g->agent, .files = j->files };
	struct buf key = BUF_INIT;
	int r;

	buf_puts(&key, j->rootfs);
	for (size_t i = 0; j->files && j->files[i]; i++)
		buf_printf(&key, "\n%s", j->files[i]);
	if (g->rfs.path && g->rfs_key && !strcmp(g->rfs_key, buf_str(&key))) {
		buf_release(&key);
		return 0;
	}
	rootfs_image_release(&g->rfs);
	free(g->rfs_key);
	g->rfs_key = buf_detach(&key);
	g->rfs_recorded_build = false;
	if (rootfs_is_host(j->rootfs)) {
		/* read again for every run: the host's userland is not pinned */
		free(g->rfs_key);
		g->rfs_key = NULL;
		if ((r = rootfs_host(&g->rfs, why)))
			return r;
		progress_say(g->o.quiet, "root filesystem host: this machine's / read-only (%s;"
			     " dpkg list %.12s)", REPORT_ROOTFS_HOST_MARK, g->rfs.hash);
		return 0;
	}
	progress_say(g->o.quiet, "root filesystem %s: resolving packages", j->rootfs);
	if ((r = rootfs_get(&g->rfs, &rs, why)))
		return r;
	if (g->rfs.built)
		progress_say(g->o.quiet, "root filesystem %s: built %s in %.1f s", j->rootfs,
			     g->rfs.hash, g->rfs.build_s);
	else
		progress_say(g->o.quiet, "root filesystem %s: cached %s", j->rootfs, g->rfs.hash);
	return 0;
}

/* Name the run's root filesystem in the store (its build time once). */
static int record_rootfs(struct guest_ctx *g, const struct guest_job *j, int64_t run_id,
			 struct buf *err)
{
	struct db_rootfs d = {
		.hash = g->rfs.hash, .spec = j->rootfs, .packages = g->rfs.packages,
		.files_json = g->rfs.files_json, .path = g->rfs.path,
		.size_bytes = g->rfs.size_bytes,
		.build_s = g->rfs.built && !g->rfs_recorded_build ? g->rfs.build_s : -1,
	};
	int r = db_run_set_rootfs(g->db, run_id, &d, err);

	if (!r)
		g->rfs_recorded_build = true;
	return r;
}

/* The watchdog for a run whose workload the agent expects to take
 * expected_s (< 0: it cannot tell). */
static double watchdog_for(const struct guest_ctx *g, const struct guest_job *j,
			   double expected_s)
{
	if (j->watchdog_s > 0)
		return j->watchdog_s;
	return (expected_s < 0 ? AGENT_CHECK_UNKNOWN_S : expected_s) +
	       (j->setup_s > 0 ? j->setup_s : runner_setup_allowance_s(g->ai.accel));
}

/* The run's expected length (< 0: the agent cannot tell) and its scratch
 * disk. The length: the one stored with its job's cell (db_cells.h, when
 * the job was stored), else the agent's check now (a job stored before,
 * an ad-hoc run). The disk: j->disk_bytes when given, else the one stored
 * with its job (db_cells.h: the largest any cell of the job needs, one
 * size for all its runs), else sized from the agent's check now
 * (scratch.h). A run whose length was stored with its job, and whose
 * disk was too or is given, is not checked again (the job was); one whose
 * length alone was stored was checked then, so a check that fails now
 * only leaves its disk at the floor, with a warning. fs: the run's
 * filesystem. 0, or -errno with why: -EINVAL when the agent
 * refuses the knobs, -EFBIG when the disk would be too large
 * (scratch_disk_size()). */
static int check_run(struct guest_ctx *g, const struct guest_job *j, const struct guest_run_req *rq,
		     const char *fs, double *expected_s, uint64_t *disk_bytes, struct buf *why)
{
	struct buf e = BUF_INIT;
	struct agent_check chk = { 0 };
	uint64_t asked = j->disk_bytes;
	bool stored;
	int r;

	r = db_run_expected_s(g->db, rq->run_id, expected_s, &e);
	if (r && r != -ENOENT)
		log_warn("run %lld: %s; asking the agent", (long long)rq->run_id, buf_str(&e));
	stored = !r;
	buf_reset(&e);
	if (!asked && (r = db_run_scratch_bytes(g->db, rq->run_id, &asked, &e)) && r != -ENOENT)
		log_warn("run %lld: %s; sizing its own disk", (long long)rq->run_id, buf_str(&e));
	buf_reset(&e);
	if (stored && asked) {
		*disk_bytes = asked;	/* both checked when the job was stored */
		r = 0;
		goto out;
	}
	r = agent_check(&chk, g->agent, rq->gs.run, &e);
	if (!r && !chk.ok)
		r = err_setf(&e, -EINVAL, "%s", chk.error);
	if (r && !stored) {
		err_setf(why, r, "%s", buf_str(&e));
		goto out;
	}
	if (r) {
		log_warn("run %lld: the agent's check: %s; scratch disk at the floor",
			 (long long)rq->run_id, buf_str(&e));
		chk.ok = false;
	} else if (!stored) {
		*expected_s = chk.expected_s;
	}
	r = scratch_disk_size(disk_bytes, asked, fs, &chk, why);
out:
	agent_check_release(&chk);
	buf_release(&e);
	return r;
}

/* Everything before the guest: the expected length, the watchdog, the
 * scratch disk's size, the command line and the initramfs. 0, or -errno with why when the run
 * cannot start (an outcome; -ENOSPC, a full disk, is not one). */
static int prepare(struct guest_ctx *g, const struct guest_job *j, const struct guest_run_req *rq,
		   char **cmdline, double *watchdog_s, uint64_t *disk_bytes, struct buf *why)
{
	struct guest_settings gs = rq->gs;
	double expected_s;
	int r;

	if (!gs.fs)
		gs.fs = "ext4";
	if ((r = check_run(g, j, rq, gs.fs, &expected_s, disk_bytes, why)))
		return r;
	*watchdog_s = watchdog_for(g, j, expected_s);
	gs.port = "kcanary";
	if (j->files && j->files[0] && !j->rootfs)
		return err_setf(why, -EINVAL, "--files needs --rootfs: files go into the root filesystem");
	if (rootfs_is_host(j->rootfs) && !hostfs_uri_local(g->o.uri))
		return err_setf(why, -EINVAL, "--rootfs host shares this machine's / and cannot reach a"
				" guest on another host (libvirt URI '%s'): use --rootfs debian[:PKG,...]"
				" there", g->o.uri ? g->o.uri : vm_default_uri());
	if (j->files && j->files[0] && rootfs_is_host(j->rootfs))
		return err_setf(why, -EINVAL, "--files needs --rootfs debian[:PKG,...]: the host's / is"
				" shared read-only as it is (use a path the host has)");
	if (j->rootfs && (r = rootfs_for(g, j, why)))
		return r;
	gs.rootfs = j->rootfs != NULL;
	gs.rootfs_host = rootfs_is_host(j->rootfs);
	if ((r = image_cmdline(cmdline, &gs, why)))
		return r;
	return initramfs_for(g, rq->modules_dir, gs.fs, gs.rootfs, why);
}

/* The uncompressed kernel to boot for the bzImage kernel through QEMU's
 * PVH entry (image_kernel_pvh: no decompression in the guest), or NULL to
 * boot the bzImage itself: a kernel without CONFIG_PVH, or KCANARY_PVH=0. */
static char *kernel_pvh(const struct guest_ctx *g, const char *kernel)
{
	const char *env = getenv("KCANARY_PVH");
	struct buf e = BUF_INIT;
	char *out = NULL;

	if (env && !strcmp(env, "0"))
		return NULL;
	if (image_kernel_pvh(&out, g->o.home, kernel, &e))
		log_info("booting '%s' as a bzImage: %s", kernel, buf_str(&e));
	buf_release(&e);
	return out;
}

/* A run that could not start: stored as 'failed' with why. */
static int store_failed(struct guest_result *out, struct db *db, int64_t run_id, const char *why,
			struct buf *err)
{
	snprintf(out->run.status, sizeof(out->run.status), "failed");
	snprintf(out->run.error, sizeof(out->run.error), "%.*s", (int)sizeof(out->run.error) - 1, why);
	return db_run_set_status(db, run_id, "failed", why, err);
}

/*
 * The run's phases (db_overhead.h) from the clock marks: t_begin (guest_run
 * called), the runner's marks (runner.h), t_end (the runner returned). A
 * mark the run never reached (a guest that failed to boot says no hello)
 * takes the next one it did, so the phase in progress gets the time; a
 * missing done record ends the workload at the wait's end. Marks are made
 * monotonic and rounded to ms from t_begin, so the phases sum to wall_ms.
 */
static void overhead_of(struct db_overhead *ov, int64_t run_id, double t_begin, double t_prep,
			const struct runner_result *rr, double t_end)
{
	enum { M_BEGIN, M_UPLOAD, M_CREATE, M_BOOT, M_WORKLOAD, M_TEARDOWN, M_END, NM };
	double m[NM] = { t_begin, rr->setup_mono_s ? rr->setup_mono_s : t_prep, rr->create_mono_s,
			 rr->started_mono_s, rr->hello_mono_s, rr->done_mono_s, t_end };
	int64_t ms[NM];

	if (!m[M_TEARDOWN] && m[M_WORKLOAD])
		m[M_TEARDOWN] = rr->end_mono_s;
	for (int k = NM - 2; k > M_BEGIN; k--)
		if (!m[k])
			m[k] = m[k + 1];
	for (int k = 0; k < NM; k++) {
		if (k && m[k] < m[k - 1])
			m[k] = m[k - 1];
		if (m[k] > t_end)
			m[k] = t_end;
		ms[k] = llround((m[k] - t_begin) * 1000);
	}
	memset(ov, 0, sizeof(*ov));
	ov->run_id = run_id;
	ov->wall_ms = ms[M_END];
	ov->phase_ms[DB_OV_IMAGE] = ms[M_UPLOAD] - ms[M_BEGIN];
	ov->phase_ms[DB_OV_UPLOAD] = ms[M_CREATE] - ms[M_UPLOAD];
	ov->phase_ms[DB_OV_CREATE] = ms[M_BOOT] - ms[M_CREATE];
	ov->phase_ms[DB_OV_BOOT] = ms[M_WORKLOAD] - ms[M_BOOT];
	ov->phase_ms[DB_OV_WORKLOAD] = ms[M_TEARDOWN] - ms[M_WORKLOAD];
	ov->phase_ms[DB_OV_TEARDOWN] = ms[M_END] - ms[M_TEARDOWN];
	/* /init's mkfs and mount happen inside boot-to-hello */
	if (rr->hello_mono_s && rr->mkfs_s > 0) {
		int64_t mk = llround(rr->mkfs_s * 1000);
		if (mk > ov->phase_ms[DB_OV_BOOT])
			mk = ov->phase_ms[DB_OV_BOOT];
		ov->phase_ms[DB_OV_MKFS] = mk;
		ov->phase_ms[DB_OV_BOOT] -= mk;
	}
}

int guest_run(struct guest_result *out, struct guest_ctx *g, const struct guest_job *j,
	      const struct guest_run_req *rq, struct buf *err)
{
	double t_begin = clock_mono_s(), t_prep;
	struct buf why = BUF_INIT;
	struct live live;
	char *cmdline = NULL, *pvh = NULL;
	double watchdog_s = 0;
	uint64_t disk_bytes = 0;
	int r;

	memset(out, 0, sizeof(*out));
	out->run.boot_to_hello_s = -1;
	if ((r = db_run_set_guest(g->db, rq->run_id, vm_accel_name(g->ai.accel), NULL,
				  rq->kernel_id, err)))
		goto out;
	if ((r = prepare(g, j, rq, &cmdline, &watchdog_s, &disk_bytes, &why)) == -ENOSPC) {
		/* a full disk is not the run's outcome: the job stops, the run
		 * stays pending for `kcanary resume` */
		r = err_setf(err, r, "%s", buf_str(&why));
		goto out;
	}
	if (r) {
		r = store_failed(out, g->db, rq->run_id, buf_str(&why), err);
		goto out;
	}
	pvh = kernel_pvh(g, rq->kernel);
	t_prep = clock_mono_s();
	if (j->rootfs && (r = record_rootfs(g, j, rq->run_id, err)))
		goto out;
	out->started = true;
	out->watchdog_s = watchdog_s;
	live_start(&live, g, j->job_id, rq->label);
	{
		struct runner_opts ro = {
			.uri = g->o.uri, .home = g->o.home, .kernel = rq->kernel, .kernel_pvh = pvh,
			.initrd = g->img_path, .cmdline = cmdline, .accel = g->ai.accel,
			.rootfs = j->rootfs && !rootfs_is_host(j->rootfs) ? g->rfs.path : NULL,
			.rootfs_key = j->rootfs && !rootfs_is_host(j->rootfs) && g->rfs.volume_key[0] ?
				      g->rfs.volume_key : NULL,
			.hostfs = rootfs_is_host(j->rootfs),
			.vcpus = j->vcpus, .memory_mib = j->memory_mib, .disk_bytes = disk_bytes,
			.watchdog_s = watchdog_s, .console = g->o.console, .host = g->o.host,
		};
		r = runner_run(&out->run, g->db, rq->run_id, &ro, err);
	}
	live_stop(&live);
	overhead_of(&out->overhead, rq->run_id, t_begin, t_prep, &out->run, clock_mono_s());
	if (!r)
		r = db_run_set_overhead(g->db, &out->overhead, err);
out:
	buf_release(&why);
	free(cmdline);
	free(pvh);
	return r;
}

int guest_run_pending(struct guest_result *out, struct guest_ctx *g, const struct guest_job *j,
		      const struct db_pending_run *p, const char *label, struct buf *err)
{
	struct buf why = BUF_INIT;
	struct run_params rp;
	int r;

	if (run_params_parse(&rp, p->params_json, &why)) {
		memset(out, 0, sizeof(*out));
		r = store_failed(out, g->db, p->id, buf_str(&why), err);
	} else {
		struct guest_run_req rq = {
			.run_id = p->id, .kernel_id = p->kernel_id, .kernel = p->image_path,
			.modules_dir = p->modules_dir, .label = label,
			.gs = { .fs = p->fs, .run = &rp },
		};
		r = guest_run(out, g, j, &rq, err);
	}
	run_params_release(&rp);
	buf_release(&why);
	return r;
}

/* ---- kcanary boot's run ---- */

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* The knobs as the run's params: {"key": "value", ...}, sorted. */
static char *knobs_json(const struct run_params *rp)
{
	json_t *o = json_object();
	char *text;

	for (size_t i = 0; rp && i < rp->nknobs; i++)
		json_object_set_new(o, rp->knobs[i].key, json_string(rp->knobs[i].value));
	text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return text;
}

/* Store the ad-hoc run (its job created when missing): *run_id. */
static int store_adhoc(struct db *db, int64_t *job_id, int64_t *run_id,
		       const struct guest_adhoc *a, const char *fs, struct buf *err)
{
	const char *job = a->job ? a->job : "adhoc-boot";
	char *params = knobs_json(a->gs.run), *cell = xasprintf("fs=%s", fs);
	int64_t variant_id;
	int r;

	struct buf why = BUF_INIT;

	r = db_job_resolve(db, job_id, job, &why);
	if (r == -ENOENT)        /* the first run of this name: not an error */
		r = db_job_create(db, job_id, job, "adhoc", NULL, err);
	else if (r)
		err_setf(err, r, "%s", buf_str(&why));
	buf_release(&why);
	if (!r && !(r = db_variant_get(db, &variant_id, *job_id,
				       a->variant ? a->variant : base_name(a->kernel), err)))
		r = db_run_create(db, run_id, *job_id, variant_id, cell, 0, fs, params, err);
	free(params);
	free(cell);
	return r;
}

/* The modules tree a->modules names, or /lib/modules/<release> when it
 * exists (new string, NULL for none). */
static char *adhoc_modules(const struct guest_adhoc *a, const char *release)
{
	char *dir;

	if (a->modules)
		return strcmp(a->modules, "none") ? xstrdup(a->modules) : NULL;
	dir = xasprintf("/lib/modules/%s", release);
	if (!access(dir, R_OK))
		return dir;
	log_info("no modules at %s: assuming everything needed is built in", dir);
	free(dir);
	return NULL;
}

int guest_run_adhoc(struct guest_result *out, int64_t *run_id, struct guest_ctx *g,
		    const struct guest_job *j, const struct guest_adhoc *a, struct buf *err)
{
	const char *fs = a->gs.fs ? a->gs.fs : "ext4";
	struct guest_job jj = *j;
	char release[128], *modules_dir = NULL;
	struct buf why = BUF_INIT;
	int64_t kernel_id = 0;
	int r;

	memset(out, 0, sizeof(*out));
	out->run.boot_to_hello_s = -1;
	*run_id = 0;
	/* Stored first, so even a kernel that is no bzImage leaves a failed
	 * run saying so. */
	if ((r = store_adhoc(g->db, &jj.job_id, run_id, a, fs, err)))
		return r;
	if (image_kernel_release(release, sizeof(release), a->kernel, &why)) {
		r = store_failed(out, g->db, *run_id, buf_str(&why), err);
		buf_release(&why);
		return r;
	}
	modules_dir = adhoc_modules(a, release);
	if ((r = db_kernel_prebuilt(g->db, &kernel_id, a->kernel, release, modules_dir, err)))
		goto out;
	if ((r = runner_signals_install())) {
		r = err_setf(err, r, "cannot catch signals: %s", strerror(-r));
		goto out;
	}
	{
		struct guest_run_req rq = {
			.run_id = *run_id, .kernel_id = kernel_id, .kernel = a->kernel,
			.modules_dir = modules_dir, .gs = a->gs,
		};
		rq.gs.fs = fs;
		r = guest_run(out, g, &jj, &rq, err);
	}
out:
	free(modules_dir);
	return r;
}
