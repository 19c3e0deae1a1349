/* api_view.c - the store's rows as the API's JSON (api_view.h): jobs with
 * their variants' medians and headline, dimensions, variants, runs,
 * curves, a run, probes. The store (db_api.h) returns the rows; the
 * shapes, the medians and the downsampling are here. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_view.h"
#include "judge/downsample.h"
#include "judge/report.h"
#include "judge/stats.h"
#include "store/db.h"
#include "store/db_compare.h"
#include "store/db_api.h"
#include "api/api_reply.h"
#include "error.h"
#include "util.h"

/* A TEXT column holding JSON, parsed; unparsable text is kept as a string. */
static json_t *json_text(const char *s)
{
	json_t *v;

	if (!s)
		return json_null();
	v = json_loads(s, JSON_DECODE_ANY, NULL);
	return v ? v : json_string(s);
}

int api_view_metrics(struct db *db, json_t **out, struct buf *err)
{
	struct db_metric_row *m = NULL;
	size_t n = 0;
	json_t *a;
	int r;

	if ((r = db_metrics_list(db, &m, &n, err)))
		return r;
	a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_pack("{s:s, s:o, s:o}", "name", m[i].name,
						   "unit", api_str_or_null(m[i].unit),
						   "better", api_str_or_null(m[i].better)));
	db_metric_rows_free(m, n);
	*out = a;
	return 0;
}

/* A value in the jobs list's short form: seconds as the cover-letter
 * table writes them ("85.3s"), anything else 4 significant digits and
 * its unit as stored (not the table's bytes/s, ns or ops/s scaling,
 * judge/report_data.h rep_fmt_value(); the API's goldens pin this form). */
static void fmt_value(char *out, size_t size, double v, const char *unit)
{
	if (isnan(v))
		snprintf(out, size, "-");
	else if (unit && !strcmp(unit, "s"))
		snprintf(out, size, fabs(v) >= 1000 ? "%.0fs" : "%.1fs", v);
	else if (unit && *unit)
		snprintf(out, size, "%.4g %s", v, unit);
	else
		snprintf(out, size, "%.4g", v);
}

/* The job's distinct cells, in first-run order; *n of them (new strings). */
static size_t cell_index(char ***cells, size_t *n, const char *cell)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*cells)[i], cell))
			return i;
	*cells = xrealloc(*cells, (*n + 1) * sizeof(**cells));
	(*cells)[*n] = xstrdup(cell);
	return (*n)++;
}

/* cell less the "k=v" tokens every cell of the job shares: what tells the
 * cells apart ("fs=ext4 mode=alive" among mode=alive/removed -> "mode=alive"). */
static char *cell_diff(char *const *cells, size_t n, const char *cell)
{
	struct buf b = BUF_INIT;
	char *copy = xstrdup(cell), *save = NULL;

	for (char *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		bool everywhere = true;
		size_t len = strlen(tok);
		for (size_t i = 0; i < n && everywhere; i++) {
			const char *hit = strstr(cells[i], tok);
			everywhere = false;
			for (; hit; hit = strstr(hit + 1, tok))
				if ((hit == cells[i] || hit[-1] == ' ') && (!hit[len] || hit[len] == ' '))
					everywhere = true;
		}
		if (!everywhere)
			buf_printf(&b, "%s%s", b.len ? " " : "", tok);
	}
	free(copy);
	return buf_detach(&b);
}

struct vals { double *v; size_t n, cap; int64_t runs; };

static void vals_push(struct vals *pv, double x)
{
	if (pv->n == pv->cap) {
		pv->cap = pv->cap ? 2 * pv->cap : 64;
		pv->v = xrealloc(pv->v, pv->cap * sizeof(*pv->v));
	}
	pv->v[pv->n++] = x;
}

/* Headlines never pool cells: a variant's median over runs of different
 * cells (2.0s alive and 4.2s removed giving "3.7s") is no one's result.
 * With one cell each variant gets its median; with several, each
 * (variant, cell) does, listed when there are at most this many, else the
 * headline gives the count and points to the report. */
#define HEADLINE_MAX_ENTRIES 6

/* A job's runs' values of its metric, by variant and by (variant, cell). */
struct medians {
	struct db_variant_row *var;
	size_t nvar;
	char **cells;             /* distinct, in first-run order */
	size_t ncells, cap;       /* cap: columns allocated in percell[k] */
	struct vals *per;         /* [nvar + 1] */
	struct vals **percell;    /* [nvar + 1][cap] */
};

static void medians_release(struct medians *m)
{
	for (size_t k = 0; m->per && k <= m->nvar; k++) {
		free(m->per[k].v);
		for (size_t ci = 0; m->percell && m->percell[k] && ci < m->cap; ci++)
			free(m->percell[k][ci].v);
		if (m->percell)
			free(m->percell[k]);
	}
	for (size_t i = 0; i < m->ncells; i++)
		free(m->cells[i]);
	free(m->cells);
	free(m->per);
	free(m->percell);
	db_variant_rows_free(m->var, m->nvar);
}

/* Read the job's variants and its runs' values of metric into m. */
static int medians_load(struct db *db, struct medians *m, int64_t job_id, const char *metric,
			struct buf *err)
{
	struct db_api_run *runs = NULL;
	size_t nruns = 0;
	int r;

	if ((r = db_job_variants(db, job_id, &m->var, &m->nvar, err)))
		return r;
	m->per = xcalloc(m->nvar + 1, sizeof(*m->per));
	m->percell = xcalloc(m->nvar + 1, sizeof(*m->percell));
	if ((r = db_api_runs(db, job_id, metric, &runs, &nruns, err)))
		return r;
	for (size_t i = 0; i < nruns; i++) {
		size_t k = 0, ci = cell_index(&m->cells, &m->ncells, runs[i].cell ? runs[i].cell : "");

		if (m->ncells > m->cap) {
			for (size_t j = 0; j <= m->nvar; j++) {
				m->percell[j] = xrealloc(m->percell[j], m->ncells * sizeof(**m->percell));
				memset(&m->percell[j][m->cap], 0,
				       (m->ncells - m->cap) * sizeof(**m->percell));
			}
			m->cap = m->ncells;
		}
		/* a job has a handful of variants: a linear look-up is enough */
		while (k < m->nvar && m->var[k].id != runs[i].variant_id)
			k++;
		m->per[k].runs++;
		m->percell[k][ci].runs++;
		if (runs[i].source == DB_VALUE_NONE)
			continue;
		vals_push(&m->per[k], runs[i].value);
		vals_push(&m->percell[k][ci], runs[i].value);
	}
	db_api_runs_free(runs, nruns);
	return 0;
}

/* Variant k's cells: [{"cell","with_value","median"}] for those it ran
 * in, each also added to the headline while it has room. */
static json_t *variant_cells(const struct medians *m, size_t k, const char *unit,
			     struct buf *head, size_t *entries)
{
	json_t *jc = json_array();
	char txt[64];

	for (size_t ci = 0; ci < m->ncells; ci++) {
		const struct vals *pv = &m->percell[k][ci];
		double cm = pv->n ? stats_median(pv->v, pv->n) : NAN;
		char *diff;

		if (!pv->runs)
			continue;
		diff = cell_diff(m->cells, m->ncells, m->cells[ci]);
		json_array_append_new(jc, json_pack("{s:s,s:I,s:o}", "cell", m->cells[ci],
			"with_value", (json_int_t)pv->n,
			"median", isnan(cm) ? json_null() : json_real(cm)));
		fmt_value(txt, sizeof(txt), cm, unit);
		if (++*entries <= HEADLINE_MAX_ENTRIES)
			buf_printf(head, "%s%s %s %s", *entries > 1 ? ", " : "",
				   m->var[k].name, diff, txt);
		free(diff);
	}
	return jc;
}

/* Add "variants" (id, idx, name, runs, with_value, median; with several
 * cells median is null and "cells" has each cell's), "cells" (how many)
 * and "headline" to job obj, for the job's metric. */
static int add_variant_medians(struct db *db, json_t *obj, int64_t job_id,
			       const char *metric, const char *unit, struct buf *err)
{
	struct medians m = { 0 };
	struct buf head = BUF_INIT;
	json_t *variants;
	size_t entries = 0;
	int r;

	if ((r = medians_load(db, &m, job_id, metric, err)))
		goto out;
	variants = json_array();
	for (size_t k = 0; k < m.nvar; k++) {
		double med = m.per[k].n ? stats_median(m.per[k].v, m.per[k].n) : NAN;
		json_t *o = json_pack("{s:I, s:i, s:s, s:I, s:I}", "id", (json_int_t)m.var[k].id,
				      "idx", m.var[k].idx, "name", m.var[k].name,
				      "runs", (json_int_t)m.per[k].runs,
				      "with_value", (json_int_t)m.per[k].n);
		char txt[64];

		json_array_append_new(variants, o);
		if (m.ncells <= 1) {
			json_object_set_new(o, "median", isnan(med) ? json_null() : json_real(med));
			fmt_value(txt, sizeof(txt), med, unit);
			buf_printf(&head, "%s%s %s", k ? ", " : "", m.var[k].name, txt);
			continue;
		}
		json_object_set_new(o, "median", json_null());
		json_object_set_new(o, "cells", variant_cells(&m, k, unit, &head, &entries));
	}
	json_object_set_new(obj, "variants", variants);
	json_object_set_new(obj, "cells", json_integer((json_int_t)m.ncells));
	if (!m.nvar)
		json_object_set_new(obj, "headline", json_string(""));
	else if (entries > HEADLINE_MAX_ENTRIES)
		json_object_set_new(obj, "headline", json_sprintf("%s: %zu variants x %zu cells,"
			" see the report", metric, m.nvar, m.ncells));
	else
		json_object_set_new(obj, "headline", json_sprintf("median %s: %s", metric,
								   buf_str(&head)));
out:
	medians_release(&m);
	buf_release(&head);
	return r;
}

/* "change": {"label", "cell", "change_pct", "p", "comparisons"} of the
 * job's report (report_headline(): the comparison with the smallest p),
 * null when it has none (one variant, nothing finished, no axis). */
static void add_change(struct db *db, json_t *o, int64_t job_id)
{
	struct report_headline h;

	if (report_job_headline(&h, db, job_id, NULL) || !h.has) {
		json_object_set_new(o, "change", json_null());
		return;
	}
	json_object_set_new(o, "change", json_pack("{s:s, s:s, s:o, s:f, s:I}",
		"label", h.label, "cell", h.cell,
		"change_pct", isfinite(h.change_pct) ? json_real(h.change_pct) : json_null(),
		"p", h.p, "comparisons", (json_int_t)h.ncomparisons));
}

/* A job row as an object, with metric info and medians. */
static int job_obj(struct db *db, json_t **out, const struct db_api_job *j, struct buf *err)
{
	char unit[32], better[16];
	json_t *o;
	int r;

	o = json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:I, s:I}",
		      "id", (json_int_t)j->id, "name", api_str_or_null(j->name),
		      "kind", api_str_or_null(j->kind), "status", api_str_or_null(j->status),
		      "metric", api_str_or_null(j->metric), "created_at", api_str_or_null(j->created_at),
		      "started_at", api_str_or_null(j->started_at),
		      "finished_at", api_str_or_null(j->finished_at), "error", api_str_or_null(j->error),
		      "seed", (json_int_t)j->seed, "runs_total", (json_int_t)j->runs_total,
		      "runs_done", (json_int_t)j->runs_done,
		      "runs_running", (json_int_t)j->runs_running);
	json_object_set_new(o, "runs_ok", json_integer((json_int_t)j->runs_ok));
	json_object_set_new(o, "runs_failed", json_integer((json_int_t)j->runs_failed));
	json_object_set_new(o, "runs_skipped", json_integer((json_int_t)j->runs_skipped));
	if ((r = db_api_metric_info(db, j->metric, unit, sizeof(unit), better, sizeof(better), err)))
		goto fail;
	json_object_set_new(o, "unit", *unit ? json_string(unit) : json_null());
	json_object_set_new(o, "better", *better ? json_string(better) : json_null());
	if ((r = add_variant_medians(db, o, j->id, j->metric, unit, err)))
		goto fail;
	add_change(db, o, j->id);
	*out = o;
	return 0;
fail:
	json_decref(o);
	return r;
}

int api_view_jobs(struct db *db, json_t **out, int limit, struct buf *err)
{
	struct db_api_job *jobs = NULL;
	size_t n = 0;
	json_t *a, *o;
	int r;

	if ((r = db_api_jobs(db, &jobs, &n, limit, err)))
		return r;
	a = json_array();
	for (size_t i = 0; i < n && !r; i++)
		if (!(r = job_obj(db, &o, &jobs[i], err)))
			json_array_append_new(a, o);
	db_api_jobs_free(jobs, n);
	if (r)
		json_decref(a);
	else
		*out = a;
	return r;
}

/* Matrix dimensions from cells "fs=ext4 mode=removed" (in byte order):
 * key → its distinct values in the order the cells give them. */
static int add_dimensions(struct db *db, json_t *obj, int64_t job_id, struct buf *err)
{
	char **cells = NULL;
	size_t n = 0;
	json_t *dims;
	int r;

	if ((r = db_api_job_cells(db, job_id, &cells, &n, err)))
		return r;
	dims = json_object();
	for (size_t c = 0; c < n; c++) {
		char *save = NULL;

		for (char *tok = strtok_r(cells[c], " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			char *eq = strchr(tok, '=');
			json_t *vals, *v;
			size_t i;

			if (!eq || eq == tok)
				continue;
			*eq = '\0';
			vals = json_object_get(dims, tok);
			if (!vals) {
				vals = json_array();
				json_object_set_new(dims, tok, vals);
			}
			json_array_foreach(vals, i, v)
				if (!strcmp(json_string_value(v), eq + 1))
					break;
			if (i == json_array_size(vals))
				json_array_append_new(vals, json_string(eq + 1));
		}
		free(cells[c]);
	}
	free(cells);
	json_object_set_new(obj, "dimensions", dims);
	return 0;
}

int api_view_job(struct db *db, json_t **out, int64_t job_id, struct buf *err)
{
	struct db_api_job j = { 0 };
	json_t *o = NULL;
	int r;

	if ((r = db_api_job(db, &j, job_id, err)) || (r = job_obj(db, &o, &j, err)))
		goto out;
	json_object_set_new(o, "spec", json_text(j.spec_json));
	if ((r = add_dimensions(db, o, job_id, err)))
		goto out;
	*out = o;
	o = NULL;
out:
	json_decref(o);
	db_api_job_release(&j);
	return r;
}

int api_view_variants(struct db *db, json_t **out, int64_t job_id, struct buf *err)
{
	struct db_api_variant *v = NULL;
	size_t n = 0;
	json_t *a;
	int r;

	if ((r = db_api_variants(db, job_id, &v, &n, err)))
		return r;
	a = json_array();
	for (size_t i = 0; i < n; i++) {
		const struct db_api_variant *x = &v[i];
		json_array_append_new(a, json_pack(
			"{s:I, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:o}",
			"id", (json_int_t)x->id, "idx", x->idx, "name", api_str_or_null(x->name),
			"base_rev", api_str_or_null(x->base_rev), "commit_oid", api_str_or_null(x->commit_oid),
			"patches", api_str_or_null(x->patches), "status", api_str_or_null(x->status),
			"error", api_str_or_null(x->error),
			"kernel_id", x->kernel_id ? json_integer(x->kernel_id) : json_null(),
			"series", api_str_or_null(x->series),
			"series_version", x->series ? json_integer(x->series_version) : json_null(),
			"series_subject", api_str_or_null(x->series_subject),
			"runs_total", (json_int_t)x->runs_total, "runs_done", (json_int_t)x->runs_done,
			"spec", json_text(x->spec_json)));
	}
	db_api_variants_free(v, n);
	*out = a;
	return 0;
}

/* One run as api_view_runs() lists it. */
static json_t *run_obj(const struct db_api_run *x)
{
	json_t *o = json_pack("{s:I, s:I, s:I, s:o, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
		"id", (json_int_t)x->id, "variant_id", (json_int_t)x->variant_id,
		"seq", (json_int_t)x->seq, "variant", api_str_or_null(x->variant), "repeat", x->repeat,
		"cell", api_str_or_null(x->cell), "fs", api_str_or_null(x->fs),
		"status", api_str_or_null(x->status), "accel", api_str_or_null(x->accel),
		"host", api_str_or_null(x->host), "kernel_release", api_str_or_null(x->kernel_release),
		"started_at", api_str_or_null(x->started_at), "finished_at", api_str_or_null(x->finished_at),
		"error", api_str_or_null(x->error));

	json_object_set_new(o, "records", json_integer(x->records));
	json_object_set_new(o, "bad_lines", json_integer(x->bad_lines));
	json_object_set_new(o, "params", json_text(x->params_json));
	json_object_set_new(o, "has_console", json_boolean(x->has_console));
	json_object_set_new(o, "lab_host", api_str_or_null(x->lab_host));
	json_object_set_new(o, "value", x->source == DB_VALUE_NONE ? json_null() :
			    json_real(x->value));
	json_object_set_new(o, "value_source", x->source == DB_VALUE_NONE ? json_null() :
			    json_string(x->source == DB_VALUE_SUMMARY ? "summary" :
					x->source == DB_VALUE_MEDIAN ? "median of samples" : "samples"));
	return o;
}

int api_view_runs(struct db *db, json_t **out, int64_t job_id, const char *metric,
		  struct buf *err)
{
	struct db_api_run *runs = NULL;
	size_t n = 0;
	char *job_metric = NULL, unit[32], better[16];
	json_t *a;
	int r = 0;

	if (!metric && (r = db_api_job_metric(db, job_id, &job_metric, err)))
		goto out;
	if (!metric && !(metric = job_metric)) {
		r = err_setf(err, -EIO, "job %lld has no headline metric in the store",
			     (long long)job_id);
		goto out;
	}
	if ((r = db_api_metric_info(db, metric, unit, sizeof(unit), better, sizeof(better), err)) ||
	    (r = db_api_runs(db, job_id, metric, &runs, &n, err)))
		goto out;
	a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, run_obj(&runs[i]));
	*out = json_pack("{s:I, s:s, s:o, s:o, s:o}", "job_id", (json_int_t)job_id, "metric", metric,
			 "unit", *unit ? json_string(unit) : json_null(),
			 "better", *better ? json_string(better) : json_null(), "runs", a);
out:
	db_api_runs_free(runs, n);
	free(job_metric);
	return r;
}

/* One run's curve {"run_id", "variant_id", "n", "t", "v"}, downsampled
 * in place to at most max_points. */
static json_t *curve_obj(struct db_api_curve *c, long max_points)
{
	size_t kept = downsample_max(c->t, c->v, c->n, (size_t)max_points);
	json_t *ta = json_array(), *va = json_array();

	for (size_t i = 0; i < kept; i++) {
		json_array_append_new(ta, json_real(c->t[i]));
		json_array_append_new(va, json_real(c->v[i]));
	}
	return json_pack("{s:I, s:I, s:I, s:o, s:o}",
		"run_id", (json_int_t)c->run_id, "variant_id", (json_int_t)c->variant_id,
		"n", (json_int_t)c->n, "t", ta, "v", va);
}

int api_view_samples(struct db *db, json_t **out, int64_t job_id, int64_t run_id,
		     const char *metric, long max_points, struct buf *err)
{
	struct db_api_curve *c = NULL;
	char unit[32], better[16];
	size_t n = 0;
	json_t *curves;
	int r;

	if ((r = db_api_samples(db, job_id, run_id, metric, &c, &n, err)) ||
	    (r = db_api_metric_info(db, metric, unit, sizeof(unit), better, sizeof(better), err)))
		goto out;
	curves = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(curves, curve_obj(&c[i], max_points));
	*out = json_pack("{s:s, s:o, s:o, s:I, s:o}", "metric", metric,
			 "unit", *unit ? json_string(unit) : json_null(),
			 "better", *better ? json_string(better) : json_null(),
			 "max_points", (json_int_t)max_points, "runs", curves);
out:
	db_api_curves_free(c, n);
	return r;
}

static json_t *kernel_obj(const struct db_api_kernel *k)
{
	return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b}",
		"id", (json_int_t)k->id, "source", api_str_or_null(k->source),
		"tree_oid", api_str_or_null(k->tree_oid), "config_hash", api_str_or_null(k->config_hash),
		"release", api_str_or_null(k->release), "image_path", api_str_or_null(k->image_path),
		"build_status", api_str_or_null(k->build_status),
		"build_error", api_str_or_null(k->build_error),
		"build_s", k->has_build_s ? json_real(k->build_s) : json_null(),
		"created_at", api_str_or_null(k->created_at), "has_build_log", k->has_build_log);
}

/* The run's phases, summary and sampled metrics, added to o. */
static void add_run_lists(json_t *o, const struct db_api_run_detail *d)
{
	json_t *phases = json_array(), *summary = json_object(), *sm = json_array();

	for (size_t i = 0; i < d->nphases; i++)
		json_array_append_new(phases, json_pack("{s:f, s:s}", "t", d->phases[i].t,
							"name", d->phases[i].name));
	for (size_t i = 0; i < d->nsummary; i++)
		json_object_set_new(summary, d->summary[i].metric, json_real(d->summary[i].value));
	for (size_t i = 0; i < d->nsample_metrics; i++) {
		const struct db_api_sample_metric *m = &d->sample_metrics[i];
		json_array_append_new(sm, json_pack("{s:s, s:o, s:o, s:I}", "name", m->metric.name,
						    "unit", api_str_or_null(m->metric.unit),
						    "better", api_str_or_null(m->metric.better),
						    "n", (json_int_t)m->n));
	}
	json_object_set_new(o, "phases", phases);
	json_object_set_new(o, "summary", summary);
	json_object_set_new(o, "sample_metrics", sm);
}

int api_view_run(struct db *db, json_t **out, int64_t run_id, struct buf *err)
{
	struct db_api_run_detail d;
	json_t *o;
	int r;

	if ((r = db_api_run(db, run_id, &d, err)))
		return r;
	o = json_pack("{s:I, s:I, s:o, s:o, s:I, s:o, s:I, s:i, s:o, s:o, s:o, s:o, s:o, s:o}",
		"id", (json_int_t)d.id, "job_id", (json_int_t)d.job_id, "job", api_str_or_null(d.job),
		"job_metric", api_str_or_null(d.job_metric), "variant_id", (json_int_t)d.variant_id,
		"variant", api_str_or_null(d.variant), "seq", (json_int_t)d.seq, "repeat", d.repeat,
		"cell", api_str_or_null(d.cell), "fs", api_str_or_null(d.fs),
		"status", api_str_or_null(d.status), "accel", api_str_or_null(d.accel),
		"host", api_str_or_null(d.host), "kernel_release", api_str_or_null(d.kernel_release));
	json_object_set_new(o, "agent_version", api_str_or_null(d.agent_version));
	json_object_set_new(o, "started_at", api_str_or_null(d.started_at));
	json_object_set_new(o, "finished_at", api_str_or_null(d.finished_at));
	json_object_set_new(o, "error", api_str_or_null(d.error));
	json_object_set_new(o, "records", json_integer(d.records));
	json_object_set_new(o, "bad_lines", json_integer(d.bad_lines));
	json_object_set_new(o, "has_console", json_boolean(d.has_console));
	json_object_set_new(o, "kernel_id", d.kernel_id ? json_integer(d.kernel_id) : json_null());
	json_object_set_new(o, "params", json_text(d.params_json));
	json_object_set_new(o, "hello", json_text(d.hello_json));
	json_object_set_new(o, "kernel", d.has_kernel ? kernel_obj(&d.kernel) : json_null());
	add_run_lists(o, &d);
	db_api_run_release(&d);
	*out = o;
	return 0;
}

int api_view_run_probes(struct db *db, json_t **out, int64_t run_id, struct buf *err)
{
	struct db_api_probe *p = NULL;
	json_t *series, *final, *cur = NULL;
	size_t n = 0;
	int r;

	if ((r = db_api_run_probes(db, run_id, &p, &n, err)))
		return r;
	series = json_array();
	final = json_array();
	for (size_t i = 0; i < n; i++) {
		if (!p[i].has_t) {
			json_array_append_new(final, json_pack("{s:s, s:s, s:I}", "name", p[i].name,
				"key", p[i].key, "count", (json_int_t)p[i].count));
			continue;
		}
		if (!cur || strcmp(json_string_value(json_object_get(cur, "name")), p[i].name) ||
		    strcmp(json_string_value(json_object_get(cur, "key")), p[i].key)) {
			cur = json_pack("{s:s, s:s, s:[], s:[]}", "name", p[i].name, "key", p[i].key,
					"t", "count");
			json_array_append_new(series, cur);
		}
		json_array_append_new(json_object_get(cur, "t"), json_real(p[i].t));
		json_array_append_new(json_object_get(cur, "count"), json_integer(p[i].count));
	}
	db_api_probes_free(p, n);
	*out = json_pack("{s:I, s:o, s:o}", "run_id", (json_int_t)run_id,
			 "series", series, "final", final);
	return 0;
}
