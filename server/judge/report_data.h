/* report_data.h - the report's data, shared by the report*.c files (not
 * by report.h's users): struct report as report_build() (report.c) fills
 * it, per cell and per value of the compared axis, and the small helpers
 * every part of the report uses (metric names, value formats, a run's
 * variant and usability, a run's probe rows). The formats read it:
 * report_text.c (text, markdown), report_grid.c (--by A,B), report_csv.c,
 * report_json.c, report_seq.c (repeat auto's stop lines).
 */
#ifndef KC_REPORT_DATA_H
#define KC_REPORT_DATA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "judge/report_axis.h"
#include "judge/report_overhead.h"
#include "judge/stats.h"
#include "store/db.h"
#include "store/db_cells.h"

struct rep_run {
	const struct db_report_run *run;
};

/* A lab host of a stratified comparison: its runs with a value on the
 * baseline's side (n) and on the compared side (m). */
struct rep_stratum {
	const char *host;        /* borrowed */
	size_t n, m;
};

/* The host of runs stored without one (ingested, from before the lab):
 * the default host, where a compare without --hosts runs (lab.h). */
#define REPORT_DEFAULT_HOST "local"

/* One value of the compared axis within one cell: its runs and the
 * comparison with the cell's baseline value. */
struct rep_group {
	const char *label;       /* row label: the variant's name, "mode=removed" */
	const char *value;       /* the value: "base", "removed" */
	const char *say;         /* in sentences: "base", "mode=removed" */
	const struct db_report_variant *v;  /* axis "variant": the variant; else NULL */
	struct rep_run *runs;
	size_t nruns;
	double *values;          /* runs with a value, in run order */
	const char **hosts;      /* per value: its run's lab host (borrowed;
				  * REPORT_DEFAULT_HOST when none was stored) */
	size_t nvalues;
	struct stats_summary sum;
	size_t k_worse;
	bool has_cmp;            /* compared with the baseline */
	double change_pct;       /* (median - base median) / base median * 100 */
	struct mwu_result mwu;   /* mwu.p: the headline p, van Elteren's when stratified */
	bool stratified;         /* the runs span lab hosts: p is ve's */
	bool confounded;         /* they span hosts, but no host ran both sides:
				  * p stays pooled, host and group inseparable */
	double mwu_plain_p;      /* stratified: the plain MWU p, for comparison */
	struct ve_result ve;
	struct rep_stratum *strata;   /* stratified: the hosts, in order of first run */
	size_t nstrata;
	double hl, hl_lo, hl_hi;
	/* repeat auto (report_seq_state): the comparison's sequential facts */
	bool has_seq;            /* a comparison the job's looks decide */
	int seq_blocks;          /* the block it was decided at, else the last look */
	struct stats_seq_look seq;  /* that look */
};

/* --by A,B: does A's effect depend on B? For values a_i (i > 0) and b_j
 * (j > 0): A's effect on the medians at b_0 and at b_j, their difference
 * (the difference of differences) and the permutation test of it. */
struct rep_inter {
	bool has;                /* all four cells have values */
	double eff0, eff1, dod;  /* medians: (a_i - a_0) at b_0, at b_j; eff1 - eff0 */
	bool tested;             /* stats_interaction_perm() could run */
	double p;
};

struct rep_cell {
	char *key;               /* the run's cell without the axis, and the
				  * variant when the variant is not the axis */
	char *cell;              /* the run's cell without the axis */
	char *title;
	size_t max_runs;
	struct rep_group *groups;  /* one per axis value, in r->axis order; two
				    * axes: [i * axis2.n + j] for values i, j */
	struct rep_inter *inter;   /* two axes: [i * axis2.n + j], i, j > 0 */
};

struct report {
	struct db_report_data d;
	const char *metric;
	const char *unit;
	enum stats_better better;
	bool has_threshold;
	double threshold;
	struct report_axis axis;     /* the compared axis (rows) */
	struct report_axis axis2;    /* --by A,B: the second axis (columns) */
	bool two_d;
	size_t ngroups;              /* per cell: axis.n, or axis.n * axis2.n */
	char **labels2d, **values2d; /* two_d: per group "A / B" */
	struct rep_cell *cells;
	size_t ncells;
	char **run_cell;         /* per run: its cell key under the axis */
	bool any_tcg;
	const char *hostfs_hash;     /* --rootfs host: the first such run's dpkg-list hash
				      * (borrowed from d); NULL: no run used the host's / */
	bool hostfs_mixed;           /* such runs saw different host package lists */
	struct overhead_summary ov;  /* the finished runs' overhead (db_overhead.h) */
	struct db_job_scratch scratch; /* every run's scratch disk (db_cells.h); bytes 0: none stored */
	struct {
		bool on;             /* the job is repeat auto */
		bool own;            /* this report's metric and axis are the job's */
		int max_blocks;
		double margin_pct;
		int blocks;          /* complete blocks: the looks so far */
		size_t ncmp, ndecided;
	} seq;
	int *run_block;          /* repeat auto: per run its block (1-based), 0 none */
	char *note;              /* what report_build() chose instead of the job's
				  * own choice (report_note), or NULL */
	struct report *also;     /* the workload's headline metric when the job
				  * decided on another and runs have it (the
				  * "also measured" table, report.c), or NULL */
};

/* The table's title of a metric ("Worst lag behind schedule") and its
 * short name in sentences ("worst lag"); m itself when it has none. */
const char *rep_metric_title(const char *m);
const char *rep_metric_short(const char *m);

/* v in unit as a table shows it ("85.3s", "87.4MiB/s", "-" for NaN) and
 * a p-value ("p=0.03", "p<0.001"), into out of size bytes; every figure
 * rounded by dec_round() (dec_round.h). */
void rep_fmt_value(char *out, size_t size, double v, const char *unit);
void rep_fmt_p(char *out, size_t size, double p);

/* Value i of axis a as sentences say it (borrowed from a). */
const char *rep_axis_say(const struct report_axis *a, size_t i);

/* The run's variant in r->d (borrowed), or NULL. */
const struct db_report_variant *rep_variant_of(const struct report *r,
					       const struct db_report_run *run);

/* Whether a run's value counts: ok and incomplete runs, and a fleet
 * host's passive run while it streams ('running'). */
bool rep_run_usable(const struct db_report_run *run);

/* Whether a group has a row in its cell's table. */
bool rep_group_shown(const struct rep_group *g);

/* The index of run_id's first row in r->d.run_probes, or nrun_probes. */
size_t rep_run_probes_first(const struct report *r, int64_t run_id);

/* A JSON real, or null when v is not finite (new reference). */
json_t *rep_num_or_null(double v);

#endif
