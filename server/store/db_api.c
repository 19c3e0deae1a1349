/* db_api.c - read queries behind the web API: metrics, jobs, variants,
 * runs with their values of a metric, curves, a run, probes, console and
 * build-log paths, as rows (see db_api.h; api/api_view.c shapes them). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/db.h"
#include "store/db_fleet.h"
#include "store/db_runs.h"
#include "store/db_api.h"
#include "store/db_internal.h"
#include "error.h"
#include "util.h"

static int step_err(struct db *db, int rc, const char *what, struct buf *err)
{
	return rc == SQLITE_DONE ? 0 : db_fail(db, rc, err, "cannot %s", what);
}

/* Room for one more row in *v (n rows, *cap slots of size each). */
static void *grow(void *v, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return v;
	*cap = *cap ? 2 * *cap : 16;
	return xrealloc(v, *cap * size);
}

static void read_metric(sqlite3_stmt *st, void *row)
{
	struct db_metric_row *m = row;

	m->name = db_col_strdup(st, 0);
	m->unit = db_col_strdup(st, 1);
	m->better = db_col_strdup(st, 2);
}

static void release_metric(void *row)
{
	struct db_metric_row *m = row;

	free(m->name);
	free(m->unit);
	free(m->better);
}

int db_metrics_list(struct db *db, struct db_metric_row **out, size_t *n, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	void *v;
	int r;

	if ((r = db_prepare(db, &st, "SELECT name, unit, better FROM metrics ORDER BY name", err)))
		return r;
	if (!(r = db_rows(db, st, sizeof(**out), read_metric, release_metric, &v, n, err,
			  "cannot list the metrics")))
		*out = v;
	return r;
}

void db_metric_rows_free(struct db_metric_row *v, size_t n)
{
	db_rows_free(v, n, sizeof(*v), release_metric);
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

#define JOB_COLS "j.id, j.name, j.kind, j.status, j.metric, j.created_at," \
	" coalesce(j.started_at, (SELECT min(r.started_at) FROM runs r WHERE r.job_id = j.id))," \
	" j.finished_at, j.error, j.seed," \
	" (SELECT count(*) FROM runs r WHERE r.job_id = j.id) AS runs_total," \
	" (SELECT count(*) FROM runs r WHERE r.job_id = j.id" \
	"   AND r.status NOT IN ('pending', 'running')) AS runs_done," \
	" (SELECT count(*) FROM runs r WHERE r.job_id = j.id AND r.status = 'running') AS runs_running," \
	" j.spec_json," \
	" (SELECT count(*) FROM runs r WHERE r.job_id = j.id" \
	"   AND r.status IN ('ok', 'incomplete')) AS runs_ok," \
	" (SELECT count(*) FROM runs r WHERE r.job_id = j.id" \
	"   AND r.status IN ('failed', 'timeout', 'kernel-panic', 'paused')) AS runs_failed," \
	" (SELECT count(*) FROM runs r WHERE r.job_id = j.id AND r.status = 'skipped') AS runs_skipped"

/* The current row of a JOB_COLS statement. */
static void read_job(sqlite3_stmt *st, void *row)
{
	struct db_api_job *j = row;

	j->id = sqlite3_column_int64(st, 0);
	j->name = db_col_strdup(st, 1);
	j->kind = db_col_strdup(st, 2);
	j->status = db_col_strdup(st, 3);
	j->metric = db_col_strdup(st, 4);
	j->created_at = db_col_strdup(st, 5);
	j->started_at = db_col_strdup(st, 6);
	j->finished_at = db_col_strdup(st, 7);
	j->error = db_col_strdup(st, 8);
	j->seed = sqlite3_column_int64(st, 9);
	j->runs_total = sqlite3_column_int64(st, 10);
	j->runs_done = sqlite3_column_int64(st, 11);
	j->runs_running = sqlite3_column_int64(st, 12);
	j->spec_json = db_col_strdup(st, 13);
	j->runs_ok = sqlite3_column_int64(st, 14);
	j->runs_failed = sqlite3_column_int64(st, 15);
	j->runs_skipped = sqlite3_column_int64(st, 16);
}

void db_api_job_release(struct db_api_job *j)
{
	free(j->name);
	free(j->kind);
	free(j->status);
	free(j->metric);
	free(j->created_at);
	free(j->started_at);
	free(j->finished_at);
	free(j->error);
	free(j->spec_json);
	memset(j, 0, sizeof(*j));
}

static void release_job(void *row)
{
	db_api_job_release(row);
}

void db_api_jobs_free(struct db_api_job *v, size_t n)
{
	db_rows_free(v, n, sizeof(*v), release_job);
}

int db_api_jobs(struct db *db, struct db_api_job **out, size_t *n, int limit, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	void *v;
	int r;

	if ((r = db_prepare(db, &st, "SELECT " JOB_COLS " FROM jobs j ORDER BY j.id DESC LIMIT ?", err)))
		return r;
	sqlite3_bind_int(st, 1, limit);
	if (!(r = db_rows(db, st, sizeof(**out), read_job, release_job, &v, n, err,
			  "cannot list the jobs")))
		*out = v;
	return r;
}

int db_api_job(struct db *db, struct db_api_job *out, int64_t job_id, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, "SELECT " JOB_COLS " FROM jobs j WHERE j.id = ?", err)))
		return r;
	if (!(r = db_job_row(db, st, job_id, NULL, err)))
		read_job(st, out);
	sqlite3_finalize(st);
	return r;
}

static void read_cell(sqlite3_stmt *st, void *row)
{
	*(char **)row = xstrdup((const char *)sqlite3_column_text(st, 0));
}

static void release_cell(void *row)
{
	free(*(char **)row);
}

int db_api_job_cells(struct db *db, int64_t job_id, char ***out, size_t *n, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	void *v;
	int r;

	if ((r = db_prepare(db, &st, "SELECT DISTINCT cell FROM runs WHERE job_id = ? ORDER BY cell", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	if (!(r = db_rows(db, st, sizeof(**out), read_cell, release_cell, &v, n, err,
			  "cannot list the job's cells")))
		*out = v;
	return r;
}

/* 0 when sql ("SELECT 1 … WHERE id = ?") finds id, -ENOENT "no <what> ID
 * in the store" when not. */
static int row_exists(struct db *db, const char *sql, const char *what, int64_t id,
		      struct buf *err)
{
	int64_t one;
	char arg[32];
	int r;

	snprintf(arg, sizeof(arg), "%lld", (long long)id);
	r = db_query_int64(db, &one, sql, arg, err);
	if (r == -ENOENT)
		err_setf(err, r, "no %s %lld in the store", what, (long long)id);
	return r;
}

static int job_exists(struct db *db, int64_t job_id, struct buf *err)
{
	return row_exists(db, "SELECT 1 FROM jobs WHERE id = ?", "job", job_id, err);
}

static int run_exists(struct db *db, int64_t run_id, struct buf *err)
{
	return row_exists(db, "SELECT 1 FROM runs WHERE id = ?", "run", run_id, err);
}

int db_api_job_metric(struct db *db, int64_t job_id, char **out, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, "SELECT metric FROM jobs WHERE id = ?", err)))
		return r;
	if (!(r = db_job_row(db, st, job_id, "metric", err)))
		*out = xstrdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return r;
}

static void read_variant(sqlite3_stmt *st, void *row)
{
	struct db_api_variant *x = row;

	x->id = sqlite3_column_int64(st, 0);
	x->idx = sqlite3_column_int(st, 1);
	x->name = db_col_strdup(st, 2);
	x->base_rev = db_col_strdup(st, 3);
	x->commit_oid = db_col_strdup(st, 4);
	x->patches = db_col_strdup(st, 5);
	x->status = db_col_strdup(st, 6);
	x->error = db_col_strdup(st, 7);
	x->kernel_id = sqlite3_column_int64(st, 8);
	x->series = db_col_strdup(st, 9);
	x->series_version = sqlite3_column_int64(st, 10);
	x->series_subject = db_col_strdup(st, 11);
	x->runs_total = sqlite3_column_int64(st, 12);
	x->runs_done = sqlite3_column_int64(st, 13);
	x->spec_json = db_col_strdup(st, 14);
}

static void release_variant(void *row)
{
	struct db_api_variant *x = row;

	free(x->name);
	free(x->base_rev);
	free(x->commit_oid);
	free(x->patches);
	free(x->status);
	free(x->error);
	free(x->series);
	free(x->series_subject);
	free(x->spec_json);
}

int db_api_variants(struct db *db, int64_t job_id, struct db_api_variant **out, size_t *n,
		    struct buf *err)
{
	sqlite3_stmt *st = NULL;
	void *v;
	int r;

	if ((r = job_exists(db, job_id, err)))
		return r;
	if ((r = db_prepare(db, &st,
		"SELECT v.id, v.idx, v.name, v.base_rev, v.commit_oid, v.patches, v.status,"
		" v.error, v.kernel_id, s.name, s.version, s.subject,"
		" (SELECT count(*) FROM runs r WHERE r.variant_id = v.id),"
		" (SELECT count(*) FROM runs r WHERE r.variant_id = v.id"
		"   AND r.status NOT IN ('pending', 'running')),"
		" v.spec_json"
		" FROM variants v LEFT JOIN series s ON s.id = v.series_id"
		" WHERE v.job_id = ? ORDER BY v.idx", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	if (!(r = db_rows(db, st, sizeof(**out), read_variant, release_variant, &v, n, err,
			  "cannot list the job's variants")))
		*out = v;
	return r;
}

void db_api_variants_free(struct db_api_variant *v, size_t n)
{
	db_rows_free(v, n, sizeof(*v), release_variant);
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
 * variant id, summary value, derived value) and the run's columns,
 * bound and ready to step.
 */
static int prepare_runs(struct db *db, sqlite3_stmt **out, int64_t job_id, const char *metric,
			struct buf *err)
{
	const char *agg = "max", *base = "";
	bool derived = derived_metric(metric, &agg, &base);
	char *sql = xasprintf(
		"SELECT r.id, r.variant_id,"
		" (SELECT value FROM run_summary s WHERE s.run_id = r.id AND s.metric = ?2),"
		" %s%s%s,"
		" r.seq, (SELECT name FROM variants v WHERE v.id = r.variant_id),"
		" r.repeat_idx, r.cell, r.fs, r.status, r.accel, r.host, r.kernel_release,"
		" r.started_at, r.finished_at, r.error, r.records, r.bad_lines, r.params_json,"
		" (r.console_log_path IS NOT NULL OR r.console_tail IS NOT NULL), r.lab_host, %d"
		" FROM runs r WHERE r.job_id = ?1 ORDER BY r.seq, r.id",
		derived ? "(SELECT " : "CASE WHEN r.cell = '" DB_PASSIVE_CELL "' THEN ",
		derived ? agg : DB_SAMPLES_MEDIAN_SQL("r.id", "?2"),
		derived ? "(value) FROM samples WHERE run_id = r.id AND metric_id ="
			  " (SELECT id FROM metrics WHERE name = ?3))" : " END", !derived);
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

static void read_run(sqlite3_stmt *st, void *row)
{
	struct db_api_run *x = row;

	x->id = sqlite3_column_int64(st, 0);
	x->variant_id = sqlite3_column_int64(st, 1);
	x->source = sqlite3_column_type(st, 2) != SQLITE_NULL ? DB_VALUE_SUMMARY :
		    sqlite3_column_type(st, 3) == SQLITE_NULL ? DB_VALUE_NONE :
		    sqlite3_column_int(st, 21) ? DB_VALUE_MEDIAN : DB_VALUE_SAMPLES;
	x->value = x->source == DB_VALUE_SUMMARY ? sqlite3_column_double(st, 2) :
		   x->source != DB_VALUE_NONE ? sqlite3_column_double(st, 3) : 0;
	x->seq = sqlite3_column_int64(st, 4);
	x->variant = db_col_strdup(st, 5);
	x->repeat = sqlite3_column_int(st, 6);
	x->cell = db_col_strdup(st, 7);
	x->fs = db_col_strdup(st, 8);
	x->status = db_col_strdup(st, 9);
	x->accel = db_col_strdup(st, 10);
	x->host = db_col_strdup(st, 11);
	x->kernel_release = db_col_strdup(st, 12);
	x->started_at = db_col_strdup(st, 13);
	x->finished_at = db_col_strdup(st, 14);
	x->error = db_col_strdup(st, 15);
	x->records = sqlite3_column_int64(st, 16);
	x->bad_lines = sqlite3_column_int64(st, 17);
	x->params_json = db_col_strdup(st, 18);
	x->has_console = sqlite3_column_int(st, 19) != 0;
	x->lab_host = db_col_strdup(st, 20);
}

static void release_run(void *row)
{
	struct db_api_run *x = row;

	free(x->variant);
	free(x->cell);
	free(x->fs);
	free(x->status);
	free(x->accel);
	free(x->host);
	free(x->kernel_release);
	free(x->started_at);
	free(x->finished_at);
	free(x->error);
	free(x->params_json);
	free(x->lab_host);
}

int db_api_runs(struct db *db, int64_t job_id, const char *metric, struct db_api_run **out,
		size_t *n, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	void *v;
	int r;

	if ((r = job_exists(db, job_id, err)) || (r = prepare_runs(db, &st, job_id, metric, err)))
		return r;
	if (!(r = db_rows(db, st, sizeof(**out), read_run, release_run, &v, n, err,
			  "cannot list the job's runs")))
		*out = v;
	return r;
}

void db_api_runs_free(struct db_api_run *v, size_t n)
{
	db_rows_free(v, n, sizeof(*v), release_run);
}

int db_api_samples(struct db *db, int64_t job_id, int64_t run_id, const char *metric,
		   struct db_api_curve **out, size_t *n, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	struct db_api_curve *v = NULL, *c = NULL;
	size_t k = 0, cap = 0, pcap = 0;
	int64_t metric_id;
	int r, rc;

	if ((r = run_id ? run_exists(db, run_id, err) : job_exists(db, job_id, err)))
		return r;
	r = db_query_int64(db, &metric_id, "SELECT id FROM metrics WHERE name = ?", metric, err);
	if (r == -ENOENT)
		r = err_setf(err, -EINVAL, "no metric '%s' in the store", metric);
	if (r)
		return r;
	if ((r = db_prepare(db, &st, run_id ?
		"SELECT s.run_id, r.variant_id, s.t_s, s.value FROM samples s"
		" JOIN runs r ON r.id = s.run_id"
		" WHERE s.run_id = ?1 AND s.metric_id = ?2 ORDER BY s.t_s" :
		"SELECT s.run_id, r.variant_id, s.t_s, s.value FROM runs r"
		" JOIN samples s ON s.run_id = r.id AND s.metric_id = ?2"
		" WHERE r.job_id = ?1 ORDER BY r.seq, r.id, s.t_s", err)))
		return r;
	sqlite3_bind_int64(st, 1, run_id ? run_id : job_id);
	sqlite3_bind_int64(st, 2, metric_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t rid = sqlite3_column_int64(st, 0);

		if (!c || rid != c->run_id) {
			v = grow(v, k, &cap, sizeof(*v));
			c = &v[k++];
			*c = (struct db_api_curve){ .run_id = rid,
						    .variant_id = sqlite3_column_int64(st, 1) };
			pcap = 0;
		}
		if (c->n == pcap) {
			pcap = pcap ? 2 * pcap : 256;
			c->t = xrealloc(c->t, pcap * sizeof(*c->t));
			c->v = xrealloc(c->v, pcap * sizeof(*c->v));
		}
		c->t[c->n] = sqlite3_column_double(st, 2);
		c->v[c->n] = sqlite3_column_double(st, 3);
		c->n++;
	}
	sqlite3_finalize(st);
	if ((r = step_err(db, rc, "read the samples", err))) {
		db_api_curves_free(v, k);
		return r;
	}
	*out = v;
	*n = k;
	return 0;
}

void db_api_curves_free(struct db_api_curve *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].t);
		free(v[i].v);
	}
	free(v);
}

/* The run's row (without kernel, phases, summary, sampled metrics). */
static int read_run_detail(struct db *db, int64_t run_id, struct db_api_run_detail *d,
			   struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r, rc;

	if ((r = db_prepare(db, &st,
		"SELECT r.id, r.job_id, j.name, j.metric, r.variant_id,"
		" v.name, r.seq, r.repeat_idx, r.cell, r.fs, r.status,"
		" r.accel, r.host, r.kernel_release, r.agent_version, r.started_at,"
		" r.finished_at, r.error, r.records, r.bad_lines,"
		" (r.console_log_path IS NOT NULL OR r.console_tail IS NOT NULL),"
		" coalesce(r.kernel_id, v.kernel_id), r.params_json, r.hello_json"
		" FROM runs r JOIN jobs j ON j.id = r.job_id JOIN variants v ON v.id = r.variant_id"
		" WHERE r.id = ?", err)))
		return r;
	sqlite3_bind_int64(st, 1, run_id);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		r = rc == SQLITE_DONE ? err_setf(err, -ENOENT, "no run %lld in the store", (long long)run_id) :
		    db_fail(db, 0, err, "cannot read run %lld", (long long)run_id);
		sqlite3_finalize(st);
		return r;
	}
	d->id = sqlite3_column_int64(st, 0);
	d->job_id = sqlite3_column_int64(st, 1);
	d->job = db_col_strdup(st, 2);
	d->job_metric = db_col_strdup(st, 3);
	d->variant_id = sqlite3_column_int64(st, 4);
	d->variant = db_col_strdup(st, 5);
	d->seq = sqlite3_column_int64(st, 6);
	d->repeat = sqlite3_column_int(st, 7);
	d->cell = db_col_strdup(st, 8);
	d->fs = db_col_strdup(st, 9);
	d->status = db_col_strdup(st, 10);
	d->accel = db_col_strdup(st, 11);
	d->host = db_col_strdup(st, 12);
	d->kernel_release = db_col_strdup(st, 13);
	d->agent_version = db_col_strdup(st, 14);
	d->started_at = db_col_strdup(st, 15);
	d->finished_at = db_col_strdup(st, 16);
	d->error = db_col_strdup(st, 17);
	d->records = sqlite3_column_int64(st, 18);
	d->bad_lines = sqlite3_column_int64(st, 19);
	d->has_console = sqlite3_column_int(st, 20) != 0;
	d->kernel_id = sqlite3_column_int64(st, 21);
	d->params_json = db_col_strdup(st, 22);
	d->hello_json = db_col_strdup(st, 23);
	sqlite3_finalize(st);
	return 0;
}

static int read_kernel(struct db *db, struct db_api_run_detail *d, struct buf *err)
{
	struct db_api_kernel *k = &d->kernel;
	sqlite3_stmt *st = NULL;
	int r, rc;

	if ((r = db_prepare(db, &st,
		"SELECT id, source, tree_oid, config_hash, release, image_path, build_status,"
		" build_error, build_s, created_at, (build_log_path IS NOT NULL)"
		" FROM kernels WHERE id = ?", err)))
		return r;
	sqlite3_bind_int64(st, 1, d->kernel_id);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		d->has_kernel = true;
		k->id = sqlite3_column_int64(st, 0);
		k->source = db_col_strdup(st, 1);
		k->tree_oid = db_col_strdup(st, 2);
		k->config_hash = db_col_strdup(st, 3);
		k->release = db_col_strdup(st, 4);
		k->image_path = db_col_strdup(st, 5);
		k->build_status = db_col_strdup(st, 6);
		k->build_error = db_col_strdup(st, 7);
		k->has_build_s = sqlite3_column_type(st, 8) != SQLITE_NULL;
		k->build_s = sqlite3_column_double(st, 8);
		k->created_at = db_col_strdup(st, 9);
		k->has_build_log = sqlite3_column_int(st, 10) != 0;
	} else {
		r = step_err(db, rc, "read the run's kernel", err);
	}
	sqlite3_finalize(st);
	return r;
}

static void read_phase(sqlite3_stmt *st, void *row)
{
	struct db_api_phase *p = row;

	p->t = sqlite3_column_double(st, 0);
	p->name = db_col_strdup(st, 1);
}

static void read_summary(sqlite3_stmt *st, void *row)
{
	struct db_api_summary *s = row;

	s->metric = db_col_strdup(st, 0);
	s->value = sqlite3_column_double(st, 1);
}

static void read_sample_metric(sqlite3_stmt *st, void *row)
{
	struct db_api_sample_metric *m = row;

	read_metric(st, &m->metric);
	m->n = sqlite3_column_int64(st, 3);
}

/* The rows of sql (one parameter: the run's id) into *rows, *n. */
static int run_rows(struct db *db, int64_t run_id, const char *sql, size_t size, db_row_fn *read,
		    db_row_release_fn *release, void **rows, size_t *n, const char *what,
		    struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, sql, err)))
		return r;
	sqlite3_bind_int64(st, 1, run_id);
	return db_rows(db, st, size, read, release, rows, n, err, "cannot %s", what);
}

static void release_phase(void *row)
{
	free(((struct db_api_phase *)row)->name);
}

static void release_summary(void *row)
{
	free(((struct db_api_summary *)row)->metric);
}

static void release_sample_metric(void *row)
{
	release_metric(&((struct db_api_sample_metric *)row)->metric);
}

/* The run's phases, summary values and sampled metrics. */
static int read_run_lists(struct db *db, struct db_api_run_detail *d, struct buf *err)
{
	void *v;
	int r;

	if ((r = run_rows(db, d->id, "SELECT t_s, name FROM phases WHERE run_id = ? ORDER BY t_s",
			  sizeof(*d->phases), read_phase, release_phase, &v, &d->nphases,
			  "read the run's phases", err)))
		return r;
	d->phases = v;
	if ((r = run_rows(db, d->id, "SELECT metric, value FROM run_summary WHERE run_id = ?"
			  " ORDER BY metric", sizeof(*d->summary), read_summary, release_summary,
			  &v, &d->nsummary, "read the run's summary", err)))
		return r;
	d->summary = v;
	if ((r = run_rows(db, d->id, "SELECT m.name, m.unit, m.better, count(*) FROM samples s"
			  " JOIN metrics m ON m.id = s.metric_id WHERE s.run_id = ?"
			  " GROUP BY m.id ORDER BY m.name", sizeof(*d->sample_metrics),
			  read_sample_metric, release_sample_metric, &v, &d->nsample_metrics,
			  "list the run's sampled metrics", err)))
		return r;
	d->sample_metrics = v;
	return 0;
}

int db_api_run(struct db *db, int64_t run_id, struct db_api_run_detail *out, struct buf *err)
{
	struct db_api_run_detail d = { 0 };
	int r;

	if ((r = read_run_detail(db, run_id, &d, err)) ||
	    (d.kernel_id && (r = read_kernel(db, &d, err))) ||
	    (r = read_run_lists(db, &d, err))) {
		db_api_run_release(&d);
		return r;
	}
	*out = d;
	return 0;
}

void db_api_run_release(struct db_api_run_detail *d)
{
	free(d->job);
	free(d->job_metric);
	free(d->variant);
	free(d->cell);
	free(d->fs);
	free(d->status);
	free(d->accel);
	free(d->host);
	free(d->kernel_release);
	free(d->agent_version);
	free(d->started_at);
	free(d->finished_at);
	free(d->error);
	free(d->params_json);
	free(d->hello_json);
	free(d->kernel.source);
	free(d->kernel.tree_oid);
	free(d->kernel.config_hash);
	free(d->kernel.release);
	free(d->kernel.image_path);
	free(d->kernel.build_status);
	free(d->kernel.build_error);
	free(d->kernel.created_at);
	db_rows_free(d->phases, d->nphases, sizeof(*d->phases), release_phase);
	db_rows_free(d->summary, d->nsummary, sizeof(*d->summary), release_summary);
	db_rows_free(d->sample_metrics, d->nsample_metrics, sizeof(*d->sample_metrics),
		     release_sample_metric);
	memset(d, 0, sizeof(*d));
}

static void read_probe(sqlite3_stmt *st, void *row)
{
	struct db_api_probe *p = row;

	p->name = db_col_strdup(st, 0);
	p->key = db_col_strdup(st, 1);
	p->has_t = sqlite3_column_type(st, 2) != SQLITE_NULL;
	p->t = sqlite3_column_double(st, 2);
	p->count = sqlite3_column_int64(st, 3);
}

static void release_probe(void *row)
{
	struct db_api_probe *x = row;

	free(x->name);
	free(x->key);
}

int db_api_run_probes(struct db *db, int64_t run_id, struct db_api_probe **out, size_t *n,
		      struct buf *err)
{
	void *v;
	int r;

	if ((r = run_exists(db, run_id, err)))
		return r;
	if (!(r = run_rows(db, run_id, "SELECT name, key, t_s, count FROM probes WHERE run_id = ?"
			   " ORDER BY name, key, t_s IS NULL, t_s", sizeof(**out), read_probe,
			   release_probe, &v, n, "read the run's probe counts", err)))
		*out = v;
	return r;
}

void db_api_probes_free(struct db_api_probe *v, size_t n)
{
	db_rows_free(v, n, sizeof(*v), release_probe);
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
	int r;

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
	if (!(r = db_job_row(db, st, job_id, "state", err)))
		*out = xstrdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return r;
}

int db_job_cancel(struct db *db, int64_t job_id, char *status_out, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_begin(db, err)))
		return r;
	if ((r = db_prepare(db, &st, "SELECT status FROM jobs WHERE id = ?", err)))
		goto out;
	if ((r = db_job_row(db, st, job_id, NULL, err)))
		goto out;
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
