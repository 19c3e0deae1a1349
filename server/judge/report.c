/* report.c - the cover-letter table and its JSON/markdown/CSV forms
 * (report.h). Reads through db_report_load(), computes with stats.c. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_num.h"
#include "judge/report.h"
#include "judge/report_axis.h"
#include "judge/report_overhead.h"
#include "error.h"
#include "judge/stats.h"
#include "store/db_report.h"





/* Bootstrap resamples for the Hodges-Lehmann CI. */
#define REPORT_BOOTSTRAP 2000
/* Permutations for the interaction test (stats_interaction_perm): the
 * smallest p it can give is 1/10001, and its Monte Carlo error at p = 0.05
 * is 0.002. */
#define REPORT_PERMUTATIONS 10000

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
	struct {
		bool on;             /* the job is repeat auto */
		bool own;            /* this report's metric and axis are the job's */
		int max_blocks;
		double margin_pct;
		int blocks;          /* complete blocks: the looks so far */
		size_t ncmp, ndecided;
	} seq;
	int *run_block;          /* repeat auto: per run its block (1-based), 0 none */
};
/* Human labels for the metrics the workloads emit. */
static const struct {
	const char *metric, *title, *short_name;
} labels[] = {
	{ "worst_lag_s", "Worst lag behind schedule", "worst lag" },
	{ "mean_lag_s", "Mean lag behind schedule", "mean lag" },
	{ "lag_over_1s_s", "Seconds with lag over 1s", "seconds lagging" },
	{ "rate_mbps", "Achieved write rate", "rate" },
	{ "written_bytes", "Bytes written", "written" },
};

static const char *metric_title(const char *m)
{
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (!strcmp(labels[i].metric, m))
			return labels[i].title;
	return m;
}

static const char *metric_short(const char *m)
{
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (!strcmp(labels[i].metric, m))
			return labels[i].short_name;
	return m;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

/* v scaled by the largest step of steps[] (descending, ending in 1) that
 * it reaches in magnitude, as "87.4MiB/s": one decimal below 100, none
 * from there. */
static void fmt_scaled(char *out, size_t size, double v, const double *steps,
		       const char *const *names)
{
	size_t i = 0;
	while (steps[i] > 1 && fabs(v) < steps[i])
		i++;
	double x = v / steps[i];
	snprintf(out, size, fabs(x) >= 99.95 ? "%.0f%s" : "%.1f%s", x, names[i]);
}

/* "85.3s" for seconds; bytes/s (fio's bandwidth) in KiB/s to GiB/s, ns
 * (fio's latencies) in us to s, ops/s with k and M, so that a row fits the
 * 80 columns of a mail; otherwise 4 significant digits and the unit. */
static void fmt_value(char *out, size_t size, double v, const char *unit)
{
	static const double bin[] = { 1 << 30, 1 << 20, 1 << 10, 1 };
	static const double dec[] = { 1e9, 1e6, 1e3, 1 };
	static const char *const bps[] = { "GiB/s", "MiB/s", "KiB/s", "B/s" };
	static const char *const ns[] = { "s", "ms", "us", "ns" };
	static const char *const ops[] = { "G ops/s", "M ops/s", "k ops/s", " ops/s" };

	if (isnan(v))
		snprintf(out, size, "-");
	else if (unit && !strcmp(unit, "bytes/s"))
		fmt_scaled(out, size, v, bin, bps);
	else if (unit && !strcmp(unit, "ns"))
		fmt_scaled(out, size, v, dec, ns);
	else if (unit && !strcmp(unit, "ops/s"))
		fmt_scaled(out, size, v, dec, ops);
	else if (unit && !strcmp(unit, "s"))
		snprintf(out, size, fabs(v) >= 99999.5 ? "%.2gs" : fabs(v) >= 1000 ? "%.0fs" : "%.1fs", v);
	else if (unit && *unit)
		snprintf(out, size, "%.4g %s", v, unit);
	else
		snprintf(out, size, "%.4g", v);
}

static void fmt_p(char *out, size_t size, double p)
{
	if (p < 0.001)
		snprintf(out, size, "p<0.001");
	else if (p < 0.01)
		snprintf(out, size, "p=%.3f", p);
	else
		snprintf(out, size, "p=%.2f", p);
}

/* "(wb-handover, ext4, rate_mbps=250)" from a run's params and the cell
 * text left under the axis; variant (may be NULL) names the kernel when
 * it is not the compared axis. */
static char *cell_title(const struct report *r, const struct db_report_run *run,
			const char *rest, const char *variant)
{
	struct buf b = BUF_INIT;
	json_t *params = run->params_json ? json_loads(run->params_json, 0, NULL) : NULL;
	const char *workload = json_string_value(json_object_get(params, "workload"));
	json_t *measure = json_object_get(params, "measure_s");
	char *cell = xstrdup(rest);
	bool first = true;

	buf_puts(&b, metric_title(r->metric));
	if (json_is_string(measure))
		buf_printf(&b, " over %ss", json_string_value(measure));
	else if (json_is_number(measure))
		buf_printf(&b, " over %gs", json_number_value(measure));
	buf_puts(&b, " (");
	if (variant) {
		buf_puts(&b, variant);
		first = false;
	}
	if (workload) {
		buf_puts(&b, first ? "" : ", ");
		buf_puts(&b, workload);
		first = false;
	}
	for (char *save = NULL, *tok = strtok_r(cell, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		if (!strncmp(tok, "workload=", 9) || !strncmp(tok, "measure_s=", 10))
			continue;
		buf_puts(&b, first ? "" : ", ");
		buf_puts(&b, !strncmp(tok, "fs=", 3) ? tok + 3 : tok);
		first = false;
	}
	if (first)
		buf_puts(&b, r->d.job_name);
	buf_puts(&b, ")");
	free(cell);
	json_decref(params);
	return buf_detach(&b);
}

/* A value as sentences say it: a variant by its short name ("base"), any
 * other by its label ("mode=removed", "sync_old=2": a bare "2" says nothing). */
static const char *axis_say(const struct report_axis *a, size_t i)
{
	return report_axis_is_variant(a->name) ? a->values[i] : a->labels[i];
}

static const struct db_report_variant *variant_of(const struct report *r,
						  const struct db_report_run *run)
{
	for (size_t j = 0; j < r->d.nvariants; j++)
		if (r->d.variants[j].id == run->variant_id)
			return &r->d.variants[j];
	return NULL;
}

/* What of the run's variant stays in its cell: nothing when the variant
 * (or both its parts) is an axis; the other part when one part is ("v6"
 * under --by patches); else the variant. *title is for the cell's title
 * (NULL: nothing), the result the key's prefix; both new strings. */
static char *variant_in_cell(const struct report *r, const struct db_report_run *run,
			     char **title)
{
	const char *a = r->axis.name, *b = r->two_d ? r->axis2.name : "";
	const struct db_report_variant *v = variant_of(r, run);
	int parts = report_axis_is_of_variant(a) + report_axis_is_of_variant(b);

	*title = NULL;
	if (report_axis_is_variant(a) || report_axis_is_variant(b) || parts == 2)
		return xstrdup("");
	if (parts == 1) {
		const char *part = report_axis_is_of_variant(a) ? a : b;
		const char *other = !strcmp(part, "revision") ? "patches" : "revision";
		char *val = report_axis_variant_part(v ? v->name : "", other);
		*title = xasprintf("%s %s", other, val);
		char *key = xasprintf("%s=%s|", other, val);
		free(val);
		return key;
	}
	*title = v ? xstrdup(v->name) : NULL;
	return xasprintf("v%lld|", (long long)run->variant_id);
}

/* The run's cell under the axis: its cell text less the axis, and what
 * stays of the variant ("v3|fs=ext4"). */
static char *cell_key(const struct report *r, const struct db_report_run *run, char **rest,
		      char **title)
{
	const char *axes[] = { r->axis.name, r->two_d ? r->axis2.name : "" };
	*rest = report_axis_rest(run, axes, r->two_d ? 2 : 1);
	char *prefix = variant_in_cell(r, run, title);
	char *key = xasprintf("%s%s", prefix, *rest);
	free(prefix);
	return key;
}

static struct rep_cell *cell_get(struct report *r, size_t run_idx)
{
	const struct db_report_run *run = &r->d.runs[run_idx];
	char *rest = NULL, *vtitle = NULL, *key = cell_key(r, run, &rest, &vtitle);
	bool variant_axis = report_axis_is_variant(r->axis.name);

	r->run_cell[run_idx] = key;
	for (size_t i = 0; i < r->ncells; i++)
		if (!strcmp(r->cells[i].key, key)) {
			free(rest);
			free(vtitle);
			return &r->cells[i];
		}
	r->cells = xrealloc(r->cells, (r->ncells + 1) * sizeof(*r->cells));
	struct rep_cell *cell = &r->cells[r->ncells++];
	memset(cell, 0, sizeof(*cell));
	cell->key = xstrdup(key);
	cell->cell = xstrdup(rest);
	cell->title = cell_title(r, run, rest, vtitle);
	free(vtitle);
	cell->groups = xcalloc(r->ngroups ? r->ngroups : 1, sizeof(*cell->groups));
	for (size_t i = 0; i < r->ngroups; i++) {
		if (r->two_d) {
			cell->groups[i].label = r->labels2d[i];
			cell->groups[i].value = r->values2d[i];
			cell->groups[i].say = r->values2d[i];
			continue;
		}
		cell->groups[i].label = r->axis.labels[i];
		cell->groups[i].value = r->axis.values[i];
		cell->groups[i].say = axis_say(&r->axis, i);
		if (variant_axis)
			for (size_t j = 0; j < r->d.nvariants; j++)
				if (!strcmp(r->d.variants[j].name, r->axis.labels[i]))
					cell->groups[i].v = &r->d.variants[j];
	}
	free(rest);
	return cell;
}

/* failed, timed-out and interrupted runs carry no value */
static bool run_usable(const struct db_report_run *run)
{
	return !strcmp(run->status, "ok") || !strcmp(run->status, "incomplete");
}

/* The index of host in strata (added when new). */
static size_t stratum_of(struct rep_group *g, const char *host)
{
	size_t h;
	for (h = 0; h < g->nstrata && strcmp(g->strata[h].host, host); h++)
		;
	if (h == g->nstrata) {
		g->strata = xrealloc(g->strata, (h + 1) * sizeof(*g->strata));
		g->strata[h] = (struct rep_stratum){ host, 0, 0 };
		g->nstrata++;
	}
	return h;
}

/* When the two groups' runs span more than one lab host, the headline p
 * is van Elteren's test stratified by host (stats_van_elteren): host
 * differences then cannot pass for, or hide, a difference between the
 * groups. Not on the host axis itself (--by host), where the hosts are
 * what is compared. */
static void stratify_by_host(struct rep_group *g, const struct rep_group *base, bool host_axis)
{
	size_t *sx = xmalloc(base->nvalues * sizeof(*sx)), *sy = xmalloc(g->nvalues * sizeof(*sy));

	for (size_t i = 0; i < base->nvalues; i++) {
		sx[i] = stratum_of(g, base->hosts[i]);
		g->strata[sx[i]].n++;
	}
	for (size_t j = 0; j < g->nvalues; j++) {
		sy[j] = stratum_of(g, g->hosts[j]);
		g->strata[sy[j]].m++;
	}
	if (!host_axis && g->nstrata > 1 &&
	    !stats_van_elteren(&g->ve, base->values, sx, base->nvalues, g->values, sy,
			       g->nvalues, g->nstrata)) {
		g->stratified = true;
		g->mwu_plain_p = g->mwu.p;
		g->mwu.p = g->ve.p;
	} else if (!host_axis && g->nstrata > 1) {
		g->confounded = true;
	}
	free(sx);
	free(sy);
}

/* The comparison of one group with the baseline group: the same numbers
 * for every axis (median change, MWU p or van Elteren's across lab hosts,
 * Hodges-Lehmann shift and CI). */
static void compare_groups(struct rep_group *g, const struct rep_group *base, bool host_axis)
{
	g->has_cmp = true;
	g->change_pct = base->sum.median != 0 ?
		(g->sum.median - base->sum.median) / fabs(base->sum.median) * 100 : NAN;
	stats_mwu(&g->mwu, base->values, base->nvalues, g->values, g->nvalues);
	stratify_by_host(g, base, host_axis);
	g->hl = stats_hodges_lehmann(base->values, base->nvalues, g->values, g->nvalues);
	stats_hl_bootstrap_ci(&g->hl_lo, &g->hl_hi, base->values, base->nvalues,
			      g->values, g->nvalues, REPORT_BOOTSTRAP, 0.05, STATS_SEED);
}

static void group_add(struct rep_cell *cell, struct rep_group *g, const struct db_report_run *run)
{
	g->runs = xrealloc(g->runs, (g->nruns + 1) * sizeof(*g->runs));
	g->runs[g->nruns++].run = run;
	if (g->nruns > cell->max_runs)
		cell->max_runs = g->nruns;
	if (run->has_value && run_usable(run)) {
		g->values = xrealloc(g->values, (g->nvalues + 1) * sizeof(double));
		g->hosts = xrealloc(g->hosts, (g->nvalues + 1) * sizeof(*g->hosts));
		g->hosts[g->nvalues] = run->lab_host ? run->lab_host : REPORT_DEFAULT_HOST;
		g->values[g->nvalues++] = run->value;
	}
}

static void compute_interactions(const struct report *r, struct rep_cell *cell)
{
	size_t nb = r->axis2.n;

	cell->inter = xcalloc(r->ngroups ? r->ngroups : 1, sizeof(*cell->inter));
	for (size_t i = 1; i < r->axis.n; i++)
		for (size_t j = 1; j < nb; j++) {
			const struct rep_group *g[4] = {
				&cell->groups[0], &cell->groups[i * nb],
				&cell->groups[j], &cell->groups[i * nb + j] };
			struct rep_inter *x = &cell->inter[i * nb + j];
			const double *v[4];
			size_t n[4];
			double t;
			bool all = true;
			for (int k = 0; k < 4; k++) {
				v[k] = g[k]->values;
				n[k] = g[k]->nvalues;
				all &= n[k] > 0;
			}
			if (!all)
				continue;
			x->has = true;
			x->eff0 = g[1]->sum.median - g[0]->sum.median;
			x->eff1 = g[3]->sum.median - g[2]->sum.median;
			x->dod = x->eff1 - x->eff0;
			x->tested = !stats_interaction_perm(&x->p, &t, v, n, REPORT_PERMUTATIONS,
							    STATS_SEED);
		}
}

/* With one part of the variant as the axis (--by patches), the base
 * kernel (no series revision) is the baseline of every revision: its runs
 * join each cell of the other part with the same settings instead of a
 * cell of their own ("revision v6: patches none (the base), 1, 1-2"). */
static bool base_everywhere(const struct report *r, const struct db_report_run *run)
{
	const struct db_report_variant *v = variant_of(r, run);
	return !r->two_d && report_axis_is_of_variant(r->axis.name) && v &&
	       strncmp(v->name, "+ ", 2);
}

/* Add a base run to every cell of its settings; false when there is none. */
static bool join_every_cell(struct report *r, size_t i)
{
	const char *axes[] = { r->axis.name };
	char *rest = report_axis_rest(&r->d.runs[i], axes, 1);
	bool joined = false;

	for (size_t c = 0; c < r->ncells; c++)
		if (!strcmp(r->cells[c].cell, rest) && r->axis.of_run[i] < r->axis.n) {
			group_add(&r->cells[c], &r->cells[c].groups[r->axis.of_run[i]], &r->d.runs[i]);
			joined = true;
		}
	if (joined)
		r->run_cell[i] = rest;
	else
		free(rest);
	return joined;
}

static void assign_run(struct report *r, size_t i)
{
	const struct db_report_run *run = &r->d.runs[i];
	struct rep_cell *cell = cell_get(r, i);
	size_t a = r->axis.of_run[i], b = r->two_d ? r->axis2.of_run[i] : 0;

	if (a < r->axis.n && (!r->two_d || b < r->axis2.n))
		group_add(cell, &cell->groups[r->two_d ? a * r->axis2.n + b : a], run);
}

static void compute(struct report *r)
{
	r->run_cell = xcalloc(r->d.nruns ? r->d.nruns : 1, sizeof(*r->run_cell));
	for (size_t i = 0; i < r->d.nruns; i++) {
		const struct db_report_run *run = &r->d.runs[i];
		if (run->accel && !strcmp(run->accel, "tcg"))
			r->any_tcg = true;
		if (run->rootfs && !strcmp(run->rootfs, REPORT_ROOTFS_HOST) && run->rootfs_hash) {
			if (r->hostfs_hash && strcmp(r->hostfs_hash, run->rootfs_hash))
				r->hostfs_mixed = true;
			else
				r->hostfs_hash = run->rootfs_hash;
		}
		if (!base_everywhere(r, run))
			assign_run(r, i);
	}
	for (size_t i = 0; i < r->d.nruns; i++)
		if (base_everywhere(r, &r->d.runs[i]) && !join_every_cell(r, i))
			assign_run(r, i);
	for (size_t c = 0; c < r->ncells; c++) {
		struct rep_cell *cell = &r->cells[c];
		struct rep_group *base = r->ngroups ? &cell->groups[0] : NULL;
		for (size_t j = 0; j < r->ngroups; j++) {
			struct rep_group *g = &cell->groups[j];
			stats_summarize(&g->sum, g->values, g->nvalues);
			if (r->has_threshold)
				g->k_worse = stats_count_worse(g->values, g->nvalues,
							       r->threshold, r->better);
			if (j == 0 || !base->nvalues || !g->nvalues)
				continue;
			compare_groups(g, base, !strcmp(r->axis.name, "host") ||
				       (r->two_d && !strcmp(r->axis2.name, "host")));
		}
		if (r->two_d)
			compute_interactions(r, cell);
	}
}

/* The axis asked for: opts, else the job file's `by`/`baseline`, else the
 * variants. by and baseline are new strings. */
static void axis_choice(char **by, char **baseline, const struct report_opts *opts,
			const char *spec_json)
{
	json_t *spec = spec_json ? json_loads(spec_json, 0, NULL) : NULL;
	const char *sb = json_string_value(json_object_get(spec, "by"));
	const char *sl = json_string_value(json_object_get(spec, "baseline"));

	if (opts && opts->by && *opts->by) {
		*by = xstrdup(opts->by);
		*baseline = opts->baseline ? xstrdup(opts->baseline) : NULL;
	} else {
		*by = xstrdup(sb && *sb ? sb : "variant");
		*baseline = opts && opts->baseline ? xstrdup(opts->baseline) :
			    sb && *sb && sl && *sl ? xstrdup(sl) : NULL;
	}
	json_decref(spec);
}

/* One axis, or "A,B" (two); baseline is the first axis' value, or
 * "VA,VB" for both. */
static int resolve_axes(struct report *r, const char *by, const char *baseline,
			struct buf *err)
{
	const char *comma = strchr(by, ',');
	char *a = comma ? xasprintf("%.*s", (int)(comma - by), by) : xstrdup(by);
	const char *bcomma = baseline ? strchr(baseline, ',') : NULL;
	char *ba = bcomma ? xasprintf("%.*s", (int)(bcomma - baseline), baseline) :
		   baseline ? xstrdup(baseline) : NULL;
	int ret;

	if (comma && (!comma[1] || strchr(comma + 1, ',') || !strcmp(a, comma + 1))) {
		ret = err_setf(err, -EINVAL, "--by '%s': expected one axis or two different ones"
			       " (A,B)", by);
		goto out;
	}
	if ((ret = report_axis_resolve(&r->axis, &r->d, a, ba && *ba ? ba : NULL, err)))
		goto out;
	r->ngroups = r->axis.n;
	if (!comma)
		goto out;
	if ((ret = report_axis_resolve(&r->axis2, &r->d, comma + 1,
				       bcomma && bcomma[1] ? bcomma + 1 : NULL, err)))
		goto out;
	r->two_d = true;
	r->ngroups = r->axis.n * r->axis2.n;
	r->labels2d = xcalloc(r->ngroups ? r->ngroups : 1, sizeof(*r->labels2d));
	r->values2d = xcalloc(r->ngroups ? r->ngroups : 1, sizeof(*r->values2d));
	for (size_t i = 0; i < r->axis.n; i++)
		for (size_t j = 0; j < r->axis2.n; j++) {
			r->labels2d[i * r->axis2.n + j] = xasprintf("%s / %s", r->axis.labels[i],
								    r->axis2.labels[j]);
			r->values2d[i * r->axis2.n + j] = xasprintf("%s / %s", axis_say(&r->axis, i),
								    axis_say(&r->axis2, j));
		}
out:
	free(a);
	free(ba);
	return ret;
}

/* ---- repeat auto: the sequential looks ---- */

static json_t *num_or_null(double v);

/* A run that counts in its block: every stored run but one a fresh repeat
 * replaced (interrupted, or failed by its host: infra). */
static bool run_in_block(const struct db_report_run *run)
{
	return strcmp(run->status, "interrupted") && strcmp(run->status, "infra");
}

static bool run_finished(const struct db_report_run *run)
{
	return strcmp(run->status, "pending") && strcmp(run->status, "running");
}

/* Each run's block: the j-th counted run (by run order) of its variant and
 * cell is in block j, so a fresh repeat takes its interrupted run's place.
 * Returns the complete blocks: those whose every run has finished. */
static int assign_blocks(struct report *r)
{
	int nblocks = 0, incomplete = INT32_MAX;

	r->run_block = xcalloc(r->d.nruns ? r->d.nruns : 1, sizeof(*r->run_block));
	for (size_t i = 0; i < r->d.nruns; i++) {
		const struct db_report_run *a = &r->d.runs[i];
		const struct db_report_variant *v = variant_of(r, a);
		int k = 1;
		/* a variant without a kernel never runs: its runs are in no block */
		if (!run_in_block(a) || !v || strcmp(v->status, "ok"))
			continue;
		for (size_t j = 0; j < r->d.nruns; j++) {
			const struct db_report_run *b = &r->d.runs[j];
			k += b->seq < a->seq && b->variant_id == a->variant_id && run_in_block(b) &&
			     !strcmp(b->cell ? b->cell : "", a->cell ? a->cell : "");
		}
		r->run_block[i] = k;
		if (k > nblocks)
			nblocks = k;
		if (!run_finished(a) && k < incomplete)
			incomplete = k;
	}
	return incomplete <= nblocks ? incomplete - 1 : nblocks;
}

/* The values of g's runs in blocks 1..k, into v (room for g->nruns). */
static size_t values_upto(const struct report *r, const struct rep_group *g, int k, double *v)
{
	size_t n = 0;

	for (size_t i = 0; i < g->nruns; i++) {
		const struct db_report_run *run = g->runs[i].run;
		size_t idx = (size_t)(run - r->d.runs);
		if (r->run_block[idx] && r->run_block[idx] <= k && run->has_value && run_usable(run))
			v[n++] = run->value;
	}
	return n;
}

/* Whether g has a run in a block (a variant without a kernel has none). */
static bool in_blocks(const struct report *r, const struct rep_group *g)
{
	for (size_t i = 0; i < g->nruns; i++)
		if (r->run_block[(size_t)(g->runs[i].run - r->d.runs)])
			return true;
	return false;
}

/* The job's looks again, one per complete block: each comparison (every
 * group against its cell's baseline) is decided at the first look whose
 * stats_seq_decide() decides it, and stays so (a stopping time per
 * comparison keeps each one's anytime-valid guarantee); the others keep
 * their last look. The same function the executor stops on. */
static void seq_looks(struct report *r)
{
	for (int k = 1; k <= r->seq.blocks; k++)
		for (size_t c = 0; c < r->ncells; c++) {
			struct rep_cell *cell = &r->cells[c];
			const struct rep_group *base = &cell->groups[0];
			double *x = xcalloc(base->nruns + 1, sizeof(*x));
			size_t nx = values_upto(r, base, k, x);
			for (size_t j = 1; j < r->ngroups && in_blocks(r, base); j++) {
				struct rep_group *g = &cell->groups[j];
				if (!in_blocks(r, g) ||
				    (g->has_seq && g->seq.decision != STATS_SEQ_UNDECIDED))
					continue;
				double *y = xcalloc(g->nruns + 1, sizeof(*y));
				size_t ny = values_upto(r, g, k, y);
				g->has_seq = true;
				g->seq_blocks = k;
				stats_seq_decide(&g->seq, x, nx, y, ny, STATS_SEQ_G, REPORT_SEQ_ALPHA,
						 r->seq.margin_pct / 100);
				if (k < REPORT_SEQ_MIN_BLOCKS)
					g->seq.decision = STATS_SEQ_UNDECIDED;
				free(y);
			}
			free(x);
		}
	for (size_t c = 0; c < r->ncells; c++)
		for (size_t j = 1; j < r->ngroups; j++) {
			const struct rep_group *g = &r->cells[c].groups[j];
			r->seq.ncmp += g->has_seq;
			r->seq.ndecided += g->has_seq && g->seq.decision != STATS_SEQ_UNDECIDED;
		}
}

/* repeat = "auto:MAX" in the stored spec: replay the looks. Only for the
 * job's own metric and axis, the ones its looks used. */
static void seq_replay(struct report *r, const struct report_opts *opts, const char *by)
{
	json_t *spec = r->d.spec_json ? json_loads(r->d.spec_json, 0, NULL) : NULL;
	const char *rep = json_string_value(json_object_get(spec, "repeat"));
	const char *margin = json_string_value(json_object_get(spec, "margin"));
	const char *sb = json_string_value(json_object_get(spec, "by"));

	if (rep && !strncmp(rep, "auto:", 5)) {
		r->seq.on = true;
		r->seq.max_blocks = atoi(rep + 5);
		r->seq.margin_pct = margin ? strtod(margin, NULL) : 5;
		r->seq.own = (!opts || !opts->metric || !strcmp(opts->metric, r->d.job_metric ?
			      r->d.job_metric : "")) && !strcmp(by, sb && *sb ? sb : "variant");
		r->seq.blocks = assign_blocks(r);
		if (r->seq.own)
			seq_looks(r);
	}
	json_decref(spec);
}

void report_seq_state(const struct report *r, struct report_seq_state *out)
{
	memset(out, 0, sizeof(*out));
	out->sequential = r->seq.on;
	out->max_blocks = r->seq.max_blocks;
	out->blocks = r->seq.blocks;
	out->ncomparisons = r->seq.ncmp;
	out->ndecided = r->seq.ndecided;
	out->done = r->seq.on && (out->ndecided == out->ncomparisons || out->blocks >= out->max_blocks);
}

/* An e-value as the stop line says it: 3 digits below 1000, else "1.8e3". */
static void fmt_evalue(char *out, size_t size, double e)
{
	int x;

	if (!isfinite(e) || e < 1000) {
		snprintf(out, size, "%.3g", e);
		return;
	}
	x = (int)floor(log10(e));
	if (round(e / pow(10, x) * 10) >= 100)   /* 9.96e3 rounds to 10.0e3 */
		x++;
	snprintf(out, size, "%.1fe%d", e / pow(10, x), x);
}

/* "stop: difference after 3 blocks (e=1.8e3 >= 20)" and the others. */
static void fmt_seq_stop(char *out, size_t size, const struct report *r, const struct rep_group *g)
{
	const struct stats_seq_look *l = &g->seq;
	int k = g->seq_blocks;
	const char *bl = k == 1 ? "block" : "blocks";

	char e[32];

	fmt_evalue(e, sizeof(e), l->evalue);
	if (l->decision == STATS_SEQ_DIFFERENT)
		snprintf(out, size, "stop: difference after %d %s (e=%s >= %g)", k, bl, e, l->threshold);
	else if (l->decision == STATS_SEQ_EQUIVALENT)
		snprintf(out, size, "stop: no difference within ±%g%% after %d %s", r->seq.margin_pct,
			 k, bl);
	else if (r->seq.blocks >= r->seq.max_blocks)
		snprintf(out, size, "stop: cap of %d blocks reached, undecided", r->seq.max_blocks);
	else
		snprintf(out, size, "undecided after %d of at most %d blocks", k, r->seq.max_blocks);
}

/* The text report's sequential lines of one cell: why each comparison
 * stopped, and the anytime-valid interval of its shift when bounded. */
static void text_seq(struct buf *b, const struct report *r, const struct rep_cell *cell,
		     bool markdown)
{
	char stop[160];

	for (size_t j = 1; j < r->ngroups; j++) {
		const struct rep_group *g = &cell->groups[j];
		if (!g->has_seq)
			continue;
		fmt_seq_stop(stop, sizeof(stop), r, g);
		/* 80 columns when it fits, as the shift lines */
		if (markdown || strlen(g->say) + strlen(cell->groups[0].say) + strlen(stop) + 6 <= 80)
			buf_printf(b, "%s vs %s: %s\n", g->say, cell->groups[0].say, stop);
		else
			buf_printf(b, "%s vs %s:\n      %s\n", g->say, cell->groups[0].say, stop);
		if (isfinite(g->seq.lo_pct) && isfinite(g->seq.hi_pct))
			buf_printf(b, "  anytime-valid 95%% CI of the median shift: %+.1f%% to %+.1f%%\n",
				   g->seq.lo_pct, g->seq.hi_pct);
		if (markdown)
			buf_puts(b, "\n");
	}
}

/* Whether every comparison of cell that has a sequential look was decided
 * (a difference or equivalence): its answer is the stop line, not the
 * fixed-sample p. False when none has a look. */
static bool cell_seq_decided(const struct report *r, const struct rep_cell *cell)
{
	size_t nseq = 0;

	for (size_t j = 1; j < r->ngroups; j++) {
		const struct rep_group *g = &cell->groups[j];
		if (!g->has_seq)
			continue;
		if (g->seq.decision == STATS_SEQ_UNDECIDED)
			return false;
		nseq++;
	}
	return nseq > 0;
}

/* The report's "sequential" object: null for a job of fixed repeats. */
static json_t *json_seq(const struct report *r)
{
	json_t *cmp = json_array(), *o;
	char stop[160];

	if (!r->seq.on) {
		json_decref(cmp);
		return json_null();
	}
	for (size_t c = 0; c < r->ncells; c++)
		for (size_t j = 1; j < r->ngroups; j++) {
			const struct rep_group *g = &r->cells[c].groups[j];
			const struct stats_seq_look *l = &g->seq;
			if (!g->has_seq)
				continue;
			fmt_seq_stop(stop, sizeof(stop), r, g);
			json_array_append_new(cmp, json_pack("{s:s,s:s,s:s,s:s,s:i,s:f,s:f,s:[o,o],s:s}",
				"cell", r->cells[c].cell, "value", g->value,
				"baseline", r->cells[c].groups[0].value,
				"decision", l->decision == STATS_SEQ_DIFFERENT ? "difference" :
					    l->decision == STATS_SEQ_EQUIVALENT ? "equivalent" :
					    r->seq.blocks >= r->seq.max_blocks ? "cap" : "undecided",
				"blocks", g->seq_blocks, "evalue", l->evalue, "threshold", l->threshold,
				"ci_pct", num_or_null(l->lo_pct), num_or_null(l->hi_pct), "text", stop));
		}
	o = json_pack("{s:i,s:f,s:f,s:i,s:b,s:o}", "max_blocks", r->seq.max_blocks,
		      "margin_pct", r->seq.margin_pct, "alpha", REPORT_SEQ_ALPHA,
		      "blocks", r->seq.blocks, "own_metric_and_axis", r->seq.own, "comparisons", cmp);
	return o;
}

int report_build(struct report **out, struct db *db, int64_t job_id,
		 const struct report_opts *opts, struct buf *err)
{
	struct report *r = xcalloc(1, sizeof(*r));
	char *by = NULL, *baseline = NULL;
	int ret;

	if ((ret = db_report_load(db, job_id, opts ? opts->metric : NULL, &r->d, err))) {
		free(r);
		return ret;
	}
	{
		struct db_overhead *ov = NULL;
		size_t nov = 0;

		if ((ret = db_job_overheads(db, &ov, &nov, job_id, true, err))) {
			report_free(r);
			return ret;
		}
		overhead_summarize(&r->ov, ov, nov);
		free(ov);
	}
	r->metric = r->d.job_metric;
	r->unit = r->d.unit ? r->d.unit : ends_with(r->metric, "_s") ? "s" : NULL;
	r->better = r->d.better && !strcmp(r->d.better, "higher") ? BETTER_HIGHER : BETTER_LOWER;
	if (opts && opts->has_threshold) {
		r->has_threshold = true;
		r->threshold = opts->threshold;
	} else if (r->unit && !strcmp(r->unit, "s") && r->better == BETTER_LOWER) {
		r->has_threshold = true;   /* a lag over 5s is a stall */
		r->threshold = 5;
	}
	axis_choice(&by, &baseline, opts, r->d.spec_json);
	if ((ret = resolve_axes(r, by, baseline, err))) {
		report_free(r);
		goto out;
	}
	compute(r);
	seq_replay(r, opts, by);
	*out = r;
out:
	free(by);
	free(baseline);
	return ret;
}

void report_free(struct report *r)
{
	if (!r)
		return;
	for (size_t c = 0; c < r->ncells; c++) {
		for (size_t j = 0; j < r->ngroups; j++) {
			free(r->cells[c].groups[j].runs);
			free(r->cells[c].groups[j].values);
			free(r->cells[c].groups[j].hosts);
			free(r->cells[c].groups[j].strata);
		}
		free(r->cells[c].groups);
		free(r->cells[c].inter);
		free(r->cells[c].cell);
		free(r->cells[c].key);
		free(r->cells[c].title);
	}
	for (size_t i = 0; r->run_cell && i < r->d.nruns; i++)
		free(r->run_cell[i]);
	free(r->run_cell);
	free(r->run_block);
	free(r->cells);
	for (size_t i = 0; r->labels2d && i < r->ngroups; i++) {
		free(r->labels2d[i]);
		free(r->values2d[i]);
	}
	free(r->labels2d);
	free(r->values2d);
	report_axis_release(&r->axis);
	report_axis_release(&r->axis2);
	db_report_release(&r->d);
	free(r);
}

size_t report_nvalues(const struct report *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->d.nruns; i++)
		n += r->d.runs[i].has_value;
	return n;
}

int report_format_parse(enum report_format *out, const char *name)
{
	static const char *const names[] = { "text", "markdown", "csv", "json" };
	for (int i = 0; i < 4; i++) {
		if (!strcmp(name, names[i])) {
			*out = (enum report_format)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* A run's cell in the table: its value, "12.3s*" when derived from an
 * incomplete run, or its status when it has no value. */
static void fmt_run(char *out, size_t size, const struct report *r,
		    const struct db_report_run *run)
{
	bool usable = !strcmp(run->status, "ok") || !strcmp(run->status, "incomplete");
	if (run->has_value && usable) {
		fmt_value(out, size - 1, run->value, r->unit);
		if (run->derived || strcmp(run->status, "ok"))
			strcat(out, "*");
	} else if (!strcmp(run->status, "interrupted")) {
		snprintf(out, size, "intr.");   /* footnoted below the table */
	} else if (!strcmp(run->status, "kernel-panic")) {
		snprintf(out, size, "panic");
	} else {
		snprintf(out, size, "%s", run->status);
	}
}

static void fmt_change(char *out, size_t size, const struct rep_group *rv)
{
	char p[16];
	if (!rv->has_cmp) {
		out[0] = '\0';
		return;
	}
	const char *test = rv->stratified ? "van Elteren" : "MWU";
	fmt_p(p, sizeof(p), rv->mwu.p);
	if (isnan(rv->change_pct))
		snprintf(out, size, "(%s, %s)", p, test);
	else
		snprintf(out, size, "%+.1f%% (%s, %s)", rv->change_pct, p, test);
}

/* A variant whose kernel never came (apply or build failed). */
static bool variant_failed(const struct rep_group *g)
{
	return g->v && strcmp(g->v->status, "ok") && strcmp(g->v->status, "pending");
}

/* Rows of a cell: every variant on the variant axis (a failed one says
 * why); on another axis the values the cell has runs of. */
static bool group_shown(const struct rep_group *g)
{
	return g->v || g->nruns;
}

/* Append line and a newline, wrapped at 80 columns after ", " with a
 * six-space indent (no wrapping in markdown, where the viewer wraps). */
static void append_wrapped(struct buf *b, const char *line, bool markdown)
{
	size_t col = 0, width = 80;
	const char *p = line;

	if (markdown || strlen(line) <= width) {
		buf_printf(b, "%s\n", line);
		return;
	}
	while (*p) {
		const char *next = strstr(p, ", ");
		size_t piece = next ? (size_t)(next - p) + 1 : strlen(p);
		if (col && col + piece + 1 > width) {
			buf_puts(b, "\n      ");
			col = 6;
			if (*p == ' ') {
				p++;
				piece--;
			}
		}
		buf_append(b, p, piece);
		col += piece;
		p += piece;
	}
	buf_puts(b, "\n");
}

static size_t base_n(const struct rep_cell *cell)
{
	return cell->groups[0].nvalues;
}

/* Smallest per-group n compared against the baseline in a cell. */
static void min_pair(const struct rep_cell *cell, size_t ngroups, size_t *nx, size_t *ny)
{
	*nx = cell->groups[0].nvalues;
	*ny = 0;
	for (size_t j = 1; j < ngroups; j++)
		if (cell->groups[j].has_cmp &&
		    (!*ny || stats_mwu_min_p(*nx, cell->groups[j].nvalues) >
			     stats_mwu_min_p(*nx, *ny)))
			*ny = cell->groups[j].nvalues;
}

/* Return-value histograms name their keys by errno ("-2" -> "-ENOENT"). */
static void probe_key(char *out, size_t size, const char *name, const char *key)
{
	char *end;
	long v = strtol(key, &end, 10);
	const char *en = NULL;

	if (!strcmp(name, "cgroup_writeback_by_id") && *key && !*end && v < 0 && v > -4096)
		en = strerrorname_np((int)-v);
	if (en)
		snprintf(out, size, "-%s", en);
	else if (!strcmp(name, "cgroup_writeback_by_id") && !strcmp(key, "0"))
		snprintf(out, size, "0 (wb found)");   /* the flush found its wb */
	else
		snprintf(out, size, "%s", key);
}

/* 41211 -> "41,211", as cover letters write counts. */
static void fmt_count(char *out, size_t size, long long n)
{
	char digits[32];
	int len = snprintf(digits, sizeof(digits), "%lld", n < 0 ? -n : n);
	size_t o = 0;

	if (n < 0 && o + 1 < size)
		out[o++] = '-';
	for (int i = 0; i < len && o + 2 < size; i++) {
		if (i && (len - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = digits[i];
	}
	out[o] = '\0';
}

/* The first of run_id's rows in d.run_probes (sorted by run id), or
 * nrun_probes when it has none. */
static size_t run_probes_first(const struct report *r, int64_t run_id)
{
	size_t lo = 0, hi = r->d.nrun_probes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->d.run_probes[mid].run_id < run_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A run's final count of probe (name, key): 1 and *count when stored; 0
 * (count 0) when the run counted that probe but never saw the key; -1
 * when the run has no count of that probe at all (no evidence). */
static int run_probe(const struct report *r, int64_t run_id, const char *name,
		     const char *key, int64_t *count)
{
	int seen = -1;
	*count = 0;
	for (size_t i = run_probes_first(r, run_id);
	     i < r->d.nrun_probes && r->d.run_probes[i].run_id == run_id; i++) {
		const struct db_report_run_probe *p = &r->d.run_probes[i];
		if (strcmp(p->name, name))
			continue;
		seen = 0;
		if (!strcmp(p->key, key)) {
			*count = p->count;
			return 1;
		}
	}
	return seen;
}

/* The evidence lines show cgroup_writeback_by_id return values (a foreign
 * flush that missed a dying wb is -ENOENT) and balance_dirty_pages pauses;
 * every probe is in the JSON. */
static bool probe_shown(const struct db_report_run_probe *p)
{
	return !strcmp(p->name, "cgroup_writeback_by_id") ||
	       (!strcmp(p->name, "balance_dirty_pages") && !strcmp(p->key, "pauses"));
}

static int cmp_probe_key(const void *a, const void *b)
{
	const struct db_report_run_probe *x = *(const struct db_report_run_probe *const *)a;
	const struct db_report_run_probe *y = *(const struct db_report_run_probe *const *)b;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->key, y->key);
}

/* The distinct shown (name, key) pairs of a cell's usable runs, sorted;
 * has[g] tells whether group g's runs counted any probe. */
static size_t cell_probe_keys(const struct report *r, const struct rep_cell *cell,
			      const struct db_report_run_probe ***out, bool *has)
{
	const struct db_report_run_probe **keys = NULL;
	size_t n = 0;

	for (size_t g = 0; g < r->ngroups; g++)
		for (size_t i = 0; i < cell->groups[g].nruns; i++) {
			const struct db_report_run *run = cell->groups[g].runs[i].run;
			for (size_t q = run_probes_first(r, run->id);
			     q < r->d.nrun_probes && r->d.run_probes[q].run_id == run->id; q++) {
				const struct db_report_run_probe *p = &r->d.run_probes[q];
				has[g] = true;
				if (!probe_shown(p))
					continue;
				size_t k = 0;
				while (k < n && cmp_probe_key(&keys[k], &p))
					k++;
				if (k == n) {
					keys = xrealloc(keys, (n + 1) * sizeof(*keys));
					keys[n++] = p;
				}
			}
		}
	if (n)
		qsort(keys, n, sizeof(*keys), cmp_probe_key);
	*out = keys;
	return n;
}

/* One probe key's three lines: the totals per value, every run's count
 * in the table's run order ("-": the run counted no such probe), and in
 * how many runs of each value it was seen at all: "-ENOENT in 4 of 4
 * removed runs, 0 of 4 alive runs", the sentence a reviewer checks first. */
static void probe_key_lines(struct buf *b, const struct report *r, const struct rep_cell *cell,
			    const struct db_report_run_probe *pk, const bool *has, bool markdown)
{
	struct buf tot = BUF_INIT, per = BUF_INIT, kofn = BUF_INIT;
	char k[64], cnt[40];
	bool first = true;

	probe_key(k, sizeof(k), pk->name, pk->key);
	buf_printf(&tot, "%s %s:", pk->name, k);
	buf_puts(&per, "  per run:");
	buf_printf(&kofn, "  %s in", k);
	for (size_t g = 0; g < r->ngroups; g++) {
		const struct rep_group *grp = &cell->groups[g];
		long long total = 0;
		size_t seen = 0, n = 0;
		if (!has[g])
			continue;
		buf_printf(&per, "%s %s", first ? "" : ",", grp->say);
		for (size_t i = 0; i < grp->nruns; i++) {
			const struct db_report_run *run = grp->runs[i].run;
			int64_t c;
			int got = run_usable(run) ? run_probe(r, run->id, pk->name, pk->key, &c) : -1;
			if (got < 0) {
				buf_puts(&per, " -");
				continue;
			}
			total += c;
			n++;
			seen += c > 0;
			fmt_count(cnt, sizeof(cnt), c);
			buf_printf(&per, " %s", cnt);
		}
		fmt_count(cnt, sizeof(cnt), total);
		buf_printf(&tot, "%s %s %s", first ? "" : ",", grp->say, cnt);
		buf_printf(&kofn, "%s %zu of %zu %s run%s", first ? "" : ",", seen, n,
			   grp->say, n == 1 ? "" : "s");
		first = false;
	}
	append_wrapped(b, buf_str(&tot), markdown);
	if (markdown)
		buf_puts(b, "\n");
	append_wrapped(b, buf_str(&per), markdown);
	if (markdown)
		buf_puts(b, "\n");
	append_wrapped(b, buf_str(&kofn), markdown);
	if (markdown)
		buf_puts(b, "\n");
	buf_release(&tot);
	buf_release(&per);
	buf_release(&kofn);
}

static void probe_lines(struct buf *b, const struct report *r, const struct rep_cell *cell,
			bool markdown)
{
	bool *has = xcalloc(r->ngroups + 1, sizeof(*has));
	const struct db_report_run_probe **keys = NULL;
	size_t nkeys = cell_probe_keys(r, cell, &keys, has);

	if (nkeys)
		buf_puts(b, "\n");
	for (size_t i = 0; i < nkeys; i++)
		probe_key_lines(b, r, cell, keys[i], has, markdown);
	free(keys);
	free(has);
}

/* reason: one cell's table, text and markdown side by side; every row uses the column
 * widths computed at its top. */
/* "p: van Elteren, stratified by lab host (kvm1: 4+4 runs, local: 4+4)":
 * one line per stratified comparison, naming the group when the cell has
 * several; the counts are baseline+compared runs with a value. */
static void strata_lines(struct buf *b, const struct rep_cell *cell, size_t ngroups,
			 bool markdown)
{
	size_t compared = 0;

	for (size_t j = 1; j < ngroups; j++)
		compared += cell->groups[j].has_cmp;
	for (size_t j = 1; j < ngroups; j++) {
		const struct rep_group *g = &cell->groups[j];
		struct buf line = BUF_INIT;
		if (!g->stratified && !g->confounded)
			continue;
		if (compared > 1)
			buf_printf(&line, "p of %s: ", g->say);
		else
			buf_puts(&line, "p: ");
		buf_puts(&line, g->stratified ? "van Elteren, stratified by lab host (" :
			 "Mann-Whitney, pooled: no lab host ran both sides, host and change are"
			 " confounded (");
		for (size_t h = 0; h < g->nstrata; h++)
			buf_printf(&line, "%s%s: %zu+%zu%s", h ? ", " : "", g->strata[h].host,
				   g->strata[h].n, g->strata[h].m, h ? "" : " runs");
		buf_puts(&line, ")");
		append_wrapped(b, buf_str(&line), markdown);
		buf_release(&line);
		if (markdown)
			buf_puts(b, "\n");
	}
}

static void text_cell(struct buf *b, const struct report *r, const struct rep_cell *cell,
		      bool markdown)
{
	size_t nvar = r->axis.n, label_w = 8, run_w = 7, med_w = 8;
	char v[64], ch[64];

	for (size_t j = 0; j < nvar; j++) {
		const struct rep_group *g = &cell->groups[j];
		if (!group_shown(g))
			continue;
		if (strlen(g->label) > label_w)
			label_w = strlen(g->label);
		if (variant_failed(g))
			continue;
		/* the columns widen for longer values ("118MiB/s", "22.4k ops/s") */
		for (size_t i = 0; i < g->nruns; i++) {
			fmt_run(v, sizeof(v), r, g->runs[i].run);
			if (strlen(v) > run_w)
				run_w = strlen(v);
		}
		fmt_value(v, sizeof(v), g->sum.median, r->unit);
		if (strlen(v) > med_w)
			med_w = strlen(v);
	}
	if (markdown) {
		buf_printf(b, "**%s**\n\n| %s |", cell->title, r->axis.name);
		for (size_t i = 0; i < cell->max_runs; i++)
			buf_printf(b, " run %zu |", i + 1);
		buf_puts(b, " median | change |\n|---|");
		for (size_t i = 0; i < cell->max_runs; i++)
			buf_puts(b, "--:|");
		buf_puts(b, "--:|---|\n");
	} else {
		buf_printf(b, "%s:\n\n  %-*s", cell->title, (int)label_w + 2, "");
		for (size_t i = 0; i < cell->max_runs; i++) {
			snprintf(v, sizeof(v), "run %zu", i + 1);
			buf_printf(b, " %*s", (int)run_w, v);
		}
		buf_printf(b, " %*s\n", (int)med_w, "median");
	}
	for (size_t j = 0; j < nvar; j++) {
		const struct rep_group *rv = &cell->groups[j];
		if (!group_shown(rv))
			continue;
		if (markdown)
			buf_printf(b, "| %s |", rv->label);
		else
			buf_printf(b, "  %-*s", (int)label_w + 2, rv->label);
		if (variant_failed(rv)) {   /* its runs never started: say why instead */
			if (markdown) {
				buf_printf(b, " %s |", rv->v->status);
				for (size_t i = 1; i < cell->max_runs + 2; i++)
					buf_puts(b, " |");
				buf_puts(b, "\n");
			} else {
				buf_printf(b, "%s\n", rv->v->status);
			}
			continue;
		}
		for (size_t i = 0; i < cell->max_runs; i++) {
			if (i < rv->nruns)
				fmt_run(v, sizeof(v), r, rv->runs[i].run);
			else
				v[0] = '\0';
			if (markdown)
				buf_printf(b, " %s |", v);
			else
				buf_printf(b, " %*s", (int)run_w, v);
		}
		fmt_value(v, sizeof(v), rv->sum.median, r->unit);
		fmt_change(ch, sizeof(ch), rv);
		if (markdown)
			buf_printf(b, " %s | %s |\n", v, ch);
		else if (*ch)
			buf_printf(b, " %*s   %s\n", (int)med_w, v, ch);
		else
			buf_printf(b, " %*s\n", (int)med_w, v);
	}
	buf_puts(b, "\n");
	bool any_values = false;
	for (size_t j = 0; j < nvar; j++)
		any_values |= cell->groups[j].nvalues > 0;
	if (r->has_threshold && any_values) {
		char t[48], sn[128];
		snprintf(t, sizeof(t), "%g%s", r->threshold,
			 r->unit && !strcmp(r->unit, "s") ? "s" : "");
		struct buf line = BUF_INIT;
		buf_printf(&line, "%s (%s %s %s):", r->better == BETTER_LOWER ? "stalled" : "below",
			   metric_short(r->metric), r->better == BETTER_LOWER ? ">" : "<", t);
		for (size_t j = 0, first = 1; j < nvar; j++) {
			const struct rep_group *rv = &cell->groups[j];
			if (!rv->nvalues)
				continue;
			snprintf(sn, sizeof(sn), "%s", rv->say);
			buf_printf(&line, "%s %s %zu of %zu", first ? "" : ",", sn, rv->k_worse,
				   rv->nvalues);
			first = 0;
		}
		append_wrapped(b, buf_str(&line), markdown);
		buf_release(&line);
		if (markdown)
			buf_puts(b, "\n");
	}
	/* the effect with its uncertainty, one line per compared variant */
	for (size_t j = 1; j < nvar; j++) {
		const struct rep_group *rv = &cell->groups[j];
		char a[32], lo[32], hi[32], sn[128];
		if (!rv->has_cmp)
			continue;
		snprintf(sn, sizeof(sn), "%s", rv->say);
		fmt_value(a, sizeof(a), rv->hl, r->unit);
		fmt_value(lo, sizeof(lo), rv->hl_lo, r->unit);
		fmt_value(hi, sizeof(hi), rv->hl_hi, r->unit);
		char bn[128];
		snprintf(bn, sizeof(bn), "%s", cell->groups[0].say);
		char head[256], tail[256];
		bool ci = base_n(cell) >= 3 && rv->nvalues >= 3;
		/* a percentile bootstrap interval means little with fewer runs */
		snprintf(head, sizeof(head), "shift vs %s (Hodges-Lehmann%s):", bn,
			 ci ? ", 95% CI" : "");
		if (ci)
			snprintf(tail, sizeof(tail), "%s %s [%s, %s]", sn, a, lo, hi);
		else
			snprintf(tail, sizeof(tail), "%s %s (no CI with fewer than 3 runs a side)", sn, a);
		if (markdown || strlen(head) + 1 + strlen(tail) <= 80)
			buf_printf(b, "%s %s\n", head, tail);
		else
			buf_printf(b, "%s\n      %s\n", head, tail);
		if (markdown)
			buf_puts(b, "\n");
	}
	strata_lines(b, cell, nvar, markdown);
	text_seq(b, r, cell, markdown);
	size_t nx, ny;
	if (nvar > 1 && cell->groups[0].nvalues) {
		min_pair(cell, nvar, &nx, &ny);
		if (ny && stats_mwu_min_p(nx, ny) >= 0.05 && cell_seq_decided(r, cell)) {
			/* decided: the stop line is the answer; p is only the
			 * fixed-sample test beside it */
			buf_printf(b, "note: decided by the anytime-valid test (the stop line); the"
				   " fixed-sample p\n      (Mann-Whitney U) is %.2f at best with %zu"
				   " against %zu.\n%s", stats_mwu_min_p(nx, ny), nx, ny,
				   markdown ? "\n" : "");
		} else if (ny && stats_mwu_min_p(nx, ny) >= 0.05) {
			size_t need = stats_runs_needed(0.05);
			buf_printf(b, "note: %zu run%s against %zu cannot reach p < 0.05 (two-sided"
				   " Mann-Whitney U;\n      without ties the smallest possible p is %.2f);"
				   " %zu against %zu can.\n%s", nx, nx == 1 ? "" : "s", ny,
				   stats_mwu_min_p(nx, ny), need, need, markdown ? "\n" : "");
		}
	}
	bool any_star = false;
	for (size_t j = 0; j < nvar; j++)
		for (size_t i = 0; i < cell->groups[j].nruns; i++) {
			const struct db_report_run *run = cell->groups[j].runs[i].run;
			bool usable = !strcmp(run->status, "ok") || !strcmp(run->status, "incomplete");
			if (usable && run->has_value && (run->derived || !strcmp(run->status, "incomplete")))
				any_star = true;
		}
	if (any_star)
		buf_printf(b, "* incomplete run: value from the samples it stored\n%s",
			   markdown ? "\n" : "");
	bool any_intr = false;
	for (size_t j = 0; j < nvar; j++)
		for (size_t i = 0; i < cell->groups[j].nruns; i++)
			any_intr |= !strcmp(cell->groups[j].runs[i].run->status, "interrupted");
	if (any_intr)
		buf_printf(b, "intr.: the coordinator stopped during the run; a fresh repeat"
			   " replaced it\n%s", markdown ? "\n" : "");
	probe_lines(b, r, cell, markdown);
}

/* One row of a 2-D grid: the label, then one entry per column, padded
 * (text) or between pipes (markdown). */
static void grid_row(struct buf *b, bool markdown, size_t label_w, size_t col_w,
		     const char *label, char *const *cols, size_t ncols)
{
	if (markdown)
		buf_printf(b, "| %s |", label);
	else
		buf_printf(b, "  %-*s", (int)label_w, label);
	for (size_t j = 0; j < ncols; j++)
		if (markdown)
			buf_printf(b, " %s |", cols[j]);
		else
			buf_printf(b, "  %*s", (int)col_w, cols[j]);
	buf_puts(b, "\n");
}

static void grid_head(struct buf *b, const struct report *r, bool markdown, size_t label_w,
		      size_t col_w, const char *corner)
{
	grid_row(b, markdown, label_w, col_w, corner, r->axis2.labels, r->axis2.n);
	if (markdown) {
		buf_puts(b, "|---|");
		for (size_t j = 0; j < r->axis2.n; j++)
			buf_puts(b, "--:|");
		buf_puts(b, "\n");
	}
}

/* A 2-D value of the grid: "52.1s 3/3" (median, stalled k of n) or "-". */
static void fmt_grid_value(char *out, size_t size, const struct report *r,
			   const struct rep_group *g)
{
	char v[32];
	if (!g->nvalues) {
		snprintf(out, size, "-");
		return;
	}
	fmt_value(v, sizeof(v), g->sum.median, r->unit);
	if (r->has_threshold)
		snprintf(out, size, "%s %zu/%zu", v, g->k_worse, g->nvalues);
	else
		snprintf(out, size, "%s n=%zu", v, g->nvalues);
}

/* The interaction lines of a 2-D cell, one per (a_i, b_j) with i, j > 0. */
static void interaction_lines(struct buf *b, const struct report *r, const struct rep_cell *cell,
			      bool markdown)
{
	size_t nb = r->axis2.n;
	int any = 0;
	for (size_t i = 1; i < r->axis.n; i++)
		for (size_t j = 1; j < nb; j++) {
			const struct rep_inter *x = &cell->inter[i * nb + j];
			char e0[32], e1[32], d[32], p[16];
			struct buf line = BUF_INIT;
			if (!x->has)
				continue;
			if (!any++)
				buf_puts(b, "\n");
			fmt_value(e0, sizeof(e0), x->eff0, r->unit);
			fmt_value(e1, sizeof(e1), x->eff1, r->unit);
			fmt_value(d, sizeof(d), x->dod, r->unit);
			buf_printf(&line, "interaction: %s against %s is %s%s with %s, %s%s with %s;",
				   axis_say(&r->axis, i), axis_say(&r->axis, 0), x->eff0 > 0 ? "+" : "", e0,
				   r->axis2.labels[0], x->eff1 > 0 ? "+" : "", e1, r->axis2.labels[j]);
			append_wrapped(b, buf_str(&line), markdown);
			if (x->tested) {
				fmt_p(p, sizeof(p), x->p);
				buf_printf(b, "      difference of differences %s%s (%s, permutation,"
					   " Freedman-Lane)\n", x->dod > 0 ? "+" : "", d, p);
			} else {
				buf_printf(b, "      difference of differences %s%s (not tested: too few"
					   " runs)\n", x->dod > 0 ? "+" : "", d);
			}
			if (markdown)
				buf_puts(b, "\n");
			buf_release(&line);
		}
}

/* reason: the 2-D grid is two tables (medians, changes) and the interaction,
 * each row from the same widths. --by A,B: rows are A's values, columns B's;
 * every entry is compared with the baseline entry (a_0, b_0). */
static void text_cell_2d(struct buf *b, const struct report *r, const struct rep_cell *cell,
			 bool markdown)
{
	size_t na = r->axis.n, nb = r->axis2.n, label_w = 8, col_w = 14;
	char **cols = xcalloc(nb ? nb : 1, sizeof(*cols));
	char corner[128];

	for (size_t i = 0; i < na; i++)
		if (strlen(r->axis.labels[i]) > label_w)
			label_w = strlen(r->axis.labels[i]);
	for (size_t j = 0; j < nb; j++)
		if (strlen(r->axis2.labels[j]) > col_w)
			col_w = strlen(r->axis2.labels[j]);
	for (size_t j = 0; j < nb; j++)
		cols[j] = xcalloc(1, 96);
	buf_printf(b, markdown ? "**%s**\n\n" : "%s:\n\n", cell->title);
	if (r->has_threshold)
		snprintf(corner, sizeof(corner), "median, %s > %g%s", r->better == BETTER_LOWER ?
			 "stalled" : "below", r->threshold, r->unit && !strcmp(r->unit, "s") ? "s" : "");
	else
		snprintf(corner, sizeof(corner), "median, runs");
	char corner2[128];
	snprintf(corner2, sizeof(corner2), "change vs %s", r->values2d[0]);
	if (strlen(corner) > label_w)
		label_w = strlen(corner);
	if (strlen(corner2) > label_w)
		label_w = strlen(corner2);
	grid_head(b, r, markdown, label_w, col_w, corner);
	for (size_t i = 0; i < na; i++) {
		for (size_t j = 0; j < nb; j++)
			fmt_grid_value(cols[j], 96, r, &cell->groups[i * nb + j]);
		grid_row(b, markdown, label_w, col_w, r->axis.labels[i], cols, nb);
	}
	buf_puts(b, "\n");
	grid_head(b, r, markdown, label_w, col_w, corner2);
	for (size_t i = 0; i < na; i++) {
		for (size_t j = 0; j < nb; j++) {
			const struct rep_group *g = &cell->groups[i * nb + j];
			char p[16];
			if (!i && !j) {
				snprintf(cols[j], 96, "baseline");
			} else if (!g->has_cmp) {
				snprintf(cols[j], 96, "-");
			} else {
				fmt_p(p, sizeof(p), g->mwu.p);
				if (isnan(g->change_pct))
					snprintf(cols[j], 96, "%s", p);
				else
					snprintf(cols[j], 96, "%+.1f%% %s", g->change_pct, p);
			}
		}
		grid_row(b, markdown, label_w, col_w, r->axis.labels[i], cols, nb);
	}
	buf_puts(b, markdown ? "\n(two-sided Mann-Whitney U against the baseline)\n" :
		 "  (two-sided Mann-Whitney U against the baseline)\n");
	strata_lines(b, cell, r->ngroups, markdown);
	interaction_lines(b, r, cell, markdown);
	for (size_t j = 0; j < nb; j++)
		free(cols[j]);
	free(cols);
	probe_lines(b, r, cell, markdown);
}

/* A report of a job still running (or stopped with runs left) says so
 * first, with how many runs are pending or running: its numbers will
 * change (issue #17: an unfinished job's report looked final). */
static void unfinished_note(struct buf *b, const struct report *r)
{
	const char *s = r->d.job_status ? r->d.job_status : "";
	size_t pending = 0, running = 0;

	for (size_t i = 0; i < r->d.nruns; i++) {
		if (!strcmp(r->d.runs[i].status, "pending"))
			pending++;
		else if (!strcmp(r->d.runs[i].status, "running"))
			running++;
	}
	if (!pending && !running && strcmp(s, "building") && strcmp(s, "running"))
		return;
	buf_printf(b, "job '%s' is unfinished (%s): %zu of %zu runs pending, %zu running;\n"
		   "the numbers below will change\n\n", r->d.job_name, s, pending, r->d.nruns,
		   running);
}

/* "runs on lab hosts: local 5, h2 3 (infra, not results: 1)": which hosts
 * ran the job's finished runs (lab.h), in order of first use. */
static void text_hosts(struct buf *b, const struct report *r)
{
	const char *names[64];
	int counts[64];
	size_t n = 0, infra = 0;

	for (size_t i = 0; i < r->d.nruns; i++) {
		const struct db_report_run *run = &r->d.runs[i];
		size_t k;

		if (!run->lab_host || !strcmp(run->status, "pending") ||
		    !strcmp(run->status, "running"))
			continue;
		if (!strcmp(run->status, "infra")) {
			infra++;
			continue;
		}
		for (k = 0; k < n && strcmp(names[k], run->lab_host); k++)
			;
		if (k == n && n < 64) {
			names[n] = run->lab_host;
			counts[n++] = 0;
		}
		if (k < n)
			counts[k]++;
	}
	if (!n)
		return;
	buf_puts(b, "\nruns on lab hosts:");
	for (size_t k = 0; k < n; k++)
		buf_printf(b, "%s %s %d", k ? "," : "", names[k], counts[k]);
	if (infra)
		buf_printf(b, " (%zu more failed on their host: infra, not results, run again)", infra);
	buf_puts(b, "\n");
}

static void text_report(struct buf *b, const struct report *r, bool markdown)
{
	unfinished_note(b, r);
	if (!r->ncells)
		buf_printf(b, "job '%s' has no runs yet\n", r->d.job_name);
	for (size_t c = 0; c < r->ncells; c++) {
		if (c)
			buf_puts(b, "\n");
		if (r->two_d)
			text_cell_2d(b, r, &r->cells[c], markdown);
		else
			text_cell(b, r, &r->cells[c], markdown);
	}
	bool any_failed = false;
	for (size_t j = 0; j < r->d.nvariants; j++) {
		const struct db_report_variant *v = &r->d.variants[j];
		if (strcmp(v->status, "ok") && strcmp(v->status, "pending")) {
			if (!any_failed)
				buf_puts(b, "\n");
			any_failed = true;
			buf_printf(b, "%s: %s%s%s\n", v->name, v->status, v->error ? ": " : "",
				   v->error ? v->error : "");
		}
	}
	text_hosts(b, r);
	if (r->ov.nruns) {
		buf_puts(b, "\n");
		overhead_text(b, &r->ov);
	}
	if (r->any_tcg)
		buf_puts(b, "\nguests ran under TCG (software emulation): not host performance"
			 " numbers\n");
	if (r->hostfs_hash)
		buf_printf(b, "\n" REPORT_ROOTFS_HOST_MARK ": the guests ran the coordinator host's own"
			   " userland (dpkg package list sha256 %.12s%s), not a pinned image; another"
			   " machine, or this one after an upgrade, runs other binaries\n",
			   r->hostfs_hash, r->hostfs_mixed ? ", and it changed during the job" : "");
}

static void csv_field(struct buf *b, const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		buf_puts(b, s);
		return;
	}
	buf_puts(b, "\"");
	for (; *s; s++)
		buf_printf(b, *s == '"' ? "\"\"" : "%c", *s);
	buf_puts(b, "\"");
}

static void csv_report(struct buf *b, const struct report *r)
{
	bool variant_axis = report_axis_is_variant(r->axis.name);

	buf_puts(b, "cell,variant,repeat,run_id,status,metric,value,derived");
	if (!variant_axis || r->two_d) {
		buf_puts(b, ",");
		csv_field(b, r->axis.name);
	}
	if (r->two_d) {
		buf_puts(b, ",");
		csv_field(b, r->axis2.name);
	}
	buf_puts(b, "\n");
	for (size_t c = 0; c < r->ncells; c++)
		for (size_t j = 0; j < r->ngroups; j++) {
			const struct rep_group *rv = &r->cells[c].groups[j];
			for (size_t i = 0; i < rv->nruns; i++) {
				const struct db_report_run *run = rv->runs[i].run;
				const struct db_report_variant *v = variant_of(r, run);
				csv_field(b, r->cells[c].cell);
				buf_puts(b, ",");
				csv_field(b, v ? v->name : "");
				buf_printf(b, ",%d,%lld,%s,%s,", run->repeat_idx, (long long)run->id,
					   run->status, r->metric);
				if (run->has_value)
					buf_printf(b, "%.*g", json_num_digits(run->value), run->value);
				buf_printf(b, ",%d", run->derived);
				if (r->two_d) {   /* both axes' values, bare */
					buf_puts(b, ",");
					csv_field(b, r->axis.values[j / r->axis2.n]);
					buf_puts(b, ",");
					csv_field(b, r->axis2.values[j % r->axis2.n]);
				} else if (!variant_axis) {
					buf_puts(b, ",");
					csv_field(b, rv->value);
				}
				buf_puts(b, "\n");
			}
		}
}

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* A run's final probe counts, {"name": {"key": count}}; NULL when none. */
static json_t *json_run_probes(const struct report *r, int64_t run_id)
{
	json_t *o = NULL;
	for (size_t i = run_probes_first(r, run_id);
	     i < r->d.nrun_probes && r->d.run_probes[i].run_id == run_id; i++) {
		const struct db_report_run_probe *p = &r->d.run_probes[i];
		if (!o)
			o = json_object();
		json_t *byname = json_object_get(o, p->name);
		if (!byname)
			json_object_set_new(o, p->name, byname = json_object());
		json_object_set_new(byname, p->key, json_integer((json_int_t)p->count));
	}
	return o;
}

static json_t *json_group(const struct report *r, const struct rep_cell *cell,
			  const struct rep_group *rv)
{
	json_t *runs = json_array(), *jv;

	for (size_t i = 0; i < rv->nruns; i++) {
		const struct db_report_run *run = rv->runs[i].run;
		json_t *jr = json_pack("{s:I,s:i,s:s,s:o,s:b,s:s?}",
			"run_id", (json_int_t)run->id, "repeat", run->repeat_idx,
			"status", run->status,
			"value", run->has_value ? json_real(run->value) : json_null(),
			"derived", run->derived, "accel", run->accel);
		if (run->rootfs)
			json_object_set_new(jr, "rootfs", json_string(run->rootfs));
		json_t *probes = json_run_probes(r, run->id);
		if (probes)
			json_object_set_new(jr, "probes", probes);
		json_array_append_new(runs, jr);
	}
	if (rv->v)
		jv = json_pack("{s:I,s:i,s:s,s:s,s:s?}",
			"variant_id", (json_int_t)rv->v->id, "idx", rv->v->idx,
			"name", rv->v->name, "status", rv->v->status, "error", rv->v->error);
	else
		jv = json_pack("{s:s,s:s}", "name", rv->label, "value", rv->value);
	json_object_set_new(jv, "runs", runs);
	json_object_set_new(jv, "n", json_integer((json_int_t)rv->nvalues));
	json_object_set_new(jv, "median", num_or_null(rv->sum.median));
	json_object_set_new(jv, "min", num_or_null(rv->sum.min));
	json_object_set_new(jv, "max", num_or_null(rv->sum.max));
	json_object_set_new(jv, "mean", num_or_null(rv->sum.mean));
	if (r->has_threshold)
		json_object_set_new(jv, "worse_than_threshold", json_integer((json_int_t)rv->k_worse));
	if (rv->has_cmp) {
		json_object_set_new(jv, "change_pct", num_or_null(rv->change_pct));
		json_object_set_new(jv, "p", json_real(rv->mwu.p));
		if (rv->stratified)
			json_object_set_new(jv, "p_method", json_string(
				rv->ve.method == MWU_EXACT ? "van-elteren-exact" : "van-elteren-normal"));
		else
			json_object_set_new(jv, "p_method", json_string(
				rv->mwu.method == MWU_EXACT ? "mwu-exact" : "mwu-normal"));
		if (rv->stratified) {
			json_object_set_new(jv, "stratified_by_host", json_true());
			json_t *strata = json_array();
			for (size_t h = 0; h < rv->nstrata; h++)
				json_array_append_new(strata, json_pack("{s:s,s:I,s:I}",
					"host", rv->strata[h].host,
					"n_baseline", (json_int_t)rv->strata[h].n,
					"n", (json_int_t)rv->strata[h].m));
			json_object_set_new(jv, "strata", strata);
			json_object_set_new(jv, "p_unstratified", json_real(rv->mwu_plain_p));
		} else if (rv->confounded) {
			json_object_set_new(jv, "stratified_by_host", json_false());
			json_object_set_new(jv, "hosts_confounded", json_true());
		}
		json_object_set_new(jv, "u", json_real(rv->mwu.u));
		json_object_set_new(jv, "hl_shift", num_or_null(rv->hl));
		json_object_set_new(jv, "hl_ci95", json_pack("[o,o]",
			num_or_null(rv->hl_lo), num_or_null(rv->hl_hi)));
		json_object_set_new(jv, "min_possible_p", json_real(
			stats_mwu_min_p(cell->groups[0].nvalues, rv->nvalues)));
	}
	return jv;
}

static json_t *json_interactions(const struct report *r, const struct rep_cell *cell)
{
	json_t *a = json_array();
	size_t nb = r->axis2.n;
	for (size_t i = 1; i < r->axis.n; i++)
		for (size_t j = 1; j < nb; j++) {
			const struct rep_inter *x = &cell->inter[i * nb + j];
			if (!x->has)
				continue;
			json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:o,s:o,s:o}",
				"a", r->axis.values[i], "a0", r->axis.values[0],
				"b", r->axis2.values[j], "b0", r->axis2.values[0],
				"effect_at_b0", num_or_null(x->eff0), "effect_at_b", num_or_null(x->eff1),
				"difference_of_differences", num_or_null(x->dod));
			if (x->tested) {
				json_object_set_new(o, "p", json_real(x->p));
				json_object_set_new(o, "p_method", json_string("permutation-freedman-lane"));
			}
			json_array_append_new(a, o);
		}
	return a;
}

/* The report as JSON: "by" names the axis; each cell lists its groups
 * under "variants" on the variant axis (the API's shape since v1) and
 * under "groups" on any other (each with "name", its label, and "value"). */
static json_t *json_report(const struct report *r)
{
	json_t *cells = json_array(), *values = json_array(), *jlabels = json_array();
	bool variant_axis = report_axis_is_variant(r->axis.name);
	char *by = r->two_d ? xasprintf("%s,%s", r->axis.name, r->axis2.name) :
		   xstrdup(r->axis.name);

	for (size_t j = 0; j < r->axis.n; j++) {
		json_array_append_new(values, json_string(r->axis.values[j]));
		json_array_append_new(jlabels, json_string(r->axis.labels[j]));
	}
	json_t *values2 = json_array();
	for (size_t j = 0; r->two_d && j < r->axis2.n; j++)
		json_array_append_new(values2, json_string(r->axis2.values[j]));
	for (size_t c = 0; c < r->ncells; c++) {
		const struct rep_cell *cell = &r->cells[c];
		json_t *groups = json_array();
		for (size_t j = 0; j < r->ngroups; j++) {
			if (!group_shown(&cell->groups[j]))
				continue;
			json_t *jg = json_group(r, cell, &cell->groups[j]);
			if (r->two_d) {
				json_object_set_new(jg, "a", json_string(r->axis.values[j / r->axis2.n]));
				json_object_set_new(jg, "b", json_string(r->axis2.values[j % r->axis2.n]));
			}
			json_array_append_new(groups, jg);
		}
		json_t *jc = json_pack("{s:s,s:s,s:o}", "cell", cell->cell, "title", cell->title,
				       variant_axis && !r->two_d ? "variants" : "groups", groups);
		if (r->two_d)
			json_object_set_new(jc, "interactions", json_interactions(r, cell));
		json_array_append_new(cells, jc);
	}
	json_t *probes = json_array();
	for (size_t i = 0; i < r->d.nprobes; i++) {
		const struct db_report_probe *p = &r->d.probes[i];
		json_array_append_new(probes, json_pack("{s:I,s:s,s:s,s:s,s:I}",
			"variant_id", (json_int_t)p->variant_id, "cell", p->cell ? p->cell : "",
			"name", p->name, "key", p->key, "count", (json_int_t)p->count));
	}
	struct buf text = BUF_INIT;
	text_report(&text, r, false);
	json_t *root = json_pack("{s:{s:I,s:s,s:s,s:s},s:s,s:o,s:o,s:s,s:s?,s:s,s:o,s:o,s:o,s:i,s:b,s:s}",
		"job", "id", (json_int_t)r->d.job_id, "name", r->d.job_name,
		"kind", r->d.job_kind, "status", r->d.job_status,
		"by", by, "values", values, "labels", jlabels,
		"metric", r->metric, "unit", r->unit,
		"better", r->better == BETTER_LOWER ? "lower" : "higher",
		"threshold", r->has_threshold ? json_real(r->threshold) : json_null(),
		"cells", cells, "probes", probes,
		"runs_needed_for_p05", (int)stats_runs_needed(0.05),
		"tcg", r->any_tcg, "text", buf_str(&text));
	buf_release(&text);
	free(by);
	if (r->hostfs_hash)
		json_object_set_new(root, "rootfs", json_pack("{s:s,s:b,s:s,s:s,s:b}",
			"spec", REPORT_ROOTFS_HOST, "reproducible", 0, "mark", REPORT_ROOTFS_HOST_MARK,
			"packages_sha256", r->hostfs_hash, "changed_during_job", r->hostfs_mixed));
	if (r->two_d)
		json_object_set_new(root, "values_b", values2);
	else
		json_decref(values2);
	json_object_set_new(root, "overhead", overhead_json(&r->ov));
	json_object_set_new(root, "sequential", json_seq(r));
	return root;
}

int report_format(struct buf *out, const struct report *r, enum report_format fmt)
{
	switch (fmt) {
	case REPORT_TEXT:
		text_report(out, r, false);
		break;
	case REPORT_MARKDOWN:
		text_report(out, r, true);
		break;
	case REPORT_CSV:
		csv_report(out, r);
		break;
	case REPORT_JSON: {
		json_t *root = json_report(r);
		char *s = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
		json_decref(root);
		int ret = buf_puts(out, s);
		buf_puts(out, "\n");
		free(s);
		return ret;
	}
	}
	return out->max_bytes && out->len >= out->max_bytes ? -E2BIG : 0;
}
