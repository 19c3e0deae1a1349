/* report_text.c - the cover-letter table in text and markdown
 * (report_text.h): one table per cell with its stall, shift and note lines;
 * a two-axis cell is report_grid.c's. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dec_round.h"
#include "judge/report.h"
#include "judge/report_data.h"
#include "judge/report_grid.h"
#include "judge/report_lines.h"
#include "judge/report_overhead.h"
#include "judge/report_scratch.h"
#include "judge/report_seq.h"
#include "judge/report_text.h"
#include "judge/stats.h"

/* An incomplete run's value from its samples: starred, footnoted. A
 * passive run's median is what its cell's title says it is: no star. */
static bool starred(const struct db_report_run *run)
{
	return run->passive ? run->derived && !run->median :
	       run->derived || strcmp(run->status, "ok");
}

/* A run's cell in the table: its value, "12.3s*" when derived from an
 * incomplete run, or its status when it has no value. */
static void fmt_run(char *out, size_t size, const struct report *r,
		    const struct db_report_run *run)
{
	if (run->has_value && rep_run_usable(run)) {
		rep_fmt_value(out, size - 1, run->value, r->unit);
		if (starred(run))
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
	rep_fmt_p(p, sizeof(p), rv->mwu.p);
	if (isnan(rv->change_pct))
		snprintf(out, size, "(%s, %s)", p, test);
	else
		snprintf(out, size, "%+.1f%% (%s, %s)", dec_round(rv->change_pct, 1), p, test);
}

/* A variant whose kernel never came (apply or build failed). */
static bool variant_failed(const struct rep_group *g)
{
	return g->v && strcmp(g->v->status, "ok") && strcmp(g->v->status, "pending");
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

/* The column widths of a one-axis table: the labels', the runs' and the
 * medians' (they widen for longer values: "118MiB/s", "22.4k ops/s"). */
struct text_widths {
	size_t label_w, run_w, med_w;
};

static void text_widths(struct text_widths *w, const struct report *r,
			const struct rep_cell *cell)
{
	char v[64];

	w->label_w = 8;
	w->run_w = 7;
	w->med_w = 8;
	for (size_t j = 0; j < r->axis.n; j++) {
		const struct rep_group *g = &cell->groups[j];
		if (!rep_group_shown(g))
			continue;
		if (strlen(g->label) > w->label_w)
			w->label_w = strlen(g->label);
		if (variant_failed(g))
			continue;
		/* the columns widen for longer values ("118MiB/s", "22.4k ops/s") */
		for (size_t i = 0; i < g->nruns; i++) {
			fmt_run(v, sizeof(v), r, g->runs[i].run);
			if (strlen(v) > w->run_w)
				w->run_w = strlen(v);
		}
		rep_fmt_value(v, sizeof(v), g->sum.median, r->unit);
		if (strlen(v) > w->med_w)
			w->med_w = strlen(v);
	}
}

/* Runs from..to-1 of the text table's rows, and whether the median and
 * change follow them (the last block of runs). */
struct text_block {
	size_t from, to;
	bool last;
};

/* The cell's title and the table's head: "run 1 ... median". */
static void text_head(struct buf *b, const struct report *r, const struct rep_cell *cell,
		      const struct text_widths *w, const struct text_block *k, bool markdown)
{
	char v[64];

	if (markdown) {
		buf_printf(b, "**%s**\n\n| %s |", cell->title, r->axis.name);
		for (size_t i = 0; i < cell->max_runs; i++)
			buf_printf(b, " run %zu |", i + 1);
		buf_puts(b, " median | change |\n|---|");
		for (size_t i = 0; i < cell->max_runs; i++)
			buf_puts(b, "--:|");
		buf_puts(b, "--:|---|\n");
	} else {
		if (!k->from)
			buf_printf(b, "%s:\n", cell->title);
		buf_printf(b, "\n  %-*s", (int)w->label_w + 2, "");
		for (size_t i = k->from; i < k->to; i++) {
			snprintf(v, sizeof(v), "run %zu", i + 1);
			buf_printf(b, " %*s", (int)w->run_w, v);
		}
		if (k->last)
			buf_printf(b, " %*s", (int)w->med_w, "median");
		buf_puts(b, "\n");
	}
}

/* One value's row: its runs, median and change against the baseline; a
 * variant whose runs never started says why instead. */
static void text_row(struct buf *b, const struct report *r, const struct rep_cell *cell,
		     const struct rep_group *rv, const struct text_widths *w,
		     const struct text_block *k, bool markdown)
{
	char v[64], ch[64];

	if (markdown)
		buf_printf(b, "| %s |", rv->label);
	else
		buf_printf(b, "  %-*s", (int)w->label_w + 2, rv->label);
	if (variant_failed(rv)) {   /* its runs never started: say why instead */
		if (markdown) {
			buf_printf(b, " %s |", rv->v->status);
			for (size_t i = 1; i < cell->max_runs + 2; i++)
				buf_puts(b, " |");
			buf_puts(b, "\n");
		} else {
			buf_printf(b, "%s\n", rv->v->status);
		}
		return;
	}
	for (size_t i = k->from; i < k->to; i++) {
		if (i < rv->nruns)
			fmt_run(v, sizeof(v), r, rv->runs[i].run);
		else
			v[0] = '\0';
		if (markdown)
			buf_printf(b, " %s |", v);
		else
			buf_printf(b, " %*s", (int)w->run_w, v);
	}
	if (!k->last) {
		buf_puts(b, "\n");
		return;
	}
	rep_fmt_value(v, sizeof(v), rv->sum.median, r->unit);
	fmt_change(ch, sizeof(ch), rv);
	if (markdown)
		buf_printf(b, " %s | %s |\n", v, ch);
	else if (*ch)
		buf_printf(b, " %*s   %s\n", (int)w->med_w, v, ch);
	else
		buf_printf(b, " %*s\n", (int)w->med_w, v);
}

/* "stalled (worst lag > 5s): base 0 of 4, removed 3 of 4" when the report
 * has a threshold and the cell has values. */
static void stall_line(struct buf *b, const struct report *r, const struct rep_cell *cell,
		       bool markdown)
{
	size_t nvar = r->axis.n;
	bool any_values = false;

	for (size_t j = 0; j < nvar; j++)
		any_values |= cell->groups[j].nvalues > 0;
	if (r->has_threshold && any_values) {
		char t[48], sn[128];
		snprintf(t, sizeof(t), "%g%s", r->threshold,
			 r->unit && !strcmp(r->unit, "s") ? "s" : "");
		struct buf line = BUF_INIT;
		buf_printf(&line, "%s (%s %s %s):", r->better == BETTER_LOWER ? "stalled" : "below",
			   rep_metric_short(r->metric), r->better == BETTER_LOWER ? ">" : "<", t);
		for (size_t j = 0, first = 1; j < nvar; j++) {
			const struct rep_group *rv = &cell->groups[j];
			if (!rv->nvalues)
				continue;
			snprintf(sn, sizeof(sn), "%s", rv->say);
			buf_printf(&line, "%s %s %zu of %zu", first ? "" : ",", sn, rv->k_worse,
				   rv->nvalues);
			first = 0;
		}
		rep_append_wrapped(b, buf_str(&line), markdown);
		buf_release(&line);
		if (markdown)
			buf_puts(b, "\n");
	}
}

/* The effect with its uncertainty, one line per compared value:
 * "shift vs base (Hodges-Lehmann, 95% CI): removed 40.1s [38.0s, 42.2s]". */
static void shift_lines(struct buf *b, const struct report *r, const struct rep_cell *cell,
			bool markdown)
{
	for (size_t j = 1; j < r->axis.n; j++) {
		const struct rep_group *rv = &cell->groups[j];
		char a[32], lo[32], hi[32], sn[128];
		if (!rv->has_cmp)
			continue;
		snprintf(sn, sizeof(sn), "%s", rv->say);
		rep_fmt_value(a, sizeof(a), rv->hl, r->unit);
		rep_fmt_value(lo, sizeof(lo), rv->hl_lo, r->unit);
		rep_fmt_value(hi, sizeof(hi), rv->hl_hi, r->unit);
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
}

/* When the cell's runs are too few for p < 0.05: say so, or that the
 * anytime-valid test decided it anyway. */
static void small_n_note(struct buf *b, const struct report *r, const struct rep_cell *cell,
			 bool markdown)
{
	size_t nvar = r->axis.n, nx, ny;

	if (nvar > 1 && cell->groups[0].nvalues) {
		min_pair(cell, nvar, &nx, &ny);
		if (ny && stats_mwu_min_p(nx, ny) >= 0.05 && rep_seq_cell_decided(r, cell)) {
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
}

/* The footnotes of the table's marks: "*" (a value from an incomplete
 * run's samples) and "intr." (an interrupted run). */
static void footnotes(struct buf *b, const struct report *r, const struct rep_cell *cell,
		      bool markdown)
{
	size_t nvar = r->axis.n;
	bool any_star = false, any_median = false;

	for (size_t j = 0; j < nvar; j++)
		for (size_t i = 0; i < cell->groups[j].nruns; i++) {
			const struct db_report_run *run = cell->groups[j].runs[i].run;
			if (rep_run_usable(run) && run->has_value && starred(run))
				any_star = true;
			any_median |= rep_run_usable(run) && run->has_value && run->median;
		}
	if (any_star)
		buf_printf(b, "* incomplete run: value from the samples it stored\n%s",
			   markdown ? "\n" : "");
	if (any_median) {
		buf_printf(b, "each value: the median of all the %s samples of one host's boot so far\n"
			   "(kcanary-agent daemon's passive run, streaming while the host lives)\n",
			   r->metric);
		for (size_t j = 0; j < nvar; j++) {
			const struct rep_group *g = &cell->groups[j];
			if (!g->nruns)
				continue;
			buf_printf(b, "%s's runs, in order:", g->label);
			for (size_t i = 0; i < g->nruns; i++)
				buf_printf(b, "%s host %s", i ? "," : "",
					   g->runs[i].run->host ? g->runs[i].run->host : "?");
			buf_puts(b, "\n");
		}
		if (markdown)
			buf_puts(b, "\n");
	}
	bool any_intr = false;
	for (size_t j = 0; j < nvar; j++)
		for (size_t i = 0; i < cell->groups[j].nruns; i++)
			any_intr |= !strcmp(cell->groups[j].runs[i].run->status, "interrupted");
	if (any_intr)
		buf_printf(b, "intr.: the coordinator stopped during the run; a fresh repeat"
			   " replaced it\n%s", markdown ? "\n" : "");
}

/* How many of the runs left the next text block shows: all of them when
 * the rows fit 80 columns with the median and change; else as many as
 * fit: blocks of even size, the fewest whose last one fits beside the
 * median and change. Markdown has one block (the viewer scrolls). */
static size_t text_block_runs(const struct report *r, const struct rep_cell *cell,
			      const struct text_widths *w, size_t left, bool markdown)
{
	size_t lead = 4 + w->label_w, tail = w->med_w + 1, change_w = 0, per, last, nblocks;
	char ch[64];

	for (size_t j = 0; j < r->axis.n; j++) {
		fmt_change(ch, sizeof(ch), &cell->groups[j]);
		if (rep_group_shown(&cell->groups[j]) && strlen(ch) > change_w)
			change_w = strlen(ch);
	}
	tail += change_w ? 3 + change_w : 0;
	/* fits; or labels so long that no block would (wrapping helps none) */
	if (markdown || lead + left * (w->run_w + 1) + tail <= 80 || lead + w->run_w + 1 > 80)
		return left;
	per = (80 - lead) / (w->run_w + 1);
	last = 80 > lead + tail ? (80 - lead - tail) / (w->run_w + 1) : 0;
	/* the fewest blocks of even size (at most per runs) whose last one
	 * fits beside the median and change; nblocks = left + 1 always does */
	for (nblocks = 2;; nblocks++) {
		size_t size = (left + nblocks - 1) / nblocks;
		size_t before = size * (nblocks - 1) < left ? size * (nblocks - 1) : left;
		if (size <= per && left - before <= last)
			return size;
	}
}

/* One cell's table, text and markdown side by side (every row uses the
 * column widths computed first), then the lines below it. A text table
 * wider than 80 columns (many repeats) wraps its runs into blocks of
 * columns, the last with the median and change. */
static void text_cell(struct buf *b, const struct report *r, const struct rep_cell *cell,
		      bool markdown)
{
	struct text_widths w;
	struct text_block k = { 0 };

	text_widths(&w, r, cell);
	do {
		k.to = k.from + text_block_runs(r, cell, &w, cell->max_runs - k.from, markdown);
		k.last = k.to == cell->max_runs;
		text_head(b, r, cell, &w, &k, markdown);
		for (size_t j = 0; j < r->axis.n; j++)
			if (rep_group_shown(&cell->groups[j]))
				text_row(b, r, cell, &cell->groups[j], &w, &k, markdown);
		k.from = k.to;
	} while (!k.last);
	buf_puts(b, "\n");
	stall_line(b, r, cell, markdown);
	shift_lines(b, r, cell, markdown);
	rep_strata_lines(b, cell, r->axis.n, markdown);
	rep_seq_text(b, r, cell, markdown);
	small_n_note(b, r, cell, markdown);
	footnotes(b, r, cell, markdown);
	rep_probe_lines(b, r, cell, markdown);
}

/* A report of a job still running (or stopped with runs left) says so
 * first, with how many runs are pending or running: its numbers will
 * change (issue #17: an unfinished job's report looked final). A pending
 * run of a variant without a kernel (apply-failed, build-failed) is no
 * work left: it never runs (compare.c stores such runs as skipped, and
 * 022_skipped_runs.sql turned older stores' into skipped; this holds for
 * any left pending all the same). */
static void unfinished_note(struct buf *b, const struct report *r)
{
	const char *s = r->d.job_status ? r->d.job_status : "";
	size_t pending = 0, running = 0;

	for (size_t i = 0; i < r->d.nruns; i++) {
		const struct db_report_variant *v = rep_variant_of(r, &r->d.runs[i]);

		if (!strcmp(r->d.runs[i].status, "pending") &&
		    (!v || !strcmp(v->status, "ok") || !strcmp(v->status, "pending")))
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

/* Every cell's table, one after another. */
static void text_cells(struct buf *b, const struct report *r, bool markdown)
{
	for (size_t c = 0; c < r->ncells; c++) {
		if (c)
			buf_puts(b, "\n");
		if (r->two_d)
			rep_grid_cell(b, r, &r->cells[c], markdown);
		else
			text_cell(b, r, &r->cells[c], markdown);
	}
}

/* The workload's headline metric when the job decided on another
 * (report.c's build_also): its tables after the decided ones, labelled so
 * that no reader takes them for the decision. */
static void text_also(struct buf *b, const struct report *r, bool markdown)
{
	const struct report *a = r->also;

	if (!a)
		return;
	buf_printf(b, markdown ? "\n---\n\n**also measured (not the decision metric): %s;"
			       " the job decided on %s**\n\n" :
			       "\nalso measured (not the decision metric): %s;\n"
			       "the job decided on %s, above\n\n",
		   rep_metric_title(a->metric), r->metric);
	text_cells(b, a, markdown);
}

void rep_text_report(struct buf *b, const struct report *r, bool markdown)
{
	unfinished_note(b, r);
	if (!r->ncells)
		buf_printf(b, "job '%s' has no runs yet\n", r->d.job_name);
	text_cells(b, r, markdown);
	text_also(b, r, markdown);
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
	if (r->ov.nruns || r->scratch.bytes > 0)
		buf_puts(b, "\n");
	overhead_text(b, &r->ov);	/* each nothing when it has nothing */
	scratch_text(b, &r->scratch);
	if (r->any_tcg)
		buf_puts(b, "\nguests ran under TCG (software emulation): not host performance"
			 " numbers\n");
	if (r->hostfs_hash)
		buf_printf(b, "\n" REPORT_ROOTFS_HOST_MARK ": the guests ran the coordinator host's own"
			   " userland (dpkg package list sha256 %.12s%s), not a pinned image; another"
			   " machine, or this one after an upgrade, runs other binaries\n",
			   r->hostfs_hash, r->hostfs_mixed ? ", and it changed during the job" : "");
}
