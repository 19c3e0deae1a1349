/* db_bisect.c - bisection logs and per-run metric values (db_bisect.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/db_bisect.h"
#include "store/db_internal.h"
#include "error.h"
#include "util.h"

int db_bisect_log_set(struct db *db, int64_t job_id, const char *log, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, "INSERT INTO bisect_logs (job_id, log) VALUES (?, ?) "
			    "ON CONFLICT (job_id) DO UPDATE SET log = excluded.log", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_text(st, 2, log, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) != SQLITE_DONE)
		r = db_fail(db, 0, err, "cannot store job %lld's bisect log", (long long)job_id);
	sqlite3_finalize(st);
	return r;
}

int db_bisect_log_get(struct db *db, int64_t job_id, char **out, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r, rc;

	*out = NULL;
	if ((r = db_prepare(db, &st, "SELECT log FROM bisect_logs WHERE job_id = ?", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = xstrdup((const char *)sqlite3_column_text(st, 0));
	else if (rc == SQLITE_DONE) {
		r = err_setf(err, -ENOENT, "job %lld has no bisect log", (long long)job_id);
	} else
		r = db_fail(db, 0, err, "cannot read job %lld's bisect log", (long long)job_id);
	sqlite3_finalize(st);
	return r;
}

/* The first column of the first row of sql bound to (run_id, a, b) as a
 * double; -ENOENT when no row or NULL. */
static int one_double(struct db *db, double *out, const char *sql, int64_t run_id,
		      const char *a, const char *b, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r, rc;

	if ((r = db_prepare(db, &st, sql, err)))
		return r;
	sqlite3_bind_int64(st, 1, run_id);
	if (a)
		sqlite3_bind_text(st, 2, a, -1, SQLITE_TRANSIENT);
	if (b)
		sqlite3_bind_text(st, 3, b, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		*out = sqlite3_column_double(st, 0);
	else if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		r = -ENOENT;
	else
		r = db_fail(db, 0, err, "cannot read run %lld's metric", (long long)run_id);
	sqlite3_finalize(st);
	return r;
}

int db_run_metric(struct db *db, int64_t run_id, const char *metric, double *out, struct buf *err)
{
	int r;

	if (!strncmp(metric, "probe:", 6)) {
		const char *name = metric + 6, *colon = strchr(name, ':');
		char *pname;
		double any;

		if (!colon || colon == name) {
			return err_setf(err, -EINVAL, "bad metric '%s': expected probe:NAME:KEY",
				 metric);
		}
		pname = xstrndup(name, (size_t)(colon - name));
		r = one_double(db, out, "SELECT count FROM probes WHERE run_id = ? AND name = ? "
			       "AND key = ? AND t_s IS NULL", run_id, pname, colon + 1, err);
		if (r == -ENOENT)
			r = one_double(db, out, "SELECT max(count) FROM probes WHERE run_id = ? "
				       "AND name = ? AND key = ?", run_id, pname, colon + 1, err);
		if (r == -ENOENT &&
		    one_double(db, &any, "SELECT count(*) FROM probes WHERE run_id = ? "
			       "HAVING count(*) > 0", run_id, NULL, NULL, err) == 0) {
			*out = 0;
			r = 0;
		}
		free(pname);
		if (r == -ENOENT)
			err_setf(err, r, "run %lld has no probe counts", (long long)run_id);
		return r;
	}
	r = one_double(db, out, "SELECT value FROM run_summary WHERE run_id = ? AND metric = ?",
		       run_id, metric, NULL, err);
	if (r == -ENOENT)
		r = one_double(db, out, "SELECT max(value) FROM samples WHERE run_id = ? AND "
			       "metric_id = (SELECT id FROM metrics WHERE name = ?)", run_id, metric,
			       NULL, err);
	if (r == -ENOENT)
		err_setf(err, r, "run %lld has no value of '%s'", (long long)run_id, metric);
	return r;
}

int db_metric_higher_is_worse(struct db *db, const char *metric, bool *out, struct buf *err)
{
	double better_higher;
	int r;

	*out = true;
	if (!strncmp(metric, "probe:", 6))
		return 0;
	r = one_double(db, &better_higher, "SELECT better = 'higher' FROM metrics WHERE "
		       "name = ?2 AND ?1 = ?1", 0, metric, NULL, err);
	if (r == 0)
		*out = better_higher == 0;
	return r == -ENOENT ? 0 : r;
}

int db_bisect_runs_since(struct db *db, int64_t job_id, int64_t from_id,
			 struct db_bisect_run **out, size_t *n, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r, rc;

	*out = NULL;
	*n = 0;
	if ((r = db_prepare(db, &st, "SELECT id, variant_id, status, coalesce(error, ''),"
			    " coalesce(lab_host, '') FROM runs"
			    " WHERE job_id = ? AND id >= ?"
			    " AND status NOT IN ('pending', 'running', 'infra') ORDER BY id", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int64(st, 2, from_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_bisect_run *b;

		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		b = &(*out)[(*n)++];
		b->id = sqlite3_column_int64(st, 0);
		b->variant_id = sqlite3_column_int64(st, 1);
		b->status = db_col_strdup(st, 2);
		b->error = db_col_strdup(st, 3);
		b->lab_host = db_col_strdup(st, 4);
	}
	if (rc != SQLITE_DONE) {
		r = db_fail(db, 0, err, "cannot read job %lld's runs from run %lld",
			    (long long)job_id, (long long)from_id);
		db_bisect_runs_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	sqlite3_finalize(st);
	return r;
}

void db_bisect_runs_free(struct db_bisect_run *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].status);
		free(v[i].error);
		free(v[i].lab_host);
	}
	free(v);
}
