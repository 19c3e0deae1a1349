/* db_cells.c - each cell's expected run length and the job's scratch disk
 * (see db_cells.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "store/db_cells.h"
#include "store/db_internal.h"
#include "error.h"
#include "util.h"

int db_cell_expected_set(struct db *db, int64_t job_id, const char *params_json,
			 double expected_s, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, "INSERT OR REPLACE INTO job_cells (job_id, params_json,"
			    " expected_s) VALUES (?1, ?2, ?3)", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_text(st, 2, params_json ? params_json : "{}", -1, SQLITE_TRANSIENT);
	if (expected_s < 0)
		sqlite3_bind_null(st, 3);
	else
		sqlite3_bind_double(st, 3, expected_s);
	r = db_step_done(db, st, err, "cannot store a cell of job %" PRId64, job_id);
	sqlite3_finalize(st);
	return r;
}

int db_run_expected_s(struct db *db, int64_t run_id, double *out, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r, rc;

	if ((r = db_prepare(db, &st, "SELECT c.expected_s FROM runs r JOIN job_cells c"
			    " ON c.job_id = r.job_id AND c.params_json = r.params_json"
			    " WHERE r.id = ?1", err)))
		return r;
	sqlite3_bind_int64(st, 1, run_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_type(st, 0) == SQLITE_NULL ? -1 :
		       sqlite3_column_double(st, 0);
	else if (rc == SQLITE_DONE)
		r = err_setf(err, -ENOENT, "run %" PRId64 "'s cell has no expected length stored",
			     run_id);
	else
		r = db_fail(db, rc, err, "cannot read the expected length of run %" PRId64, run_id);
	sqlite3_finalize(st);
	return r;
}

int db_job_scratch_set(struct db *db, int64_t job_id, uint64_t bytes, const char *cell,
		       int64_t data_bytes, bool asked, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, "UPDATE jobs SET scratch_bytes = ?2, scratch_cell = ?3,"
			    " scratch_data_bytes = ?4, scratch_asked = ?5 WHERE id = ?1", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)bytes);
	sqlite3_bind_int(st, 5, asked);
	if (cell) {
		sqlite3_bind_text(st, 3, cell, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 4, data_bytes);
	}
	r = db_step_done(db, st, err, "cannot store the scratch disk of job %" PRId64, job_id);
	sqlite3_finalize(st);
	return r;
}

int db_job_scratch(struct db *db, int64_t job_id, struct db_job_scratch *out, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r, rc;

	*out = (struct db_job_scratch){ 0 };
	if ((r = db_prepare(db, &st, "SELECT scratch_bytes, scratch_cell, scratch_data_bytes,"
			    " scratch_asked FROM jobs WHERE id = ?1", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		out->bytes = sqlite3_column_int64(st, 0);
		if (sqlite3_column_type(st, 1) != SQLITE_NULL)
			out->cell = xstrdup((const char *)sqlite3_column_text(st, 1));
		out->data_bytes = sqlite3_column_int64(st, 2);
		out->asked = sqlite3_column_int(st, 3) != 0;
	} else if (rc == SQLITE_DONE) {
		r = err_setf(err, -ENOENT, "no job %" PRId64, job_id);
	} else {
		r = db_fail(db, rc, err, "cannot read the scratch disk of job %" PRId64, job_id);
	}
	sqlite3_finalize(st);
	return r;
}

void db_job_scratch_release(struct db_job_scratch *s)
{
	free(s->cell);
	s->cell = NULL;
}

int db_run_scratch_bytes(struct db *db, int64_t run_id, uint64_t *out, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r, rc;

	if ((r = db_prepare(db, &st, "SELECT j.scratch_bytes FROM runs r JOIN jobs j"
			    " ON j.id = r.job_id WHERE r.id = ?1 AND j.scratch_bytes > 0", err)))
		return r;
	sqlite3_bind_int64(st, 1, run_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = (uint64_t)sqlite3_column_int64(st, 0);
	else if (rc == SQLITE_DONE)
		r = err_setf(err, -ENOENT, "run %" PRId64 "'s job has no scratch disk stored",
			     run_id);
	else
		r = db_fail(db, rc, err, "cannot read the scratch disk of run %" PRId64, run_id);
	sqlite3_finalize(st);
	return r;
}
