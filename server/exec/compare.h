/* compare.h - the compare executor: a stored job (job.h) carried through
 * kernels (prebuilt images, or builds of the base and each series
 * revision), then its runs in stored order, each in a fresh guest (the
 * run service, guest_run.h), and the cover-letter report at the end
 * (report.h). Its options are the run service's (struct guest_opts).
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

#include "store/db.h"
#include "guest/guest_run.h"
#include "exec/job.h"
#include "util.h"

/*
 * compare_execute - carry job_id through its kernels and pending runs;
 * with repeat auto (job.h) a block at a time: after each, the report's
 * replayed looks (report.h, report_seq_state()) say whether every
 * comparison is decided or the cap is spent, else the next block is
 * stored (job_store_block()) and run.
 * Variants whose patch does not apply or whose kernel does not build are
 * stored as such (with the reason), their runs as 'skipped' ("not run:
 * ..."), and the others go on; when the looks stop, runs still pending
 * are 'skipped' too ("not needed: ..."), so a job that ran to its end has
 * no pending run. Progress goes to
 * stderr (progress.h): one line per event, plus a live line on a TTY.
 * Returns 0 when the job ran to its end (whatever its runs' outcomes),
 * -EINTR when interrupted by SIGINT/SIGTERM or compare_worker_stop() (runs
 * left to do stay pending), -ECANCELED when a user cancelled the job
 * before, -EBUSY when a live coordinator owns it, -EINVAL when it is no
 * compare job, -ENOENT when there is none, or another negative errno when
 * the store failed; err gets the reason.
 */
int compare_execute(struct db *db, int64_t job_id, const struct guest_opts *o,
		    struct buf *err);

/*
 * compare_resume - prepare a job whose coordinator died: runs left
 * 'running' become 'interrupted' (their samples stay) with a fresh repeat
 * scheduled each. Their domains (started with autodestroy, so libvirt
 * normally destroyed them when the dead coordinator's connection closed)
 * and scratch volumes are removed from their hosts (runner_clean_host();
 * a host that does not answer is logged, not an error). *n_interrupted may
 * be NULL. -ENOENT (no such job),
 * -EINVAL (no compare job), -EBUSY (its coordinator is alive) or a store
 * error, with err.
 */
int compare_resume(struct db *db, int64_t job_id, size_t *n_interrupted, struct buf *err);

/*
 * compare_rerun - store job_id's spec again as a new job (`kcanary rerun`):
 * its runs pending, *new_job its id. Each cell's expected length, as the
 * agent at agent (NULL: image_default_agent()) says it, is stored with the
 * new job (job_check.h), so its runs do not ask the agent one by one; a
 * check that fails (a knob the agent refuses now, no agent) stores none,
 * logged: the runs then ask, and fail, as any run does. The new job's one
 * scratch disk is stored with it the same way; a cell whose disk would be
 * above the cap refuses the rerun before anything is stored (-EFBIG, err
 * naming the cell and the knobs: a job stored before that check). owner is
 * who will carry the new job out (job_store(): NULL queues it for serve).
 * -ENOENT (no such job), -EINVAL (a spec that does not read back), -EFBIG
 * or a store error, with err.
 */
int compare_rerun(struct db *db, int64_t job_id, const char *agent, const char *owner,
		  int64_t *new_job, struct buf *err);

/*
 * compare_owner_self - this process as a job's coordinator, "pid@host"
 * (jobs.owner), a new string (caller frees).
 */
char *compare_owner_self(void);

/*
 * compare_owner_alive - is the coordinator owner ("pid@host", jobs.owner)
 * still running? Only this host's can be checked: another host's, and a
 * NULL owner (no coordinator), count as alive.
 */
bool compare_owner_alive(const char *owner);

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
			 const struct guest_opts *o);
void compare_worker_stop(struct compare_worker *w);

#endif
