/* db_lab.c - lab hosts in the store (see db_lab.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/db_internal.h"
#include "store/db_lab.h"

static int64_t col_int_or(sqlite3_stmt *st, int i, int64_t dflt)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? dflt : sqlite3_column_int64(st, i);
}

int db_lab_host_add(struct db *db, const char *name, const char *uri, int slots,
		    const char *labels_json, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, "INSERT INTO lab_hosts (name, uri, slots, labels_json)"
			    " VALUES (?, ?, ?, ?)", err)))
		return r;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, uri, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 3, slots);
	sqlite3_bind_text(st, 4, labels_json ? labels_json : "{}", -1, SQLITE_TRANSIENT);
	r = db_step_done(db, st, err, "cannot add lab host '%s'", name);
	sqlite3_finalize(st);
	if (r == -EEXIST) {
		buf_reset(err);
		r = err_setf(err, -EEXIST, "there is a lab host '%s' already", name);
	}
	return r;
}

int db_lab_host_remove(struct db *db, const char *name, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, "DELETE FROM lab_hosts WHERE name = ?", err)))
		return r;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	r = db_step_done(db, st, err, "cannot remove lab host '%s'", name);
	sqlite3_finalize(st);
	if (!r && sqlite3_changes(db->h) == 0)
		r = err_setf(err, -ENOENT, "no lab host '%s'", name);
	return r;
}

static void release_lab_host(void *row)
{
	struct db_lab_host *h = row;

	free(h->name);
	free(h->uri);
	free(h->labels_json);
	free(h->state);
	free(h->state_why);
	free(h->accel);
	free(h->libvirt_version);
	free(h->qemu_version);
	free(h->checked_at);
	free(h->last_run_at);
}

void db_lab_hosts_free(struct db_lab_host *h, size_t n)
{
	db_rows_free(h, n, sizeof(*h), release_lab_host);
}

static void read_lab_host(sqlite3_stmt *st, void *row)
{
	struct db_lab_host *h = row;

	h->id = sqlite3_column_int64(st, 0);
	h->name = db_col_strdup(st, 1);
	h->uri = db_col_strdup(st, 2);
	h->slots = sqlite3_column_int(st, 3);
	h->labels_json = db_col_strdup(st, 4);
	h->state = db_col_strdup(st, 5);
	h->state_why = db_col_strdup(st, 6);
	h->fails_in_row = sqlite3_column_int(st, 7);
	h->accel = db_col_strdup(st, 8);
	h->cpus = col_int_or(st, 9, -1);
	h->memory_mib = col_int_or(st, 10, -1);
	h->free_mib = col_int_or(st, 11, -1);
	h->libvirt_version = db_col_strdup(st, 12);
	h->qemu_version = db_col_strdup(st, 13);
	h->checked_at = db_col_strdup(st, 14);
	h->last_run_at = db_col_strdup(st, 15);
	h->runs_done = sqlite3_column_int64(st, 16);
	h->runs_running = sqlite3_column_int64(st, 17);
	h->last_run_id = col_int_or(st, 18, -1);
	h->last_run_job_id = col_int_or(st, 19, -1);
}

int db_lab_hosts(struct db *db, struct db_lab_host **out, size_t *n, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	void *v;
	int r;

	*out = NULL;
	*n = 0;
	if ((r = db_prepare(db, &st, "SELECT id, name, uri, slots, labels_json, state, state_why,"
			    " fails_in_row, accel, cpus, memory_mib, free_mib, libvirt_version,"
			    " qemu_version, checked_at, last_run_at,"
			    " (SELECT count(*) FROM runs r WHERE r.lab_host = h.name"
			    "  AND r.status NOT IN ('pending', 'running')),"
			    " (SELECT count(*) FROM runs r WHERE r.lab_host = h.name AND r.status = 'running'),"
			    " (SELECT max(id) FROM runs r WHERE r.lab_host = h.name),"
			    " (SELECT job_id FROM runs r WHERE r.lab_host = h.name ORDER BY id DESC LIMIT 1)"
			    " FROM lab_hosts h ORDER BY name",
			    err)))
		return r;
	if (!(r = db_rows(db, st, sizeof(**out), read_lab_host, release_lab_host, &v, n, err,
			  "cannot read the lab hosts")))
		*out = v;
	return r;
}

static void bind_int_or_null(sqlite3_stmt *st, int i, int64_t v)
{
	if (v < 0)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, v);
}

int db_lab_host_checked(struct db *db, const char *name, const struct db_lab_check *c,
			struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st,
			    "UPDATE lab_hosts SET state = ?2, state_why = ?3, accel = ?4,"
			    " libvirt_version = ?5, qemu_version = ?6, cpus = ?7, memory_mib = ?8,"
			    " free_mib = ?9, fails_in_row = CASE WHEN ?2 = 'up' THEN 0 ELSE fails_in_row END,"
			    " checked_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE name = ?1", err)))
		return r;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, c->ok ? "up" : "down", -1, SQLITE_STATIC);
	db_bind_text_or_null(st, 3, c->why);
	db_bind_text_or_null(st, 4, c->accel);
	db_bind_text_or_null(st, 5, c->libvirt_version);
	db_bind_text_or_null(st, 6, c->qemu_version);
	bind_int_or_null(st, 7, c->cpus);
	bind_int_or_null(st, 8, c->memory_mib);
	bind_int_or_null(st, 9, c->free_mib);
	r = db_step_done(db, st, err, "cannot store the check of lab host '%s'", name);
	sqlite3_finalize(st);
	if (!r && sqlite3_changes(db->h) == 0)
		r = err_setf(err, -ENOENT, "no lab host '%s'", name);
	return r;
}

int db_lab_host_run_ended(struct db *db, const char *name, bool infra, int down_after,
			  const char *why, bool *now_down, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int64_t down = 0;
	int r;

	if ((r = db_prepare(db, &st,
			    "UPDATE lab_hosts SET last_run_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now'),"
			    " fails_in_row = CASE WHEN ?2 THEN fails_in_row + 1 ELSE 0 END,"
			    " state = CASE WHEN ?2 AND fails_in_row + 1 >= ?3 THEN 'down'"
			    "  WHEN ?2 THEN state ELSE 'up' END,"
			    " state_why = CASE WHEN ?2 AND fails_in_row + 1 >= ?3 THEN ?4"
			    "  WHEN ?2 THEN state_why ELSE NULL END"
			    " WHERE name = ?1", err)))
		return r;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 2, infra);
	sqlite3_bind_int(st, 3, down_after > 0 ? down_after : 1 << 30);
	db_bind_text_or_null(st, 4, why);
	r = db_step_done(db, st, err, "cannot store a run's end on lab host '%s'", name);
	sqlite3_finalize(st);
	if (!r && now_down)
		r = db_query_int64(db, &down, "SELECT count(*) FROM lab_hosts WHERE name = ?"
				   " AND state = 'down'", name, err);
	if (!r && now_down)
		*now_down = down > 0;
	return r;
}

int db_lab_host_set_accel(struct db *db, const char *name, const char *accel,
			  struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, "UPDATE lab_hosts SET accel = ?2 WHERE name = ?1", err)))
		return r;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	db_bind_text_or_null(st, 2, accel);
	r = db_step_done(db, st, err, "cannot store the accelerator of lab host '%s'", name);
	sqlite3_finalize(st);
	if (!r && sqlite3_changes(db->h) == 0)
		r = err_setf(err, -ENOENT, "no lab host '%s'", name);
	return r;
}

int db_run_set_lab_host(struct db *db, int64_t run_id, const char *host, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, "UPDATE runs SET lab_host = ? WHERE id = ?", err)))
		return r;
	db_bind_text_or_null(st, 1, host);
	sqlite3_bind_int64(st, 2, run_id);
	r = db_step_done(db, st, err, "cannot store run %lld's lab host", (long long)run_id);
	sqlite3_finalize(st);
	return r;
}
