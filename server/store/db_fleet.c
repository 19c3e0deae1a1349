/* db_fleet.c - fleet hosts, their sequence state and stream runs in the
 * store (schema/008_fleet.sql; see db_fleet.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/db.h"
#include "store/db_runs.h"
#include "store/db_fleet.h"
#include "store/db_internal.h"
#include "error.h"
#include "util.h"

#define NOW_SQL "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')"

void db_host_release(struct db_host *h)
{
	if (!h)
		return;
	free(h->name);
	free(h->kernel_release);
	free(h->boot_id);
	free(h->labels_json);
	memset(h, 0, sizeof(*h));
}

static int step_done(struct db *db, sqlite3_stmt *st, const char *what, struct buf *err)
{
	int r = sqlite3_step(st) == SQLITE_DONE ? 0 : db_fail(db, 0, err, "cannot %s", what);
	db_stmt_done(db, st);   /* finalizes one that is not kept */
	return r;
}

int db_host_get(struct db *db, struct db_host *out, const char *name, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r, rc;

	if ((r = db_prepare_kept(db, &st,
			    "SELECT id, name, kernel_release, boot_id, labels_json, next_seq,"
			    " records, duplicates FROM hosts WHERE name = ?", err)))
		return r;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		memset(out, 0, sizeof(*out));
		out->id = sqlite3_column_int64(st, 0);
		out->name = db_col_strdup(st, 1);
		out->kernel_release = db_col_strdup(st, 2);
		out->boot_id = db_col_strdup(st, 3);
		out->labels_json = db_col_strdup(st, 4);
		out->next_seq = sqlite3_column_int64(st, 5);
		out->records = sqlite3_column_int64(st, 6);
		out->duplicates = sqlite3_column_int64(st, 7);
	} else if (rc == SQLITE_DONE) {
		r = err_setf(err, -ENOENT, "no host '%s'", name);
	} else {
		r = db_fail(db, 0, err, "cannot read host '%s'", name);
	}
	db_stmt_done(db, st);
	return r;
}

int db_host_register(struct db *db, struct db_host *out, const char *name,
		     const char *kernel_release, const char *boot_id,
		     const char *labels_json, const char *agent_version, const char *token, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st,
			    "INSERT INTO hosts (name, kernel_release, boot_id, labels_json,"
			    " agent_version, token) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
			    " ON CONFLICT (name) DO UPDATE SET kernel_release = ?2, boot_id = ?3,"
			    " labels_json = ?4, agent_version = ?5, token = ?6,"
			    " last_seen = " NOW_SQL, err)))
		return r;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	db_bind_text_or_null(st, 2, kernel_release);
	db_bind_text_or_null(st, 3, boot_id);
	sqlite3_bind_text(st, 4, labels_json ? labels_json : "{}", -1, SQLITE_TRANSIENT);
	db_bind_text_or_null(st, 5, agent_version);
	db_bind_text_or_null(st, 6, token);
	if ((r = step_done(db, st, "register a host", err)))
		return r;
	return db_host_get(db, out, name, err);
}

int db_host_heartbeat(struct db *db, const char *name, const char *body_json, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st,
			    "UPDATE hosts SET last_seen = " NOW_SQL ","
			    " heartbeat_json = coalesce(?2, heartbeat_json) WHERE name = ?1", err)))
		return r;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	db_bind_text_or_null(st, 2, body_json);
	if ((r = step_done(db, st, "store a host's heartbeat", err)))
		return r;
	if (!sqlite3_changes(db->h)) {
		return err_setf(err, -ENOENT, "no host '%s'", name);
	}
	return 0;
}

int db_host_advance(struct db *db, int64_t host_id, int64_t next_seq, int64_t stored,
		    int64_t duplicates, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare_kept(db, &st,
			    "UPDATE hosts SET next_seq = ?2, records = records + ?3,"
			    " duplicates = duplicates + ?4, last_seen = " NOW_SQL " WHERE id = ?1", err)))
		return r;
	sqlite3_bind_int64(st, 1, host_id);
	sqlite3_bind_int64(st, 2, next_seq);
	sqlite3_bind_int64(st, 3, stored);
	sqlite3_bind_int64(st, 4, duplicates);
	return step_done(db, st, "advance a host's record sequence", err);
}

int db_host_run_find(struct db *db, int64_t *run_id, int64_t *line_no, int64_t host_id,
		     const char *key, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r, rc;

	if ((r = db_prepare_kept(db, &st,
			    "SELECT run_id, line_no FROM host_runs WHERE host_id = ? AND run_key = ?", err)))
		return r;
	sqlite3_bind_int64(st, 1, host_id);
	sqlite3_bind_text(st, 2, key, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*run_id = sqlite3_column_int64(st, 0);
		*line_no = sqlite3_column_int64(st, 1);
	} else {
		r = rc == SQLITE_DONE ? err_setf(err, -ENOENT, "no run for stream '%s' of host %lld", key, (long long)host_id) :
		    db_fail(db, 0, err, "cannot find the run of stream '%s'", key);
	}
	db_stmt_done(db, st);
	return r;
}

/* The fleet job's id, creating it (kind canary, status running) once. */
static int fleet_job(struct db *db, int64_t *out, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r, rc;

	if ((r = db_prepare(db, &st, "SELECT id FROM jobs WHERE name = '" FLEET_JOB_NAME "'"
			    " AND kind = 'canary' ORDER BY id LIMIT 1", err)))
		return r;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_DONE)
		r = db_fail(db, 0, err, "cannot find the fleet job");
	sqlite3_finalize(st);
	if (r || rc == SQLITE_ROW)
		return r;
	if ((r = db_job_create(db, out, FLEET_JOB_NAME, "canary",
			       "{\"fleet\": \"runs of kcanary-agent daemon on fleet hosts\"}", err)))
		return r;
	if ((r = db_prepare(db, &st, "UPDATE jobs SET metric = '" FLEET_JOB_METRIC "' WHERE id = ?",
			    err)))
		return r;
	sqlite3_bind_int64(st, 1, *out);
	if ((r = step_done(db, st, "set the fleet job's metric", err)))
		return r;
	return db_job_set_status(db, *out, "running", NULL, err);
}

int db_host_run_create(struct db *db, int64_t *run_id, const struct db_host *h,
		       const char *key, const char *workload, const char *params_json, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int64_t job, variant, id;
	char *cell = NULL;
	int r;

	if ((r = fleet_job(db, &job, err)) ||
	    (r = db_variant_get(db, &variant, job,
				h->kernel_release && *h->kernel_release ? h->kernel_release : "unknown", err)))
		return r;
	cell = xasprintf("workload=%s", workload);
	r = db_run_create(db, &id, job, variant, cell, 0, NULL, params_json, err);
	free(cell);
	if (r || (r = db_run_set_status(db, id, "running", NULL, err)))
		return r;
	if ((r = db_prepare(db, &st, "UPDATE runs SET accel = 'host', host = ?2,"
			    " kernel_release = ?3 WHERE id = ?1", err)))
		return r;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, h->name, -1, SQLITE_TRANSIENT);
	db_bind_text_or_null(st, 3, h->kernel_release);
	if ((r = step_done(db, st, "label the fleet run", err)))
		return r;
	if ((r = db_prepare(db, &st, "INSERT INTO host_runs (host_id, run_key, run_id)"
			    " VALUES (?, ?, ?)", err)))
		return r;
	sqlite3_bind_int64(st, 1, h->id);
	sqlite3_bind_text(st, 2, key, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, id);
	if ((r = step_done(db, st, "store a host's run", err)))
		return r;
	*run_id = id;
	return 0;
}

int db_host_run_update(struct db *db, const struct db_host *h, const char *key,
		       int64_t run_id, int64_t line_no, int64_t records, int64_t bad_lines,
		       const char *status, const char *error, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare_kept(db, &st, "UPDATE host_runs SET line_no = ?3,"
			    " last_record_at = " NOW_SQL " WHERE host_id = ?1 AND run_key = ?2", err)))
		return r;
	sqlite3_bind_int64(st, 1, h->id);
	sqlite3_bind_text(st, 2, key, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, line_no);
	if ((r = step_done(db, st, "update a host's run", err)))
		return r;
	if ((r = db_prepare_kept(db, &st, "UPDATE runs SET records = records + ?2,"
			    " bad_lines = bad_lines + ?3, host = ?4, kernel_release = ?5"
			    " WHERE id = ?1", err)))
		return r;
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int64(st, 2, records);
	sqlite3_bind_int64(st, 3, bad_lines);
	sqlite3_bind_text(st, 4, h->name, -1, SQLITE_TRANSIENT);
	db_bind_text_or_null(st, 5, h->kernel_release);
	if ((r = step_done(db, st, "update a fleet run's counters", err)))
		return r;
	return status ? db_run_set_status(db, run_id, status, error, err) : 0;
}

static void read_host(sqlite3_stmt *st, void *row)
{
	struct db_host_row *h = row;

	h->name = db_col_strdup(st, 0);
	h->kernel_release = db_col_strdup(st, 1);
	h->boot_id = db_col_strdup(st, 2);
	h->labels_json = db_col_strdup(st, 3);
	h->agent_version = db_col_strdup(st, 4);
	h->token = db_col_strdup(st, 5);
	h->first_seen = db_col_strdup(st, 6);
	h->last_seen = db_col_strdup(st, 7);
	h->next_seq = sqlite3_column_int64(st, 8);
	h->records = sqlite3_column_int64(st, 9);
	h->duplicates = sqlite3_column_int64(st, 10);
	h->runs = sqlite3_column_int64(st, 11);
	h->heartbeat_json = db_col_strdup(st, 12);
}

static void release_host(void *row)
{
	struct db_host_row *h = row;

	free(h->name);
	free(h->kernel_release);
	free(h->boot_id);
	free(h->labels_json);
	free(h->agent_version);
	free(h->token);
	free(h->first_seen);
	free(h->last_seen);
	free(h->heartbeat_json);
}

int db_hosts_list(struct db *db, struct db_host_row **out, size_t *n, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	void *v;
	int r;

	if ((r = db_prepare(db, &st,
			    "SELECT name, kernel_release, boot_id, labels_json, agent_version, token,"
			    " first_seen, last_seen, next_seq, records, duplicates,"
			    " (SELECT count(*) FROM host_runs hr WHERE hr.host_id = h.id),"
			    " heartbeat_json FROM hosts h ORDER BY name", err)))
		return r;
	if (!(r = db_rows(db, st, sizeof(**out), read_host, release_host, &v, n, err,
			  "cannot list the hosts")))
		*out = v;
	return r;
}

void db_host_rows_free(struct db_host_row *v, size_t n)
{
	db_rows_free(v, n, sizeof(*v), release_host);
}

static void read_stream(sqlite3_stmt *st, void *row)
{
	struct db_fleet_stream *x = row;

	x->run_id = sqlite3_column_int64(st, 0);
	x->host = db_col_strdup(st, 1);
	x->kernel_release = db_col_strdup(st, 2);
	x->started_at = db_col_strdup(st, 3);
	x->since_last_s = sqlite3_column_type(st, 4) == SQLITE_NULL ? NAN :
			  sqlite3_column_double(st, 4);
	x->total = sqlite3_column_int64(st, 5);
}

static void release_stream(void *row)
{
	struct db_fleet_stream *x = row;

	free(x->host);
	free(x->kernel_release);
	free(x->started_at);
}

int db_fleet_streams(struct db *db, int64_t job_id, size_t max, struct db_fleet_stream **out,
		     size_t *n, size_t *total, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	struct db_fleet_stream *rows;
	void *v;
	int r;

	/* the window count is taken before the LIMIT: every live stream */
	if ((r = db_prepare(db, &st,
			    "SELECT r.id, r.host, r.kernel_release, r.started_at,"
			    " (julianday('now') - julianday(max(hr.last_record_at))) * 86400,"
			    " count(*) OVER ()"
			    " FROM runs r LEFT JOIN host_runs hr ON hr.run_id = r.id"
			    " WHERE r.job_id = ?1 AND r.status = 'running' AND r.cell = '"
			    DB_PASSIVE_CELL "' GROUP BY r.id ORDER BY r.host, r.id LIMIT ?2", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)max);
	if ((r = db_rows(db, st, sizeof(**out), read_stream, release_stream, &v, n, err,
			 "cannot read job %lld's fleet streams", (long long)job_id)))
		return r;
	rows = v;
	*out = rows;
	*total = *n ? (size_t)rows[0].total : 0;
	return 0;
}

void db_fleet_streams_free(struct db_fleet_stream *v, size_t n)
{
	db_rows_free(v, n, sizeof(*v), release_stream);
}
