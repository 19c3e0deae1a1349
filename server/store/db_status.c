/* db_status.c - job listing and live progress queries (see db_status.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/db.h"
#include "store/db_status.h"
#include "store/db_internal.h"
#include "error.h"
#include "util.h"

#define JOB_ROW_SQL \
	"SELECT j.id, j.name, j.kind, j.status, j.created_at," \
	" coalesce(j.started_at, (SELECT min(x.started_at) FROM runs x WHERE x.job_id = j.id))," \
	" j.finished_at, j.error," \
	" (SELECT count(*) FROM variants v WHERE v.job_id = j.id)," \
	" (SELECT count(*) FROM variants v WHERE v.job_id = j.id" \
	"   AND v.status IN ('apply-failed', 'build-failed'))," \
	" count(r.id)," \
	" sum(r.status NOT IN ('pending', 'running'))," \
	" sum(r.status = 'ok')," \
	" sum(r.status IN ('failed', 'timeout', 'kernel-panic', 'paused'))," \
	" sum(r.status = 'running')," \
	" sum(r.status = 'interrupted')," \
	" (SELECT 'run ' || x.id || ': ' || coalesce(x.error, 'no reason stored') FROM runs x" \
	"   WHERE x.job_id = j.id AND x.status = 'interrupted' ORDER BY x.id DESC LIMIT 1)," \
	" sum(r.status = 'incomplete')" \
	" FROM jobs j LEFT JOIN runs r ON r.job_id = j.id"

static void read_row(sqlite3_stmt *st, void *row)
{
	struct db_job_row *j = row;

	j->id = sqlite3_column_int64(st, 0);
	j->name = db_col_strdup(st, 1);
	j->kind = db_col_strdup(st, 2);
	j->status = db_col_strdup(st, 3);
	j->created_at = db_col_strdup(st, 4);
	j->started_at = db_col_strdup(st, 5);
	j->finished_at = db_col_strdup(st, 6);
	j->error = db_col_strdup(st, 7);
	j->nvariants = sqlite3_column_int(st, 8);
	j->variants_failed = sqlite3_column_int(st, 9);
	j->runs_total = sqlite3_column_int(st, 10);
	j->runs_done = sqlite3_column_int(st, 11);
	j->runs_ok = sqlite3_column_int(st, 12);
	j->runs_failed = sqlite3_column_int(st, 13);
	j->runs_running = sqlite3_column_int(st, 14);
	j->runs_interrupted = sqlite3_column_int(st, 15);
	j->last_interrupted = db_col_strdup(st, 16);
	j->runs_incomplete = sqlite3_column_int(st, 17);
}

static void release_row(void *row)
{
	struct db_job_row *x = row;

	free(x->name);
	free(x->kind);
	free(x->status);
	free(x->created_at);
	free(x->started_at);
	free(x->finished_at);
	free(x->error);
	free(x->last_interrupted);
}

int db_jobs_list(struct db *db, struct db_job_row **out, size_t *n, int limit, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	void *rows;
	int r;

	if ((r = db_prepare(db, &st, JOB_ROW_SQL " GROUP BY j.id ORDER BY j.id DESC LIMIT ?", err)))
		return r;
	sqlite3_bind_int(st, 1, limit > 0 ? limit : -1);
	if (!(r = db_rows(db, st, sizeof(**out), read_row, release_row, &rows, n, err,
			  "cannot list the jobs")))
		*out = rows;
	return r;
}

int db_job_get(struct db *db, int64_t job_id, struct db_job_row **out, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, JOB_ROW_SQL " WHERE j.id = ? GROUP BY j.id", err)))
		return r;
	if (!(r = db_job_row(db, st, job_id, NULL, err))) {
		*out = xcalloc(1, sizeof(**out));
		read_row(st, *out);
	}
	sqlite3_finalize(st);
	return r;
}

void db_jobs_free(struct db_job_row *rows, size_t n)
{
	db_rows_free(rows, n, sizeof(*rows), release_row);
}

static void read_count(sqlite3_stmt *st, void *row)
{
	struct db_status_count *c = row;

	c->status = db_col_strdup(st, 0);
	c->n = sqlite3_column_int(st, 1);
}

static void release_count(void *row)
{
	free(((struct db_status_count *)row)->status);
}

int db_job_run_statuses(struct db *db, int64_t job_id, struct db_status_count **out, size_t *n,
			struct buf *err)
{
	sqlite3_stmt *st = NULL;
	void *rows;
	int r;

	if ((r = db_prepare(db, &st,
			    "SELECT status, count(*) FROM runs WHERE job_id = ? GROUP BY status"
			    " ORDER BY CASE status WHEN 'pending' THEN 0 WHEN 'running' THEN 1"
			    " WHEN 'ok' THEN 2 WHEN 'incomplete' THEN 3 WHEN 'failed' THEN 4"
			    " WHEN 'timeout' THEN 5 WHEN 'kernel-panic' THEN 6 WHEN 'paused' THEN 7"
			    " WHEN 'interrupted' THEN 8 WHEN 'infra' THEN 9 WHEN 'skipped' THEN 10"
			    " ELSE 11 END, status", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	if (!(r = db_rows(db, st, sizeof(**out), read_count, release_count, &rows, n, err,
			  "cannot count job %lld's runs by status", (long long)job_id)))
		*out = rows;
	return r;
}

void db_status_counts_free(struct db_status_count *v, size_t n)
{
	db_rows_free(v, n, sizeof(*v), release_count);
}

int db_run_progress(struct db *db, int64_t job_id, const char *metric,
		    int64_t *run_id, char **variant, char **cell, int *repeat_idx,
		    double *t_s, double *value, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st,
			    "SELECT r.id, v.name, r.cell, r.repeat_idx,"
			    " (SELECT s.t_s FROM samples s JOIN metrics m ON m.id = s.metric_id"
			    "   WHERE s.run_id = r.id AND m.name = ?2 ORDER BY s.t_s DESC LIMIT 1),"
			    " (SELECT s.value FROM samples s JOIN metrics m ON m.id = s.metric_id"
			    "   WHERE s.run_id = r.id AND m.name = ?2 ORDER BY s.t_s DESC LIMIT 1)"
			    " FROM runs r JOIN variants v ON v.id = r.variant_id"
			    " WHERE r.job_id = ?1 AND r.status = 'running' ORDER BY r.seq LIMIT 1", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_text(st, 2, metric, -1, SQLITE_STATIC);
	r = sqlite3_step(st);
	if (r == SQLITE_ROW) {
		*run_id = sqlite3_column_int64(st, 0);
		*variant = db_col_strdup(st, 1);
		*cell = db_col_strdup(st, 2);
		*repeat_idx = sqlite3_column_int(st, 3);
		*t_s = sqlite3_column_type(st, 4) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 4);
		*value = sqlite3_column_type(st, 5) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 5);
		r = 0;
	} else {
		r = r == SQLITE_DONE ? err_setf(err, -ENOENT, "job %lld has no running run", (long long)job_id) :
		    db_fail(db, 0, err, "cannot read job %lld's progress", (long long)job_id);
	}
	sqlite3_finalize(st);
	return r;
}
