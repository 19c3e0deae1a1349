/* report.c - a job's report gathered and computed (report.h): the store
 * read through db_report_load(), runs grouped per cell and per value of the
 * compared axis, the statistics from stats.c, and repeat auto's looks
 * replayed. The formats are report_format.c's (report_text.c, report_grid.c,
 * report_csv.c, report_json.c); the data they share is report_data.h. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dec_round.h"
#include "judge/metric_check.h"
#include "judge/report.h"
#include "judge/report_axis.h"
#include "judge/report_data.h"
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

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
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

	if (run->passive && strncmp(r->metric, "worst_", 6) && strncmp(r->metric, "mean_", 5))
		/* the number is the median of the run's samples (db_report.h) */
		buf_printf(&b, "%s, median of each host boot's samples", r->metric);
	else
		buf_puts(&b, rep_metric_title(r->metric));
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

/* What of the run's variant stays in its cell: nothing when the variant
 * (or both its parts) is an axis; the other part when one part is ("v6"
 * under --by patches); else the variant. *title is for the cell's title
 * (NULL: nothing), the result the key's prefix; both new strings. */
static char *variant_in_cell(const struct report *r, const struct db_report_run *run,
			     char **title)
{
	const char *a = r->axis.name, *b = r->two_d ? r->axis2.name : "";
	const struct db_report_variant *v = rep_variant_of(r, run);
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
		cell->groups[i].say = rep_axis_say(&r->axis, i);
		if (variant_axis)
			for (size_t j = 0; j < r->d.nvariants; j++)
				if (!strcmp(r->d.variants[j].name, r->axis.labels[i]))
					cell->groups[i].v = &r->d.variants[j];
	}
	free(rest);
	return cell;
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
static void compare_groups(struct rep_group *g, const struct rep_group *base, bool host_axis,
			   bool shift)
{
	g->has_cmp = true;
	g->change_pct = base->sum.median != 0 ?
		(g->sum.median - base->sum.median) / fabs(base->sum.median) * 100 : NAN;
	stats_mwu(&g->mwu, base->values, base->nvalues, g->values, g->nvalues);
	stratify_by_host(g, base, host_axis);
	if (!shift)
		return;     /* the jobs lists' headline: change and p only */
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
	if (run->has_value && rep_run_usable(run)) {
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
	const struct db_report_variant *v = rep_variant_of(r, run);
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

/* Every run into its cell's group along the axes (no statistics yet). */
static void group_runs(struct report *r)
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
}

/* Each group's summary and comparison with its cell's baseline; shift:
 * also the Hodges-Lehmann shift with its bootstrap CI and --by A,B's
 * interactions (the whole report; the jobs lists' headline needs neither). */
static void compute(struct report *r, bool shift)
{
	group_runs(r);
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
				       (r->two_d && !strcmp(r->axis2.name, "host")), shift);
		}
		if (r->two_d && shift)
			compute_interactions(r, cell);
	}
}

/* The axis asked for: opts, else the job file's `by`/`baseline` (its
 * baseline also without its by: a variant), else the variants. by and
 * baseline are new strings. */
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
		/* the job's baseline holds with or without its `by` (compare
		 * --baseline alone names a variant) */
		*baseline = opts && opts->baseline ? xstrdup(opts->baseline) :
			    sl && *sl ? xstrdup(sl) : NULL;
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
			r->values2d[i * r->axis2.n + j] = xasprintf("%s / %s", rep_axis_say(&r->axis, i),
								    rep_axis_say(&r->axis2, j));
		}
out:
	free(a);
	free(ba);
	return ret;
}

/* ---- repeat auto: the sequential looks ---- */

/* A run that counts in its block: every stored run but one a fresh repeat
 * replaced (interrupted, or failed by its host: infra) and one never run
 * (skipped: not needed, or its job cancelled). */
static bool run_in_block(const struct db_report_run *run)
{
	return strcmp(run->status, "interrupted") && strcmp(run->status, "infra") &&
	       strcmp(run->status, "skipped");
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
		const struct db_report_variant *v = rep_variant_of(r, a);
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
		if (r->run_block[idx] && r->run_block[idx] <= k && run->has_value && rep_run_usable(run))
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

/* The job's metric when a run has a value of it; else, unless one was
 * asked for, the summary metric most of its runs have (the first by name
 * among equals: fio:kc:write:bw before :clat_p50 and :iops): the default
 * follows what the workload reported. 0 or the store's error. */
static int load_runs(struct report *r, struct db *db, int64_t job_id,
		     const struct report_opts *opts, struct buf *err)
{
	struct db_job_metric *m = NULL;
	size_t n = 0;
	int ret;

	if ((ret = db_report_load(db, job_id, opts ? opts->metric : NULL, &r->d, err)) ||
	    (opts && opts->metric) || report_nvalues(r))
		return ret;
	if ((ret = db_report_job_metrics(db, job_id, &m, &n, err)))
		return ret;
	if (n && strcmp(m[0].name, r->d.job_metric)) {
		r->note = xasprintf("metric %s: no run has the job's %s", m[0].name, r->d.job_metric);
		db_report_release(&r->d);
		memset(&r->d, 0, sizeof(r->d));
		ret = db_report_load(db, job_id, m[0].name, &r->d, err);
	}
	db_job_metrics_free(m, n);
	return ret;
}

/* The axes asked for (opts, else the job's own), resolved. A job's own
 * `by` that is no axis of it (stored before compare checked it) is not
 * the reader's mistake: the variants then, and r->note says why. */
static int choose_axes(struct report *r, const struct report_opts *opts, char **by,
		       struct buf *err)
{
	char *baseline = NULL;
	struct buf why = BUF_INIT;
	int ret;

	axis_choice(by, &baseline, opts, r->d.spec_json);
	ret = resolve_axes(r, *by, baseline, &why);
	if (ret == -EINVAL && !(opts && opts->by && *opts->by) && strcmp(*by, "variant")) {
		free(r->note);
		r->note = xasprintf("compared along variant: the job's by '%s' is not usable: %s",
				    *by, buf_str(&why));
		report_axis_release(&r->axis);
		report_axis_release(&r->axis2);
		free(*by);
		*by = xstrdup("variant");
		ret = resolve_axes(r, *by, NULL, err);
	} else if (ret) {
		err_setf(err, ret, "%s", buf_str(&why));
	}
	free(baseline);
	buf_release(&why);
	return ret;
}

/* The workload's headline metric (metric_headline(): worst lag for
 * wb-handover) beside the one the job decided on (make demo's
 * wb_by_id_enoent), as r->also: built with the same axis and baseline, the
 * headline's own threshold, when the report is of the job's own metric
 * (no --metric), the headline is another and a run has a value of it
 * (issue 35: the demo's report had no worst-lag table). 0, or
 * report_build()'s store errors. */
static int build_also(struct report *r, struct db *db, int64_t job_id,
		      const struct report_opts *opts, struct buf *err)
{
	struct report_opts o = { 0 };
	json_t *spec = NULL;
	const char *workload, *headline;
	struct report *also = NULL;
	int ret = 0;

	if (opts && opts->metric)
		return 0;
	for (size_t i = 0; i < r->d.nruns; i++)
		if (r->d.runs[i].passive)
			return 0;   /* a fleet host's runs run no workload */
	spec = r->d.spec_json ? json_loads(r->d.spec_json, 0, NULL) : NULL;
	workload = json_string_value(json_object_get(spec, "workload"));
	/* a job stored without a workload ran the default (job_spec_new) */
	headline = metric_headline(workload ? workload : "wb-handover");
	if (!headline || !strcmp(headline, r->metric))
		goto out;
	if (opts)
		o = *opts;
	o.metric = headline;
	o.has_threshold = false;
	ret = report_build(&also, db, job_id, &o, err);
	if (ret == -EINVAL) {   /* an axis this metric's runs lack: no table */
		if (err)
			buf_reset(err);
		ret = 0;
	}
	if (!ret && also && report_nvalues(also))
		r->also = also;
	else
		report_free(also);
out:
	json_decref(spec);
	return ret;
}

int report_build(struct report **out, struct db *db, int64_t job_id,
		 const struct report_opts *opts, struct buf *err)
{
	struct report *r = xcalloc(1, sizeof(*r));
	char *by = NULL;
	int ret;

	if ((ret = load_runs(r, db, job_id, opts, err))) {
		free(r->note);
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
	if ((ret = db_job_scratch(db, job_id, &r->scratch, err))) {
		report_free(r);
		return ret;
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
	if ((ret = choose_axes(r, opts, &by, err))) {
		report_free(r);
		goto out;
	}
	compute(r, true);
	seq_replay(r, opts, by);
	if ((ret = build_also(r, db, job_id, opts, err))) {
		report_free(r);
		goto out;
	}
	*out = r;
out:
	free(by);
	return ret;
}

const char *report_note(const struct report *r)
{
	return r->note;
}

int report_seq_look(struct report_seq_state *out, struct db *db, int64_t job_id,
		    struct buf *err)
{
	struct report *r = xcalloc(1, sizeof(*r));
	char *by = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	if ((ret = db_report_load_values(db, job_id, &r->d, err))) {
		free(r);
		return ret;
	}
	r->metric = r->d.job_metric;
	if (!(ret = choose_axes(r, NULL, &by, err))) {
		group_runs(r);
		seq_replay(r, NULL, by);
		report_seq_state(r, out);
	}
	report_free(r);
	free(by);
	return ret;
}

/* ---- the jobs lists' headline (report.h) ---- */

/* Whether comparison g beats the best so far: a smaller p, or the same p
 * and a larger change (an unknown change never beats a known one). */
static bool better_than(const struct rep_group *g, const struct rep_group *best)
{
	if (!best)
		return true;
	if (g->mwu.p != best->mwu.p)
		return g->mwu.p < best->mwu.p;
	if (isnan(best->change_pct))
		return !isnan(g->change_pct);
	return !isnan(g->change_pct) && fabs(g->change_pct) > fabs(best->change_pct);
}

void report_headline(const struct report *r, struct report_headline *out)
{
	const struct rep_group *best = NULL, *best_base = NULL;
	const struct rep_cell *best_cell = NULL;

	memset(out, 0, sizeof(*out));
	out->change_pct = out->p = NAN;
	for (size_t c = 0; c < r->ncells; c++)
		for (size_t j = 1; j < r->ngroups; j++) {
			const struct rep_group *g = &r->cells[c].groups[j];

			if (!g->has_cmp || isnan(g->mwu.p))
				continue;
			out->ncomparisons++;
			if (better_than(g, best)) {
				best = g;
				best_cell = &r->cells[c];
				best_base = &r->cells[c].groups[0];
			}
		}
	if (!best)
		return;
	out->has = true;
	out->change_pct = best->change_pct;
	out->p = best->mwu.p;
	snprintf(out->label, sizeof(out->label), "%s vs %s", best->say ? best->say : "?",
		 best_base->say ? best_base->say : "?");
	snprintf(out->cell, sizeof(out->cell), "%s", best_cell->cell ? best_cell->cell : "");
}

void report_headline_text(const struct report_headline *h, char *change, char *p, size_t size)
{
	const char *star = h->ncomparisons > 1 ? "*" : "";

	snprintf(change, size, "-");
	snprintf(p, size, "-");
	if (!h->has)
		return;
	if (isfinite(h->change_pct))
		snprintf(change, size, "%+.1f%%", dec_round(h->change_pct, 1));
	if (h->p < 0.001)
		snprintf(p, size, "<0.001%s", star);
	else
		snprintf(p, size, "%.3f%s", dec_round(h->p, 3), star);
}

int report_job_headline(struct report_headline *out, struct db *db, int64_t job_id,
			struct buf *err)
{
	struct report *r = xcalloc(1, sizeof(*r));
	char *by = NULL, *baseline = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	out->change_pct = out->p = NAN;
	if ((ret = db_report_load_values(db, job_id, &r->d, err))) {
		free(r);
		return ret;
	}
	r->metric = r->d.job_metric;
	axis_choice(&by, &baseline, NULL, r->d.spec_json);
	if (!(ret = resolve_axes(r, by, baseline, err))) {
		compute(r, false);
		report_headline(r, out);
	}
	report_free(r);
	free(by);
	free(baseline);
	return ret;
}

void report_free(struct report *r)
{
	if (!r)
		return;
	db_job_scratch_release(&r->scratch);
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
	free(r->note);
	report_free(r->also);
	free(r);
}

size_t report_nvalues(const struct report *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->d.nruns; i++)
		n += r->d.runs[i].has_value;
	return n;
}
