/* db.h - the results store: one sqlite file, migrations, typed queries.
 *
 * Only the db*.c files include <sqlite3.h>; everything else goes through
 * these functions. A struct db is one connection: use it from one thread
 * (open one per thread). The file is in WAL mode with foreign keys on and a
 * busy timeout, so readers (kcanary serve) and one writer (a job) coexist.
 *
 * Errors (error.h): functions return 0 or a negative errno and put the
 * reason in err (their last parameter, may be NULL) in words, naming what
 * failed and the store: "cannot set run 5's status to 'ok': the file
 * system of the store '/x/kcanary.db' is full (…)". -EIO the store or
 * sqlite failed (a damaged store says so), -ENOSPC its file system is
 * full, -EBUSY another process held the write lock for more than
 * DB_BUSY_TIMEOUT_MS, -EEXIST a uniqueness conflict, -EINVAL a value
 * outside a checked set (a status, a missing parent row), -ENOENT the
 * named job, run, variant, kernel, host or token is not there. The
 * translation from sqlite is one function (db_fail, db_internal.h). The
 * functions do not log; their callers report the error once.
 * Query helpers in other db_*.c files follow the same rules.
 */
#ifndef KC_DB_H
#define KC_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct db;

/* How long a connection waits for another's write lock before a step
 * fails with -EBUSY (sqlite3_busy_timeout). */
#define DB_BUSY_TIMEOUT_MS 10000

/* ---- the store: path, open, errors, transactions (db.c) ---- */

/*
 * db_default_path - where the store lives: $KCANARY_HOME/kcanary.db, else
 * ~/.local/share/kcanary/kcanary.db. Returns a new string; caller frees.
 */
char *db_default_path(void);

/* kc_home - $KCANARY_HOME or ~/.local/share/kcanary (new string; caller frees). */
char *kc_home(void);

/*
 * db_open - open (creating if needed) the store at path and bring its schema
 * to the newest level, applying schema/NNN_*.sql in order, each in its own
 * transaction; PRAGMA user_version records the level. A store newer than
 * this binary is refused (-EPROTO) rather than touched. Parent directories
 * are created. *out is set only on success; free with db_close().
 */
int db_open(struct db **out, const char *path, struct buf *err);
void db_close(struct db *db);

/* Schema level of the open store (PRAGMA user_version). */
int db_schema_level(struct db *db, struct buf *err);

/* Transactions. db_begin() takes the write lock at once (BEGIN IMMEDIATE). */
int db_begin(struct db *db, struct buf *err);
int db_commit(struct db *db, struct buf *err);
/* db_rollback - roll back the open transaction, if any: cleanup that
 * cannot fail the caller (a failure is logged; the first error is what the
 * caller reports). */
void db_rollback(struct db *db);

/* Run SQL without results (several statements allowed). For tests, tools. */
int db_exec(struct db *db, const char *sql, struct buf *err);


/* ---- jobs, variants, runs (db_runs.c) ---- */

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

/* db_run_reschedule - a fresh pending run like run_id (same variant, cell
 * and params), with the next repeat index, at the end of the run order:
 * what an interrupted run gets. */
int db_run_reschedule(struct db *db, int64_t run_id, struct buf *err);
/* db_run_reschedule_id - the same, with the fresh run's id in *new_id. */
int db_run_reschedule_id(struct db *db, int64_t run_id, int64_t *new_id, struct buf *err);

/* ---- what the executor reads; the job's coordinator (db_compare.c) ---- */

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
 * db_jobs_with_status - ids of compare jobs in status (oldest first), at
 * most max. *out is new (caller frees).
 */
int db_jobs_with_status(struct db *db, const char *status, int64_t **out, size_t *n, int max, struct buf *err);

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

/* ---- record writer for one run (db_writer.c), used by ingest.c ---- */

/*
 * struct db_writer - prepared statements for inserting one run's records.
 * Calls between db_writer_begin() and db_writer_commit() form one batch
 * (one transaction). Metric names are interned in the metrics table.
 * Insert-only: a summary metric already stored for the run is kept and the
 * new value ignored (-EEXIST), so a later ingest never rewrites data.
 * Begun while the connection is already inside a transaction (the caller's
 * db_begin()), a batch joins it: commit and rollback are then the caller's.
 * The writer inserts samples 64 rows to a statement, so a sample may be
 * stored (and a store error reported) only by a later call or
 * db_writer_commit(), which inside the caller's transaction stores the
 * pending samples and commits nothing. In its own batch it checks foreign keys once per batch (the run
 * exists) rather than per row, and the connection's enforcement is back on
 * after commit or rollback.
 */
struct db_writer;

/* db_writer_open - a writer for run_id (-ENOENT when there is no such
 * run). The connection keeps one closed writer's prepared statements and
 * gives them to the next writer it opens. db_writer_close() rolls back an
 * open batch of the writer's own and drops samples not yet stored. */
int db_writer_open(struct db_writer **out, struct db *db, int64_t run_id, struct buf *err);
void db_writer_close(struct db_writer *w);
int db_writer_begin(struct db_writer *w, struct buf *err);
int db_writer_commit(struct db_writer *w, struct buf *err);
void db_writer_rollback(struct db_writer *w);

int db_writer_sample(struct db_writer *w, double t_s, const char *metric, double value, struct buf *err);
/* t_s may be NAN for a final (summary) count. */
int db_writer_probe(struct db_writer *w, double t_s, const char *name,
		    const char *key, int64_t count, struct buf *err);
int db_writer_phase(struct db_writer *w, double t_s, const char *name, struct buf *err);
/* A metric's unit and direction (better: "higher", "lower" or NULL), as a
 * workload defines it (the agent's metric record); a metric the store
 * already knows keeps its own. */
int db_writer_metric_def(struct db_writer *w, const char *name, const char *unit,
			 const char *better, struct buf *err);
int db_writer_note(struct db_writer *w, double t_s, const char *kind, const char *text, struct buf *err);
int db_writer_summary(struct db_writer *w, const char *metric, double value, struct buf *err);
int db_writer_raw(struct db_writer *w, int64_t line_no, const char *reason,
		  const char *text, size_t len, struct buf *err);
/* Fill the run's hello columns; any string may be NULL. */
int db_writer_hello(struct db_writer *w, const char *kernel_release,
		    const char *agent_version, const char *host, const char *hello_json, struct buf *err);
/* Set the run's final status, error (may be NULL) and counters. */
int db_writer_finish(struct db_writer *w, const char *status, const char *error,
		     int64_t records, int64_t bad_lines, struct buf *err);


/* ---- what a report reads (db_report.c) ---- */

struct db_report_run {
	int64_t id, variant_id, seq;
	int repeat_idx;
	char *cell, *status, *params_json, *fs, *accel;
	char *host;          /* the agent's hello host (a fleet host); may be NULL */
	char *lab_host;      /* the lab host it ran on (lab.h); NULL: not placed */
	char *rootfs;        /* its root filesystem's spec ("debian:fio", "host");
			      * NULL: the initramfs */
	char *rootfs_hash;   /* rootfs_images.hash (for "host": of its dpkg list) */
	double value;        /* summary value, or derived (see derived) */
	bool has_value;
	bool derived;        /* from samples: worst_X = max(X), mean_X = avg(X) */
};

struct db_report_variant {
	int64_t id;
	int idx;
	char *name, *status, *error;
};

struct db_report_probe {   /* final probe totals per variant and cell, summed
			    * over its usable (ok, incomplete) runs */
	int64_t variant_id;
	char *name, *key, *cell;
	int64_t count;
};

struct db_report_run_probe {   /* one run's final count of one probe key */
	int64_t run_id;
	char *name, *key;
	int64_t count;
};

struct db_report_data {
	int64_t job_id;
	char *job_name, *job_kind, *job_status, *job_metric;
	char *spec_json;          /* the job's stored spec ("{}" for ingest jobs) */
	char *unit, *better;      /* of the metric; NULL when unknown */
	struct db_report_variant *variants;
	size_t nvariants;
	struct db_report_run *runs;   /* ordered by cell, variant idx, repeat */
	size_t nruns;
	struct db_report_probe *probes;
	size_t nprobes;
	struct db_report_run_probe *run_probes;  /* usable runs only, by run id,
						  * name, key */
	size_t nrun_probes;
};

/*
 * db_report_load - read a job's variants and runs with each run's value of
 * metric (NULL: the job's headline metric). Fills *out (caller releases it
 * with db_report_release). -ENOENT when the job does not exist.
 */
int db_report_load(struct db *db, int64_t job_id, const char *metric,
		   struct db_report_data *out, struct buf *err);
void db_report_release(struct db_report_data *d);

/* One distinct environment of a job's runs: the variant, the kernel
 * release the guest reported, the host and accelerator, the knobs (the
 * run's params_json) and how many runs had it. "" where not recorded. */
struct db_env_row {
	char *variant, *kernel_release, *host, *accel, *fs, *params_json;
	int64_t nruns;
};

/* db_report_env - the job's distinct run environments, by variant idx
 * (db_report.c). *out has *n rows (db_env_rows_free). */
int db_report_env(struct db *db, int64_t job_id, struct db_env_row **out, size_t *n,
		  struct buf *err);
void db_env_rows_free(struct db_env_row *v, size_t n);


/* ---- job listing and progress (db_status.c) ---- */

struct db_job_row {
	int64_t id;
	char *name, *kind, *status, *created_at, *started_at, *finished_at, *error;
	int nvariants, variants_failed;
	int runs_total, runs_done;     /* done: any status but pending/running */
	int runs_ok, runs_failed;      /* failed: failed/timeout/panic/paused */
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

/*
 * db_run_progress - for a running run: its variant name, cell, repeat and
 * its latest sample of metric (t_s, value). -ENOENT when the job has no
 * running run. Strings are new (caller frees).
 */
int db_run_progress(struct db *db, int64_t job_id, const char *metric,
		    int64_t *run_id, char **variant, char **cell, int *repeat_idx,
		    double *t_s, double *value, struct buf *err);

#endif
