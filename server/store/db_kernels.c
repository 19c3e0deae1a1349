/* db_kernels.c - built kernel images in the store (see db_kernels.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/db_internal.h"
#include "error.h"
#include "store/db_kernels.h"
#include "util.h"

int db_kernel_find(struct db *db, struct db_kernel *out, const char *tree_oid,
		   const char *config_hash, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r, rc;

	if ((r = db_prepare(db, &st,
			    "SELECT id, tree_oid, config_hash, release, image_path, config_path,"
			    " system_map_path, build_log_path, build_status, build_error,"
			    " coalesce(build_s, -1), distcc_hosts FROM kernels"
			    " WHERE tree_oid = ? AND config_hash = ?", err)))
		return r;
	sqlite3_bind_text(st, 1, tree_oid, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, config_hash, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		memset(out, 0, sizeof(*out));
		out->id = sqlite3_column_int64(st, 0);
		out->tree_oid = db_col_strdup(st, 1);
		out->config_hash = db_col_strdup(st, 2);
		out->release = db_col_strdup(st, 3);
		out->image_path = db_col_strdup(st, 4);
		out->config_path = db_col_strdup(st, 5);
		out->system_map_path = db_col_strdup(st, 6);
		out->build_log_path = db_col_strdup(st, 7);
		out->build_status = db_col_strdup(st, 8);
		out->build_error = db_col_strdup(st, 9);
		out->build_s = sqlite3_column_double(st, 10);
		out->distcc_hosts = db_col_strdup(st, 11);
		r = 0;
	} else if (rc == SQLITE_DONE) {
		r = err_setf(err, -ENOENT, "no kernel built from tree %.12s with config %.12s",
			 tree_oid, config_hash);
	} else {
		r = db_fail(db, 0, err, "cannot look up the kernel of tree %.12s, config %.12s", tree_oid, config_hash);
	}
	sqlite3_finalize(st);
	return r;
}

int db_kernel_begin(struct db *db, int64_t *out_id, const char *tree_oid,
		    const char *config_hash, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st,
			    "INSERT INTO kernels (source, tree_oid, config_hash, build_status)"
			    " VALUES ('build', ?1, ?2, 'building')"
			    " ON CONFLICT (tree_oid, config_hash) DO UPDATE SET"
			    " build_status = 'building', build_error = NULL, build_s = NULL,"
			    " image_path = NULL, system_map_path = NULL"
			    " RETURNING id", err)))
		return r;
	sqlite3_bind_text(st, 1, tree_oid, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, config_hash, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW) {
		*out_id = sqlite3_column_int64(st, 0);
		r = 0;
	} else {
		r = db_fail(db, 0, err, "cannot store the kernel of tree %.12s, config %.12s", tree_oid, config_hash);
	}
	sqlite3_finalize(st);
	return r;
}

int db_kernel_finish(struct db *db, int64_t id, const char *status,
		     const struct db_kernel *k, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st,
			    "UPDATE kernels SET build_status = ?, release = ?, image_path = ?,"
			    " config_path = ?, system_map_path = ?, build_log_path = ?,"
			    " build_error = ?, build_s = ?, distcc_hosts = ?10,"
			    " built_at = CASE WHEN ?1 IN ('ok', 'failed')"
			    "   THEN strftime('%Y-%m-%dT%H:%M:%SZ', 'now') ELSE built_at END WHERE id = ?9", err)))
		return r;
	sqlite3_bind_text(st, 1, status, -1, SQLITE_TRANSIENT);
	db_bind_text_or_null(st, 2, k->release);
	db_bind_text_or_null(st, 3, k->image_path);
	db_bind_text_or_null(st, 4, k->config_path);
	db_bind_text_or_null(st, 5, k->system_map_path);
	db_bind_text_or_null(st, 6, k->build_log_path);
	db_bind_text_or_null(st, 7, k->build_error);
	if (k->build_s >= 0)
		sqlite3_bind_double(st, 8, k->build_s);
	else
		sqlite3_bind_null(st, 8);
	sqlite3_bind_int64(st, 9, id);
	db_bind_text_or_null(st, 10, k->distcc_hosts);
	if (sqlite3_step(st) != SQLITE_DONE) {
		r = db_fail(db, 0, err, "cannot store kernel %lld's build", (long long)id);
	} else if (sqlite3_changes(db->h) == 0) {
		r = err_setf(err, -ENOENT, "no kernel with id %lld", (long long)id);
	}
	sqlite3_finalize(st);
	return r;
}

void db_kernel_release(struct db_kernel *k)
{
	if (!k)
		return;
	free(k->tree_oid);
	free(k->config_hash);
	free(k->release);
	free(k->image_path);
	free(k->config_path);
	free(k->system_map_path);
	free(k->build_log_path);
	free(k->build_status);
	free(k->build_error);
	free(k->distcc_hosts);
	memset(k, 0, sizeof(*k));
}

int db_variant_set_build(struct db *db, int64_t variant_id, const char *base_rev,
			 const char *commit_oid, const char *patches, int64_t kernel_id,
			 const char *status, const char *error, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st,
			    "UPDATE variants SET base_rev = ?, commit_oid = ?, patches = ?,"
			    " kernel_id = ?, status = ?, error = ?,"
			    " kernel_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE id = ?", err)))
		return r;
	db_bind_text_or_null(st, 1, base_rev);
	db_bind_text_or_null(st, 2, commit_oid);
	db_bind_text_or_null(st, 3, patches);
	if (kernel_id > 0)
		sqlite3_bind_int64(st, 4, kernel_id);
	else
		sqlite3_bind_null(st, 4);
	sqlite3_bind_text(st, 5, status, -1, SQLITE_TRANSIENT);
	db_bind_text_or_null(st, 6, error);
	sqlite3_bind_int64(st, 7, variant_id);
	if (sqlite3_step(st) != SQLITE_DONE) {
		r = db_fail(db, 0, err, "cannot store variant %lld's build", (long long)variant_id);
	} else if (sqlite3_changes(db->h) == 0) {
		r = err_setf(err, -ENOENT, "no variant with id %lld", (long long)variant_id);
	}
	sqlite3_finalize(st);
	return r;
}
