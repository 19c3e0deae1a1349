/* db_tokens.c - API tokens in the store: names and sha256 hashes only
 * (schema/001's tokens table; see db_tokens.h and token.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/db.h"
#include "store/db_tokens.h"
#include "store/db_internal.h"
#include "error.h"

int db_token_add(struct db *db, const char *name, const char *hash_hex, const char *scopes,
		 struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, "INSERT INTO tokens (name, hash, scopes) VALUES (?, ?, ?)", err)))
		return r;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, hash_hex, -1, SQLITE_TRANSIENT);
	db_bind_text_or_null(st, 3, scopes);
	if (sqlite3_step(st) != SQLITE_DONE) {
		r = db_fail(db, 0, err, "cannot store token '%s'", name);
		if ((sqlite3_extended_errcode(db->h) & 0xff) == SQLITE_CONSTRAINT) {
			r = err_setf(err, -EEXIST, "a token named '%s' already exists", name);
		}
	}
	sqlite3_finalize(st);
	return r;
}

int db_token_find(struct db *db, char *name, size_t size, char *scopes, size_t scopes_size,
		  const char *hash_hex, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r, rc;

	if ((r = db_prepare_kept(db, &st, "SELECT name, scopes FROM tokens WHERE hash = ?", err)))
		return r;
	sqlite3_bind_text(st, 1, hash_hex, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		snprintf(name, size, "%s", sqlite3_column_text(st, 0));
		/* "" for a token made before scopes: the caller's default */
		snprintf(scopes, scopes_size, "%s", sqlite3_column_type(st, 1) == SQLITE_NULL ? "" :
			 (const char *)sqlite3_column_text(st, 1));
	} else
		r = rc == SQLITE_DONE ? err_setf(err, -ENOENT, "no such token") :
		    db_fail(db, 0, err, "cannot look up a token");
	db_stmt_done(db, st);
	return r;
}

static void read_token(sqlite3_stmt *st, void *row)
{
	struct db_token_row *t = row;

	t->name = db_col_strdup(st, 0);
	t->created_at = db_col_strdup(st, 1);
	t->scopes = db_col_strdup(st, 2);
}

static void release_token(void *row)
{
	struct db_token_row *t = row;

	free(t->name);
	free(t->created_at);
	free(t->scopes);
}

int db_token_list(struct db *db, struct db_token_row **out, size_t *n, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	void *v;
	int r;

	if ((r = db_prepare(db, &st, "SELECT name, created_at, scopes FROM tokens ORDER BY id", err)))
		return r;
	if (!(r = db_rows(db, st, sizeof(**out), read_token, release_token, &v, n, err,
			  "cannot list the tokens")))
		*out = v;
	return r;
}

void db_token_rows_free(struct db_token_row *v, size_t n)
{
	db_rows_free(v, n, sizeof(*v), release_token);
}

int db_token_remove(struct db *db, const char *name, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, "DELETE FROM tokens WHERE name = ?", err)))
		return r;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) != SQLITE_DONE)
		r = db_fail(db, 0, err, "cannot remove token '%s'", name);
	else if (sqlite3_changes(db->h) == 0) {
		r = err_setf(err, -ENOENT, "no token named '%s'", name);
	}
	sqlite3_finalize(st);
	return r;
}
