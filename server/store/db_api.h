/* db_api.h - the store's queries behind the web API (db_api.c) and the
 * API tokens (db_tokens.c). Answers are jansson values in the shapes
 * docs/api.md documents; *out is owned by the caller (json_decref) and is
 * written only on success. Errors as in db.h: -ENOENT when the job, run or
 * kernel does not exist, -EIO when sqlite fails (the reason in err).
 */
#ifndef KC_DB_API_H
#define KC_DB_API_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "store/db.h"

/* Upper bound on points per curve a caller may ask for. */
#define DB_API_MAX_POINTS 100000

/* [{"name","unit","better"}] from the metrics table (better: "lower",
 * "higher" or null). */
int db_api_metrics(struct db *db, json_t **out, struct buf *err);

/*
 * db_api_metric_info - unit and direction of metric (borrowed into the
 * caller's buffers, "" when unknown). A derived metric such as
 * worst_lag_s takes what the metrics table says of it. Returns 0 or -EIO.
 */
int db_api_metric_info(struct db *db, const char *metric, char *unit, size_t unit_sz,
		       char *better, size_t better_sz, struct buf *err);

/* The newest `limit` jobs, newest first, each as db_api_job() describes
 * minus spec and dimensions. */
int db_api_jobs(struct db *db, json_t **out, int limit, struct buf *err);

/*
 * db_api_job - one job: id, name, kind, status, metric (+ unit, better),
 * times, error, seed, spec (the stored spec_json, parsed), runs_total,
 * runs_done (runs no longer pending or running), variants (id, idx, name,
 * runs, median of the metric over runs that have a value), headline (one
 * line: each variant's median), dimensions ({"fs": ["ext4","xfs"], …},
 * from the runs' matrix cells).
 */
int db_api_job(struct db *db, json_t **out, int64_t job_id, struct buf *err);

/* A job's variants with their series, kernel and run counts. */
int db_api_variants(struct db *db, json_t **out, int64_t job_id, struct buf *err);

/*
 * db_api_runs - a job's runs in run order, each with its value of metric
 * (NULL: the job's metric): the agent's summary value, else for
 * worst_X/mean_X the max/mean of the run's X samples (value_source
 * "summary" or "samples"), else null.
 */
int db_api_runs(struct db *db, json_t **out, int64_t job_id, const char *metric, struct buf *err);

/*
 * db_api_samples - the curves of metric (a sampled metric such as lag_s)
 * of one run (run_id > 0) or of every run of a job (job_id > 0, run_id 0),
 * each downsampled to at most max_points (0: all) by downsample_max().
 * -EINVAL when metric is not in the metrics table.
 */
int db_api_samples(struct db *db, json_t **out, int64_t job_id, int64_t run_id,
		   const char *metric, long max_points, struct buf *err);

/* One run with its variant, job, kernel, phases and summary. */
int db_api_run(struct db *db, json_t **out, int64_t run_id, struct buf *err);

/* A run's probe counters: per (name, key) series over time, and the final
 * counts (rows without a time). */
int db_api_run_probes(struct db *db, json_t **out, int64_t run_id, struct buf *err);

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

/* ---- tokens (db_tokens.c); hashes are token_hash() hex ---- */

/* -EEXIST when the name or the hash is taken. scopes (token.h; NULL: the
 * default for its name, token_default_scopes()) are stored as given. */
int db_token_add(struct db *db, const char *name, const char *hash_hex, const char *scopes,
		 struct buf *err);
/* Name and scopes of the token with this hash into name (size bytes) and
 * scopes (scopes_size; "" for a token stored before scopes: the caller
 * takes token_default_scopes()); -ENOENT if none. */
int db_token_find(struct db *db, char *name, size_t size, char *scopes, size_t scopes_size,
		  const char *hash_hex, struct buf *err);
/* [{"name","created_at","scopes"}], oldest first; scopes null for a token
 * stored before scopes. */
int db_token_list(struct db *db, json_t **out, struct buf *err);
/* -ENOENT when there is no token of that name. */
int db_token_remove(struct db *db, const char *name, struct buf *err);

#endif
