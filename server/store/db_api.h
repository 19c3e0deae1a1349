/* db_api.h - the store's reads behind the web API (db_api.c). They
 * return rows: plain structs and arrays the caller frees with the
 * matching *_free(); the API (api/api_view.c) shapes them into
 * docs/api.md's JSON and computes the medians. Strings are new (owned by
 * the row) and NULL where the column is NULL. *out is written only on
 * success. Errors as in db.h: -ENOENT when the job, run
 * or kernel does not exist, -EIO when sqlite fails (the reason in err).
 */
#ifndef KC_DB_API_H
#define KC_DB_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/db.h"

/* Upper bound on points per curve a caller may ask for. */
#define DB_API_MAX_POINTS 100000

/* A metric as the metrics table has it; unit and better ("lower",
 * "higher") NULL when unknown. */
struct db_metric_row {
	char *name, *unit, *better;
};

/* db_metrics_list - every metric, by name. *out has *n rows
 * (db_metric_rows_free). */
int db_metrics_list(struct db *db, struct db_metric_row **out, size_t *n, struct buf *err);
void db_metric_rows_free(struct db_metric_row *v, size_t n);

/*
 * db_api_metric_info - unit and direction of metric (borrowed into the
 * caller's buffers, "" when unknown). A derived metric such as
 * worst_lag_s takes what the metrics table says of it. Returns 0 or -EIO.
 */
int db_api_metric_info(struct db *db, const char *metric, char *unit, size_t unit_sz,
		       char *better, size_t better_sz, struct buf *err);

/* A job with its run counts. started_at (the job's, else its first
 * run's: an ingested job), finished_at and error may be NULL; times are
 * the store's "YYYY-MM-DDTHH:MM:SSZ". */
struct db_api_job {
	int64_t id, seed;
	char *name, *kind, *status, *metric;
	char *created_at, *started_at, *finished_at, *error;
	int64_t runs_total;
	int64_t runs_done;        /* runs no longer pending or running */
	int64_t runs_running;
	int64_t runs_ok;          /* with a result: ok, incomplete */
	int64_t runs_failed;      /* failed, timeout, kernel-panic, paused */
	int64_t runs_skipped;     /* never run (not needed, variant without kernel, cancelled) */
	char *spec_json;          /* the stored spec (text, JSON when well-formed) */
};

/* db_api_jobs - the newest `limit` jobs, newest first. *out has *n rows
 * (db_api_jobs_free). */
int db_api_jobs(struct db *db, struct db_api_job **out, size_t *n, int limit, struct buf *err);
/* db_api_job - one job into *out (release with db_api_jobs_free(out, 1)
 * on a heap row, or db_api_job_release). -ENOENT when there is none. */
int db_api_job(struct db *db, struct db_api_job *out, int64_t job_id, struct buf *err);
void db_api_job_release(struct db_api_job *j);
void db_api_jobs_free(struct db_api_job *v, size_t n);

/*
 * db_api_job_cells - the job's distinct matrix cells ("fs=ext4
 * mode=removed"; "" for none) in byte order: *out has *n new strings
 * (free each, then the array).
 */
int db_api_job_cells(struct db *db, int64_t job_id, char ***out, size_t *n, struct buf *err);

/* A job's variant with its series, kernel and run counts. */
struct db_api_variant {
	int64_t id;
	int idx;
	char *name, *base_rev, *commit_oid, *patches, *status, *error;
	int64_t kernel_id;        /* 0: none */
	char *series;             /* the series' name, NULL: no series */
	int64_t series_version;   /* meaningful when series is not NULL */
	char *series_subject;
	int64_t runs_total, runs_done;
	char *spec_json;
};

/* db_api_variants - the job's variants by idx. *out has *n rows
 * (db_api_variants_free). -ENOENT when the job does not exist. */
int db_api_variants(struct db *db, int64_t job_id, struct db_api_variant **out, size_t *n,
		    struct buf *err);
void db_api_variants_free(struct db_api_variant *v, size_t n);

/* Where a run's value of a metric came from. */
enum db_value_source {
	DB_VALUE_NONE,       /* the run has no value */
	DB_VALUE_SUMMARY,    /* the agent's summary record */
	DB_VALUE_SAMPLES,    /* worst_X/mean_X: max/mean of the run's X samples */
	DB_VALUE_MEDIAN,     /* a passive fleet run: the median of its samples
			      * of the metric (db_internal.h) */
};

/* A run of a job with its value of one metric. */
struct db_api_run {
	int64_t id, variant_id, seq;
	int repeat;
	char *variant, *cell, *fs, *status, *accel, *host, *kernel_release;
	char *started_at, *finished_at, *error;
	int64_t records, bad_lines;
	char *params_json;        /* as stored (JSON when well-formed) */
	bool has_console;         /* a console log path or tail is stored */
	char *lab_host;
	enum db_value_source source;
	double value;             /* when source is not DB_VALUE_NONE */
};

/*
 * db_api_runs - a job's runs in run order, each with its value of metric:
 * the agent's summary value, else for worst_X/mean_X the max/mean of the
 * run's X samples, else for a passive fleet run the median of its samples
 * of metric, else none. *out has *n rows (db_api_runs_free).
 * -ENOENT when the job does not exist.
 */
int db_api_runs(struct db *db, int64_t job_id, const char *metric, struct db_api_run **out,
		size_t *n, struct buf *err);
void db_api_runs_free(struct db_api_run *v, size_t n);

/* db_api_job_metric - the job's headline metric in *out (a new string,
 * the caller frees it). -ENOENT "no job N" when there is no such job, a
 * store error (db_fail's words) otherwise. */
int db_api_job_metric(struct db *db, int64_t job_id, char **out, struct buf *err);

/* One run's samples of a metric, in time order. */
struct db_api_curve {
	int64_t run_id, variant_id;
	double *t, *v;            /* n each (seconds, the metric's unit); owned */
	size_t n;
};

/*
 * db_api_samples - the samples of metric of one run (run_id > 0) or of
 * every run of a job (job_id > 0, run_id 0) that has some, in run order:
 * *out has *n curves (db_api_curves_free). -ENOENT when the run or job
 * does not exist, -EINVAL when metric is not in the metrics table.
 */
int db_api_samples(struct db *db, int64_t job_id, int64_t run_id, const char *metric,
		   struct db_api_curve **out, size_t *n, struct buf *err);
void db_api_curves_free(struct db_api_curve *v, size_t n);

/* A run's kernel. tree_oid, config_hash, release, image_path and
 * build_error may be NULL. */
struct db_api_kernel {
	int64_t id;
	char *source, *tree_oid, *config_hash, *release, *image_path, *build_status;
	char *build_error, *created_at;
	bool has_build_s;
	double build_s;
	bool has_build_log;
};

struct db_api_phase {
	double t;
	char *name;
};

struct db_api_summary {
	char *metric;
	double value;
};

struct db_api_sample_metric {   /* a metric the run has samples of */
	struct db_metric_row metric;   /* unit, better may be NULL */
	int64_t n;
};

/* One run with its variant, job, kernel, phases and summary. */
struct db_api_run_detail {
	int64_t id, job_id;
	char *job, *job_metric;
	int64_t variant_id;
	char *variant;
	int64_t seq;
	int repeat;
	char *cell, *fs, *status, *accel, *host, *kernel_release, *agent_version;
	char *started_at, *finished_at, *error;
	int64_t records, bad_lines;
	bool has_console;
	int64_t kernel_id;             /* the run's, else its variant's; 0: none */
	char *params_json, *hello_json;  /* hello_json may be NULL */
	bool has_kernel;               /* kernel_id names a stored kernel */
	struct db_api_kernel kernel;
	struct db_api_phase *phases;   /* by time */
	size_t nphases;
	struct db_api_summary *summary;  /* by metric name */
	size_t nsummary;
	struct db_api_sample_metric *sample_metrics;  /* by name */
	size_t nsample_metrics;
};

/* db_api_run - run_id into *out (db_api_run_release). -ENOENT when there
 * is no such run. */
int db_api_run(struct db *db, int64_t run_id, struct db_api_run_detail *out, struct buf *err);
void db_api_run_release(struct db_api_run_detail *d);

/* One probe count of a run: at t (has_t) or the final count (no time). */
struct db_api_probe {
	char *name, *key;
	bool has_t;
	double t;
	int64_t count;
};

/* db_api_run_probes - the run's probe counts by name, key, then time with
 * the final counts last. *out has *n rows (db_api_probes_free). -ENOENT
 * when there is no such run. */
int db_api_run_probes(struct db *db, int64_t run_id, struct db_api_probe **out, size_t *n,
		      struct buf *err);
void db_api_probes_free(struct db_api_probe *v, size_t n);

/*
 * db_api_run_console - where a run's console log is: *path_out (file, may
 * be NULL) and *tail_out (the stored tail, may be NULL); both owned by the
 * caller. -ENOENT when the run does not exist.
 */
int db_api_run_console(struct db *db, char **path_out, char **tail_out, int64_t run_id, struct buf *err);

/* db_api_kernel_build_log - the kernel's build log path (owned, may be NULL). */
int db_api_kernel_build_log(struct db *db, char **path_out, int64_t kernel_id, struct buf *err);

/*
 * db_api_job_fingerprint - a string that changes whenever anything a
 * job's report reads changes: the job's status and metric, its variants,
 * each run's status and counters, the summaries, and the samples and
 * probes of runs still running (finished runs get no new rows). *out is
 * owned by the caller. Cheap next to building the report: kcanary serve
 * keeps built reports and rebuilds one only when this string differs.
 */
int db_api_job_fingerprint(struct db *db, char **out, int64_t job_id, struct buf *err);

/*
 * db_job_cancel - mark a pending, building or running job cancelled and
 * its pending runs skipped; the executor stops at its next run. -ENOENT:
 * no such job; -EALREADY: the job already ended (*status_out, when not
 * NULL, gets its status; size 32).
 */
int db_job_cancel(struct db *db, int64_t job_id, char *status_out, struct buf *err);

#endif
