/* job_check.h - a job spec's knobs checked by the agent before anything is
 * stored or built: every matrix cell through agent_check() (guest/
 * agent_check.h), an error naming where the bad knob was set; what the
 * agent said of each cell's length is stored with the job (job_check_store)
 * so that its runs need not ask again; the names of its report (by, the
 * metric) against what its runs will have (job_check_names).
 */
#ifndef KC_JOB_CHECK_H
#define KC_JOB_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "exec/job.h"
#include "store/db.h"
#include "util.h"

/* What the agent's check said of each cell of a spec, cell i as
 * job_cell_params(spec, i) names it. */
struct job_check {
	size_t ncells;
	char **params;        /* each cell's params_json (the runs' params) */
	double *expected_s;   /* each cell's run length in s; < 0: the agent cannot tell */
	uint64_t disk_bytes;  /* the scratch disk every run of the job gets: the
			       * largest any cell needs (guest/scratch.h), at least
			       * the floor; 0: not sized (nothing is stored) */
	char *disk_cell;      /* the cell that needs it (job_cell_text(), "" for a
			       * job of one cell); NULL: no cell's need is known */
	int64_t disk_data;    /* what that cell's workload writes at most, bytes */
	bool disk_asked;      /* disk_bytes is the spec's own (disk, --disk), checked
			       * to hold every cell's files; disk_cell then the cell
			       * that needs the most */
};

/*
 * job_check_cells - agent_check() every matrix cell of spec (agent: NULL
 * for image_default_agent()), so that an unknown knob or a bad value fails
 * before anything is stored or built, keeping each cell's expected length
 * in *out for job_check_store(), and the job's one scratch disk: the
 * largest scratch_disk_bytes() (guest/scratch.h) of what any cell's
 * workload writes, so that every run of the job, whatever its cell, runs
 * on a disk of one size (a filesystem's geometry follows its device's
 * size). A disk the spec gives (spec->disk_bytes: [job] disk, --disk) is
 * every run's instead, when it holds each cell's files. Returns 0; -EINVAL
 * when a cell's knobs do not parse, err naming where the knob was set
 * ("job.ini:6: [workload] nfiles", "--set nfiles") or else the cell, then
 * the agent's message; -EFBIG when a cell's disk would be above
 * SCRATCH_CAP_BYTES (none given) or its files above the disk given, err
 * naming the cell, what it writes, the size needed, --disk and the knobs
 * to lower (where the spec set them); or
 * agent_check()'s codes. *out is to be released with job_check_release()
 * whatever it returns.
 */
int job_check_cells(struct job_check *out, const struct job_spec *spec, const char *agent,
		    struct buf *err);

/*
 * job_check_store - store c's lengths and its scratch disk (when sized)
 * with job job_id (db_cells.h), once job_store() stored the job whose spec
 * c checked: its runs then read them instead of asking the agent
 * (guest_run.c). Best effort: a store error is logged, not returned, since
 * a job without them still runs (each of its runs asks the agent and sizes
 * its own disk, as a job stored before them does).
 */
void job_check_store(struct db *db, int64_t job_id, const struct job_check *c);

/*
 * job_check_names - the names a spec gives its report, checked before
 * anything is stored, by every path that stores a job (compare, its
 * --dry-run, POST /api/v1/jobs): each axis of `by` must be one the job's
 * runs will have (variant/kernel, fs, host; revision, patches with a
 * series; sysctl and each sysctl of a cell, bare or "sysctl.NAME"; each
 * knob a cell sets), the baseline a value of it (of the variants, fs, a
 * knob or one sysctl; the values of host, sysctl, revision and patches
 * only the runs tell), and a metric the spec names (metric_given) one its
 * workload reports (metric_check(), judge/metric_check.h, over db's
 * metrics table). repeat auto decides on the metric, so with a tool
 * workload (whose names come from the tool) it must be named. Returns 0;
 * -EINVAL with err naming the input ("by (--by) 'mod'"), what was expected
 * and the valid names; or the store's error.
 */
int job_check_names(struct db *db, const struct job_spec *spec, struct buf *err);

/* job_check_release - free what job_check_cells() kept; NULL-safe. */
void job_check_release(struct job_check *c);

#endif
