/* db_bisect.h - what `kcanary bisect` keeps in the store besides its
 * job, variants and runs (db.h): the event log, and one run's metric. */
#ifndef KC_DB_BISECT_H
#define KC_DB_BISECT_H

#include <stdbool.h>
#include <stdint.h>

#include "store/db.h"

/* db_bisect_log_set - store (or replace) job_id's event log. */
int db_bisect_log_set(struct db *db, int64_t job_id, const char *log, struct buf *err);

/* db_bisect_log_get - job_id's event log (new string, caller frees);
 * -ENOENT when the job has none. */
int db_bisect_log_get(struct db *db, int64_t job_id, char **out, struct buf *err);

/*
 * db_run_metric - one run's value of metric:
 *  "probe:NAME:KEY"  the probe's final count for key (the summary's count,
 *                    t_s NULL; else its largest count); 0 when the run has
 *                    probe counts but none for NAME/KEY (the event never
 *                    fired); -ENOENT when the run has no probe counts at all
 *                    (probes unavailable in that guest);
 *  anything else     the agent's summary value of that name (worst_lag_s),
 *                    else the largest sample of that name (a `command`
 *                    workload's "metric NAME VALUE" lines); -ENOENT when
 *                    neither exists.
 * -EINVAL for a malformed probe metric.
 */
int db_run_metric(struct db *db, int64_t run_id, const char *metric, double *out, struct buf *err);

/* db_metric_higher_is_worse - the metric's direction from the metrics
 * table (better = 'lower' or unknown: higher is worse; 'higher': lower is
 * worse). Probe counts: higher is worse (more of the event). */
int db_metric_higher_is_worse(struct db *db, const char *metric, bool *out, struct buf *err);

/* A run of a lab round, as bisect_exec.c reads it back. */
struct db_bisect_run {
	int64_t id, variant_id;
	char *status, *error, *lab_host;   /* error, lab_host: "" when none */
};

/*
 * db_bisect_runs_since - job_id's runs with id >= from_id that ended with
 * a result (not pending, running or 'infra': a run its host failed was
 * placed again as a fresh run), in id order. *out has *n entries; free
 * with db_bisect_runs_free().
 */
int db_bisect_runs_since(struct db *db, int64_t job_id, int64_t from_id,
			 struct db_bisect_run **out, size_t *n, struct buf *err);
void db_bisect_runs_free(struct db_bisect_run *v, size_t n);

#endif
