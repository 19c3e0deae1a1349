/* canary_run.h - a canary verdict from cohort selectors: the runs each
 * cohort's selectors match in the store (db_canary.h), or the series a
 * Prometheus query gives for them (wrap/prometheus.h); per metric each
 * cohort's values (with by_host one per host or series: its median); then
 * the judge (canary.h). `kcanary canary` parses its flags into a
 * canary_run_opts, calls canary_run_store() or canary_run_prometheus() and
 * prints the verdict (canary_format_*).
 *
 * Error messages name the `kcanary canary` flag a setting came from
 * ("--control 'kernel=x' matches no runs ..."), as the command shows them.
 */
#ifndef KC_CANARY_RUN_H
#define KC_CANARY_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "judge/canary.h"
#include "util.h"

struct db;

/* canary_parse_double, canary_parse_size - the number syntax of canary
 * settings (a finite strtod() number; a non-negative decimal): 0 with
 * *out, or -EINVAL leaving it alone. */
int canary_parse_double(double *out, const char *s);
int canary_parse_size(size_t *out, const char *s);

/* One metric to judge: SPEC is NAME[,OPTION...] (--metric). The has_*
 * flags say which settings the spec gave itself, so the verdict's own
 * (--tolerance ...) do not override them. text and name are owned. */
struct canary_metric_spec {
	char *text;			/* NAME[,OPTION...] as given */
	char *name;
	bool has_direction, has_tolerance, has_spread_tol, has_nodata;
	struct canary_metric_config cfg;	/* cfg.name borrows name */
};

/*
 * canary_metric_spec_parse - spec into *m (options: critical, nospread,
 * weight=W, direction=D, tolerance=F, spread-tolerance=F, nodata=RULE,
 * min-runs=N). Returns 0, or -EINVAL with err ("--metric 'SPEC': bad
 * option ..."). *m is set either way: release it.
 */
int canary_metric_spec_parse(struct canary_metric_spec *m, const char *spec, struct buf *err);
void canary_metric_spec_release(struct canary_metric_spec *m);

/* The Prometheus source: the server and each --query NAME=PROMQL (names,
 * exprs: owned, n of them); PROMQL holds $cohort. */
struct canary_prom {
	const char *url;		/* borrowed; NULL: values from the store */
	char **names, **exprs;
	size_t n;
	double step_s;			/* range query step (default 15) */
};

/* canary_prom_add_query - "NAME=PROMQL" (arg, copied) into p. -EINVAL with
 * err when there is no NAME or no $cohort in PROMQL. */
int canary_prom_add_query(struct canary_prom *p, const char *arg, struct buf *err);

/*
 * A verdict's settings. control, canary: the cohorts' selectors
 * ("kernel=6.12.1,host=a*"); job: only runs of that job (NULL: any);
 * specs: the metrics, in order (the store adds every metric the cohorts
 * have when there is none); tolerance, spread_tol: NAN when not given
 * (each metric keeps its own); nodata counts only with has_nodata;
 * window_s: only runs (samples) of the last window_s seconds, 0: all (an
 * instant query with Prometheus). Strings are borrowed; specs and prom's
 * arrays are owned (canary_run_opts_release).
 */
struct canary_run_opts {
	const char *control, *canary, *job;
	struct canary_metric_spec *specs;
	size_t nspecs;
	struct canary_opts judge;
	bool no_spread, by_host, has_nodata;
	double tolerance, spread_tol, window_s;
	enum canary_nodata nodata;
	struct canary_prom prom;
};

void canary_run_opts_init(struct canary_run_opts *o);
void canary_run_opts_release(struct canary_run_opts *o);

/* A verdict with what its printing needs: weights[i] of verdict.metrics[i]
 * (n of them). Names are borrowed from the opts it came from: release it
 * first. */
struct canary_run {
	struct canary_verdict verdict;
	struct canary_cohorts cohorts;
	double *weights;
	size_t n;
};

void canary_run_release(struct canary_run *r);

/*
 * canary_run_store - the verdict over the runs of db the cohorts' selectors
 * match. o->specs gets the default metrics when it has none, and each
 * spec's direction from the metrics table when it set none. On success
 * *out is the caller's to release. Errors, with err:
 *   -EINVAL   the settings are wrong: a bad selector, the cohorts share
 *             runs, a metric the store gives no values for (or direction
 *             of), judge settings canary_judge() refuses; also when the
 *             store fails while listing a cohort's runs
 *   -ENODATA  no verdict: a cohort matches no runs (err lists the store's
 *             kernels), the runs have no metric to judge
 *   -EIO      the store cannot be read (the cohorts' metrics or hosts)
 */
int canary_run_store(struct canary_run *out, struct db *db, struct canary_run_opts *o,
		     struct buf *err);

/*
 * canary_run_prometheus - the verdict over o->prom's queries, each run per
 * cohort with $cohort replaced by that cohort's selectors as label matchers
 * (prom_matchers()), every sample a value; a metric's options from the
 * spec of the same name (default direction: either). On success *out is
 * the caller's to release. Errors, with err: -EINVAL (a selector that is
 * not a label matcher, judge settings refused), -EIO or -EPROTO (a query
 * failed: prom_query()).
 */
int canary_run_prometheus(struct canary_run *out, const struct canary_run_opts *o,
			  struct buf *err);

#endif
