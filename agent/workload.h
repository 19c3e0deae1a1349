/* workload.h - what a workload is to the agent's command line: a name, a
 * knob table, a precondition check and a run function, registered in
 * workloads[] (main.c). Shared plumbing for workloads lives here too:
 * the run context, the stop flag set by SIGINT/SIGTERM, sleeping in
 * one-second ticks, the test directory's filesystem, and starting a child
 * process (a program through lib/proc.h, or the agent's own code) inside
 * a cgroup.
 */
#ifndef KC_WORKLOAD_H
#define KC_WORKLOAD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "knob.h"
#include "proc.h"
#include "util.h"

struct rec_out;
struct probes;

struct wl_ctx {
	struct rec_out *rec;
	const struct knobs *knobs;
	struct probes *probes;   /* NULL when unavailable */
	double t0_s;             /* workload start, clock_mono_s() */
};

struct workload {
	const char *name;
	const char *summary;     /* one line for `list` */
	const char *notes;       /* more lines for `list`, may be NULL */
	const struct knob_def *knobs;
	size_t nknobs;
	/* Preconditions before anything is changed: 0, or -errno with a
	 * one-line message (problem and fix) in err (error.h). */
	int (*check)(struct wl_ctx *ctx, struct buf *err);
	/* Run; emits phase/sample/probe/summary records. 0 or -errno with
	 * err set. Must clean up its cgroups and children on every path. */
	int (*run)(struct wl_ctx *ctx, struct buf *err);
	/* How long a run takes with these knobs, start to done, in seconds:
	 * what `check --json` tells the coordinator for its watchdog. < 0
	 * when the knobs do not say (a command runs as long as it runs). */
	double (*expected_s)(const struct knobs *k);
	/* What a run with these knobs puts on the test filesystem at most:
	 * *bytes of file data in *files files, what `check --json` tells the
	 * coordinator to size the guest's scratch disk by (disk_bytes,
	 * disk_files). false when the knobs do not say (a job file, a
	 * command). NULL: never says. */
	bool (*disk_use)(const struct knobs *k, uint64_t *bytes, uint64_t *files);
	/* The knobs disk_use grows with, for the coordinator's message when
	 * the disk would be too large ("rate_mbps, old_s, measure_s"); NULL
	 * without disk_use. */
	const char *disk_knobs;
};

extern const struct workload wl_wb_handover;
extern const struct workload wl_command;
extern const struct workload wl_fio;
extern const struct workload wl_stress_ng;
extern const struct workload wl_perf_bench;

/* command.c's stdout line parser (exposed for tests; see command.c). */
int cmd_metric_line(const char *line, char *name, char *unit, double *value,
		    const char **better);

/* Set (to the signal number) by SIGINT/SIGTERM; workloads stop soon after. */
extern volatile sig_atomic_t wl_stop;

/* Seconds since the workload started. */
double wl_t(const struct wl_ctx *ctx);

/*
 * wl_sleep_until - sleep until monotonic time until_s, emitting probe
 * records at each whole second of workload time on the way. Returns 0,
 * or -EINTR when wl_stop is set.
 */
int wl_sleep_until(struct wl_ctx *ctx, double until_s);

/*
 * wl_fs_of - filesystem type and mount options of the mount holding path
 * (the longest matching mount point in /proc/self/mounts). Caller frees
 * both. 0 or -errno.
 */
int wl_fs_of(char **type_out, char **opts_out, const char *path);

/*
 * wl_check_common - the preconditions shared by the workloads: running as
 * root, a cgroup v2 hierarchy (its root in *cgroot_out, caller frees), the
 * controllers ("memory io") available there, and dir (if not NULL) an
 * existing directory not on tmpfs or ramfs. 0, or -errno with err (the
 * problem and its fix).
 */
int wl_check_common(char **cgroot_out, const char *controllers, const char *dir,
		    struct buf *err);

/*
 * wl_spawn - fork a child that moves itself into cgroup cg (NULL: stays
 * in the agent's), then runs fn(arg) and _exits with its return value: for
 * work of the agent's own code in a cgroup (wb-handover's writers); a
 * program is started with wl_start. It is SIGKILLed if the agent
 * dies, leads a process group of its own (kill(-pid, sig) reaches what it
 * starts) and has SIGPIPE at its default. Returns the pid or -errno.
 */
pid_t wl_spawn(const char *cg, int (*fn)(void *arg), void *arg);

/*
 * wl_reap - wait for pid up to timeout_s (< 0: forever, but stop waiting
 * when wl_stop is set), then SIGKILL and reap. *status_out (may be NULL)
 * gets the waitpid status. 0, or -ETIMEDOUT when it had to be killed.
 */
int wl_reap(pid_t pid, double timeout_s, int *status_out);

/* How a program the agent starts (wl_start) is set up in its child,
 * between fork and exec: what lib/proc.h does not do itself. */
struct wl_child {
	const char *cg;      /* the cgroup it runs in; NULL: the agent's */
	int death_sig;       /* sent to it when the agent dies (SIGKILL, SIGTERM) */
	pid_t parent;        /* when not 0: refuse to run when the agent (this
			      * pid) is gone already (the death signal came too late) */
	bool own_group;      /* a process group of its own: kill(-pid, sig)
			      * reaches what it starts */
};

/*
 * wl_start - proc_start() spec's program (lib/proc.h) with c's setup in
 * the child, and SIGINT, SIGTERM and SIGPIPE at their defaults there (the
 * agent catches the first two and ignores the last; a script's `awk |
 * head` needs SIGPIPE). spec's child_setup is wl_start's. *out as
 * proc_start's; 0 or its -errno with err ("cannot run 'fio': No such file
 * or directory"; a cgroup that cannot be joined is named).
 */
int wl_start(struct proc **out, struct proc_spec *spec, const struct wl_child *c,
	     struct buf *err);

/*
 * wl_proc_reap - wait for p up to timeout_s (< 0: forever, but stop
 * waiting when wl_stop is set), then SIGKILL it and wait; *o (may be NULL)
 * says how it ended. Frees p. 0, or -ETIMEDOUT when it had to be killed.
 */
int wl_proc_reap(struct proc *p, double timeout_s, struct proc_outcome *o);

/*
 * wl_wait_tool - wait for a tool the workload started (p, from wl_start),
 * emitting probe records each second; SIGKILL it when wl_stop is set or
 * after timeout_s (<= 0: no limit). Frees p. 0 when it exited 0; -EINTR,
 * -ETIMEDOUT or -EIO (it failed: status or signal) with err naming tool.
 */
int wl_wait_tool(struct wl_ctx *ctx, struct proc *p, double timeout_s, const char *tool,
		 struct buf *err);

/*
 * wl_remove_flat - unlink the files in dir (one level: the tools and
 * bpftrace write plain files there), then dir itself. 0, or the -errno of
 * the last step that failed (the others are still done).
 */
int wl_remove_flat(const char *dir);

#endif
