/* db_runs.h - jobs, variants and runs: create, resolve, status, ingest
 * start, reaping dead writers, interrupting and rescheduling runs (db_runs.c).
 * Errors and connections as db.h says.
 */
#ifndef KC_DB_RUNS_H
#define KC_DB_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/db.h"

/*
 * db_job_create - insert a job; kind is one of adhoc, compare, bisect,
 * canary; spec_json may be NULL ("{}"). *out_id gets its id.
 */
int db_job_create(struct db *db, int64_t *out_id, const char *name,
		  const char *kind, const char *spec_json, struct buf *err);

/*
 * db_job_resolve - find a job by numeric id or by name (the newest job of
 * that name). -ENOENT when none.
 */
int db_job_resolve(struct db *db, int64_t *out_id, const char *id_or_name, struct buf *err);

/* db_job_set_status - set status (and error, may be NULL); stamps
 * started_at on 'running'/'building' and finished_at on terminal states. */
int db_job_set_status(struct db *db, int64_t job_id, const char *status,
		      const char *error, struct buf *err);

/* db_job_set_meta - the job's run-order seed and headline metric. */
int db_job_set_meta(struct db *db, int64_t job_id, int64_t seed, const char *metric, struct buf *err);

/* db_variant_set_spec - a variant's base commit-ish, patch subset and full
 * spec (JSON); any may be NULL. */
int db_variant_set_spec(struct db *db, int64_t variant_id, const char *base_rev,
			const char *patches, const char *spec_json, struct buf *err);

/*
 * db_variant_set_result - what became of a variant before its runs: status
 * ok, apply-failed or build-failed, the error (may be NULL), the commit it
 * resolved to and its kernel (0: none).
 */
int db_variant_set_result(struct db *db, int64_t variant_id, const char *status,
			  const char *error, const char *commit_oid, int64_t kernel_id, struct buf *err);

/*
 * db_variant_get - id of the variant named name in job, creating it at the
 * next idx when missing (the first variant created is the baseline).
 */
int db_variant_get(struct db *db, int64_t *out_id, int64_t job_id,
		   const char *name, struct buf *err);

/*
 * db_run_create - insert a pending run of variant in cell (canonical matrix
 * cell text, "" for none) with repeat_idx; repeat_idx 0 takes the next free
 * one. -EEXIST when that (variant, cell, repeat) exists: stored runs are
 * never replaced. params_json may be NULL.
 */
int db_run_create(struct db *db, int64_t *out_id, int64_t job_id,
		  int64_t variant_id, const char *cell, int repeat_idx,
		  const char *fs, const char *params_json, struct buf *err);

/* What kcanary ingest stores one run into (db_ingest_start). */
struct db_ingest_target {
	int64_t job_id;           /* > 0: this job; else by name: */
	const char *job;          /* name; a job of that name is made when none */
	const char *variant;
	const char *cell;         /* canonical matrix cell, "" for none */
	int repeat_idx;           /* 0: the next free one */
	const char *fs;           /* may be NULL */
	const char *params_json;  /* may be NULL */
	const char *writer;       /* proc_identity() of the ingesting process */
};

struct db_ingest_start {
	int64_t job_id, variant_id, run_id;
	bool job_created;         /* no job had that name */
	int64_t replaced_run_id;  /* an interrupted run of that repeat, deleted; 0 none */
};

/*
 * db_ingest_start - find or create the job by name, its variant and a new
 * 'running' run owned by t->writer, in one BEGIN IMMEDIATE transaction, so
 * that concurrent ingests into a new job name make one job, not several.
 * Dead writers' runs are reaped first (db_runs_reap); a run of the same
 * repeat that was 'interrupted' that way is deleted with its records and
 * replaced (it never finished: it is not a stored result). -EEXIST when
 * the repeat is stored otherwise (never replaced); store errors as db.h.
 */
int db_ingest_start(struct db *db, const struct db_ingest_target *t, struct db_ingest_start *out,
		    struct buf *err);

/*
 * db_runs_reap - every 'running' run whose writer (runs.writer, see
 * proc_identity_alive()) is gone becomes 'interrupted', with the reason
 * and the counts it kept in runs.error; an ad-hoc job left with no live
 * run is 'done'. Runs without a writer (a compare's: kcanary resume
 * handles those; a fleet stream) are left alone. *n_out (may be NULL)
 * gets how many were reaped.
 */
int db_runs_reap(struct db *db, int *n_out, struct buf *err);

/*
 * db_run_set_status - set a run's status and error (may be NULL). Stamps
 * started_at on 'running' and finished_at on any other non-pending status.
 */
int db_run_set_status(struct db *db, int64_t run_id, const char *status,
		      const char *error, struct buf *err);


/*
 * db_job_interrupt_running - after a coordinator died: every run of job
 * left 'running' becomes 'interrupted' (its samples stay) and a fresh
 * pending run of the same variant and cell is added at the end of the run
 * order with the next repeat index, so finished runs are never redone.
 * The ids of the interrupted runs go to *out (caller frees; may be NULL
 * when *n is 0). One transaction.
 */
int db_job_interrupt_running(struct db *db, int64_t job_id, int64_t **out, size_t *n, struct buf *err);

/*
 * db_runs_skip_pending - the job's runs still 'pending' that will never
 * run become 'skipped' with why as their error ("not run: ..."), stamped
 * finished: what they are, so that a finished job has no pending work
 * (a variant whose build failed, a block the sequential test made
 * unnecessary). variant_id > 0: only that variant's runs; 0: every
 * pending run of the job. *n_out (may be NULL) gets how many. Store
 * errors as db.h.
 */
int db_runs_skip_pending(struct db *db, int64_t job_id, int64_t variant_id, const char *why,
			 int *n_out, struct buf *err);

/* db_run_reschedule - a fresh pending run like run_id (same variant, cell
 * and params), with the next repeat index, at the end of the run order:
 * what an interrupted run gets. */
int db_run_reschedule(struct db *db, int64_t run_id, struct buf *err);
/* db_run_reschedule_id - the same, with the fresh run's id in *new_id. */
int db_run_reschedule_id(struct db *db, int64_t run_id, int64_t *new_id, struct buf *err);

#endif
