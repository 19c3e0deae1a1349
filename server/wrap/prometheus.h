/* prometheus.h - a metric source for the canary judge: Prometheus' HTTP
 * query API (https://prometheus.io/docs/prometheus/latest/querying/api/),
 * /api/v1/query_range over a window or /api/v1/query at an instant.
 * Its GETs go through fetch.h (the one libcurl user).
 */
#ifndef KC_PROMETHEUS_H
#define KC_PROMETHEUS_H

#include <stddef.h>

#include "store/db_canary.h"
#include "util.h"

/* The samples of one query: values[i] belongs to series series_of[i]
 * (0..nseries-1, one per label set Prometheus returned). */
struct prom_result {
	double *values;
	size_t *series_of;
	size_t n, nseries;
};

void prom_result_release(struct prom_result *r);

/*
 * prom_matchers - a cohort's selectors as PromQL label matchers, comma-
 * separated, in a new string (*out, caller frees): key="value"; a value
 * with * ? [ is a glob and becomes key=~"regex"; kernel=R matches R or R
 * followed by a local version (+… or -…), as the store does (db_canary.h):
 * kernel=~"R([+-].*)?". -EINVAL, with a message in err, for "since"
 * (use --window) or a key that is not a Prometheus label name.
 */
int prom_matchers(char **out, const struct db_selector *sel, size_t n, struct buf *err);

/*
 * prom_query - run promql against the server at base_url: with
 * window_s > 0 a range query over [end_s - window_s, end_s] every step_s
 * seconds (every sample of every series), else an instant query at end_s
 * (one sample per series). NaN and ±Inf samples are left out. *out is the
 * caller's to release. Returns 0, -EIO (no answer: err says what curl
 * said), -EPROTO (an error answer: err has Prometheus' error text).
 */
int prom_query(struct prom_result *out, const char *base_url, const char *promql,
	       double end_s, double window_s, double step_s, struct buf *err);

#endif
