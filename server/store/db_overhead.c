/* db_overhead.c - a run's phases (see db_overhead.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "store/db_internal.h"
#include "store/db_overhead.h"
#include "error.h"

const char *const db_ov_phase_names[DB_OV_NPHASES] = {
	"image", "upload", "create", "boot", "mkfs", "workload", "teardown",
};

#define OV_COLS "run_id, wall_ms, image_ms, upload_ms, create_ms, boot_ms, mkfs_ms," \
		" workload_ms, teardown_ms"

int db_run_set_overhead(struct db *db, const struct db_overhead *o, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int64_t sum = 0;
	int r;

	for (int i = 0; i < DB_OV_NPHASES; i++) {
		if (o->phase_ms[i] < 0)
			return err_setf(err, -EINVAL, "cannot store the overhead of run %" PRId64
					": phase %s is %" PRId64 " ms, expected >= 0", o->run_id,
					db_ov_phase_names[i], o->phase_ms[i]);
		sum += o->phase_ms[i];
	}
	if (sum != o->wall_ms)
		return err_setf(err, -EINVAL, "cannot store the overhead of run %" PRId64 ": the phases"
				" sum to %" PRId64 " ms, expected the wall time %" PRId64 " ms",
				o->run_id, sum, o->wall_ms);
	if ((r = db_prepare(db, &st, "INSERT OR REPLACE INTO run_overhead (" OV_COLS ")"
			    " SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9 FROM runs WHERE id = ?1", err)))
		return r;
	sqlite3_bind_int64(st, 1, o->run_id);
	sqlite3_bind_int64(st, 2, o->wall_ms);
	for (int i = 0; i < DB_OV_NPHASES; i++)
		sqlite3_bind_int64(st, 3 + i, o->phase_ms[i]);
	r = db_step_done(db, st, err, "cannot store the overhead of run %" PRId64, o->run_id);
	sqlite3_finalize(st);
	if (!r && sqlite3_changes(db->h) == 0)
		r = err_setf(err, -ENOENT, "cannot store the overhead of run %" PRId64 ": no such run",
			     o->run_id);
	return r;
}

static void row_to(struct db_overhead *o, sqlite3_stmt *st)
{
	o->run_id = sqlite3_column_int64(st, 0);
	o->wall_ms = sqlite3_column_int64(st, 1);
	for (int i = 0; i < DB_OV_NPHASES; i++)
		o->phase_ms[i] = sqlite3_column_int64(st, 2 + i);
}

static void read_overhead(sqlite3_stmt *st, void *row)
{
	row_to(row, st);
}

int db_run_overhead(struct db *db, struct db_overhead *out, int64_t run_id, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r, rc;

	if ((r = db_prepare(db, &st, "SELECT " OV_COLS " FROM run_overhead WHERE run_id = ?1", err)))
		return r;
	sqlite3_bind_int64(st, 1, run_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		row_to(out, st);
	else if (rc == SQLITE_DONE)
		r = err_setf(err, -ENOENT, "run %" PRId64 " has no overhead stored", run_id);
	else
		r = db_fail(db, rc, err, "cannot read the overhead of run %" PRId64, run_id);
	sqlite3_finalize(st);
	return r;
}

int db_job_overheads(struct db *db, struct db_overhead **out, size_t *n, int64_t job_id,
		     bool finished_only, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	void *v;
	int r;

	if ((r = db_prepare(db, &st, "SELECT o.run_id, o.wall_ms, o.image_ms, o.upload_ms,"
			    " o.create_ms, o.boot_ms, o.mkfs_ms, o.workload_ms, o.teardown_ms"
			    " FROM run_overhead o JOIN runs r ON r.id = o.run_id"
			    " WHERE r.job_id = ?1 AND (?2 = 0 OR r.status IN ('ok', 'incomplete'))"
			    " ORDER BY o.run_id", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int(st, 2, finished_only);
	if (!(r = db_rows(db, st, sizeof(**out), read_overhead, NULL, &v, n, err,
			  "cannot read the overheads of job %" PRId64, job_id)))
		*out = v;
	return r;
}
