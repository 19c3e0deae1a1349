/* db_status.h - job listing and progress (db_status.c).
 * Errors and connections as db.h says.
 */
#ifndef KC_DB_STATUS_H
#define KC_DB_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/db.h"

struct db_job_row {
	int64_t id;
	char *name, *kind, *status, *created_at, *started_at, *finished_at, *error;
	int nvariants, variants_failed;
	int runs_total, runs_done;     /* done: any status but pending/running */
	int runs_ok, runs_failed;      /* failed: failed/timeout/panic/paused */
	int runs_incomplete;           /* a result too (derived from its samples) */
	int runs_running;
	int runs_interrupted;          /* their writer or coordinator stopped */
	char *last_interrupted;        /* "run N: its error" of the newest one, or NULL */
};

/*
 * db_jobs_list - the newest `limit` jobs (0: all), newest first, with run
 * counts. *out is an array of *n rows; free with db_jobs_free().
 */
int db_jobs_list(struct db *db, struct db_job_row **out, size_t *n, int limit, struct buf *err);
/* One job's row; -ENOENT when missing. Release with db_jobs_free(row, 1). */
int db_job_get(struct db *db, int64_t job_id, struct db_job_row **out, struct buf *err);
void db_jobs_free(struct db_job_row *rows, size_t n);

/* One run status of a job and how many of its runs have it. */
struct db_status_count {
	char *status;
	int n;
};

/*
 * db_job_run_statuses - how many of job_id's runs have each status, in the
 * order a run goes through them (pending, running, ok, incomplete, failed,
 * timeout, kernel-panic, paused, interrupted, infra, skipped); statuses no
 * run has are left out. *out has *n rows (db_status_counts_free).
 */
int db_job_run_statuses(struct db *db, int64_t job_id, struct db_status_count **out, size_t *n,
			struct buf *err);
void db_status_counts_free(struct db_status_count *v, size_t n);

/*
 * db_run_progress - for a running run: its variant name, cell, repeat and
 * its latest sample of metric (t_s, value). -ENOENT when the job has no
 * running run. Strings are new (caller frees).
 */
int db_run_progress(struct db *db, int64_t job_id, const char *metric,
		    int64_t *run_id, char **variant, char **cell, int *repeat_idx,
		    double *t_s, double *value, struct buf *err);

#endif
