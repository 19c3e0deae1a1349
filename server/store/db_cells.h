/* db_cells.h - a job's matrix cells as the agent's check saw them when the
 * job was stored (schema/021_cell_expected.sql): each cell's expected run
 * length, which every run of that cell reads instead of asking the agent.
 * Same rules as db.h: 0 or -errno, the reason in err.
 */
#ifndef KC_DB_CELLS_H
#define KC_DB_CELLS_H

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

#endif
