/* compare.h - the compare executor: a stored job (job.h) carried through
 * kernels (prebuilt images, or builds of the base and each series
 * revision), then its runs in stored order, each in a fresh guest
 * (runner.h), and the cover-letter report at the end (report.h).
 *
 * Everything is read from and written to the store as it happens, so a
 * coordinator killed at any point loses at most the run in progress:
 * compare_resume() marks it interrupted and schedules a fresh repeat, and
 * compare_execute() carries on from there. Finished runs are never redone.
 */
#ifndef KC_COMPARE_H
#define KC_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

#include "db.h"
#include "job.h"
#include "runner.h"
#include "util.h"
#include "vm.h"

struct compare_opts {
	const char *home;          /* $KCANARY_HOME (images, runs, builds) */
	const char *uri;           /* libvirt URI; NULL: vm_default_uri() */
	const char *agent;         /* kcanary-agent for images; NULL: default */
	const char *accel;         /* "kvm"/"tcg" to force; NULL: probe */
	bool console;              /* copy guest consoles to stderr */
	bool quiet;                /* no progress lines */
};

/*
 * compare_execute - carry job_id through its kernels and pending runs.
 * Variants whose patch does not apply or whose kernel does not build are
 * stored as such (with the reason) and the others go on. Progress goes to
 * stderr: one line per event, plus a live line on a TTY. Returns 0 when
 * the job ran to its end (whatever its runs' outcomes), -EINTR when
 * interrupted by SIGINT/SIGTERM (runs left to do stay pending), or another
 * negative errno when the store failed; err gets the reason.
 */
int compare_execute(struct db *db, int64_t job_id, const struct compare_opts *o,
		    struct buf *err);

/*
 * compare_check_knobs - ask the agent (`kcanary-agent check`) whether
 * every matrix cell's workload knobs parse, so that an unknown knob or a
 * bad size fails before anything is built. agent NULL: the default agent.
 * Returns 0, or -EINVAL with err naming the cell and the agent's message.
 */
int compare_check_knobs(const struct job_spec *spec, const char *agent, struct buf *err);

/* compare_is_compare_job - whether job_id is a compare job (kind
 * 'compare'): the only kind the executor carries out, resumes or reruns. */
bool compare_is_compare_job(struct db *db, int64_t job_id);

/*
 * compare_resume - prepare a job whose coordinator died: runs left
 * 'running' become 'interrupted' (their samples stay) with a fresh repeat
 * scheduled each. Their guests need no cleanup: domains are started with
 * autodestroy, so libvirt destroyed them when the dead coordinator's
 * connection closed. *n_interrupted may be NULL.
 */
int compare_resume(struct db *db, int64_t job_id, size_t *n_interrupted, struct buf *err);

/*
 * compare_worker_start - the job queue of `kcanary serve`: a thread with
 * its own store connection that first resumes jobs whose coordinator died,
 * then carries out pending compare jobs one at a time, oldest first, with
 * the same executor as `kcanary compare`. Cancelled jobs stop before their
 * next run. compare_worker_stop() interrupts the run in progress (stored
 * as 'interrupted', resumed at the next start) and joins the thread.
 */
struct compare_worker;
int compare_worker_start(struct compare_worker **out, const char *db_path,
			 const struct compare_opts *o);
void compare_worker_stop(struct compare_worker *w);

/* ---- one guest run, shared with the bisect oracle (bisect_exec.c) ---- */

/* What consecutive runs share: the accelerator, the agent, and the last
 * initramfs built (one per modules tree). */
struct compare_guest {
	struct vm_accel_info ai;
	char *agent, *db_path, *img_path, *img_mod;
};

/* compare_guest_init - probe the accelerator (o->accel forces it) and
 * warn once about TCG when any_runs; db_path is the store's file (for the
 * live line's own connection). Release with compare_guest_release(). */
void compare_guest_init(struct compare_guest *g, const struct compare_opts *o,
			const char *db_path, bool any_runs);
void compare_guest_release(struct compare_guest *g);

/* Returned by compare_boot_run when the run failed before booting. */
#define COMPARE_RUN_FAILED 1

/*
 * compare_boot_run - boot the pending run p (as db_job_pending_runs gives
 * it: params, fs, kernel image and modules) in a fresh guest with the
 * job's vcpus, memory and watchdog, and wait for it to end. label names
 * the run on the live line (TTY only).
 *
 * Returns 0 when the run was carried through and stored, whatever its
 * status (res->status: ok, timeout, paused, ...); COMPARE_RUN_FAILED when
 * it could not be started (bad knobs, no initramfs: stored as 'failed',
 * e says why); a negative errno when the store or runner failed (e says).
 */
int compare_boot_run(struct runner_result *res, struct db *db, int64_t job_id,
		     const struct job_spec *spec, const struct db_pending_run *p,
		     const struct compare_opts *o, struct compare_guest *g, const char *label,
		     char *e, size_t esz);

/* compare_prebuilt_kernel - variant_prebuilt_kernel() (variant_build.h),
 * the one place a prebuilt image becomes a kernels row; kept under this
 * name for the run path's callers. */
int compare_prebuilt_kernel(struct db *db, const char *path, int64_t *kernel_id,
			    struct buf *why);

#endif
