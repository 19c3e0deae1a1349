/* db_fleet.h - fleet hosts in the store (schema/008_fleet.sql): who
 * registered, the per-agent record sequence state, and the run each of a
 * host's streams is stored in. Queries live in db_fleet.c; errors follow
 * db.h (0 or -errno, the reason in err). The record batches themselves
 * are api_fleet.c's, through ingest.h, inside one transaction per batch.
 */
#ifndef KC_DB_FLEET_H
#define KC_DB_FLEET_H

#include <stddef.h>
#include <stdint.h>

#include "store/db.h"

/* Name of the job every fleet run belongs to (kind 'canary'); its
 * variants are the kernel releases the fleet's hosts reported. */
#define FLEET_JOB_NAME "fleet"
/* Its headline metric: what every host's passive run streams (nr_dirty of
 * /proc/vmstat); a passive run's value is the median of its samples
 * (db_report.h). */
#define FLEET_JOB_METRIC "dirty_pages"
/* The cell of a host's passive run (one per host and boot). */
#define DB_PASSIVE_CELL "workload=passive"

/* One host row; strings owned, freed by db_host_release(). */
struct db_host {
	int64_t id;
	char *name, *kernel_release, *boot_id, *labels_json;
	int64_t next_seq;      /* records below it are stored, none at or above */
	int64_t records, duplicates;
};

void db_host_release(struct db_host *h);

/*
 * db_host_register - create the host named name or update its kernel,
 * boot id, labels (a JSON object's text), agent version and token name;
 * stamps last_seen. Its sequence state is kept. *out gets the row.
 */
int db_host_register(struct db *db, struct db_host *out, const char *name,
		     const char *kernel_release, const char *boot_id,
		     const char *labels_json, const char *agent_version, const char *token, struct buf *err);

/* db_host_get - the host named name into *out; -ENOENT when unknown. */
int db_host_get(struct db *db, struct db_host *out, const char *name, struct buf *err);

/* db_host_heartbeat - stamp last_seen and keep body_json (may be NULL).
 * -ENOENT when the host is unknown. */
int db_host_heartbeat(struct db *db, const char *name, const char *body_json, struct buf *err);

/*
 * db_host_advance - after a batch: next_seq becomes next_seq, records
 * and duplicates grow by stored and duplicates, last_seen is stamped.
 */
int db_host_advance(struct db *db, int64_t host_id, int64_t next_seq, int64_t stored,
		    int64_t duplicates, struct buf *err);

/*
 * db_host_run_find - the run of host's stream key, and the lines of it
 * stored so far. -ENOENT when the stream has no run yet.
 */
int db_host_run_find(struct db *db, int64_t *run_id, int64_t *line_no, int64_t host_id,
		     const char *key, struct buf *err);

/*
 * db_host_run_create - a new run for host's stream key: in the fleet job
 * (created on first use), variant named for the host's kernel release
 * (created on first use, headline metric FLEET_JOB_METRIC), cell
 * "workload=WORKLOAD", the next repeat index,
 * params_json (a JSON object's text: labels and knobs), status 'running',
 * accel 'host', runs.host and runs.kernel_release from the host row.
 */
int db_host_run_create(struct db *db, int64_t *run_id, const struct db_host *h,
		       const char *key, const char *workload, const char *params_json, struct buf *err);

/*
 * db_host_run_update - after a batch fed run_id: its line count becomes
 * line_no, runs.records and runs.bad_lines grow by records and bad_lines,
 * runs.host and runs.kernel_release are set again from h (an agent's hello
 * names its uname, the fleet knows the host by its registered name), the
 * stream's last_record_at is stamped, and, when status is not NULL, the run
 * ends with status and error (may be NULL).
 */
int db_host_run_update(struct db *db, const struct db_host *h, const char *key,
		       int64_t run_id, int64_t line_no, int64_t records, int64_t bad_lines,
		       const char *status, const char *error, struct buf *err);

/* A fleet host's stream as `kcanary status` shows it; strings owned
 * (db_fleet_streams_free), NULL where not recorded. */
struct db_fleet_stream {
	int64_t run_id;
	char *host, *kernel_release, *started_at;
	double since_last_s;      /* seconds since its last record; NaN: none yet
				   * (or stored before the stamp existed) */
	int64_t total;            /* the query's row count (db_fleet_streams' *total) */
};

/*
 * db_fleet_streams - the job's live passive runs (status 'running', cell
 * workload=passive: one per host and boot), by host name, at most max of
 * them into *out (*n rows), and *total how many there are.
 */
int db_fleet_streams(struct db *db, int64_t job_id, size_t max, struct db_fleet_stream **out,
		     size_t *n, size_t *total, struct buf *err);
void db_fleet_streams_free(struct db_fleet_stream *v, size_t n);

/* A host as the host list shows it; strings owned, NULL where not
 * recorded. */
struct db_host_row {
	char *name, *kernel_release, *boot_id;
	char *labels_json;        /* as stored (a JSON object's text) */
	char *agent_version, *token, *first_seen, *last_seen;
	int64_t next_seq, records, duplicates;
	int64_t runs;             /* its streams (host_runs) */
	char *heartbeat_json;     /* the last heartbeat's body, as stored */
};

/*
 * db_hosts_list - every host, by name. *out has *n rows
 * (db_host_rows_free); the API's /hosts shapes them (api_fleet.c).
 */
int db_hosts_list(struct db *db, struct db_host_row **out, size_t *n, struct buf *err);
void db_host_rows_free(struct db_host_row *v, size_t n);

#endif
