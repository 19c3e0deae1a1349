/* db_report.c - the queries behind a report (see db_report.h, report.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/db.h"
#include "store/db_fleet.h"
#include "store/db_report.h"
#include "store/db_internal.h"
#include "error.h"
#include "util.h"

static int load_job(struct db *db, int64_t job_id, const char *metric,
		    struct db_report_data *d, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st,
			    "SELECT name, kind, status, metric, spec_json FROM jobs WHERE id = ?", err)))
		return r;
	if (!(r = db_job_row(db, st, job_id, NULL, err))) {
		d->job_name = db_col_strdup(st, 0);
		d->job_kind = db_col_strdup(st, 1);
		d->job_status = db_col_strdup(st, 2);
		d->job_metric = metric ? xstrdup(metric) : db_col_strdup(st, 3);
		d->spec_json = db_col_strdup(st, 4);
	}
	sqlite3_finalize(st);
	if (r)
		return r;
	if ((r = db_prepare(db, &st, "SELECT unit, better FROM metrics WHERE name = ?", err)))
		return r;
	sqlite3_bind_text(st, 1, d->job_metric, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		d->unit = db_col_strdup(st, 0);
		d->better = db_col_strdup(st, 1);
	}
	sqlite3_finalize(st);
	return 0;
}

static void release_variant(void *row)
{
	struct db_report_variant *v = row;

	free(v->name);
	free(v->status);
	free(v->error);
}

static void release_run(void *row)
{
	struct db_report_run *x = row;

	free(x->cell);
	free(x->status);
	free(x->params_json);
	free(x->fs);
	free(x->accel);
	free(x->host);
	free(x->lab_host);
	free(x->rootfs);
	free(x->rootfs_hash);
}

static void release_probe(void *row)
{
	struct db_report_probe *p = row;

	free(p->name);
	free(p->key);
	free(p->cell);
}

static void release_run_probe(void *row)
{
	struct db_report_run_probe *p = row;

	free(p->name);
	free(p->key);
}

static void read_variant(sqlite3_stmt *st, void *row)
{
	struct db_report_variant *v = row;

	v->id = sqlite3_column_int64(st, 0);
	v->idx = sqlite3_column_int(st, 1);
	v->name = db_col_strdup(st, 2);
	v->status = db_col_strdup(st, 3);
	v->error = db_col_strdup(st, 4);
}

static int load_variants(struct db *db, struct db_report_data *d, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	void *v;
	int r;

	if ((r = db_prepare(db, &st,
			    "SELECT id, idx, name, status, error FROM variants"
			    " WHERE job_id = ? ORDER BY idx", err)))
		return r;
	sqlite3_bind_int64(st, 1, d->job_id);
	if ((r = db_rows(db, st, sizeof(*d->variants), read_variant, release_variant, &v,
			 &d->nvariants, err, "cannot read job %lld's variants", (long long)d->job_id)))
		return r;
	d->variants = v;
	return 0;
}

static void read_run(sqlite3_stmt *st, void *row)
{
	struct db_report_run *x = row;

	x->id = sqlite3_column_int64(st, 0);
	x->variant_id = sqlite3_column_int64(st, 1);
	x->seq = sqlite3_column_int64(st, 2);
	x->repeat_idx = sqlite3_column_int(st, 3);
	x->cell = db_col_strdup(st, 4);
	x->status = db_col_strdup(st, 5);
	x->params_json = db_col_strdup(st, 6);
	x->fs = db_col_strdup(st, 7);
	x->accel = db_col_strdup(st, 8);
	x->host = db_col_strdup(st, 9);
	if (sqlite3_column_type(st, 10) != SQLITE_NULL) {
		x->value = sqlite3_column_double(st, 10);
		x->has_value = true;
	} else if (sqlite3_column_type(st, 11) != SQLITE_NULL) {
		x->value = sqlite3_column_double(st, 11);
		x->has_value = true;
		x->derived = true;
	}
	x->lab_host = db_col_strdup(st, 12);
	x->rootfs = db_col_strdup(st, 13);
	x->rootfs_hash = db_col_strdup(st, 14);
	x->passive = x->cell && !strcmp(x->cell, DB_PASSIVE_CELL);
	x->median = x->derived && sqlite3_column_int(st, 15);
}

/* worst_X and mean_X can be derived from the samples of X when a run has
 * no summary (it ended early): the same definitions the agent uses. A
 * passive fleet run never has one: any other metric X is the median of
 * its samples of X (DB_SAMPLES_MEDIAN_SQL). */
static int load_runs(struct db *db, struct db_report_data *d, struct buf *err)
{
	const char *m = d->job_metric;
	const char *base = NULL, *agg = NULL;
	sqlite3_stmt *st = NULL;
	void *v;
	int r;

	if (!strncmp(m, "worst_", 6)) {
		base = m + 6;
		agg = "max";
	} else if (!strncmp(m, "mean_", 5)) {
		base = m + 5;
		agg = "avg";
	}
	char *sql = xasprintf(
		"SELECT r.id, r.variant_id, r.seq, r.repeat_idx, r.cell, r.status,"
		" r.params_json, r.fs, r.accel, r.host,"
		" (SELECT value FROM run_summary WHERE run_id = r.id AND metric = ?2),"
		/* the samples only for a run without the summary value */
		" CASE WHEN (SELECT value FROM run_summary WHERE run_id = r.id AND metric = ?2)"
		"  IS NULL THEN %s END, r.lab_host,"
		" (SELECT spec FROM rootfs_images WHERE hash = r.rootfs_hash), r.rootfs_hash, %d"
		" FROM runs r JOIN variants v ON v.id = r.variant_id"
		" WHERE r.job_id = ?1 ORDER BY r.cell, v.idx, r.repeat_idx",
		base ? (strcmp(agg, "max") ?
			"(SELECT avg(s.value) FROM samples s JOIN metrics m ON m.id = s.metric_id"
			" WHERE s.run_id = r.id AND m.name = ?3)" :
			"(SELECT max(s.value) FROM samples s JOIN metrics m ON m.id = s.metric_id"
			" WHERE s.run_id = r.id AND m.name = ?3)") :
		"CASE WHEN r.cell = '" DB_PASSIVE_CELL "' THEN "
		DB_SAMPLES_MEDIAN_SQL("r.id", "?2") " END", !base);
	r = db_prepare(db, &st, sql, err);
	free(sql);
	if (r)
		return r;
	sqlite3_bind_int64(st, 1, d->job_id);
	sqlite3_bind_text(st, 2, m, -1, SQLITE_STATIC);
	if (base)
		sqlite3_bind_text(st, 3, base, -1, SQLITE_STATIC);
	if ((r = db_rows(db, st, sizeof(*d->runs), read_run, release_run, &v,
			 &d->nruns, err, "cannot read job %lld's runs", (long long)d->job_id)))
		return r;
	d->runs = v;
	return 0;
}

static void read_probe(sqlite3_stmt *st, void *row)
{
	struct db_report_probe *p = row;

	p->variant_id = sqlite3_column_int64(st, 0);
	p->name = db_col_strdup(st, 1);
	p->key = db_col_strdup(st, 2);
	p->count = sqlite3_column_int64(st, 3);
	p->cell = db_col_strdup(st, 4);
}

/* Final probe counts per variant: the summary's totals (t_s NULL) where a
 * run has them, else the largest cumulative count a run reported. */
static int load_probes(struct db *db, struct db_report_data *d, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	void *v;
	int r;

	if ((r = db_prepare(db, &st,
			    "SELECT variant_id, name, key, sum(c), cell FROM ("
			    "  SELECT r.variant_id, r.cell, p.run_id, p.name, p.key,"
			    "   coalesce(max(CASE WHEN p.t_s IS NULL THEN p.count END), max(p.count)) AS c"
			    "  FROM probes p JOIN runs r ON r.id = p.run_id WHERE r.job_id = ?"
			    "  AND r.status IN ('ok', 'incomplete')"
			    "  GROUP BY p.run_id, p.name, p.key)"
			    " GROUP BY cell, variant_id, name, key ORDER BY cell, name, key, variant_id", err)))
		return r;
	sqlite3_bind_int64(st, 1, d->job_id);
	if ((r = db_rows(db, st, sizeof(*d->probes), read_probe, release_probe, &v,
			 &d->nprobes, err, "cannot read job %lld's probe counts", (long long)d->job_id)))
		return r;
	d->probes = v;
	return 0;
}

static void read_run_probe(sqlite3_stmt *st, void *row)
{
	struct db_report_run_probe *p = row;

	p->run_id = sqlite3_column_int64(st, 0);
	p->name = db_col_strdup(st, 1);
	p->key = db_col_strdup(st, 2);
	p->count = sqlite3_column_int64(st, 3);
}

/* Each usable run's final count per probe key, the same rule as above:
 * the per-run evidence ("-ENOENT in 4 of 4 removed runs"). */
static int load_run_probes(struct db *db, struct db_report_data *d, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	void *v;
	int r;

	if ((r = db_prepare(db, &st,
			    "SELECT p.run_id, p.name, p.key,"
			    " coalesce(max(CASE WHEN p.t_s IS NULL THEN p.count END), max(p.count))"
			    " FROM probes p JOIN runs r ON r.id = p.run_id WHERE r.job_id = ?"
			    " AND r.status IN ('ok', 'incomplete')"
			    " GROUP BY p.run_id, p.name, p.key ORDER BY p.run_id, p.name, p.key", err)))
		return r;
	sqlite3_bind_int64(st, 1, d->job_id);
	if ((r = db_rows(db, st, sizeof(*d->run_probes), read_run_probe, release_run_probe, &v,
			 &d->nrun_probes, err, "cannot read job %lld's probe counts per run",
			 (long long)d->job_id)))
		return r;
	d->run_probes = v;
	return 0;
}

int db_report_load(struct db *db, int64_t job_id, const char *metric,
		   struct db_report_data *out, struct buf *err)
{
	struct db_report_data d = { .job_id = job_id };
	int r;

	if ((r = load_job(db, job_id, metric, &d, err)) ||
	    (r = load_variants(db, &d, err)) ||
	    (r = load_runs(db, &d, err)) ||
	    (r = load_probes(db, &d, err)) ||
	    (r = load_run_probes(db, &d, err))) {
		db_report_release(&d);
		return r;
	}
	*out = d;
	return 0;
}

int db_report_load_values(struct db *db, int64_t job_id, struct db_report_data *out,
			  struct buf *err)
{
	struct db_report_data d = { .job_id = job_id };
	int r;

	if ((r = load_job(db, job_id, NULL, &d, err)) ||
	    (r = load_variants(db, &d, err)) ||
	    (r = load_runs(db, &d, err))) {
		db_report_release(&d);
		return r;
	}
	*out = d;
	return 0;
}

void db_report_release(struct db_report_data *d)
{
	db_rows_free(d->variants, d->nvariants, sizeof(*d->variants), release_variant);
	db_rows_free(d->runs, d->nruns, sizeof(*d->runs), release_run);
	db_rows_free(d->probes, d->nprobes, sizeof(*d->probes), release_probe);
	db_rows_free(d->run_probes, d->nrun_probes, sizeof(*d->run_probes), release_run_probe);
	free(d->spec_json);
	free(d->job_name);
	free(d->job_kind);
	free(d->job_status);
	free(d->job_metric);
	free(d->unit);
	free(d->better);
	memset(d, 0, sizeof(*d));
}

static char *env_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return xstrdup(t ? (const char *)t : "");
}

static void read_env(sqlite3_stmt *st, void *row)
{
	struct db_env_row *e = row;

	e->variant = env_text(st, 0);
	e->kernel_release = env_text(st, 1);
	e->host = env_text(st, 2);
	e->accel = env_text(st, 3);
	e->fs = env_text(st, 4);
	e->params_json = env_text(st, 5);
	e->nruns = sqlite3_column_int64(st, 6);
}

static void release_env(void *row)
{
	struct db_env_row *e = row;

	free(e->variant);
	free(e->kernel_release);
	free(e->host);
	free(e->accel);
	free(e->fs);
	free(e->params_json);
}

int db_report_env(struct db *db, int64_t job_id, struct db_env_row **out, size_t *n,
		  struct buf *err)
{
	sqlite3_stmt *st = NULL;
	void *v;
	int r;

	if ((r = db_prepare(db, &st,
			    "SELECT v.name, coalesce(r.kernel_release, ''), coalesce(r.host, ''),"
			    " coalesce(r.accel, ''), coalesce(r.fs, ''), r.params_json, count(*)"
			    " FROM runs r JOIN variants v ON v.id = r.variant_id WHERE r.job_id = ?"
			    " GROUP BY v.idx, 2, 3, 4, 5, 6 ORDER BY v.idx, 2, 3, 4, 5, 6", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	if (!(r = db_rows(db, st, sizeof(**out), read_env, release_env, &v, n, err,
			  "cannot read the run environments of job %lld", (long long)job_id)))
		*out = v;
	return r;
}

void db_env_rows_free(struct db_env_row *v, size_t n)
{
	db_rows_free(v, n, sizeof(*v), release_env);
}

static void read_job_metric(sqlite3_stmt *st, void *row)
{
	struct db_job_metric *m = row;

	m->name = db_col_strdup(st, 0);
	m->nruns = sqlite3_column_int64(st, 1);
}

static void release_job_metric(void *row)
{
	free(((struct db_job_metric *)row)->name);
}

int db_report_job_metrics(struct db *db, int64_t job_id, struct db_job_metric **out, size_t *n,
			  struct buf *err)
{
	sqlite3_stmt *st = NULL;
	void *v = NULL;
	int r;

	*out = NULL;
	*n = 0;
	if ((r = db_prepare(db, &st,
			    "SELECT s.metric, count(*) FROM run_summary s JOIN runs r ON r.id = s.run_id"
			    " WHERE r.job_id = ? GROUP BY s.metric ORDER BY count(*) DESC, s.metric", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	if (!(r = db_rows(db, st, sizeof(**out), read_job_metric, release_job_metric, &v, n, err,
			  "cannot read the metrics of job %lld", (long long)job_id)))
		*out = v;
	return r;
}

void db_job_metrics_free(struct db_job_metric *v, size_t n)
{
	db_rows_free(v, n, sizeof(*v), release_job_metric);
}
