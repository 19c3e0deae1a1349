/* db_overhead.h - where each run's wall time went (schema/017_overhead.sql,
 * issue 19 item 5): the run service's phases in milliseconds, stored once
 * per run, read per run (the API) and per job (report_overhead.h).
 * Same rules as db.h: 0 or -errno, the reason in err.
 */
#ifndef KC_DB_OVERHEAD_H
#define KC_DB_OVERHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/db.h"

/* The phases of a run in the order they happen; each starts where the one
 * before ended, so they sum to the run's wall time. */
enum db_ov_phase {
	DB_OV_IMAGE,     /* the agent's check, root filesystem, initramfs (cached or built) */
	DB_OV_UPLOAD,    /* libvirt connection, volumes into the pool, scratch disk */
	DB_OV_CREATE,    /* domain created paused, console and channel opened, resumed */
	DB_OV_BOOT,      /* resumed to the agent's hello, less mkfs */
	DB_OV_MKFS,      /* mkfs and mount of the scratch disk, as /init measured it */
	DB_OV_WORKLOAD,  /* hello to the agent's done record (or the guest's end) */
	DB_OV_TEARDOWN,  /* done to the run stored: poweroff, destroy, volume deleted */
	DB_OV_NPHASES
};

/* The phases' names, as columns ("image" -> image_ms) and in the API. */
extern const char *const db_ov_phase_names[DB_OV_NPHASES];

struct db_overhead {
	int64_t run_id;
	int64_t wall_ms;                     /* == the sum of phase_ms */
	int64_t phase_ms[DB_OV_NPHASES];
};

/* The overhead of a run: wall_ms less the workload's own time. */
static inline int64_t db_overhead_ms(const struct db_overhead *o)
{
	return o->wall_ms - o->phase_ms[DB_OV_WORKLOAD];
}

/*
 * db_run_set_overhead - store (or replace) run o->run_id's phases.
 * -ENOENT when the run does not exist; -EINVAL when a phase is negative or
 * the phases do not sum to wall_ms.
 */
int db_run_set_overhead(struct db *db, const struct db_overhead *o, struct buf *err);

/* db_run_overhead - run_id's phases into *out; -ENOENT when none stored. */
int db_run_overhead(struct db *db, struct db_overhead *out, int64_t run_id, struct buf *err);

/*
 * db_job_overheads - the phases of every run of job_id that has them (with
 * finished_only, of the runs a report counts: status ok or incomplete), by
 * run id; *out (NULL when *n is 0) is the caller's to free(). A job with
 * none gives *n = 0 and 0.
 */
int db_job_overheads(struct db *db, struct db_overhead **out, size_t *n, int64_t job_id,
		     bool finished_only, struct buf *err);

#endif
