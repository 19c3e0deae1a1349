/* report_overhead.h - a job's per-run overhead (db_overhead.h) summed up:
 * the medians over its runs of the wall time, of the time outside the
 * workload and of each phase, as the report's footer line and as JSON
 * (the report, GET /api/v1/jobs/ID and /runs/ID). Pure: no store access.
 */
#ifndef KC_REPORT_OVERHEAD_H
#define KC_REPORT_OVERHEAD_H

#include <jansson.h>
#include <stddef.h>

#include "store/db_overhead.h"
#include "util.h"

struct overhead_summary {
	size_t nruns;                     /* runs with phases stored; 0: nothing below */
	double wall_s;                    /* median wall time per run */
	double overhead_s;                /* median of wall - workload per run */
	double ratio;                     /* overhead_s / wall_s (0 when wall_s is 0) */
	double phase_s[DB_OV_NPHASES];    /* median of each phase */
};

/* overhead_summarize - medians over the n runs of v (stats_median). */
void overhead_summarize(struct overhead_summary *out, const struct db_overhead *v, size_t n);

/*
 * overhead_text - append the footer line, nothing when s->nruns is 0:
 * "overhead: median 38.0 s of 160.0 s wall per run (24%, 6 runs): image
 * 0.1 s, upload 0.2 s, create 0.3 s, boot 30.0 s, mkfs 3.0 s, teardown
 * 4.4 s; workload 122.0 s\n" (wrapped before 80 columns).
 */
void overhead_text(struct buf *b, const struct overhead_summary *s);

/* overhead_json - {"runs", "wall_s", "overhead_s", "ratio", "phases_s":
 * {"image": s, ...}} (new reference), or JSON null when s->nruns is 0. */
json_t *overhead_json(const struct overhead_summary *s);

/* overhead_run_json - one run's {"wall_ms", "overhead_ms", "phases_ms":
 * {"image": ms, ...}} (new reference). */
json_t *overhead_run_json(const struct db_overhead *o);

#endif
