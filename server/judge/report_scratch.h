/* report_scratch.h - a job's one scratch disk (store/db_cells.h: the size
 * every run of the job gets, the largest any cell needs) as the report's
 * footer line and as JSON. Pure: no store access.
 */
#ifndef KC_REPORT_SCRATCH_H
#define KC_REPORT_SCRATCH_H

#include <jansson.h>

#include "store/db_cells.h"
#include "util.h"

/*
 * scratch_text - append the footer line, nothing when s->bytes is 0 (a job
 * stored before the size was: each run sized by its own cell):
 * "scratch disk: 12 GiB, every run (sized from measure_s=10's 9.8 GiB
 * written)\n"; for a job of one cell "(sized from the 9.8 GiB the workload
 * writes)"; when no cell's need is known "(the floor: the agent cannot
 * tell what the workload writes)"; for a size given by name "(given by
 * name: disk, --disk; the most a cell writes: measure_s=10's 9.8 GiB)".
 * GiB of 2^30 bytes.
 */
void scratch_text(struct buf *b, const struct db_job_scratch *s);

/*
 * scratch_json - {"bytes": 12884901888, "asked": false (true: given by
 * name), "cell": "measure_s=10" ("" one
 * cell; null: none known), "data_bytes": 10487857152 (null with cell)}, or
 * null when s->bytes is 0 (the report then leaves the field out). A new
 * reference.
 */
json_t *scratch_json(const struct db_job_scratch *s);

#endif
