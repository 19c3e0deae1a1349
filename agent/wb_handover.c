/* wb_handover.c - the workload `wb-handover`: the writeback hand-over
 * reproducer of the seed (../shared/seeds/000_*.txt, "Minimal recipe").
 *
 * A pod cgroup with memory.max = pod_max holds an `old` and a `new`
 * container. The old writer appends to nfiles files at rate_mbps for
 * old_s and exits with them dirty; optional syncfs calls, a 4 KiB append
 * and a shutdown file follow from the old cgroup; the old cgroup is then
 * removed (mode=removed), kept (mode=alive, the seed's control), and the
 * new writer appends to the same files (or, mode=fresh, to files of its
 * own) at the same rate for measure_s while lag is sampled every second.
 *
 * Layout under the cgroup2 root (a stale one from a crashed run is removed
 * first):  kcanary-wb/            memory.max = pod_max   (the pod)
 *            old/  new/          memory.max = mem_max   (pod_hop = 0)
 *            pod-a/old  pod-b/new                       (pod_hop > 0)
 * With pod_hop > 0, pod-a is removed pod_hop seconds after the new writer
 * started, as when a deploy replaces a whole pod (mode=removed only).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOG_MODULE "wb-handover"
#include "cgroup.h"
#include "error.h"
#include "log.h"
#include "pace.h"
#include "probes.h"
#include "record.h"
#include "util.h"
#include "workload.h"

static const char *const shutdown_choices[] = { "none", "offset", "offset_rename", "empty", NULL };
static const char *const mode_choices[] = { "removed", "alive", "fresh", NULL };

/* Defaults are the seed's settings where it gives them (cover letter:
 * "MEM_MAX=max POD_MAX=4G RATE_MBPS=250", the recipe's 1000 files and
 * bs=1M, 120 s of measurement, sleep 3 before the new writer). old_s=30:
 * the recipe's old writer puts 8 MiB + 64 KiB into each of 1000 files,
 * about 8 GiB, 33 s at 250 MiB/s. */
static const struct knob_def knobs[] = {
	{ "dir", KNOB_STRING, "path", ".", "test directory on the filesystem under test (files go to DIR/kcanary-wb/)", NULL },
	{ "rate_mbps", KNOB_NUMBER, "MiB/s", "250", "paced rate of both writers", NULL },
	{ "nfiles", KNOB_UINT, "files", "1000", "files written round-robin, one block at a time", NULL },
	{ "block", KNOB_SIZE, "bytes", "1M", "bytes per write() (the recipe's dd bs=1M)", NULL },
	{ "mem_max", KNOB_SIZE_MAX, "bytes", "max", "memory.max of the old and new containers", NULL },
	{ "pod_max", KNOB_SIZE_MAX, "bytes", "4G", "memory.max of the pod (the limited parent)", NULL },
	{ "old_s", KNOB_SECONDS, "s", "30", "how long the old writer writes before it exits", NULL },
	{ "sync_old", KNOB_UINT, "calls", "0", "syncfs() calls from the old cgroup after the old writer exits", NULL },
	{ "dirty_after", KNOB_BOOL, "", "0", "one 4 KiB append to f0 from the old cgroup after the syncfs calls", NULL },
	{ "shutdown_file", KNOB_ENUM, "", "none", "a 14-byte file from the old cgroup after syncfs: directly (offset), via temp file + rename (offset_rename), or an empty file (empty)", shutdown_choices },
	{ "mode", KNOB_ENUM, "", "removed", "removed: rmdir the old cgroup; alive: keep it (control); fresh: the new writer appends to its own files (no hand-over)", mode_choices },
	{ "io_toggle", KNOB_BOOL, "", "0", "disable io on the old writer's parent so its wb is killed, then create a file from old (the takeover; patch 3's scenario)", NULL },
	{ "settle_s", KNOB_SECONDS, "s", "3", "pause between removing the old cgroup and starting the new writer (the recipe's sleep 3)", NULL },
	{ "pod_hop", KNOB_SECONDS, "s", "0", "new writer in a new pod beside the old one; the old pod is removed this long after the new writer starts (0: same pod)", NULL },
	{ "measure_s", KNOB_SECONDS, "s", "120", "how long the new writer runs; lag is sampled once a second from its start", NULL },
};

#define POD_NAME "kcanary-wb"

/* Shared between the agent and its writer children (MAP_SHARED). */
struct wb_shm {
	_Atomic uint64_t written;
	_Atomic int stop;
	char msg[4400];   /* the child's error, "cannot write 'PATH': ..." */
};

struct writer_args {
	struct wb_shm *shm;
	const char *dir;       /* DIR/kcanary-wb */
	char prefix;           /* 'f' (the shared files) or 'g' (mode=fresh) */
	uint64_t nfiles, block;
	double rate_mbps, start_s, duration_s;
};

struct tail_args {
	struct wb_shm *shm;
	const char *dir;
	uint64_t sync_old;
	bool dirty_after;
	const char *shutdown_file;
	bool takeover;         /* io_toggle: create a file after io is off */
};

static int child_fail(struct wb_shm *shm, const char *what, const char *path, int err)
{
	snprintf(shm->msg, sizeof(shm->msg), "cannot %s '%s': %s", what, path, strerror(err));
	return 1;
}

/* The paced writer, in its own cgroup: appends block bytes to each file in
 * turn, sleeping when ahead of schedule, and publishes the byte count. */
static int writer_main(void *arg)
{
	struct writer_args *a = arg;
	int *fds = xcalloc(a->nfiles, sizeof(*fds));
	char *buf = xmalloc(a->block);
	struct pace p;
	uint64_t written = 0, i = 0;
	double end = a->start_s + a->duration_s;

	memset(buf, 'k', a->block);
	for (uint64_t f = 0; f < a->nfiles; f++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%c%llu", a->dir, a->prefix, (unsigned long long)f);
		fds[f] = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fds[f] < 0)
			return child_fail(a->shm, "open", path, errno);
	}
	pace_init(&p, a->start_s, a->rate_mbps);
	for (;;) {
		double now = clock_mono_s(), wait;
		int r;

		if (now >= end || atomic_load(&a->shm->stop))
			break;
		wait = pace_wait_s(&p, now, written);
		if (wait > 0) {
			double until = fmin(now + wait, end);
			struct timespec ts = { (time_t)until, (long)((until - (double)(time_t)until) * 1e9) };

			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			continue;
		}
		r = write_all(fds[i], buf, a->block);
		if (r < 0) {
			char path[64];

			snprintf(path, sizeof(path), "%c%llu", a->prefix, (unsigned long long)i);
			return child_fail(a->shm, "write", path, -r);
		}
		written += a->block;
		atomic_store(&a->shm->written, written);
		i = (i + 1) % a->nfiles;
	}
	/* exit with the files dirty: close() does not write back */
	return 0;
}

static int write_file(struct wb_shm *shm, const char *path, const char *data, size_t len, int flags)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
	int r;

	if (fd < 0)
		return child_fail(shm, "create", path, errno);
	r = write_all(fd, data, len);
	close(fd);
	return r < 0 ? child_fail(shm, "write", path, -r) : 0;
}

/* What the old container does after its writer exits (seed: syncfs, then
 * maybe a 4 KiB append or a 14-byte shutdown file), or the takeover. */
static int tail_main(void *arg)
{
	struct tail_args *a = arg;
	char path[4096], tmp[4096];
	static const char offset[] = "offset 123456\n";   /* 14 bytes */
	char page[4096];
	int dfd;

	_Static_assert(sizeof(offset) - 1 == 14, "the seed's shutdown file is 14 bytes");
	if (a->takeover) {
		snprintf(path, sizeof(path), "%s/takeover", a->dir);
		return write_file(a->shm, path, offset, 14, O_TRUNC);
	}
	dfd = open(a->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return child_fail(a->shm, "open", a->dir, errno);
	for (uint64_t i = 0; i < a->sync_old; i++) {
		if (syncfs(dfd) < 0) {
			close(dfd);
			return child_fail(a->shm, "syncfs", a->dir, errno);
		}
	}
	close(dfd);
	if (a->dirty_after) {
		memset(page, 'k', sizeof(page));
		snprintf(path, sizeof(path), "%s/f0", a->dir);
		if (write_file(a->shm, path, page, sizeof(page), O_APPEND))
			return 1;
	}
	snprintf(path, sizeof(path), "%s/shutdown", a->dir);
	if (!strcmp(a->shutdown_file, "offset"))
		return write_file(a->shm, path, offset, 14, O_TRUNC);
	if (!strcmp(a->shutdown_file, "empty"))
		return write_file(a->shm, path, "", 0, O_TRUNC);
	if (!strcmp(a->shutdown_file, "offset_rename")) {
		snprintf(tmp, sizeof(tmp), "%s/shutdown.tmp", a->dir);
		if (write_file(a->shm, tmp, offset, 14, O_TRUNC))
			return 1;
		if (rename(tmp, path) < 0)
			return child_fail(a->shm, "rename", tmp, errno);
	}
	return 0;
}

struct wb_run {
	struct wl_ctx *ctx;
	struct buf *err;         /* the run's error (error.h), set by fail() */
	char *cgroot, *pod, *pod_a, *pod_b, *old_cg, *new_cg, *dir;
	struct wb_shm *shm;
	pid_t child;
	struct lag_stats lag, old_lag;
	uint64_t written, old_written;
	double measured_s;
	bool old_removed, pod_a_removed;
};

static int fail(struct wb_run *w, int ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct wb_run *w, int ret, const char *fmt, ...)
{
	struct buf msg = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	err_setf(w->err, ret, "%s", buf_str(&msg));
	buf_release(&msg);
	return ret;
}

static int phase(struct wb_run *w, const char *name)
{
	log_info("phase %s at %.3f s", name, wl_t(w->ctx));
	return rec_phase(w->ctx->rec, wl_t(w->ctx), name);
}

/* Did a child fail? Turn its exit status and message into w->err. */
static int child_status(struct wb_run *w, const char *what, int status)
{
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (w->shm->msg[0])
		return fail(w, -EIO, "%s failed: %s", what, w->shm->msg);
	if (WIFSIGNALED(status))
		return fail(w, -EIO, "%s was killed by signal %d", what, WTERMSIG(status));
	return fail(w, -EIO, "%s exited with status %d", what, WEXITSTATUS(status));
}

/*
 * Run a paced writer in cg for duration_s, sampling its lag every second
 * from its start as `metric` (t in the records is workload time). With hop_s > 0, remove pod-a that long
 * after the start. The writer stops by itself at the end; one still
 * blocked in write() a second later is killed (its lag has been sampled).
 */
static int run_writer(struct wb_run *w, const char *cg, char prefix, double duration_s,
		      const char *metric, struct lag_stats *stats, uint64_t *written_out,
		      bool wait_exit, double hop_s)
{
	struct wl_ctx *ctx = w->ctx;
	struct writer_args a = {
		.shm = w->shm, .dir = w->dir, .prefix = prefix,
		.nfiles = knobs_u64(ctx->knobs, "nfiles"),
		.block = knobs_u64(ctx->knobs, "block"),
		.rate_mbps = knobs_double(ctx->knobs, "rate_mbps"),
		.duration_s = duration_s,
	};
	struct pace p;
	double start, end;
	int status = 0, ret = 0;

	atomic_store(&w->shm->written, 0);
	atomic_store(&w->shm->stop, 0);
	w->shm->msg[0] = '\0';
	start = a.start_s = clock_mono_s();
	end = start + duration_s;
	pace_init(&p, start, a.rate_mbps);
	w->child = wl_spawn(cg, writer_main, &a);
	if (w->child < 0)
		return fail(w, w->child, "cannot fork the %s writer: %s", metric, strerror(-w->child));
	for (long k = 1;; k++) {
		/* one sample per second of the writer's time, the last one at
		 * its end: measure_s samples, each standing for one second */
		double tick = start + (double)k;
		uint64_t written;
		pid_t r;

		if (tick > end + 1e-6)
			break;
		ret = wl_sleep_until(ctx, tick);
		if (ret < 0)
			goto out;
		written = atomic_load(&w->shm->written);
		lag_stats_add(stats, pace_lag_s(&p, tick, written));
		/* (wl_sleep_until() has emitted the probe records of this tick) */
		rec_sample(ctx->rec, tick - ctx->t0_s, metric, rec_ms(pace_lag_s(&p, tick, written)));
		if (hop_s > 0 && !w->pod_a_removed && tick - start >= hop_s) {
			phase(w, "pod_removed");
			cg_remove_tree(w->pod_a, 10.0);
			w->pod_a_removed = true;
		}
		r = waitpid(w->child, &status, WNOHANG);
		if (r == w->child) {
			w->child = 0;
			ret = child_status(w, metric, status);
			if (ret < 0)
				goto out;
			break;   /* finished early (it was behind at the end?) */
		}
	}
	ret = wl_sleep_until(ctx, end);
	if (ret < 0)
		goto out;
	*written_out = atomic_load(&w->shm->written);
	w->measured_s = duration_s;
	if (w->child > 0) {
		atomic_store(&w->shm->stop, 1);
		/* the old writer must exit by itself (its files stay dirty);
		 * the new one may be stuck in balance_dirty_pages() */
		ret = wl_reap(w->child, wait_exit ? -1.0 : 1.0, &status);
		w->child = 0;
		if (ret == -ETIMEDOUT && !wait_exit)
			ret = 0;
		else if (ret == 0)
			ret = child_status(w, metric, status);
		else if (wl_stop)
			ret = -EINTR;
	}
out:
	return ret;
}

static int run_tail(struct wb_run *w, bool takeover)
{
	struct tail_args a = {
		.shm = w->shm, .dir = w->dir,
		.sync_old = knobs_u64(w->ctx->knobs, "sync_old"),
		.dirty_after = knobs_bool(w->ctx->knobs, "dirty_after"),
		.shutdown_file = knobs_str(w->ctx->knobs, "shutdown_file"),
		.takeover = takeover,
	};
	int status = 0, ret;

	w->shm->msg[0] = '\0';
	w->child = wl_spawn(w->old_cg, tail_main, &a);
	if (w->child < 0)
		return fail(w, w->child, "cannot fork: %s", strerror(-w->child));
	ret = wl_reap(w->child, -1.0, &status);
	w->child = 0;
	if (ret < 0)
		return wl_stop ? -EINTR : ret;
	return child_status(w, takeover ? "the takeover" : "the old container's shutdown", status);
}

static int wb_check(struct wl_ctx *ctx, struct buf *err)
{
	char *cgroot = NULL;
	int ret = wl_check_common(&cgroot, "memory io", knobs_str(ctx->knobs, "dir"), err);

	free(cgroot);
	return ret;
}

/* Remove the files of an earlier run, so every run starts from empty files. */
static int prepare_dir(struct wb_run *w)
{
	int ret = mkdir_p(w->dir, 0755);
	char path[4096];

	if (ret < 0)
		return fail(w, ret, "cannot create test directory '%s': %s", w->dir, strerror(-ret));
	for (uint64_t f = 0;; f++) {
		int gone = 0;

		for (int k = 0; k < 2; k++) {
			snprintf(path, sizeof(path), "%s/%c%llu", w->dir, k ? 'g' : 'f', (unsigned long long)f);
			if (unlink(path) < 0 && errno == ENOENT)
				gone++;
		}
		if (gone == 2 && f >= knobs_u64(w->ctx->knobs, "nfiles"))
			break;
	}
	snprintf(path, sizeof(path), "%s/shutdown", w->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/takeover", w->dir);
	unlink(path);
	/* start from clean page cache state: nothing of the old files dirty */
	sync();
	return 0;
}

static int setup_cgroups(struct wb_run *w)
{
	const struct knobs *k = w->ctx->knobs;
	double hop = knobs_double(k, "pod_hop");
	int ret;

	if (access(w->pod, F_OK) == 0) {
		log_warn("removing stale cgroup '%s' left by an earlier run", w->pod);
		ret = cg_remove_tree(w->pod, 10.0);
		if (ret < 0)
			return fail(w, ret, "cannot remove stale cgroup '%s': %s", w->pod, strerror(-ret));
	}
	ret = cg_enable(w->cgroot, "memory io");
	if (ret < 0)
		return fail(w, ret, "cannot enable memory and io in '%s/cgroup.subtree_control': %s",
			    w->cgroot, strerror(-ret));
	ret = cg_create(w->pod);
	if (!ret)
		ret = cg_enable(w->pod, "memory io");
	if (!ret)
		ret = cg_set_max(w->pod, knobs_u64(k, "pod_max"));
	if (ret < 0)
		return fail(w, ret, "cannot set up pod cgroup '%s': %s", w->pod, strerror(-ret));
	if (hop > 0) {
		for (int i = 0; i < 2 && !ret; i++) {
			const char *p = i ? w->pod_b : w->pod_a;
			ret = cg_create(p);
			if (!ret)
				ret = cg_enable(p, "memory io");
		}
		if (ret < 0)
			return fail(w, ret, "cannot set up pod cgroups under '%s': %s", w->pod, strerror(-ret));
	}
	for (int i = 0; i < 2; i++) {
		const char *c = i ? w->new_cg : w->old_cg;

		ret = cg_create(c);
		if (!ret)
			ret = cg_set_max(c, knobs_u64(k, "mem_max"));
		if (ret < 0)
			return fail(w, ret, "cannot set up cgroup '%s': %s", c, strerror(-ret));
	}
	return 0;
}

static int emit_summary(struct wb_run *w)
{
	struct wl_ctx *ctx = w->ctx;
	json_t *metrics = json_object(), *probes = json_array();
	struct probe_snap s;

	json_object_set_new(metrics, "worst_lag_s", json_real(rec_ms(w->lag.worst_lag_s)));
	json_object_set_new(metrics, "mean_lag_s", json_real(rec_ms(lag_stats_mean_s(&w->lag))));
	json_object_set_new(metrics, "lag_over_1s_s", json_integer((json_int_t)w->lag.n_over_1s));
	json_object_set_new(metrics, "written_bytes", json_integer((json_int_t)w->written));
	json_object_set_new(metrics, "rate_mbps", json_real(rec_ms(pace_rate_mbps(w->written, w->measured_s))));
	json_object_set_new(metrics, "old_worst_lag_s", json_real(rec_ms(w->old_lag.worst_lag_s)));
	json_object_set_new(metrics, "old_written_bytes", json_integer((json_int_t)w->old_written));
	if (ctx->probes && probes_snap(ctx->probes, &s) == 0) {
		uint64_t calls = 0;

		for (int i = 0; i < s.nret; i++) {
			char key[16];

			calls += s.ret_count[i];
			snprintf(key, sizeof(key), "%d", s.ret_value[i]);
			json_array_append_new(probes, json_pack("{s:s, s:s, s:I}", "name", "cgroup_writeback_by_id",
								"key", key, "count", (json_int_t)s.ret_count[i]));
		}
		json_object_set_new(metrics, "wb_by_id_calls", json_integer((json_int_t)calls));
		json_object_set_new(metrics, "wb_by_id_enoent", json_integer((json_int_t)probe_snap_ret(&s, -ENOENT)));
		json_object_set_new(metrics, "bdp_pauses", json_integer((json_int_t)s.counters[PC_BDP_PAUSES]));
		json_object_set_new(metrics, "bdp_pause_ms_total", json_integer((json_int_t)s.counters[PC_BDP_PAUSE_MS_TOTAL]));
		json_object_set_new(metrics, "bdp_pause_ms_max", json_integer((json_int_t)s.counters[PC_BDP_PAUSE_MS_MAX]));
		json_object_set_new(metrics, "flush_foreign", json_integer((json_int_t)s.counters[PC_FLUSH_FOREIGN]));
		json_object_set_new(metrics, "inode_switch_wbs", json_integer((json_int_t)s.counters[PC_INODE_SWITCH_WBS]));
		json_array_append_new(probes, json_pack("{s:s, s:s, s:I}", "name", "balance_dirty_pages", "key", "events", "count", (json_int_t)s.counters[PC_BDP_EVENTS]));
		json_array_append_new(probes, json_pack("{s:s, s:s, s:I}", "name", "balance_dirty_pages", "key", "pauses", "count", (json_int_t)s.counters[PC_BDP_PAUSES]));
		json_array_append_new(probes, json_pack("{s:s, s:s, s:I}", "name", "balance_dirty_pages", "key", "pause_ms_total", "count", (json_int_t)s.counters[PC_BDP_PAUSE_MS_TOTAL]));
		json_array_append_new(probes, json_pack("{s:s, s:s, s:I}", "name", "flush_foreign", "key", "count", "count", (json_int_t)s.counters[PC_FLUSH_FOREIGN]));
		json_array_append_new(probes, json_pack("{s:s, s:s, s:I}", "name", "inode_switch_wbs", "key", "count", "count", (json_int_t)s.counters[PC_INODE_SWITCH_WBS]));
	}
	return rec_emit(ctx->rec, json_pack("{s:s, s:o, s:o}", "type", "summary",
					    "metrics", metrics, "probes", probes));
}

static int wb_run(struct wl_ctx *ctx, struct buf *err)
{
	const struct knobs *k = ctx->knobs;
	const char *mode = knobs_str(k, "mode");
	double hop = knobs_double(k, "pod_hop");
	struct wb_run w = { .ctx = ctx, .err = err, .lag = LAG_STATS_INIT, .old_lag = LAG_STATS_INIT };
	struct rlimit rl;
	uint64_t nfiles = knobs_u64(k, "nfiles");
	int ret;

	if (nfiles == 0)
		return fail(&w, -EINVAL, "knob 'nfiles': 0 files (expected at least 1)");
	if (knobs_u64(k, "block") == 0)
		return fail(&w, -EINVAL, "knob 'block': 0 bytes (expected at least 1)");
	rl.rlim_cur = rl.rlim_max = nfiles + 64;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < nfiles + 64) {
		rl.rlim_cur = rl.rlim_max = nfiles + 64;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			return fail(&w, -errno, "cannot raise the open file limit to %llu for nfiles=%llu: %s",
				    (unsigned long long)(nfiles + 64), (unsigned long long)nfiles, strerror(errno));
	}
	ret = wl_check_common(&w.cgroot, "memory io", knobs_str(k, "dir"), err);
	if (ret < 0)
		return ret;
	w.dir = xasprintf("%s/kcanary-wb", knobs_str(k, "dir"));
	w.pod = xasprintf("%s/" POD_NAME, w.cgroot);
	w.pod_a = xasprintf("%s/pod-a", w.pod);
	w.pod_b = xasprintf("%s/pod-b", w.pod);
	w.old_cg = hop > 0 ? xasprintf("%s/old", w.pod_a) : xasprintf("%s/old", w.pod);
	w.new_cg = hop > 0 ? xasprintf("%s/new", w.pod_b) : xasprintf("%s/new", w.pod);
	w.shm = mmap(NULL, sizeof(*w.shm), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (w.shm == MAP_FAILED) {
		w.shm = NULL;
		ret = fail(&w, -errno, "cannot map shared memory: %s", strerror(errno));
		goto out;
	}

	phase(&w, "setup");
	ret = prepare_dir(&w);
	if (!ret)
		ret = setup_cgroups(&w);
	if (ret < 0)
		goto out;

	phase(&w, "old_writer");
	ret = run_writer(&w, w.old_cg, 'f', knobs_double(k, "old_s"), "old_lag_s",
			 &w.old_lag, &w.old_written, true, 0);
	if (ret < 0)
		goto out;
	phase(&w, "old_exit");

	if (knobs_u64(k, "sync_old") || knobs_bool(k, "dirty_after") || strcmp(knobs_str(k, "shutdown_file"), "none")) {
		phase(&w, "old_shutdown");
		ret = run_tail(&w, false);
		if (ret < 0)
			goto out;
	}
	if (knobs_bool(k, "io_toggle")) {
		const char *parent = hop > 0 ? w.pod_a : w.pod;

		phase(&w, "io_toggle");
		ret = cg_write(parent, "cgroup.subtree_control", "-io");
		if (ret < 0) {
			ret = fail(&w, ret, "cannot disable io in '%s/cgroup.subtree_control': %s", parent, strerror(-ret));
			goto out;
		}
		ret = run_tail(&w, true);
		if (ret < 0)
			goto out;
	}
	if (!strcmp(mode, "removed")) {
		phase(&w, "remove_old");
		if (rmdir(w.old_cg) < 0) {
			ret = fail(&w, -errno, "cannot remove cgroup '%s': %s", w.old_cg, strerror(errno));
			goto out;
		}
		w.old_removed = true;
	}
	phase(&w, "settle");
	ret = wl_sleep_until(ctx, clock_mono_s() + knobs_double(k, "settle_s"));
	if (ret < 0)
		goto out;

	phase(&w, "new_writer");
	ret = run_writer(&w, w.new_cg, strcmp(mode, "fresh") ? 'f' : 'g', knobs_double(k, "measure_s"),
			 "lag_s", &w.lag, &w.written, false, strcmp(mode, "removed") ? 0 : hop);
	if (ret < 0)
		goto out;
	phase(&w, "measure_end");
	probes_emit(ctx->probes, ctx->rec, wl_t(ctx));
	ret = emit_summary(&w);
out:
	if (ret == -EINTR && !*err_text(err))
		err_setf(err, -EINTR, "interrupted by signal %d", (int)wl_stop);
	if (w.child > 0) {
		kill(w.child, SIGKILL);
		wl_reap(w.child, 5.0, NULL);
	}
	if (w.pod) {
		int r = cg_remove_tree(w.pod, 10.0);
		if (r < 0 && !ret)
			ret = fail(&w, r, "cannot remove cgroup '%s': %s", w.pod, strerror(-r));
	}
	if (w.shm)
		munmap(w.shm, sizeof(*w.shm));
	free(w.cgroot);
	free(w.dir);
	free(w.pod);
	free(w.pod_a);
	free(w.pod_b);
	free(w.old_cg);
	free(w.new_cg);
	return ret;
}

/* The phases that take time: the old writer, the pause before the new
 * one, the pod hop and the measured new writer (the coordinator adds its
 * setup allowance for boot, mkfs and teardown). */
static double wb_expected_s(const struct knobs *k)
{
	return knobs_double(k, "old_s") + knobs_double(k, "settle_s") +
	       knobs_double(k, "pod_hop") + knobs_double(k, "measure_s");
}

/* What a run leaves on the test filesystem at most (workload.h's
 * disk_use): the old writer's and the new writer's bytes, each
 * pace_max_bytes(rate_mbps, old_s or measure_s, block) (a writer never
 * gets ahead of its schedule); the tail's 4 KiB append (dirty_after) and
 * 14-byte files (shutdown_file, the takeover). Both writers append to the
 * same nfiles files, but with mode=fresh the new one writes nfiles files
 * of its own beside the old ones (prepare_dir() only clears files before
 * the run). false when rate_mbps or block cannot pace (the run refuses). */
static bool wb_disk_use(const struct knobs *k, uint64_t *bytes, uint64_t *files)
{
	double rate = knobs_double(k, "rate_mbps");
	uint64_t block = knobs_u64(k, "block"), nfiles = knobs_u64(k, "nfiles");
	bool shutdown = strcmp(knobs_str(k, "shutdown_file"), "none") != 0;
	bool toggle = knobs_bool(k, "io_toggle");

	if (!(rate > 0) || block == 0)
		return false;
	if (__builtin_add_overflow(pace_max_bytes(rate, knobs_double(k, "old_s"), block),
				   pace_max_bytes(rate, knobs_double(k, "measure_s"), block), bytes) ||
	    __builtin_add_overflow(*bytes, (knobs_bool(k, "dirty_after") ? 4096 : 0) +
				   (shutdown ? 14 : 0) + (toggle ? 14 : 0), bytes))
		*bytes = UINT64_MAX;     /* saturated: more than any disk */
	if (__builtin_mul_overflow(nfiles, strcmp(knobs_str(k, "mode"), "fresh") ? 1 : 2, files) ||
	    __builtin_add_overflow(*files, (uint64_t)shutdown + toggle, files))
		*files = UINT64_MAX;     /* saturated, as the bytes */
	return true;
}

const struct workload wl_wb_handover = {
	.name = "wb-handover",
	.summary = "a container appends to files a removed container left dirty (the seed's writeback stall)",
	.notes =
	"  records: lag_s (new writer) and old_lag_s (old writer) samples every second;\n"
	"  summary: worst_lag_s mean_lag_s lag_over_1s_s written_bytes rate_mbps, probe counts.\n"
	"  Scaled for small TCG guests (2 vCPUs, 2 GiB): rate_mbps=16 pod_max=256M nfiles=64\n"
	"  old_s=30 measure_s=60 (4 GiB scratch disk). Every size is the seed's times 16/250,\n"
	"  so a file still gets 0.25 MiB/s and the pod's dirty limit is the same number of\n"
	"  seconds of writing; 16 MiB/s is below the 20-60 MiB/s an unthrottled writer gets\n"
	"  under TCG, so lag measures the kernel, not the emulator.",
	.knobs = knobs,
	.nknobs = sizeof(knobs) / sizeof(knobs[0]),
	.check = wb_check,
	.run = wb_run,
	.expected_s = wb_expected_s,
	.disk_use = wb_disk_use,
	.disk_knobs = "rate_mbps, old_s, measure_s",
};
