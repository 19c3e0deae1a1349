/* db_guest.c - the guest runner's queries (see db_guest.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/db_guest.h"
#include "store/db_internal.h"
#include "error.h"

int db_kernel_prebuilt(struct db *db, int64_t *out_id, const char *image_path,
		       const char *release, const char *modules_dir, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r, rc;

	if ((r = db_prepare(db, &st,
			    "SELECT id FROM kernels WHERE source = 'prebuilt' AND image_path = ?1"
			    " AND release IS ?2 AND modules_dir IS ?3 ORDER BY id LIMIT 1", err)))
		return r;
	sqlite3_bind_text(st, 1, image_path, -1, SQLITE_TRANSIENT);
	db_bind_text_or_null(st, 2, release);
	db_bind_text_or_null(st, 3, modules_dir);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out_id = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		return 0;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_fail(db, 0, err, "cannot look up the prebuilt kernel '%s'", image_path);
	if ((r = db_prepare(db, &st,
			    "INSERT INTO kernels (source, release, image_path, modules_dir,"
			    " build_status) VALUES ('prebuilt', ?1, ?2, ?3, 'ok')", err)))
		return r;
	db_bind_text_or_null(st, 1, release);
	sqlite3_bind_text(st, 2, image_path, -1, SQLITE_TRANSIENT);
	db_bind_text_or_null(st, 3, modules_dir);
	if (sqlite3_step(st) == SQLITE_DONE)
		*out_id = sqlite3_last_insert_rowid(db->h);
	else
		r = db_fail(db, 0, err, "cannot store the prebuilt kernel '%s'", image_path);
	sqlite3_finalize(st);
	return r;
}

int db_run_set_guest(struct db *db, int64_t run_id, const char *accel,
		     const char *console_log_path, int64_t kernel_id, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st,
			    "UPDATE runs SET accel = coalesce(?1, accel),"
			    " console_log_path = coalesce(?2, console_log_path),"
			    " kernel_id = CASE WHEN ?3 > 0 THEN ?3 ELSE kernel_id END"
			    " WHERE id = ?4", err)))
		return r;
	db_bind_text_or_null(st, 1, accel);
	db_bind_text_or_null(st, 2, console_log_path);
	sqlite3_bind_int64(st, 3, kernel_id);
	sqlite3_bind_int64(st, 4, run_id);
	if (sqlite3_step(st) != SQLITE_DONE)
		r = db_fail(db, 0, err, "cannot store run %lld's guest", (long long)run_id);
	else if (sqlite3_changes(db->h) == 0)
		r = err_setf(err, -ENOENT, "no run %lld in the store", (long long)run_id);
	sqlite3_finalize(st);
	if (r || kernel_id <= 0)
		return r;
	if ((r = db_prepare(db, &st,
			    "UPDATE variants SET kernel_id = ?1 WHERE kernel_id IS NULL"
			    " AND id = (SELECT variant_id FROM runs WHERE id = ?2)", err)))
		return r;
	sqlite3_bind_int64(st, 1, kernel_id);
	sqlite3_bind_int64(st, 2, run_id);
	if (sqlite3_step(st) != SQLITE_DONE)
		r = db_fail(db, 0, err, "cannot store run %lld's kernel on its variant", (long long)run_id);
	sqlite3_finalize(st);
	return r;
}

static int set_text(struct db *db, int64_t run_id, const char *sql, const char *text, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, sql, err)))
		return r;
	db_bind_text_or_null(st, 1, text);
	sqlite3_bind_int64(st, 2, run_id);
	if (sqlite3_step(st) != SQLITE_DONE)
		r = db_fail(db, 0, err, "cannot store run %lld's guest", (long long)run_id);
	else if (sqlite3_changes(db->h) == 0)
		r = err_setf(err, -ENOENT, "no run %lld in the store", (long long)run_id);
	sqlite3_finalize(st);
	return r;
}

int db_run_set_guest_json(struct db *db, int64_t run_id, const char *json, struct buf *err)
{
	return set_text(db, run_id, "UPDATE runs SET guest_json = ?1 WHERE id = ?2", json, err);
}

int db_run_set_console_tail(struct db *db, int64_t run_id, const char *tail, struct buf *err)
{
	return set_text(db, run_id, "UPDATE runs SET console_tail = ?1 WHERE id = ?2", tail, err);
}

int db_run_set_rootfs(struct db *db, int64_t run_id, const struct db_rootfs *img, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st,
			    "INSERT INTO rootfs_images (hash, spec, packages, files_json, path,"
			    " size_bytes, build_s) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
			    " ON CONFLICT(hash) DO UPDATE SET"
			    " build_s = coalesce(excluded.build_s, build_s), path = excluded.path", err)))
		return r;
	sqlite3_bind_text(st, 1, img->hash, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, img->spec, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, img->packages, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, img->files_json ? img->files_json : "[]", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, img->path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 6, img->size_bytes);
	if (img->build_s >= 0)
		sqlite3_bind_double(st, 7, img->build_s);
	else
		sqlite3_bind_null(st, 7);
	if (sqlite3_step(st) != SQLITE_DONE)
		r = db_fail(db, 0, err, "cannot store root filesystem image %s", img->hash);
	sqlite3_finalize(st);
	if (r)
		return r;
	return set_text(db, run_id, "UPDATE runs SET rootfs_hash = ?1 WHERE id = ?2", img->hash, err);
}

int db_run_guest_host(struct db *db, int64_t run_id, char **uri, char **domain,
		      struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r, rc;

	*uri = *domain = NULL;
	if ((r = db_prepare(db, &st,
			    "SELECT json_extract(guest_json, '$.uri'), json_extract(guest_json,"
			    " '$.domain') FROM runs WHERE id = ?1", err)))
		return r;
	sqlite3_bind_int64(st, 1, run_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *u = (const char *)sqlite3_column_text(st, 0);
		const char *d = (const char *)sqlite3_column_text(st, 1);
		*uri = u ? xstrdup(u) : NULL;
		*domain = d ? xstrdup(d) : NULL;
	} else if (rc == SQLITE_DONE) {
		r = err_setf(err, -ENOENT, "no run %lld in the store", (long long)run_id);
	} else {
		r = db_fail(db, 0, err, "cannot read run %lld's guest", (long long)run_id);
	}
	sqlite3_finalize(st);
	return r;
}
