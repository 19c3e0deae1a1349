/* db_lab.h - lab hosts in the store (schema/013_lab.sql): the libvirt
 * hosts that run a job's guests, distinct from the fleet's hosts
 * (db_fleet.h: agents on production machines). Queries live in db_lab.c;
 * errors follow db.h (0 or -errno, the reason in err).
 */
#ifndef KC_DB_LAB_H
#define KC_DB_LAB_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "store/db.h"

/* One lab host; strings owned, freed by db_lab_hosts_free(). NULL strings
 * are unknown (never checked). */
struct db_lab_host {
	int64_t id;
	char *name, *uri, *labels_json, *state, *state_why;
	int slots, fails_in_row;
	char *accel, *libvirt_version, *qemu_version, *checked_at, *last_run_at;
	int64_t cpus, memory_mib, free_mib;   /* -1: unknown */
	/* its runs (runs.lab_host): finished (no longer pending or running;
	 * infra included), running now, and the last placed (highest id; -1:
	 * none) with its job */
	int64_t runs_done, runs_running, last_run_id, last_run_job_id;
};

/* db_lab_host_add - a new host. -EEXIST when the name is taken. */
int db_lab_host_add(struct db *db, const char *name, const char *uri, int slots,
		    const char *labels_json, struct buf *err);

/* db_lab_host_remove - -ENOENT when there is no host of that name. */
int db_lab_host_remove(struct db *db, const char *name, struct buf *err);

/* db_lab_hosts - every host, by name, with its runs' counts. *out (n rows)
 * is the caller's. */
int db_lab_hosts(struct db *db, struct db_lab_host **out, size_t *n, struct buf *err);
void db_lab_hosts_free(struct db_lab_host *h, size_t n);

/* What `lab check` found (strings may be NULL): the host is 'up' (state
 * and fails_in_row reset) when ok, else 'down' with why. */
struct db_lab_check {
	bool ok;
	const char *why, *accel, *libvirt_version, *qemu_version;
	int64_t cpus, memory_mib, free_mib;
};
int db_lab_host_checked(struct db *db, const char *name, const struct db_lab_check *c,
			struct buf *err);

/*
 * db_lab_host_run_ended - after a run on host name: infra runs count up
 * fails_in_row and at down_after (> 0) mark the host 'down' with why; any
 * other outcome resets the count (the host works). last_run_at is stamped.
 * *now_down says whether the host is down now (may be NULL).
 */
int db_lab_host_run_ended(struct db *db, const char *name, bool infra, int down_after,
			  const char *why, bool *now_down, struct buf *err);

/* db_lab_host_set_accel - the accelerator ("kvm", "tcg") a probe of host
 * name found (before placing runs there); -ENOENT when no such host. */
int db_lab_host_set_accel(struct db *db, const char *name, const char *accel,
			  struct buf *err);

/* db_run_set_lab_host - the lab host a run was placed on. */
int db_run_set_lab_host(struct db *db, int64_t run_id, const char *host, struct buf *err);

#endif
