/* db_canary.h - what the canary verdict reads from the store: cohorts of
 * runs picked by selectors, and each run's value of a metric. Queries live
 * in db_canary.c; errors follow db.h (0 or -errno, the reason in err).
 */
#ifndef KC_DB_CANARY_H
#define KC_DB_CANARY_H

#include <stddef.h>
#include <stdint.h>

#include "store/db.h"

/*
 * A selector is "key=value"; a cohort is every run matching all of its
 * selectors. Keys:
 *   kernel   runs.kernel_release (from the agent's hello): the value exactly,
 *            or followed by a local version ('6.12.117' matches
 *            '6.12.117+deb12-cloud-amd64' and '6.12.117-1', not '6.12.1170')
 *   variant  the run's variant name      job   job name or id
 *   host     runs.host                   fs    runs.fs
 *   status   runs.status
 *   since    runs that finished (or, unfinished, started) at or after this
 *            ISO 8601 UTC time, "2026-11-29T21:00:00Z" (what --window sets)
 *   any other key (letters, digits, '_', '-', '.'): that key of
 *            runs.params_json, compared as text ('rate_mbps=250')
 * A value holding '*', '?' or '[' is a glob (sqlite GLOB) for every key.
 */
struct db_selector {
	char *key, *value;
};

/*
 * db_selectors_parse - split "k=v,k=v" (commas or blanks between) into
 * *out (n of them; free with db_selectors_free). -EINVAL when a part has no
 * '=' or an empty or invalid key; err then names the part.
 */
int db_selectors_parse(struct db_selector **out, size_t *n, const char *text, struct buf *err);
void db_selectors_free(struct db_selector *s, size_t n);

/*
 * db_cohort_runs - ids of the runs matching every selector, ascending, in a
 * new array (*out, caller frees; NULL when none). Zero matches is not an
 * error: *n is 0.
 */
int db_cohort_runs(struct db *db, int64_t **out, size_t *n, const struct db_selector *sel,
		   size_t nsel, struct buf *err);

/*
 * db_cohort_values - the value of metric for each of the nruns runs, in the
 * same order, into a new array (*out, caller frees): the agent's summary
 * value; for worst_X / mean_X without one, max / mean of the run's samples
 * of X (as reports do); NAN when the run has neither.
 * metric "probe:NAME:KEY" is a probe total: the run's final count of NAME
 * with return value / key KEY (the summary's count, else the largest
 * cumulative count), 0 when the run reported NAME with other keys only, NAN
 * when it did not report NAME at all (probe not loaded).
 */
int db_cohort_values(struct db *db, double **out, const int64_t *runs, size_t nruns,
		     const char *metric, struct buf *err);

/*
 * db_cohort_metrics - the metric names present in any of the runs: summary
 * metrics, then "probe:NAME:KEY" for each probe total, sorted, in a new
 * array of new strings (free with db_strings_free).
 */
int db_cohort_metrics(struct db *db, char ***out, size_t *n, const int64_t *runs,
		      size_t nruns, struct buf *err);

/*
 * db_cohort_hosts - runs.host of each of the nruns runs, in the same order,
 * in a new array of new strings (NULL for a run without one; free with
 * db_strings_free(out, nruns)).
 */
int db_cohort_hosts(struct db *db, char ***out, const int64_t *runs, size_t nruns, struct buf *err);

/* db_kernel_releases - distinct runs.kernel_release values in the store,
 * sorted, for error messages (free with db_strings_free). */
int db_kernel_releases(struct db *db, char ***out, size_t *n, struct buf *err);

/* db_metric_better - "lower" or "higher" from the metrics table as a new
 * string in *out, or NULL when the metric is unknown or has no direction. */
int db_metric_better(struct db *db, char **out, const char *metric, struct buf *err);

void db_strings_free(char **v, size_t n);

#endif
