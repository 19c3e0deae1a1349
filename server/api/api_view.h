/* api_view.h - the store's rows (store/db_api.h) as the API's JSON, in
 * the shapes docs/api.md documents (api_view.c): the headline medians of
 * a job's variants are computed here (judge/stats.h), curves downsampled
 * here (judge/downsample.h). *out is owned by the caller (json_decref)
 * and written only on success. Errors are the store's (db.h): -ENOENT
 * when the job or run does not exist, -EIO when sqlite fails, the reason
 * in err.
 */
#ifndef KC_API_VIEW_H
#define KC_API_VIEW_H

#include <stdint.h>
#include <jansson.h>

#include "util.h"

struct db;

/* [{"name","unit","better"}] from the metrics table (better: "lower",
 * "higher" or null). */
int api_view_metrics(struct db *db, json_t **out, struct buf *err);

/* The newest `limit` jobs, newest first, each as api_view_job() describes
 * minus spec and dimensions. */
int api_view_jobs(struct db *db, json_t **out, int limit, struct buf *err);

/*
 * api_view_job - one job: id, name, kind, status, metric (+ unit, better),
 * times, error, seed, spec (the stored spec_json, parsed), runs_total,
 * runs_done (runs no longer pending or running), runs_ok (with a result:
 * ok, incomplete), runs_failed (failed, timeout, kernel-panic, paused),
 * runs_skipped (never run), variants (id, idx, name, runs, median of the
 * metric over runs that have a value), headline (one line: each variant's
 * median), change (the report's comparison with the smallest p: label,
 * cell, change_pct, p, comparisons; null without one), dimensions
 * ({"fs": ["ext4","xfs"], …}, from the runs' matrix cells).
 */
int api_view_job(struct db *db, json_t **out, int64_t job_id, struct buf *err);

/* A job's variants with their series, kernel and run counts (an array). */
int api_view_variants(struct db *db, json_t **out, int64_t job_id, struct buf *err);

/*
 * api_view_runs - {"job_id","metric","unit","better","runs"}: a job's runs
 * in run order, each with its value of metric (NULL: the job's metric):
 * the agent's summary value, else for worst_X/mean_X the max/mean of the
 * run's X samples (value_source "summary" or "samples"), else null.
 */
int api_view_runs(struct db *db, json_t **out, int64_t job_id, const char *metric,
		  struct buf *err);

/*
 * api_view_samples - the curves of metric (a sampled metric such as lag_s)
 * of one run (run_id > 0) or of every run of a job (job_id > 0, run_id 0),
 * each downsampled to at most max_points (0: all) by downsample_max().
 * -EINVAL when metric is not in the metrics table.
 */
int api_view_samples(struct db *db, json_t **out, int64_t job_id, int64_t run_id,
		     const char *metric, long max_points, struct buf *err);

/* One run with its variant, job, kernel, phases and summary. */
int api_view_run(struct db *db, json_t **out, int64_t run_id, struct buf *err);

/* A run's probe counters: per (name, key) series over time, and the final
 * counts (rows without a time). */
int api_view_run_probes(struct db *db, json_t **out, int64_t run_id, struct buf *err);

#endif
