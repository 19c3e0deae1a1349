/* db_compare.c - what the compare executor reads (see db_compare.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/db.h"
#include "store/db_compare.h"
#include "store/db_internal.h"
#include "error.h"
#include "util.h"

static void release_pending_run(void *row)
{
	struct db_pending_run *x = row;

	free(x->variant);
	free(x->cell);
	free(x->fs);
	free(x->params_json);
	free(x->image_path);
	free(x->modules_dir);
}

static void read_pending_run(sqlite3_stmt *st, void *row)
{
	struct db_pending_run *p = row;

	p->id = sqlite3_column_int64(st, 0);
	p->seq = sqlite3_column_int64(st, 1);
	p->variant_id = sqlite3_column_int64(st, 2);
	p->kernel_id = sqlite3_column_int64(st, 3);
	p->repeat_idx = sqlite3_column_int(st, 4);
	p->variant = db_col_strdup(st, 5);
	p->cell = db_col_strdup(st, 6);
	p->fs = db_col_strdup(st, 7);
	p->params_json = db_col_strdup(st, 8);
	p->image_path = db_col_strdup(st, 9);
	p->modules_dir = db_col_strdup(st, 10);
}

static int pending_runs(struct db *db, int64_t job_id, bool unbuilt, struct db_pending_run **out,
			size_t *n, int *total, int *done, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	void *v;
	int64_t t = 0, d = 0;
	int r;
	char id[32];

	snprintf(id, sizeof(id), "%lld", (long long)job_id);
	if ((r = db_query_int64(db, &t, "SELECT count(*) FROM runs WHERE job_id = ?", id, err)) ||
	    (r = db_query_int64(db, &d, "SELECT count(*) FROM runs WHERE job_id = ?"
				" AND status NOT IN ('pending', 'running')", id, err)))
		return r;
	if ((r = db_prepare(db, &st,
			    "SELECT r.id, r.seq, r.variant_id, v.kernel_id, r.repeat_idx, v.name, r.cell,"
			    " r.fs, r.params_json, k.image_path, k.modules_dir"
			    " FROM runs r JOIN variants v ON v.id = r.variant_id"
			    " LEFT JOIN kernels k ON k.id = v.kernel_id"
			    " WHERE r.job_id = ?1 AND r.status = 'pending'"
			    " AND ((v.status = 'ok' AND k.id IS NOT NULL)"
			    "      OR (?2 AND v.status = 'pending'))"
			    " ORDER BY r.seq", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int(st, 2, unbuilt);
	if ((r = db_rows(db, st, sizeof(**out), read_pending_run, release_pending_run, &v, n, err,
			 "cannot read job %lld's pending runs", (long long)job_id)))
		return r;
	*out = v;
	*total = (int)t;
	*done = (int)d;
	return 0;
}

int db_job_pending_runs(struct db *db, int64_t job_id, struct db_pending_run **out,
			size_t *n, int *total, int *done, struct buf *err)
{
	return pending_runs(db, job_id, false, out, n, total, done, err);
}

int db_job_planned_runs(struct db *db, int64_t job_id, struct db_pending_run **out,
			size_t *n, int *total, int *done, struct buf *err)
{
	return pending_runs(db, job_id, true, out, n, total, done, err);
}

int db_run_kernel(struct db *db, struct db_pending_run *p, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st,
			    "SELECT k.id, k.image_path, k.modules_dir FROM variants v"
			    " JOIN kernels k ON k.id = v.kernel_id WHERE v.id = ? AND v.status = 'ok'",
			    err)))
		return r;
	sqlite3_bind_int64(st, 1, p->variant_id);
	r = sqlite3_step(st);
	if (r == SQLITE_ROW) {
		free(p->image_path);
		free(p->modules_dir);
		p->kernel_id = sqlite3_column_int64(st, 0);
		p->image_path = db_col_strdup(st, 1);
		p->modules_dir = db_col_strdup(st, 2);
		r = 0;
	} else if (r == SQLITE_DONE) {
		r = err_setf(err, -ENOENT, "variant %lld (%s) of run %lld has no kernel in the store",
			     (long long)p->variant_id, p->variant ? p->variant : "", (long long)p->id);
	} else {
		r = db_fail(db, 0, err, "cannot read the kernel of run %lld's variant %lld",
			    (long long)p->id, (long long)p->variant_id);
	}
	sqlite3_finalize(st);
	return r;
}

void db_pending_runs_free(struct db_pending_run *v, size_t n)
{
	db_rows_free(v, n, sizeof(*v), release_pending_run);
}

static void release_variant_row(void *row)
{
	struct db_variant_row *x = row;

	free(x->name);
	free(x->status);
	free(x->spec_json);
}

static void read_variant_row(sqlite3_stmt *st, void *row)
{
	struct db_variant_row *x = row;

	x->id = sqlite3_column_int64(st, 0);
	x->idx = sqlite3_column_int(st, 1);
	x->name = db_col_strdup(st, 2);
	x->status = db_col_strdup(st, 3);
	x->spec_json = db_col_strdup(st, 4);
}

int db_job_variants(struct db *db, int64_t job_id, struct db_variant_row **out, size_t *n, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	void *v;
	int r;

	if ((r = db_prepare(db, &st, "SELECT id, idx, name, status, spec_json FROM variants"
			    " WHERE job_id = ? ORDER BY idx", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	if (!(r = db_rows(db, st, sizeof(**out), read_variant_row, release_variant_row, &v, n, err,
			  "cannot read job %lld's variants", (long long)job_id)))
		*out = v;
	return r;
}

void db_variant_rows_free(struct db_variant_row *v, size_t n)
{
	db_rows_free(v, n, sizeof(*v), release_variant_row);
}

int db_job_spec(struct db *db, int64_t job_id, char **out, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, "SELECT spec_json FROM jobs WHERE id = ?", err)))
		return r;
	if (!(r = db_job_row(db, st, job_id, "spec", err))) {
		*out = db_col_strdup(st, 0);
		r = *out ? 0 : err_setf(err, -ENOENT, "job %lld has no spec", (long long)job_id);
	}
	sqlite3_finalize(st);
	return r;
}

int db_job_set_owner(struct db *db, int64_t job_id, const char *owner, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, "UPDATE jobs SET owner = ? WHERE id = ?", err)))
		return r;
	db_bind_text_or_null(st, 1, owner);
	sqlite3_bind_int64(st, 2, job_id);
	r = sqlite3_step(st) == SQLITE_DONE ? 0 : db_fail(db, 0, err, "cannot set job %lld's coordinator", (long long)job_id);
	sqlite3_finalize(st);
	return r;
}

int db_job_owner(struct db *db, int64_t job_id, char **owner, char **status, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, "SELECT owner, status FROM jobs WHERE id = ?", err)))
		return r;
	if (!(r = db_job_row(db, st, job_id, "coordinator", err))) {
		*owner = db_col_strdup(st, 0);
		*status = db_col_strdup(st, 1);
	}
	sqlite3_finalize(st);
	return r;
}

int db_job_claim(struct db *db, int64_t job_id, const char *owner, const char *seen, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	char *now = NULL, *status = NULL;
	int r;

	if ((r = db_prepare(db, &st, "UPDATE jobs SET owner = ?1 WHERE id = ?2 AND owner IS ?3"
			    " AND status != 'cancelled'", err)))
		return r;
	db_bind_text_or_null(st, 1, owner);
	sqlite3_bind_int64(st, 2, job_id);
	db_bind_text_or_null(st, 3, seen);
	r = db_step_done(db, st, err, "cannot set job %lld's coordinator", (long long)job_id);
	sqlite3_finalize(st);
	if (r || sqlite3_changes(db->h) == 1)
		return r;
	/* nothing changed: no such job, cancelled, or another coordinator
	 * was faster */
	if ((r = db_job_owner(db, job_id, &now, &status, err)))
		return r;
	if (!strcmp(status, "cancelled"))
		r = err_setf(err, -ECANCELED, "job %lld was cancelled", (long long)job_id);
	else
		r = err_setf(err, -EBUSY, "job %lld was taken by another coordinator (%s) at the"
			     " same moment", (long long)job_id, now ? now : "none: it was released");
	free(now);
	free(status);
	return r;
}

int db_job_requeue(struct db *db, int64_t job_id, const char *seen, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, "UPDATE jobs SET owner = NULL, status = 'pending'"
			    " WHERE id = ?1 AND owner IS ?2 AND status != 'cancelled'", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	db_bind_text_or_null(st, 2, seen);
	r = db_step_done(db, st, err, "cannot queue job %lld again", (long long)job_id);
	sqlite3_finalize(st);
	if (!r && sqlite3_changes(db->h) != 1)
		r = err_setf(err, -EBUSY, "job %lld changed coordinator or was cancelled meanwhile:"
			     " left as it is", (long long)job_id);
	return r;
}

static int jobs_query(struct db *db, const char *sql, const char *status, int64_t **out,
		      size_t *n, int max, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	void *ids;
	int r;

	if ((r = db_prepare(db, &st, sql, err)))
		return r;
	sqlite3_bind_text(st, 1, status, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 2, max);
	if (!(r = db_rows(db, st, sizeof(**out), db_read_int64, NULL, &ids, n, err,
			  "cannot list the jobs in status '%s'", status)))
		*out = ids;
	return r;
}

int db_jobs_queued(struct db *db, int64_t **out, size_t *n, int max, struct buf *err)
{
	return jobs_query(db, "SELECT id FROM jobs WHERE kind = 'compare' AND status = ?1"
			  " AND owner IS NULL ORDER BY id LIMIT ?2", "pending", out, n, max, err);
}

int db_jobs_with_status(struct db *db, const char *status, int64_t **out, size_t *n, int max, struct buf *err)
{
	return jobs_query(db, "SELECT id FROM jobs WHERE kind = 'compare' AND status = ?1"
			  " ORDER BY id LIMIT ?2", status, out, n, max, err);
}

int db_job_kind(struct db *db, int64_t job_id, char **out, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, "SELECT kind FROM jobs WHERE id = ?", err)))
		return r;
	if (!(r = db_job_row(db, st, job_id, "kind", err)))
		*out = db_col_strdup(st, 0);
	sqlite3_finalize(st);
	return r;
}

int db_run_summary_value(struct db *db, int64_t run_id, const char *metric, double *out,
			 struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, "SELECT value FROM run_summary WHERE run_id = ? AND metric = ?", err)))
		return r;
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_text(st, 2, metric, -1, SQLITE_TRANSIENT);
	r = sqlite3_step(st);
	if (r == SQLITE_ROW) {
		*out = sqlite3_column_double(st, 0);
		r = 0;
	} else if (r == SQLITE_DONE) {
		r = err_setf(err, -ENOENT, "run %lld has no summary value of '%s'", (long long)run_id,
			     metric);
	} else {
		r = db_fail(db, 0, err, "cannot read run %lld's summary value of '%s'", (long long)run_id, metric);
	}
	sqlite3_finalize(st);
	return r;
}

int db_job_next_repeat(struct db *db, int64_t job_id, int *out, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	*out = 1;
	if ((r = db_prepare(db, &st, "SELECT coalesce(max(repeat_idx), 0) + 1 FROM runs"
			    " WHERE job_id = ?", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	if (sqlite3_step(st) == SQLITE_ROW)
		*out = sqlite3_column_int(st, 0);
	else
		r = db_fail(db, 0, err, "cannot read job %lld's repeats", (long long)job_id);
	sqlite3_finalize(st);
	return r;
}

int db_job_is_cancelled(struct db *db, int64_t job_id, bool *out, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	*out = false;
	if ((r = db_prepare(db, &st, "SELECT status = 'cancelled' FROM jobs WHERE id = ?", err)))
		return r;
	if (!(r = db_job_row(db, st, job_id, "status", err)))
		*out = sqlite3_column_int(st, 0) != 0;
	sqlite3_finalize(st);
	return r;
}
