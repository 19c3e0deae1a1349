/* guest_run.h - the run service: one stored run carried through one fresh
 * guest to its stored outcome. Every command that boots a run calls it:
 * the compare executor (compare.c), the bisect oracle (bisect_exec.c) and
 * `kcanary boot` (guest_run_adhoc(), which also stores the run).
 *
 * A run goes: the agent's check of its workload and knobs (agent_check.h:
 * whether they parse, and how long the workload takes: the watchdog's
 * base), the kernel command line (image.h), the guest initramfs (built or
 * found in the cache, kept across the runs of one context per modules
 * tree), the root filesystem when the job asks for one (rootfs.h: built
 * or found once per context, named with each run in the store), the runner (runner.h: domain, channel into the store, watchdog,
 * teardown) and the outcome in the store.
 *
 * A run that cannot start (knobs the agent refuses, no initramfs, params
 * that do not parse, a file that is no bzImage) is an outcome like a guest
 * that panics: stored as 'failed' with its reason, result.started false,
 * return 0. A negative code means kcanary itself could not do its job (the
 * store failed); err says what.
 *
 * The scratch disk: guest_job.disk_bytes when > 0 (a workload that needs
 * more fails the run before it boots), else what the agent's check says the
 * workload writes plus the filesystem's headroom (scratch.h). docs/guests.md,
 * "The scratch disk".
 *
 * The watchdog: guest_job.watchdog_s when > 0, else the agent's expected_s
 * (AGENT_CHECK_UNKNOWN_S when it cannot tell) plus the setup allowance
 * (guest_job.setup_s, else runner_setup_allowance_s(): 180 s under TCG,
 * 60 s with KVM). docs/guests.md, "How a run ends".
 */
#ifndef KC_GUEST_RUN_H
#define KC_GUEST_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "store/db.h"
#include "store/db_compare.h"
#include "store/db_overhead.h"
#include "guest/image.h"
#include "guest/rootfs.h"
#include "guest/runner.h"
#include "util.h"
#include "wrap/vm.h"

/* How kcanary boots guests: what compare, bisect and boot all take. Strings
 * are borrowed for the life of a guest_ctx made from them. */
struct guest_opts {
	const char *home;          /* $KCANARY_HOME: images/, runs/, kcanary.db */
	const char *uri;           /* libvirt URI; NULL: vm_default_uri() */
	const char *host;          /* the lab host's name (lab.h), kept in guest_json;
				    * NULL: none */
	const char *hosts;         /* which lab hosts a job uses (lab_select()); NULL:
				    * the default host (uri) alone */
	const char *agent;         /* kcanary-agent for images and checks; NULL:
				    * image_default_agent() */
	const char *accel;         /* "kvm" or "tcg" to force; NULL: probe */
	bool console;              /* copy guest consoles to stderr */
	bool quiet;                /* no progress lines (progress.h) */
};

/* What consecutive runs share. Fields are read-only to callers. */
struct guest_ctx {
	struct db *db;             /* borrowed; this thread's connection */
	struct guest_opts o;
	struct vm_accel_info ai;   /* probed, or forced by o.accel */
	char *agent;               /* the agent's path */
	char *db_path;             /* home/kcanary.db: the live line's own connection */
	char *img_path, *img_mod;  /* the last initramfs built and its key (modules tree, fs,
				    * rootfs) */
	struct rootfs_image rfs;   /* the last root filesystem (rfs.path NULL: none) */
	char *rfs_key;             /* what it was made from: spec and files */
	bool rfs_recorded_build;   /* its build time is in the store already */
};

/*
 * guest_ctx_init - probe the accelerator of o->uri's host
 * (guest_ctx_probe_host(); o->accel forces it, and says so in ai.why) and
 * resolve the agent. With warn_tcg, a TCG accelerator gets
 * its one-line warning (progress_say, unless o->quiet). db is borrowed.
 * Release with guest_ctx_release() (accepts a zeroed ctx).
 */
void guest_ctx_init(struct guest_ctx *g, struct db *db, const struct guest_opts *o,
		    bool warn_tcg);

/*
 * guest_ctx_probe_host - g->ai from the host g's runs go to (o.uri), asked
 * over c (NULL: a connection of its own; vm_accel_probe_host()): each lab
 * host's own accelerator, not the coordinator's. Nothing when o.accel
 * forces one. A host that does not answer gets TCG (this machine's probe
 * when the URI is local) and why says so.
 */
void guest_ctx_probe_host(struct guest_ctx *g, struct vm_conn *c);
void guest_ctx_release(struct guest_ctx *g);

/* What every run of one job shares. Zero fields take the defaults. */
struct guest_job {
	int64_t job_id;            /* the live line follows this job's running run */
	unsigned vcpus;            /* 0: 2 */
	uint64_t memory_mib;       /* 0: 2048 */
	uint64_t disk_bytes;       /* scratch disk, sparse; 0: sized from the workload's
				    * knobs (scratch.h: at least 4 GiB; a run whose
				    * workload needs more than 64 GiB fails before it boots) */
	double watchdog_s;         /* > 0: this watchdog; 0: expected_s + setup allowance */
	double setup_s;            /* > 0: this setup allowance; 0: runner_setup_allowance_s() */
	const char *rootfs;        /* NULL: the initramfs alone; "debian[:PKG,...]": the
				    * agent runs in that root filesystem (rootfs.h),
				    * built once, recorded with each run */
	const char *const *files;  /* NULL-ended "PATH[:GUEST_PATH]" copied into the
				    * root filesystem (needs rootfs); may be NULL */
};

/* One run to boot: a pending run in the store and what it runs. */
struct guest_run_req {
	int64_t run_id;            /* pending, in g->db */
	int64_t kernel_id;         /* its kernels row, stored with the run */
	const char *kernel;        /* bzImage */
	const char *modules_dir;   /* its modules tree; NULL: none (all built in) */
	struct guest_settings gs;  /* image.h; gs.fs NULL: ext4; gs.run (run_params.h,
				    * borrowed) NULL: wb-handover alone; gs.port is
				    * the service's */
	const char *label;         /* names the run on the live line; NULL: none */
};

struct guest_result {
	struct runner_result run;  /* status and error as stored; the runner's counters */
	bool started;              /* the runner was asked to boot it; false: the run
				    * failed before (run.error says why) */
	double watchdog_s;         /* the watchdog it got; 0 when not started */
	struct db_overhead overhead; /* where its wall time went, as stored; wall_ms 0
				      * when not started */
};

/*
 * guest_run - carry rq through (see the top of this file). *out is always
 * filled. Returns 0 when the outcome is stored, whatever it is
 * (out->run.status: ok, failed, timeout, paused, kernel-panic, interrupted,
 * ...); a negative errno with err when the store failed, or -ENOSPC
 * when a disk is full before the guest starts (the run is left pending
 * for `kcanary resume`: a full disk is no outcome). Needs
 * runner_signals_install() (main thread) or runner_request_stop() for
 * interrupts to reach the run.
 */
int guest_run(struct guest_result *out, struct guest_ctx *g, const struct guest_job *j,
	      const struct guest_run_req *rq, struct buf *err);

/*
 * guest_run_pending - guest_run() for a pending run as db_job_pending_runs()
 * gives it: its params (run_params.h: workload, knobs, sysctls, mkfs and
 * mount options), fs, kernel image and modules. label as in guest_run_req.
 * Stored params that do not parse fail the run (an outcome).
 */
int guest_run_pending(struct guest_result *out, struct guest_ctx *g, const struct guest_job *j,
		      const struct db_pending_run *p, const char *label, struct buf *err);

/* `kcanary boot`'s run: a kernel file and what to run on it. */
struct guest_adhoc {
	const char *job;           /* job name; NULL: "adhoc-boot" (created, kind
				    * adhoc, when there is none of that name) */
	const char *variant;       /* NULL: the kernel's file name */
	const char *kernel;        /* bzImage path */
	const char *modules;       /* its modules tree; NULL: /lib/modules/RELEASE
				    * when it exists (RELEASE from the image's
				    * header); "none": none */
	struct guest_settings gs;  /* as in guest_run_req; gs.fs is also the cell */
};

/*
 * guest_run_adhoc - store a run of a->kernel (job a->job, variant
 * a->variant, cell "fs=FS", params the knobs as a JSON object) and its
 * prebuilt kernels row, then guest_run() it with j (j->job_id is ignored:
 * the run's job is a->job). Installs the runner's SIGINT/SIGTERM handlers:
 * call from the main thread. *run_id is set once the run is stored (0
 * before). A kernel that is no bzImage fails the run (an outcome).
 * Returns as guest_run() does.
 */
int guest_run_adhoc(struct guest_result *out, int64_t *run_id, struct guest_ctx *g,
		    const struct guest_job *j, const struct guest_adhoc *a, struct buf *err);

#endif
