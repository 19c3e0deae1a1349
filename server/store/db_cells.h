/* db_cells.h - a job's matrix cells as the agent's check saw them when the
 * job was stored (schema/021_cell_expected.sql): each cell's expected run
 * length, which every run of that cell reads instead of asking the agent;
 * and the job's one scratch disk, the largest any cell needs
 * (schema/024_job_scratch.sql), which every run of the job gets.
 * Same rules as db.h: 0 or -errno, the reason in err.
 */
#ifndef KC_DB_CELLS_H
#define KC_DB_CELLS_H

#include <stdbool.h>
#include <stdint.h>

#include "store/db.h"

/*
 * db_cell_expected_set - store that job_id's cell params_json (its runs'
 * params_json, run_params.h) takes expected_s seconds from start to done
 * (< 0: the agent cannot tell). Replaces what the cell had.
 */
int db_cell_expected_set(struct db *db, int64_t job_id, const char *params_json,
			 double expected_s, struct buf *err);

/*
 * db_run_expected_s - the expected length stored for run_id's cell (its
 * job and params_json): 0 with *out in seconds (< 0: the agent cannot
 * tell); -ENOENT when none is stored (a job stored before the table, an
 * ad-hoc run), the caller asks the agent.
 */
int db_run_expected_s(struct db *db, int64_t run_id, double *out, struct buf *err);

/* A job's scratch disk as stored when the job was checked. */
struct db_job_scratch {
	int64_t bytes;        /* every run's disk, bytes; 0: none stored */
	char *cell;           /* the cell that needs it ("" a job of one cell);
			       * NULL: no cell's need is known (the floor) */
	int64_t data_bytes;   /* what that cell's workload writes at most, bytes */
	bool asked;           /* bytes was given by name ([job] disk, --disk) */
};

/*
 * db_job_scratch_set - store that every run of job_id gets a scratch disk
 * of bytes: the size cell (NULL: none known) needs for the data_bytes its
 * workload writes, or (asked) the size given by name, cell then the one
 * that writes the most. Replaces what the job had.
 */
int db_job_scratch_set(struct db *db, int64_t job_id, uint64_t bytes, const char *cell,
		       int64_t data_bytes, bool asked, struct buf *err);

/*
 * db_job_scratch - job_id's scratch disk into *out (out->cell the
 * caller's, db_job_scratch_release()): 0, with out->bytes 0 when none is
 * stored (a job stored before the column, an ad-hoc run's); -ENOENT when
 * there is no such job.
 */
int db_job_scratch(struct db *db, int64_t job_id, struct db_job_scratch *out, struct buf *err);
void db_job_scratch_release(struct db_job_scratch *s);

/*
 * db_run_scratch_bytes - the scratch disk stored with run_id's job: 0 with
 * *out in bytes; -ENOENT when its job has none stored (the caller sizes
 * the run's disk from its own cell).
 */
int db_run_scratch_bytes(struct db *db, int64_t run_id, uint64_t *out, struct buf *err);

#endif
