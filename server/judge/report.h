/* report.h - a job's results as the cover-letter table, in text,
 * markdown, csv or json.
 *
 * report_build() reads the store once into a struct report: per value of
 * the compared axis (report_axis.h; by default the variants in idx order,
 * the first is the baseline) and per cell (the rest of the matrix, and the
 * variant when it is not the axis), each
 * run's value of the metric (the agent's summary value, or for an
 * incomplete run one derived from its samples: worst_X = max of X, mean_X =
 * mean of X; for a fleet host's passive run, which has no summary, the
 * median of all its samples of the metric, said so in the cell's title),
 * then medians, the change against the baseline with a
 * two-sided Mann-Whitney U p-value, the Hodges-Lehmann shift with a
 * bootstrap 95% CI, and "stalled in k of n" for the threshold. Statistics
 * come from stats.c, where each formula cites its source.
 *
 * report.c gathers and computes; report_format.c formats, one file per
 * format (report_text.c, report_grid.c, report_csv.c, report_json.c,
 * report_seq.c); report_data.h is the struct report they share.
 */
#ifndef KC_REPORT_H
#define KC_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "store/db.h"
#include "util.h"

/* A run whose root filesystem is the host's own / (--rootfs host,
 * rootfs.h: its rootfs_images.spec is REPORT_ROOTFS_HOST) is not
 * reproducible: the text, JSON and web reports mark the job so. */
#define REPORT_ROOTFS_HOST "host"
#define REPORT_ROOTFS_HOST_MARK "rootfs: host (not reproducible)"

enum report_format { REPORT_TEXT, REPORT_MARKDOWN, REPORT_CSV, REPORT_JSON };

struct report_opts {
	const char *metric;     /* NULL: the job's headline metric */
	const char *by;         /* the compared axis (report_axis.h): "variant",
				 * "mode", "sysctl", "fs", "host", ...; NULL: the
				 * job file's `by`, else "variant" */
	const char *baseline;   /* the axis value compared against; NULL: the
				 * job file's `baseline`, else the first value */
	double threshold;       /* "stalled" threshold in the metric's unit */
	bool has_threshold;     /* false: 5 for *_s metrics, none otherwise */
};

struct report;

/*
 * report_build - gather and compute. *out is owned by the caller
 * (report_free). opts->metric NULL: the job's headline metric, or when no
 * run has a value of it, the summary metric most of its runs have (a fio
 * job's fio:kc:write:bw); opts->by NULL: the job's own axis, or the
 * variants when that is no axis of the job (report_note says either).
 * Returns 0, -ENOENT (no such job), -EINVAL (the job has no such axis as
 * opts asks, or the baseline is not one of its values) or the store's
 * error (db.h), with the reason in err (may be NULL).
 */
int report_build(struct report **out, struct db *db, int64_t job_id,
		 const struct report_opts *opts, struct buf *err);
void report_free(struct report *r);

/*
 * report_format - append the report to out in the given format. Text is
 * for pasting into an email: fixed width, at most 80 columns when it fits,
 * no colour. JSON is what GET /api/v1/jobs/ID/report returns.
 * Returns 0 or -E2BIG when out's limit is reached.
 */
int report_format(struct buf *out, const struct report *r, enum report_format fmt);

/* report_note - what report_build() chose in place of the job's own
 * choice, for the reader ("metric fio:kc:write:bw: no run has the job's
 * worst_lag_s"; "compared along variant: the job's by 'mod' is not
 * usable: ..."), or NULL. Borrowed from r. */
const char *report_note(const struct report *r);

/* How many runs have a value of the report's metric (0: the metric is
 * not among the job's results, or no run has finished). */
size_t report_nvalues(const struct report *r);

/*
 * compare --repeat auto[:MAX] (job.h): the job runs whole blocks (one run
 * of every variant x cell) and looks after each. A look decides each
 * comparison (every value of the compared axis against the baseline in
 * each cell, on the job's metric) with stats_seq_decide() (stats.h: the
 * anytime-valid e-value for a difference, its confidence sequence for
 * equivalence within +-margin), at level 0.05, from block
 * REPORT_SEQ_MIN_BLOCKS on; a comparison once decided
 * stays decided at that block. report_build() replays the looks from the
 * stored runs (the j-th counted run of a variant and cell, by run order,
 * is in block j; interrupted and infra runs are replaced by their fresh
 * repeat), so the executor and every report see the same facts; the text
 * report says per comparison why it stopped ("stop: difference after 3
 * blocks (e=1.8e3 >= 20)", "stop: no difference within ±5% after 6
 * blocks", "stop: cap of 10 blocks reached, undecided") and the JSON has
 * a "sequential" object. Only a report of the job's own metric and axis
 * has the per-comparison facts.
 */
/* repeat auto's level: a look stops at e >= 1/alpha = 20. */
#define REPORT_SEQ_ALPHA 0.05
/* The first look that may decide: two runs a side is where the normal
 * model of the e-value is least to be trusted; on the seed's bimodal
 * (flaky) stall data A/A jobs stopped "different" 6.9% of the time with
 * looks from block 2 and 1.9% from block 3, at a cost of 0.8 blocks a
 * real difference (kcanary compare simulate, 3,000 jobs each). */
#define REPORT_SEQ_MIN_BLOCKS 3

struct report_seq_state {
	bool sequential;         /* the job is repeat auto */
	int max_blocks;          /* its cap */
	int blocks;              /* complete blocks (looks so far) */
	size_t ncomparisons, ndecided;
	bool done;               /* every comparison decided, or the cap spent */
};
void report_seq_state(const struct report *r, struct report_seq_state *out);

/*
 * report_seq_look - report_seq_state() of the job's report along its own
 * axis and metric (report_build(..., NULL) then report_seq_state()), read
 * from only what the looks need: each run's headline value, its variant and
 * cell (db_report_load_values: no probes, no overheads, no statistics but
 * the looks'). The same decisions; what compare's executor stops on.
 * Returns 0 with *out, or report_build()'s errors.
 */
int report_seq_look(struct report_seq_state *out, struct db *db, int64_t job_id,
		    struct buf *err);

/*
 * The job's headline for the jobs lists (report.c): of the
 * report's comparisons (every value of the compared axis against the
 * baseline in each cell, on the job's metric and axis), the one with the
 * smallest p (van Elteren's when stratified, as the tables), ties to the
 * larger change. has is false when no comparison has a p (one variant, or
 * no values yet); change_pct is NaN when the baseline median is 0.
 */
struct report_headline {
	bool has;
	double change_pct;      /* (median - baseline median) / |baseline median| * 100 */
	double p;               /* two-sided */
	char label[160];        /* "+ v6 2/3 vs base", "mode=removed vs mode=alive" */
	char cell[256];         /* the rest of its cell ("fs=ext4 mode=removed"), may be "" */
	size_t ncomparisons;    /* how many comparisons it was chosen from */
};
void report_headline(const struct report *r, struct report_headline *out);
/* report_headline() of job_id's report along its own axis and metric,
 * read and computed as lightly as report_seq_look() (each run's headline
 * value only; medians, change and p, no shift CI, no probes): what a jobs
 * list can afford per job. report_build()'s errors (-EINVAL: the job's
 * stored axis does not resolve); *out has has = false on any error. */
int report_job_headline(struct report_headline *out, struct db *db, int64_t job_id,
			struct buf *err);
/* h's change and p as the jobs lists print them, with the rounding and
 * decimals of the web's (web/kcanary.js KC.fmtPct, KC.fmtP; its spacing
 * differs: "< 0.001", "0.0%"): dec_round.h's rule ("+30.3%" for a change
 * of 30.25%), p to 3 decimals ("<0.001" under that; the report's tables
 * give 2 above 0.01), starred when chosen from several comparisons; "-"
 * for what h lacks. Into change and p, size bytes each. */
void report_headline_text(const struct report_headline *h, char *change, char *p, size_t size);

/* Parse "text", "markdown", "csv", "json"; -EINVAL otherwise. */
int report_format_parse(enum report_format *out, const char *name);

#endif
