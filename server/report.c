/* report.c - the cover-letter table and its JSON/markdown/CSV forms
 * (report.h). Reads through db_report_load(), computes with stats.c. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "stats.h"

/* Bootstrap resamples for the Hodges-Lehmann CI. */
#define REPORT_BOOTSTRAP 2000

struct rep_run {
	const struct db_report_run *run;
};

struct rep_variant {
	const struct db_report_variant *v;
	struct rep_run *runs;
	size_t nruns;
	double *values;          /* runs with a value, in run order */
	size_t nvalues;
	struct stats_summary sum;
	size_t k_worse;
	bool has_cmp;            /* compared with the baseline */
	double change_pct;       /* (median - base median) / base median * 100 */
	struct mwu_result mwu;
	double hl, hl_lo, hl_hi;
};

struct rep_cell {
	char *cell;
	char *title;
	size_t max_runs;
	struct rep_variant *vars;  /* one per job variant, in idx order */
};

struct report {
	struct db_report_data d;
	const char *metric;
	const char *unit;
	enum stats_better better;
	bool has_threshold;
	double threshold;
	struct rep_cell *cells;
	size_t ncells;
	bool any_tcg;
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

/* "85.3s" for seconds; otherwise 4 significant digits and the unit. */
static void fmt_value(char *out, size_t size, double v, const char *unit)
{
	if (isnan(v))
		snprintf(out, size, "-");
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

/* The variant's short name: "base (v6.12.117)" -> "base". */
static void short_name(char *out, size_t size, const char *name)
{
	const char *paren = strstr(name, " (");
	size_t n = paren ? (size_t)(paren - name) : strlen(name);
	snprintf(out, size, "%.*s", (int)n, name);
}

/* "(wb-handover, ext4, rate_mbps=250)" from a run's params and its cell. */
static char *cell_title(const struct report *r, const struct db_report_run *run)
{
	struct buf b = BUF_INIT;
	json_t *params = run->params_json ? json_loads(run->params_json, 0, NULL) : NULL;
	const char *workload = json_string_value(json_object_get(params, "workload"));
	json_t *measure = json_object_get(params, "measure_s");
	char *cell = xstrdup(run->cell ? run->cell : "");
	bool first = true;

	buf_puts(&b, metric_title(r->metric));
	if (json_is_string(measure))
		buf_printf(&b, " over %ss", json_string_value(measure));
	else if (json_is_number(measure))
		buf_printf(&b, " over %gs", json_number_value(measure));
	buf_puts(&b, " (");
	if (workload) {
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

static struct rep_cell *cell_get(struct report *r, const struct db_report_run *run)
{
	const char *c = run->cell ? run->cell : "";

	for (size_t i = 0; i < r->ncells; i++)
		if (!strcmp(r->cells[i].cell, c))
			return &r->cells[i];
	r->cells = xrealloc(r->cells, (r->ncells + 1) * sizeof(*r->cells));
	struct rep_cell *cell = &r->cells[r->ncells++];
	memset(cell, 0, sizeof(*cell));
	cell->cell = xstrdup(c);
	cell->title = cell_title(r, run);
	cell->vars = xcalloc(r->d.nvariants ? r->d.nvariants : 1, sizeof(*cell->vars));
	for (size_t i = 0; i < r->d.nvariants; i++)
		cell->vars[i].v = &r->d.variants[i];
	return cell;
}

static void compute(struct report *r)
{
	for (size_t i = 0; i < r->d.nruns; i++) {
		const struct db_report_run *run = &r->d.runs[i];
		struct rep_cell *cell = cell_get(r, run);
		if (run->accel && !strcmp(run->accel, "tcg"))
			r->any_tcg = true;
		for (size_t j = 0; j < r->d.nvariants; j++) {
			struct rep_variant *rv = &cell->vars[j];
			if (rv->v->id != run->variant_id)
				continue;
			rv->runs = xrealloc(rv->runs, (rv->nruns + 1) * sizeof(*rv->runs));
			rv->runs[rv->nruns++].run = run;
			if (rv->nruns > cell->max_runs)
				cell->max_runs = rv->nruns;
			/* failed, timed-out and interrupted runs carry no value */
			bool usable = !strcmp(run->status, "ok") ||
				      !strcmp(run->status, "incomplete");
			if (run->has_value && usable) {
				rv->values = xrealloc(rv->values, (rv->nvalues + 1) * sizeof(double));
				rv->values[rv->nvalues++] = run->value;
			}
		}
	}
	for (size_t c = 0; c < r->ncells; c++) {
		struct rep_cell *cell = &r->cells[c];
		struct rep_variant *base = r->d.nvariants ? &cell->vars[0] : NULL;
		for (size_t j = 0; j < r->d.nvariants; j++) {
			struct rep_variant *rv = &cell->vars[j];
			stats_summarize(&rv->sum, rv->values, rv->nvalues);
			if (r->has_threshold)
				rv->k_worse = stats_count_worse(rv->values, rv->nvalues,
								r->threshold, r->better);
			if (j == 0 || !base->nvalues || !rv->nvalues)
				continue;
			rv->has_cmp = true;
			rv->change_pct = base->sum.median != 0 ?
				(rv->sum.median - base->sum.median) / fabs(base->sum.median) * 100 : NAN;
			stats_mwu(&rv->mwu, base->values, base->nvalues, rv->values, rv->nvalues);
			rv->hl = stats_hodges_lehmann(base->values, base->nvalues,
						      rv->values, rv->nvalues);
			stats_hl_bootstrap_ci(&rv->hl_lo, &rv->hl_hi, base->values, base->nvalues,
					      rv->values, rv->nvalues, REPORT_BOOTSTRAP, 0.05,
					      STATS_SEED);
		}
	}
}

int report_build(struct report **out, struct db *db, int64_t job_id,
		 const struct report_opts *opts, struct buf *err)
{
	struct report *r = xcalloc(1, sizeof(*r));
	int ret;

	if ((ret = db_report_load(db, job_id, opts ? opts->metric : NULL, &r->d, err))) {
		free(r);
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
	compute(r);
	*out = r;
	return 0;
}

void report_free(struct report *r)
{
	if (!r)
		return;
	for (size_t c = 0; c < r->ncells; c++) {
		for (size_t j = 0; j < r->d.nvariants; j++) {
			free(r->cells[c].vars[j].runs);
			free(r->cells[c].vars[j].values);
		}
		free(r->cells[c].vars);
		free(r->cells[c].cell);
		free(r->cells[c].title);
	}
	free(r->cells);
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

static void fmt_change(char *out, size_t size, const struct rep_variant *rv)
{
	char p[16];
	if (!rv->has_cmp) {
		out[0] = '\0';
		return;
	}
	fmt_p(p, sizeof(p), rv->mwu.p);
	if (isnan(rv->change_pct))
		snprintf(out, size, "(%s, MWU)", p);
	else
		snprintf(out, size, "%+.1f%% (%s, MWU)", rv->change_pct, p);
}

static bool variant_failed(const struct rep_variant *rv)
{
	return strcmp(rv->v->status, "ok") && strcmp(rv->v->status, "pending");
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
	return cell->vars[0].nvalues;
}

/* Smallest per-variant n compared against the baseline in a cell. */
static void min_pair(const struct rep_cell *cell, size_t nvar, size_t *nx, size_t *ny)
{
	*nx = cell->vars[0].nvalues;
	*ny = 0;
	for (size_t j = 1; j < nvar; j++)
		if (cell->vars[j].has_cmp &&
		    (!*ny || stats_mwu_min_p(*nx, cell->vars[j].nvalues) >
			     stats_mwu_min_p(*nx, *ny)))
			*ny = cell->vars[j].nvalues;
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

static void probe_lines(struct buf *b, const struct report *r, const char *cellname,
			bool markdown)
{
	if (r->d.nprobes) {
		/* the evidence lines: cgroup_writeback_by_id return values (a
		 * foreign flush that missed a dying wb is -ENOENT) and
		 * balance_dirty_pages pauses; every probe is in the JSON */
		bool *has = xcalloc(r->d.nvariants + 1, sizeof(*has));
		for (size_t i = 0; i < r->d.nprobes; i++)
			for (size_t j = 0; j < r->d.nvariants; j++)
				if (r->d.variants[j].id == r->d.probes[i].variant_id &&
				    !strcmp(r->d.probes[i].cell ? r->d.probes[i].cell : "", cellname))
					has[j] = true;
		bool any = false;
		for (size_t j = 0; j < r->d.nvariants; j++)
			any |= has[j];
		if (any)
			buf_puts(b, "\n");
		for (size_t i = 0; i < r->d.nprobes; i++) {
			const struct db_report_probe *p = &r->d.probes[i];
			if (strcmp(p->cell ? p->cell : "", cellname))
				continue;
			if (strcmp(p->name, "cgroup_writeback_by_id") &&
			    !(!strcmp(p->name, "balance_dirty_pages") && !strcmp(p->key, "pauses")))
				continue;
			if (i && !strcmp(r->d.probes[i - 1].name, p->name) &&
			    !strcmp(r->d.probes[i - 1].key, p->key) &&
			    !strcmp(r->d.probes[i - 1].cell ? r->d.probes[i - 1].cell : "", cellname))
				continue;   /* one line per (name, key) */
			struct buf line = BUF_INIT;
			char k[64];
			probe_key(k, sizeof(k), p->name, p->key);
			buf_printf(&line, "%s %s:", p->name, k);
			for (size_t j = 0, first = 1; j < r->d.nvariants; j++) {
				if (!has[j])
					continue;
				long long count = 0;
				for (size_t q = i; q < r->d.nprobes && !strcmp(r->d.probes[q].name, p->name) &&
				     !strcmp(r->d.probes[q].key, p->key) &&
				     !strcmp(r->d.probes[q].cell ? r->d.probes[q].cell : "", cellname); q++)
					if (r->d.probes[q].variant_id == r->d.variants[j].id)
						count = (long long)r->d.probes[q].count;
				char sn[128], cnt[40];
				short_name(sn, sizeof(sn), r->d.variants[j].name);
				fmt_count(cnt, sizeof(cnt), count);
				buf_printf(&line, "%s %s %s", first ? "" : ",", sn, cnt);
				first = 0;
			}
			append_wrapped(b, buf_str(&line), markdown);
			buf_release(&line);
		}
		free(has);
		buf_puts(b, markdown ? "\n" : "");
	}
}

/* reason: one cell's table, text and markdown side by side; every row uses the column
 * widths computed at its top. */
static void text_cell(struct buf *b, const struct report *r, const struct rep_cell *cell,
		      bool markdown)
{
	size_t nvar = r->d.nvariants, label_w = 8;
	char v[64], ch[64];

	for (size_t j = 0; j < nvar; j++)
		if (strlen(cell->vars[j].v->name) > label_w)
			label_w = strlen(cell->vars[j].v->name);
	if (markdown) {
		buf_printf(b, "**%s**\n\n| variant |", cell->title);
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
			buf_printf(b, " %7s", v);
		}
		buf_printf(b, " %8s\n", "median");
	}
	for (size_t j = 0; j < nvar; j++) {
		const struct rep_variant *rv = &cell->vars[j];
		if (markdown)
			buf_printf(b, "| %s |", rv->v->name);
		else
			buf_printf(b, "  %-*s", (int)label_w + 2, rv->v->name);
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
			buf_printf(b, markdown ? " %s |" : " %7s", v);
		}
		fmt_value(v, sizeof(v), rv->sum.median, r->unit);
		fmt_change(ch, sizeof(ch), rv);
		if (markdown)
			buf_printf(b, " %s | %s |\n", v, ch);
		else if (*ch)
			buf_printf(b, " %8s   %s\n", v, ch);
		else
			buf_printf(b, " %8s\n", v);
	}
	buf_puts(b, "\n");
	bool any_values = false;
	for (size_t j = 0; j < nvar; j++)
		any_values |= cell->vars[j].nvalues > 0;
	if (r->has_threshold && any_values) {
		char t[48], sn[128];
		snprintf(t, sizeof(t), "%g%s", r->threshold,
			 r->unit && !strcmp(r->unit, "s") ? "s" : "");
		struct buf line = BUF_INIT;
		buf_printf(&line, "%s (%s %s %s):", r->better == BETTER_LOWER ? "stalled" : "below",
			   metric_short(r->metric), r->better == BETTER_LOWER ? ">" : "<", t);
		for (size_t j = 0, first = 1; j < nvar; j++) {
			const struct rep_variant *rv = &cell->vars[j];
			if (!rv->nvalues)
				continue;
			short_name(sn, sizeof(sn), rv->v->name);
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
		const struct rep_variant *rv = &cell->vars[j];
		char a[32], lo[32], hi[32], sn[128];
		if (!rv->has_cmp)
			continue;
		short_name(sn, sizeof(sn), rv->v->name);
		fmt_value(a, sizeof(a), rv->hl, r->unit);
		fmt_value(lo, sizeof(lo), rv->hl_lo, r->unit);
		fmt_value(hi, sizeof(hi), rv->hl_hi, r->unit);
		char bn[128];
		short_name(bn, sizeof(bn), r->d.variants[0].name);
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
	size_t nx, ny;
	if (nvar > 1 && cell->vars[0].nvalues) {
		min_pair(cell, nvar, &nx, &ny);
		if (ny && stats_mwu_min_p(nx, ny) >= 0.05) {
			size_t need = stats_runs_needed(0.05);
			buf_printf(b, "note: %zu run%s against %zu cannot reach p < 0.05 (two-sided"
				   " Mann-Whitney U;\n      without ties the smallest possible p is %.2f);"
				   " %zu against %zu can.\n%s", nx, nx == 1 ? "" : "s", ny,
				   stats_mwu_min_p(nx, ny), need, need, markdown ? "\n" : "");
		}
	}
	bool any_star = false;
	for (size_t j = 0; j < nvar; j++)
		for (size_t i = 0; i < cell->vars[j].nruns; i++) {
			const struct db_report_run *run = cell->vars[j].runs[i].run;
			bool usable = !strcmp(run->status, "ok") || !strcmp(run->status, "incomplete");
			if (usable && run->has_value && (run->derived || !strcmp(run->status, "incomplete")))
				any_star = true;
		}
	if (any_star)
		buf_printf(b, "* incomplete run: value from the samples it stored\n%s",
			   markdown ? "\n" : "");
	bool any_intr = false;
	for (size_t j = 0; j < nvar; j++)
		for (size_t i = 0; i < cell->vars[j].nruns; i++)
			any_intr |= !strcmp(cell->vars[j].runs[i].run->status, "interrupted");
	if (any_intr)
		buf_printf(b, "intr.: the coordinator stopped during the run; a fresh repeat"
			   " replaced it\n%s", markdown ? "\n" : "");
	probe_lines(b, r, cell->cell, markdown);
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
	if (!r->ncells)
		buf_printf(b, "job '%s' has no runs yet\n", r->d.job_name);
	for (size_t c = 0; c < r->ncells; c++) {
		if (c)
			buf_puts(b, "\n");
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
	if (r->any_tcg)
		buf_puts(b, "\nguests ran under TCG (software emulation): not host performance"
			 " numbers\n");
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
	buf_puts(b, "cell,variant,repeat,run_id,status,metric,value,derived\n");
	for (size_t c = 0; c < r->ncells; c++)
		for (size_t j = 0; j < r->d.nvariants; j++) {
			const struct rep_variant *rv = &r->cells[c].vars[j];
			for (size_t i = 0; i < rv->nruns; i++) {
				const struct db_report_run *run = rv->runs[i].run;
				csv_field(b, r->cells[c].cell);
				buf_puts(b, ",");
				csv_field(b, rv->v->name);
				buf_printf(b, ",%d,%lld,%s,%s,", run->repeat_idx, (long long)run->id,
					   run->status, r->metric);
				if (run->has_value)
					buf_printf(b, "%.10g", run->value);
				buf_printf(b, ",%d\n", run->derived);
			}
		}
}

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *json_report(const struct report *r)
{
	json_t *cells = json_array();

	for (size_t c = 0; c < r->ncells; c++) {
		const struct rep_cell *cell = &r->cells[c];
		json_t *vars = json_array();
		for (size_t j = 0; j < r->d.nvariants; j++) {
			const struct rep_variant *rv = &cell->vars[j];
			json_t *runs = json_array();
			for (size_t i = 0; i < rv->nruns; i++) {
				const struct db_report_run *run = rv->runs[i].run;
				json_array_append_new(runs, json_pack("{s:I,s:i,s:s,s:o,s:b,s:s?}",
					"run_id", (json_int_t)run->id, "repeat", run->repeat_idx,
					"status", run->status,
					"value", run->has_value ? json_real(run->value) : json_null(),
					"derived", run->derived, "accel", run->accel));
			}
			json_t *jv = json_pack("{s:I,s:i,s:s,s:s,s:s?,s:o,s:i,s:o,s:o,s:o,s:o}",
				"variant_id", (json_int_t)rv->v->id, "idx", rv->v->idx,
				"name", rv->v->name, "status", rv->v->status, "error", rv->v->error,
				"runs", runs, "n", (int)rv->nvalues,
				"median", num_or_null(rv->sum.median), "min", num_or_null(rv->sum.min),
				"max", num_or_null(rv->sum.max), "mean", num_or_null(rv->sum.mean));
			if (r->has_threshold)
				json_object_set_new(jv, "worse_than_threshold", json_integer((json_int_t)rv->k_worse));
			if (rv->has_cmp) {
				json_object_set_new(jv, "change_pct", num_or_null(rv->change_pct));
				json_object_set_new(jv, "p", json_real(rv->mwu.p));
				json_object_set_new(jv, "p_method", json_string(
					rv->mwu.method == MWU_EXACT ? "mwu-exact" : "mwu-normal"));
				json_object_set_new(jv, "u", json_real(rv->mwu.u));
				json_object_set_new(jv, "hl_shift", num_or_null(rv->hl));
				json_object_set_new(jv, "hl_ci95", json_pack("[o,o]",
					num_or_null(rv->hl_lo), num_or_null(rv->hl_hi)));
				json_object_set_new(jv, "min_possible_p", json_real(
					stats_mwu_min_p(cell->vars[0].nvalues, rv->nvalues)));
			}
			json_array_append_new(vars, jv);
		}
		json_array_append_new(cells, json_pack("{s:s,s:s,s:o}", "cell", cell->cell,
						       "title", cell->title, "variants", vars));
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
	json_t *root = json_pack("{s:{s:I,s:s,s:s,s:s},s:s,s:s?,s:s,s:o,s:o,s:o,s:i,s:b,s:s}",
		"job", "id", (json_int_t)r->d.job_id, "name", r->d.job_name,
		"kind", r->d.job_kind, "status", r->d.job_status,
		"metric", r->metric, "unit", r->unit,
		"better", r->better == BETTER_LOWER ? "lower" : "higher",
		"threshold", r->has_threshold ? json_real(r->threshold) : json_null(),
		"cells", cells, "probes", probes,
		"runs_needed_for_p05", (int)stats_runs_needed(0.05),
		"tcg", r->any_tcg, "text", buf_str(&text));
	buf_release(&text);
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
