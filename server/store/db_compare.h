/* db_compare.h - what the executors read: pending and planned runs, a
 * job's variants, spec, kind, owner (its coordinator), repeats,
 * cancellation, a run's summary value (db_compare.c).
 * Errors and connections as db.h says.
 */
#ifndef KC_DB_COMPARE_H
#define KC_DB_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/db.h"

/* A run waiting to be booted, with what booting it needs. */
struct db_pending_run {
	int64_t id, seq, variant_id, kernel_id;
	int repeat_idx;
	char *variant, *cell, *fs, *params_json, *image_path, *modules_dir;
};

/*
 * db_job_pending_runs - the job's pending runs whose variant has a kernel
 * (status ok), in run order. *out has *n entries; free with
 * db_pending_runs_free(). Also counts all runs (*total) and finished ones
 * (*done) for progress lines.
 */
int db_job_pending_runs(struct db *db, int64_t job_id, struct db_pending_run **out,
			size_t *n, int *total, int *done, struct buf *err);
/*
 * db_job_planned_runs - db_job_pending_runs() and also the pending runs of
 * variants still to be built (status pending: image_path, modules_dir NULL
 * and kernel_id 0 until db_run_kernel() fills them once the kernel exists),
 * for a dispatcher that runs while the builds go (lab.h).
 */
int db_job_planned_runs(struct db *db, int64_t job_id, struct db_pending_run **out,
			size_t *n, int *total, int *done, struct buf *err);

/*
 * db_run_kernel - fill p's kernel_id, image_path and modules_dir (freed
 * and replaced) from its variant's stored kernel. -ENOENT with err when
 * the variant has none (not built, or failed), or a store error.
 */
int db_run_kernel(struct db *db, struct db_pending_run *p, struct buf *err);
void db_pending_runs_free(struct db_pending_run *v, size_t n);

/* A variant as stored: name, spec (JSON) and status. */
struct db_variant_row {
	int64_t id;
	int idx;
	char *name, *status, *spec_json;
};
int db_job_variants(struct db *db, int64_t job_id, struct db_variant_row **out, size_t *n, struct buf *err);
void db_variant_rows_free(struct db_variant_row *v, size_t n);

/* The job's stored spec (jobs.spec_json), a new string. */
int db_job_spec(struct db *db, int64_t job_id, char **out, struct buf *err);

/* db_job_set_owner - record (or with NULL clear) the job's coordinator. */
int db_job_set_owner(struct db *db, int64_t job_id, const char *owner, struct buf *err);
/* db_job_owner - the job's coordinator ("pid@host", new string, NULL when
 * none) and status (new string). */
int db_job_owner(struct db *db, int64_t job_id, char **owner, char **status, struct buf *err);
/*
 * db_job_claim - make owner ("pid@host", or NULL to release) the job's
 * coordinator if, and only if, its coordinator is still seen (NULL: none),
 * in one statement: two coordinators (the CLI and serve's queue, or two
 * `kcanary resume`s) that both read the job free cannot both take it.
 * 0 when claimed; -EBUSY with err (naming the job and who holds it now)
 * when the coordinator changed since it was seen; -ECANCELED when the job
 * was cancelled; -ENOENT (no job), or a store error.
 */
int db_job_claim(struct db *db, int64_t job_id, const char *owner, const char *seen, struct buf *err);
/*
 * db_job_requeue - back to serve's queue (pending, no coordinator) in one
 * statement, if its coordinator is still seen (the dead one it had) and it
 * is not cancelled: a `kcanary resume` that took it meanwhile keeps it.
 * 0, -EBUSY with err when it changed, or a store error.
 */
int db_job_requeue(struct db *db, int64_t job_id, const char *seen, struct buf *err);
/*
 * db_jobs_with_status - ids of compare jobs in status (oldest first), at
 * most max. *out is new (caller frees).
 */
int db_jobs_with_status(struct db *db, const char *status, int64_t **out, size_t *n, int max, struct buf *err);
/*
 * db_jobs_queued - ids of the compare jobs waiting for serve's queue:
 * pending with no coordinator (a `kcanary compare` stores its own job
 * with itself as the coordinator: not queued), oldest first, at most max.
 * *out is new (caller frees).
 */
int db_jobs_queued(struct db *db, int64_t **out, size_t *n, int max, struct buf *err);

/*
 * db_job_kind - the job's kind (adhoc, compare, bisect, canary: a new
 * string in *out, caller frees). -ENOENT when there is no such job, -EIO
 * when the store failed; err says which (db_compare.c).
 */
int db_job_kind(struct db *db, int64_t job_id, char **out, struct buf *err);

/*
 * db_job_next_repeat - one more than the largest repeat_idx of job_id's
 * runs (1 when it has none, and on error): a repeat no variant of the job
 * has used yet, so runs created with it in one round or block share it as
 * a lab block (lab.h). Store errors as above, err naming the job.
 */
int db_job_next_repeat(struct db *db, int64_t job_id, int *out, struct buf *err);

/*
 * db_job_is_cancelled - *out true when the job's status is 'cancelled'
 * (kcanary cancel, the API's cancel). -ENOENT when there is no such job.
 */
int db_job_is_cancelled(struct db *db, int64_t job_id, bool *out, struct buf *err);

/*
 * db_run_summary_value - the run's summary value of metric (run_summary:
 * what the agent's summary record said; never derived from samples, see
 * db_run_metric() for that). The metric is a bound parameter: any name is
 * safe. -ENOENT when the run has none, -EIO with err when the store failed
 * (db_compare.c).
 */
int db_run_summary_value(struct db *db, int64_t run_id, const char *metric, double *out,
			 struct buf *err);

#endif
