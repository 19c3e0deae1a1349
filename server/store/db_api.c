/* db_api.c - read queries behind the web API: jobs, variants, runs with
 * their headline values, curves, probes, console and build-log paths
 * (see db_api.h for the shapes). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/db.h"
#include "store/db_api.h"
#include "store/db_internal.h"
#include "error.h"
#include "judge/downsample.h"
#include "judge/stats.h"
#include "util.h"

/* The column as a JSON value of its own type (NULL → null). */
static json_t *col_json(sqlite3_stmt *st, int i)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		return json_integer(sqlite3_column_int64(st, i));
	case SQLITE_FLOAT:
		return json_real(sqlite3_column_double(st, i));
	case SQLITE_NULL:
		return json_null();
	default:
		return json_string((const char *)sqlite3_column_text(st, i));
	}
}

/* A TEXT column holding JSON, parsed; unparsable text is kept as a string. */
static json_t *col_json_text(sqlite3_stmt *st, int i)
{
	const char *s = (const char *)sqlite3_column_text(st, i);
	json_t *v;

	if (!s)
		return json_null();
	v = json_loads(s, JSON_DECODE_ANY, NULL);
	return v ? v : json_string(s);
}

/* Set obj's keys from the row's columns, named by the statement. */
static void row_to_obj(json_t *obj, sqlite3_stmt *st, int from, int to)
{
	for (int i = from; i < to; i++)
		json_object_set_new(obj, sqlite3_column_name(st, i), col_json(st, i));
}

static int step_err(struct db *db, int rc, const char *what, struct buf *err)
{
	return rc == SQLITE_DONE ? 0 : db_fail(db, rc, err, "cannot %s", what);
}

/* The end of a listing: finalize st, then hand the array a to *out when r
 * is 0, else free it. Returns r. */
static int finish_array(sqlite3_stmt *st, int r, json_t *a, json_t **out)
{
	sqlite3_finalize(st);
	if (r)
		json_decref(a);
	else
		*out = a;
	return r;
}

int db_api_metrics(struct db *db, json_t **out, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	json_t *a = json_array();
	int r, rc;

	if ((r = db_prepare(db, &st, "SELECT name, unit, better FROM metrics ORDER BY name", err)))
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *o = json_object();
		row_to_obj(o, st, 0, 3);
		json_array_append_new(a, o);
	}
	r = step_err(db, rc, "list the metrics", err);
out:
	return finish_array(st, r, a, out);
}

int db_api_metric_info(struct db *db, const char *metric, char *unit, size_t unit_sz,
		       char *better, size_t better_sz, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r, rc;

	unit[0] = better[0] = '\0';
	if ((r = db_prepare(db, &st, "SELECT coalesce(unit, ''), coalesce(better, '')"
			    " FROM metrics WHERE name = ?", err)))
		return r;
	sqlite3_bind_text(st, 1, metric, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		snprintf(unit, unit_sz, "%s", sqlite3_column_text(st, 0));
		snprintf(better, better_sz, "%s", sqlite3_column_text(st, 1));
	} else {
		r = step_err(db, rc, "look up the metric", err);
	}
	sqlite3_finalize(st);
	return r;
}

/*
 * A derived metric: worst_X is the max of X's samples, mean_X their mean
 * (report.h says the same of incomplete runs). Writes the SQL aggregate
 * and the sampled metric's name; false when metric is not derived.
 */
static bool derived_metric(const char *metric, const char **agg, const char **base)
{
	if (!strncmp(metric, "worst_", 6)) {
		*agg = "max";
		*base = metric + 6;
		return true;
	}
	if (!strncmp(metric, "mean_", 5)) {
		*agg = "avg";
		*base = metric + 5;
		return true;
	}
	return false;
}

/*
 * Per-run values of metric for a job: a statement yielding (run id,
 * variant id, summary value, derived value), bound and ready to step.
 */
static int prepare_run_values(struct db *db, sqlite3_stmt **out, int64_t job_id,
			      const char *metric, const char *select_cols, struct buf *err)
{
	const char *agg = "max", *base = "";
	bool derived = derived_metric(metric, &agg, &base);
	char *sql = xasprintf(
		"SELECT r.id, r.variant_id,"
		" (SELECT value FROM run_summary s WHERE s.run_id = r.id AND s.metric = ?2),"
		" %s%s%s%s"
		" FROM runs r WHERE r.job_id = ?1 ORDER BY r.seq, r.id",
		derived ? "(SELECT " : "NULL",
		derived ? agg : "",
		derived ? "(value) FROM samples WHERE run_id = r.id AND metric_id ="
			  " (SELECT id FROM metrics WHERE name = ?3))" : "",
		select_cols);
	int r = db_prepare(db, out, sql, err);

	free(sql);
	if (r)
		return r;
	sqlite3_bind_int64(*out, 1, job_id);
	sqlite3_bind_text(*out, 2, metric, -1, SQLITE_TRANSIENT);
	if (derived)
		sqlite3_bind_text(*out, 3, base, -1, SQLITE_TRANSIENT);
	return 0;
}

/* A value as the cover-letter table writes it (report.c): "85.3s" for
 * seconds, else 4 significant digits and the unit. */
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

/* Add "variants" (id, idx, name, runs, with_value, median; with several
 * cells median is null and "cells" has each cell's), "cells" (how many)
 * and "headline" to job obj, for the job's metric. */
static int add_variant_medians(struct db *db, json_t *obj, int64_t job_id,
			       const char *metric, const char *unit, struct buf *err)
{
	sqlite3_stmt *st = NULL, *vs = NULL;
	json_t *variants = json_array();
	struct buf head = BUF_INIT;
	struct vals *per = NULL, **percell = NULL;
	char **cells = NULL;
	size_t nvar = 0, ncells = 0, cap = 0;
	int r, rc;

	if ((r = db_prepare(db, &vs, "SELECT id, idx, name FROM variants WHERE job_id = ?"
			    " ORDER BY idx", err)))
		goto out;
	sqlite3_bind_int64(vs, 1, job_id);
	while ((rc = sqlite3_step(vs)) == SQLITE_ROW) {
		json_t *o = json_object();
		row_to_obj(o, vs, 0, 3);
		json_array_append_new(variants, o);
	}
	if ((r = step_err(db, rc, "list the job's variants", err)))
		goto out;
	nvar = json_array_size(variants);
	per = xcalloc(nvar + 1, sizeof(*per));
	percell = xcalloc(nvar + 1, sizeof(*percell));
	if ((r = prepare_run_values(db, &st, job_id, metric, ", r.cell", err)))
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t vid = sqlite3_column_int64(st, 1);
		int c = sqlite3_column_type(st, 2) != SQLITE_NULL ? 2 :
			sqlite3_column_type(st, 3) != SQLITE_NULL ? 3 : -1;
		const char *cell = (const char *)sqlite3_column_text(st, 4);
		size_t k = 0, ci = cell_index(&cells, &ncells, cell ? cell : "");

		if (ncells > cap) {
			for (size_t j = 0; j <= nvar; j++) {
				percell[j] = xrealloc(percell[j], ncells * sizeof(**percell));
				memset(&percell[j][cap], 0, (ncells - cap) * sizeof(**percell));
			}
			cap = ncells;
		}
		/* a job has a handful of variants: a linear look-up is enough */
		while (k < nvar && json_integer_value(json_object_get(
				json_array_get(variants, k), "id")) != vid)
			k++;
		per[k].runs++;
		percell[k][ci].runs++;
		if (c < 0)
			continue;
		vals_push(&per[k], sqlite3_column_double(st, c));
		vals_push(&percell[k][ci], sqlite3_column_double(st, c));
	}
	if ((r = step_err(db, rc, "read the job's run values", err)))
		goto out;
	size_t entries = 0;
	for (size_t k = 0; k < nvar; k++) {
		json_t *o = json_array_get(variants, k);
		double m = per[k].n ? stats_median(per[k].v, per[k].n) : NAN;
		char txt[64];

		json_object_set_new(o, "runs", json_integer(per[k].runs));
		json_object_set_new(o, "with_value", json_integer((json_int_t)per[k].n));
		if (ncells <= 1) {
			json_object_set_new(o, "median", isnan(m) ? json_null() : json_real(m));
			fmt_value(txt, sizeof(txt), m, unit);
			buf_printf(&head, "%s%s %s", k ? ", " : "",
				   json_string_value(json_object_get(o, "name")), txt);
			continue;
		}
		json_t *jc = json_array();
		json_object_set_new(o, "median", json_null());
		for (size_t ci = 0; ci < ncells; ci++) {
			struct vals *pv = &percell[k][ci];
			double cm = pv->n ? stats_median(pv->v, pv->n) : NAN;
			char *diff = cell_diff(cells, ncells, cells[ci]);
			if (!pv->runs) {
				free(diff);
				continue;
			}
			json_array_append_new(jc, json_pack("{s:s,s:I,s:o}", "cell", cells[ci],
				"with_value", (json_int_t)pv->n,
				"median", isnan(cm) ? json_null() : json_real(cm)));
			fmt_value(txt, sizeof(txt), cm, unit);
			if (++entries <= HEADLINE_MAX_ENTRIES)
				buf_printf(&head, "%s%s %s %s", entries > 1 ? ", " : "",
					   json_string_value(json_object_get(o, "name")), diff, txt);
			free(diff);
		}
		json_object_set_new(o, "cells", jc);
	}
	json_object_set_new(obj, "variants", variants);
	json_object_set_new(obj, "cells", json_integer((json_int_t)ncells));
	variants = NULL;
	if (!nvar)
		json_object_set_new(obj, "headline", json_string(""));
	else if (entries > HEADLINE_MAX_ENTRIES)
		json_object_set_new(obj, "headline", json_sprintf("%s: %zu variants x %zu cells,"
			" see the report", metric, nvar, ncells));
	else
		json_object_set_new(obj, "headline", json_sprintf("median %s: %s", metric,
								   buf_str(&head)));
out:
	for (size_t k = 0; per && k <= nvar; k++) {
		free(per[k].v);
		for (size_t ci = 0; percell && percell[k] && ci < cap; ci++)
			free(percell[k][ci].v);
		if (percell)
			free(percell[k]);
	}
	for (size_t i = 0; i < ncells; i++)
		free(cells[i]);
	free(cells);
	free(per);
	free(percell);
	sqlite3_finalize(st);
	sqlite3_finalize(vs);
	json_decref(variants);
	buf_release(&head);
	return r;
}

#define JOB_COLS "j.id, j.name, j.kind, j.status, j.metric, j.created_at, j.started_at," \
	" j.finished_at, j.error, j.seed," \
	" (SELECT count(*) FROM runs r WHERE r.job_id = j.id) AS runs_total," \
	" (SELECT count(*) FROM runs r WHERE r.job_id = j.id" \
	"   AND r.status NOT IN ('pending', 'running')) AS runs_done," \
	" (SELECT count(*) FROM runs r WHERE r.job_id = j.id AND r.status = 'running') AS runs_running," \
	" j.spec_json"
#define JOB_NCOLS 14   /* spec_json last: parsed only for one job */

/* A job row (JOB_COLS) as an object, with metric info and medians. */
static int job_obj(struct db *db, json_t **out, sqlite3_stmt *st, struct buf *err)
{
	json_t *o = json_object();
	char unit[32], better[16];
	const char *metric = (const char *)sqlite3_column_text(st, 4);
	int r;

	row_to_obj(o, st, 0, JOB_NCOLS - 1);
	if ((r = db_api_metric_info(db, metric, unit, sizeof(unit), better, sizeof(better), err)))
		goto fail;
	json_object_set_new(o, "unit", *unit ? json_string(unit) : json_null());
	json_object_set_new(o, "better", *better ? json_string(better) : json_null());
	if ((r = add_variant_medians(db, o, sqlite3_column_int64(st, 0), metric, unit, err)))
		goto fail;
	*out = o;
	return 0;
fail:
	json_decref(o);
	return r;
}

int db_api_jobs(struct db *db, json_t **out, int limit, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	json_t *a = json_array(), *o;
	int r, rc;

	if ((r = db_prepare(db, &st, "SELECT " JOB_COLS " FROM jobs j ORDER BY j.id DESC LIMIT ?", err)))
		goto out;
	sqlite3_bind_int(st, 1, limit);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if ((r = job_obj(db, &o, st, err)))
			goto out;
		json_array_append_new(a, o);
	}
	r = step_err(db, rc, "list the jobs", err);
out:
	return finish_array(st, r, a, out);
}

/* Matrix dimensions from cells "fs=ext4 mode=removed": key → sorted
 * distinct values (as JSON arrays). */
static int add_dimensions(struct db *db, json_t *obj, int64_t job_id, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	json_t *dims = json_object();
	int r, rc;

	if ((r = db_prepare(db, &st, "SELECT DISTINCT cell FROM runs WHERE job_id = ? ORDER BY cell", err)))
		goto out;
	sqlite3_bind_int64(st, 1, job_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		char *cell = xstrdup((const char *)sqlite3_column_text(st, 0));
		char *save = NULL;

		for (char *tok = strtok_r(cell, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
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
		free(cell);
	}
	r = step_err(db, rc, "list the job's cells", err);
out:
	sqlite3_finalize(st);
	if (r)
		json_decref(dims);
	else
		json_object_set_new(obj, "dimensions", dims);
	return r;
}

int db_api_job(struct db *db, json_t **out, int64_t job_id, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	json_t *o = NULL;
	int r, rc;

	if ((r = db_prepare(db, &st, "SELECT " JOB_COLS " FROM jobs j WHERE j.id = ?", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		r = rc == SQLITE_DONE ? err_setf(err, -ENOENT, "no job %lld in the store", (long long)job_id) :
		    db_fail(db, 0, err, "cannot read job %lld", (long long)job_id);
		goto out;
	}
	if ((r = job_obj(db, &o, st, err)))
		goto out;
	json_object_set_new(o, "spec", col_json_text(st, JOB_NCOLS - 1));
	if ((r = add_dimensions(db, o, job_id, err)))
		goto out;
	*out = o;
	o = NULL;
out:
	json_decref(o);
	sqlite3_finalize(st);
	return r;
}

static int job_exists(struct db *db, int64_t job_id, struct buf *err)
{
	int64_t one;
	char id[32];

	int r;

	snprintf(id, sizeof(id), "%lld", (long long)job_id);
	r = db_query_int64(db, &one, "SELECT 1 FROM jobs WHERE id = ?", id, err);
	if (r == -ENOENT)
		err_setf(err, r, "no job %lld in the store", (long long)job_id);
	return r;
}

int db_api_variants(struct db *db, json_t **out, int64_t job_id, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	json_t *a = json_array();
	int r, rc;

	if ((r = job_exists(db, job_id, err)))
		goto out;
	if ((r = db_prepare(db, &st,
		"SELECT v.id, v.idx, v.name, v.base_rev, v.commit_oid, v.patches, v.status,"
		" v.error, v.kernel_id, s.name AS series, s.version AS series_version,"
		" s.subject AS series_subject,"
		" (SELECT count(*) FROM runs r WHERE r.variant_id = v.id) AS runs_total,"
		" (SELECT count(*) FROM runs r WHERE r.variant_id = v.id"
		"   AND r.status NOT IN ('pending', 'running')) AS runs_done,"
		" v.spec_json"
		" FROM variants v LEFT JOIN series s ON s.id = v.series_id"
		" WHERE v.job_id = ? ORDER BY v.idx", err)))
		goto out;
	sqlite3_bind_int64(st, 1, job_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *o = json_object();
		row_to_obj(o, st, 0, 14);
		json_object_set_new(o, "spec", col_json_text(st, 14));
		json_array_append_new(a, o);
	}
	r = step_err(db, rc, "list the job's variants", err);
out:
	return finish_array(st, r, a, out);
}

int db_api_runs(struct db *db, json_t **out, int64_t job_id, const char *metric, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	json_t *o = NULL, *runs = json_array();
	char *job_metric = NULL, unit[32], better[16];
	int r, rc;

	if ((r = job_exists(db, job_id, err)))
		goto out;
	if (!metric) {
		if ((r = db_prepare(db, &st, "SELECT metric FROM jobs WHERE id = ?", err)))
			goto out;
		sqlite3_bind_int64(st, 1, job_id);
		if (sqlite3_step(st) != SQLITE_ROW) {
			r = db_fail(db, 0, err, "cannot read job %lld's metric", (long long)job_id);
			goto out;
		}
		metric = job_metric = xstrdup((const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
		st = NULL;
	}
	if ((r = db_api_metric_info(db, metric, unit, sizeof(unit), better, sizeof(better), err)))
		goto out;
	if ((r = prepare_run_values(db, &st, job_id, metric,
		", r.seq, (SELECT name FROM variants v WHERE v.id = r.variant_id) AS variant,"
		" r.repeat_idx AS repeat, r.cell, r.fs, r.status, r.accel, r.host, r.kernel_release,"
		" r.started_at, r.finished_at, r.error, r.records, r.bad_lines, r.params_json,"
		" (r.console_log_path IS NOT NULL OR r.console_tail IS NOT NULL), r.lab_host", err)))
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *lab = sqlite3_column_text(st, 20);
		json_t *run = json_object();
		int src = sqlite3_column_type(st, 2) != SQLITE_NULL ? 2 :
			  sqlite3_column_type(st, 3) != SQLITE_NULL ? 3 : -1;

		json_object_set_new(run, "id", json_integer(sqlite3_column_int64(st, 0)));
		json_object_set_new(run, "variant_id", json_integer(sqlite3_column_int64(st, 1)));
		row_to_obj(run, st, 4, 18);
		json_object_set_new(run, "params", col_json_text(st, 18));
		json_object_set_new(run, "has_console", json_boolean(sqlite3_column_int(st, 19)));
		json_object_set_new(run, "lab_host", lab ? json_string((const char *)lab) : json_null());
		json_object_set_new(run, "value", src < 0 ? json_null() :
				    json_real(sqlite3_column_double(st, src)));
		json_object_set_new(run, "value_source", src < 0 ? json_null() :
				    json_string(src == 2 ? "summary" : "samples"));
		json_array_append_new(runs, run);
	}
	if ((r = step_err(db, rc, "list the job's runs", err)))
		goto out;
	o = json_pack("{s:I, s:s, s:o, s:o, s:o}", "job_id", (json_int_t)job_id, "metric", metric,
		      "unit", *unit ? json_string(unit) : json_null(),
		      "better", *better ? json_string(better) : json_null(), "runs", runs);
	runs = NULL;
	*out = o;
out:
	sqlite3_finalize(st);
	json_decref(runs);
	free(job_metric);
	return r;
}

/* Append one run's curve {"run_id", "variant_id", "n", "t", "v"} to a. */
static void add_curve(json_t *a, int64_t run_id, int64_t variant_id, double *t, double *v,
		      size_t n, long max_points)
{
	size_t kept = downsample_max(t, v, n, (size_t)max_points);
	json_t *ta = json_array(), *va = json_array();

	for (size_t i = 0; i < kept; i++) {
		json_array_append_new(ta, json_real(t[i]));
		json_array_append_new(va, json_real(v[i]));
	}
	json_array_append_new(a, json_pack("{s:I, s:I, s:I, s:o, s:o}",
		"run_id", (json_int_t)run_id, "variant_id", (json_int_t)variant_id,
		"n", (json_int_t)n, "t", ta, "v", va));
}

int db_api_samples(struct db *db, json_t **out, int64_t job_id, int64_t run_id,
		   const char *metric, long max_points, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	json_t *curves = json_array();
	double *t = NULL, *v = NULL;
	size_t n = 0, cap = 0;
	int64_t cur = -1, cur_variant = 0, metric_id;
	char unit[32], better[16], id[32];
	int r, rc;

	if (run_id) {
		snprintf(id, sizeof(id), "%lld", (long long)run_id);
		r = db_query_int64(db, &metric_id, "SELECT 1 FROM runs WHERE id = ?", id, err);
		if (r == -ENOENT)
			err_setf(err, r, "no run %lld in the store", (long long)run_id);
		if (r)
			goto out;
	} else if ((r = job_exists(db, job_id, err))) {
		goto out;
	}
	r = db_query_int64(db, &metric_id, "SELECT id FROM metrics WHERE name = ?", metric, err);
	if (r == -ENOENT) {
		r = err_setf(err, -EINVAL, "no metric '%s' in the store", metric);
	}
	if (r)
		goto out;
	if ((r = db_api_metric_info(db, metric, unit, sizeof(unit), better, sizeof(better), err)))
		goto out;
	if ((r = db_prepare(db, &st, run_id ?
		"SELECT s.run_id, r.variant_id, s.t_s, s.value FROM samples s"
		" JOIN runs r ON r.id = s.run_id"
		" WHERE s.run_id = ?1 AND s.metric_id = ?2 ORDER BY s.t_s" :
		"SELECT s.run_id, r.variant_id, s.t_s, s.value FROM runs r"
		" JOIN samples s ON s.run_id = r.id AND s.metric_id = ?2"
		" WHERE r.job_id = ?1 ORDER BY r.seq, r.id, s.t_s", err)))
		goto out;
	sqlite3_bind_int64(st, 1, run_id ? run_id : job_id);
	sqlite3_bind_int64(st, 2, metric_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t rid = sqlite3_column_int64(st, 0);

		if (rid != cur) {
			if (cur >= 0)
				add_curve(curves, cur, cur_variant, t, v, n, max_points);
			cur = rid;
			cur_variant = sqlite3_column_int64(st, 1);
			n = 0;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			t = xrealloc(t, cap * sizeof(*t));
			v = xrealloc(v, cap * sizeof(*v));
		}
		t[n] = sqlite3_column_double(st, 2);
		v[n] = sqlite3_column_double(st, 3);
		n++;
	}
	if ((r = step_err(db, rc, "read the samples", err)))
		goto out;
	if (cur >= 0)
		add_curve(curves, cur, cur_variant, t, v, n, max_points);
	*out = json_pack("{s:s, s:o, s:o, s:I, s:o}", "metric", metric,
			 "unit", *unit ? json_string(unit) : json_null(),
			 "better", *better ? json_string(better) : json_null(),
			 "max_points", (json_int_t)max_points, "runs", curves);
	curves = NULL;
out:
	sqlite3_finalize(st);
	json_decref(curves);
	free(t);
	free(v);
	return r;
}

int db_api_run(struct db *db, json_t **out, int64_t run_id, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	json_t *o = NULL, *arr;
	int64_t kernel_id = 0;
	int r, rc;

	if ((r = db_prepare(db, &st,
		"SELECT r.id, r.job_id, j.name AS job, j.metric AS job_metric, r.variant_id,"
		" v.name AS variant, r.seq, r.repeat_idx AS repeat, r.cell, r.fs, r.status,"
		" r.accel, r.host, r.kernel_release, r.agent_version, r.started_at,"
		" r.finished_at, r.error, r.records, r.bad_lines,"
		" (r.console_log_path IS NOT NULL OR r.console_tail IS NOT NULL) AS has_console,"
		" coalesce(r.kernel_id, v.kernel_id) AS kernel_id, r.params_json, r.hello_json"
		" FROM runs r JOIN jobs j ON j.id = r.job_id JOIN variants v ON v.id = r.variant_id"
		" WHERE r.id = ?", err)))
		return r;
	sqlite3_bind_int64(st, 1, run_id);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		r = rc == SQLITE_DONE ? err_setf(err, -ENOENT, "no run %lld in the store", (long long)run_id) :
		    db_fail(db, 0, err, "cannot read run %lld", (long long)run_id);
		goto out;
	}
	o = json_object();
	row_to_obj(o, st, 0, 22);
	json_object_set_new(o, "has_console", json_boolean(sqlite3_column_int(st, 20)));
	json_object_set_new(o, "params", col_json_text(st, 22));
	json_object_set_new(o, "hello", col_json_text(st, 23));
	kernel_id = sqlite3_column_int64(st, 21);
	sqlite3_finalize(st);
	st = NULL;

	json_object_set_new(o, "kernel", json_null());
	if (kernel_id) {
		if ((r = db_prepare(db, &st,
			"SELECT id, source, tree_oid, config_hash, release, image_path, build_status,"
			" build_error, build_s, created_at, (build_log_path IS NOT NULL) AS has_build_log"
			" FROM kernels WHERE id = ?", err)))
			goto out;
		sqlite3_bind_int64(st, 1, kernel_id);
		if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			json_t *k = json_object();
			row_to_obj(k, st, 0, 10);
			json_object_set_new(k, "has_build_log", json_boolean(sqlite3_column_int(st, 10)));
			json_object_set_new(o, "kernel", k);
		} else if ((r = step_err(db, rc, "read the run's kernel", err))) {
			goto out;
		}
		sqlite3_finalize(st);
		st = NULL;
	}

	arr = json_array();
	json_object_set_new(o, "phases", arr);
	if ((r = db_prepare(db, &st, "SELECT t_s AS t, name FROM phases WHERE run_id = ? ORDER BY t_s", err)))
		goto out;
	sqlite3_bind_int64(st, 1, run_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *p = json_object();
		row_to_obj(p, st, 0, 2);
		json_array_append_new(arr, p);
	}
	if ((r = step_err(db, rc, "read the run's phases", err)))
		goto out;
	sqlite3_finalize(st);
	st = NULL;

	arr = json_object();
	json_object_set_new(o, "summary", arr);
	if ((r = db_prepare(db, &st, "SELECT metric, value FROM run_summary WHERE run_id = ? ORDER BY metric", err)))
		goto out;
	sqlite3_bind_int64(st, 1, run_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_object_set_new(arr, (const char *)sqlite3_column_text(st, 0),
				    json_real(sqlite3_column_double(st, 1)));
	if ((r = step_err(db, rc, "read the run's summary", err)))
		goto out;
	sqlite3_finalize(st);
	st = NULL;

	arr = json_array();
	json_object_set_new(o, "sample_metrics", arr);
	if ((r = db_prepare(db, &st, "SELECT m.name, m.unit, m.better, count(*) AS n FROM samples s"
			    " JOIN metrics m ON m.id = s.metric_id WHERE s.run_id = ?"
			    " GROUP BY m.id ORDER BY m.name", err)))
		goto out;
	sqlite3_bind_int64(st, 1, run_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *m = json_object();
		row_to_obj(m, st, 0, 4);
		json_array_append_new(arr, m);
	}
	if ((r = step_err(db, rc, "list the run's sampled metrics", err)))
		goto out;
	*out = o;
	o = NULL;
out:
	sqlite3_finalize(st);
	json_decref(o);
	return r;
}

int db_api_run_probes(struct db *db, json_t **out, int64_t run_id, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	json_t *series = json_array(), *final = json_array(), *cur = NULL;
	char id[32];
	int64_t one;
	int r, rc;

	snprintf(id, sizeof(id), "%lld", (long long)run_id);
	if ((r = db_query_int64(db, &one, "SELECT 1 FROM runs WHERE id = ?", id, err)))
		goto out;
	if ((r = db_prepare(db, &st, "SELECT name, key, t_s, count FROM probes WHERE run_id = ?"
			    " ORDER BY name, key, t_s IS NULL, t_s", err)))
		goto out;
	sqlite3_bind_int64(st, 1, run_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		const char *key = (const char *)sqlite3_column_text(st, 1);

		if (sqlite3_column_type(st, 2) == SQLITE_NULL) {
			json_array_append_new(final, json_pack("{s:s, s:s, s:I}", "name", name,
				"key", key, "count", (json_int_t)sqlite3_column_int64(st, 3)));
			continue;
		}
		if (!cur || strcmp(json_string_value(json_object_get(cur, "name")), name) ||
		    strcmp(json_string_value(json_object_get(cur, "key")), key)) {
			cur = json_pack("{s:s, s:s, s:[], s:[]}", "name", name, "key", key,
					"t", "count");
			json_array_append_new(series, cur);
		}
		json_array_append_new(json_object_get(cur, "t"), json_real(sqlite3_column_double(st, 2)));
		json_array_append_new(json_object_get(cur, "count"),
				      json_integer(sqlite3_column_int64(st, 3)));
	}
	if ((r = step_err(db, rc, "read the run's probe counts", err)))
		goto out;
	*out = json_pack("{s:I, s:o, s:o}", "run_id", (json_int_t)run_id,
			 "series", series, "final", final);
	series = final = NULL;
out:
	sqlite3_finalize(st);
	json_decref(series);
	json_decref(final);
	return r;
}

/* Two nullable text columns of one row selected by id. */
static int two_texts(struct db *db, char **a_out, char **b_out, const char *sql, int64_t id, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r, rc;

	if ((r = db_prepare(db, &st, sql, err)))
		return r;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *a = (const char *)sqlite3_column_text(st, 0);
		const char *b = (const char *)sqlite3_column_text(st, 1);
		*a_out = a ? xstrdup(a) : NULL;
		if (b_out)
			*b_out = b ? xstrdup(b) : NULL;
	} else {
		r = rc == SQLITE_DONE ? err_setf(err, -ENOENT, "no row %lld in the store", (long long)id) :
		    db_fail(db, 0, err, "cannot read the log path of %lld", (long long)id);
	}
	sqlite3_finalize(st);
	return r;
}

int db_api_run_console(struct db *db, char **path_out, char **tail_out, int64_t run_id, struct buf *err)
{
	return two_texts(db, path_out, tail_out,
			 "SELECT console_log_path, console_tail FROM runs WHERE id = ?", run_id, err);
}

int db_api_kernel_build_log(struct db *db, char **path_out, int64_t kernel_id, struct buf *err)
{
	return two_texts(db, path_out, NULL,
			 "SELECT build_log_path, NULL FROM kernels WHERE id = ?", kernel_id, err);
}

int db_api_job_fingerprint(struct db *db, char **out, int64_t job_id, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r, rc;

	if ((r = db_prepare(db, &st,
		"SELECT j.status || '|' || j.metric || '|' ||"
		" (SELECT coalesce(group_concat(id || ':' || status || ':' || coalesce(kernel_id, ''), ','), '')"
		"   FROM variants WHERE job_id = j.id) || '|' ||"
		" (SELECT coalesce(group_concat(id || ':' || status || ':' || records || ':' || bad_lines"
		"   || ':' || variant_id || ':' || cell, ','), '') FROM runs WHERE job_id = j.id) || '|' ||"
		" (SELECT count(*) || ':' || total(value) FROM run_summary"
		"   WHERE run_id IN (SELECT id FROM runs WHERE job_id = j.id)) || '|' ||"
		" (SELECT count(*) || ':' || total(value) FROM samples"
		"   WHERE run_id IN (SELECT id FROM runs WHERE job_id = j.id AND status = 'running')) || '|' ||"
		" (SELECT count(*) || ':' || total(count) FROM probes"
		"   WHERE run_id IN (SELECT id FROM runs WHERE job_id = j.id AND status = 'running'))"
		" FROM jobs j WHERE j.id = ?", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = xstrdup((const char *)sqlite3_column_text(st, 0));
	else
		r = rc == SQLITE_DONE ? err_setf(err, -ENOENT, "no job %lld in the store", (long long)job_id) :
		    db_fail(db, 0, err, "cannot read job %lld's state", (long long)job_id);
	sqlite3_finalize(st);
	return r;
}

int db_job_cancel(struct db *db, int64_t job_id, char *status_out, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r, rc;

	if ((r = db_begin(db, err)))
		return r;
	if ((r = db_prepare(db, &st, "SELECT status FROM jobs WHERE id = ?", err)))
		goto out;
	sqlite3_bind_int64(st, 1, job_id);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		r = rc == SQLITE_DONE ? err_setf(err, -ENOENT, "no job %lld in the store", (long long)job_id) :
		    db_fail(db, 0, err, "cannot read job %lld", (long long)job_id);
		goto out;
	}
	if (status_out)
		snprintf(status_out, 32, "%s", sqlite3_column_text(st, 0));
	if (strcmp((const char *)sqlite3_column_text(st, 0), "pending") &&
	    strcmp((const char *)sqlite3_column_text(st, 0), "building") &&
	    strcmp((const char *)sqlite3_column_text(st, 0), "running")) {
		r = err_setf(err, -EALREADY, "job %lld already ended (%s)", (long long)job_id,
			     (const char *)sqlite3_column_text(st, 0));
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	if ((r = db_job_set_status(db, job_id, "cancelled", "cancelled through the API", err)))
		goto out;
	if ((r = db_prepare(db, &st, "UPDATE runs SET status = 'skipped', error = 'job cancelled'"
			    " WHERE job_id = ? AND status = 'pending'", err)))
		goto out;
	sqlite3_bind_int64(st, 1, job_id);
	r = step_err(db, sqlite3_step(st), "skip the job's pending runs", err);
out:
	sqlite3_finalize(st);
	if (r)
		db_rollback(db);
	else if ((r = db_commit(db, err)))
		db_rollback(db);
	return r;
}
