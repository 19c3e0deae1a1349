/* db_inbox.c - public-inbox answers kept in the store (see db_inbox.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/db_inbox.h"
#include "store/db_internal.h"
#include "error.h"
#include "util.h"

int db_inbox_get(struct db *db, struct buf *body, long *status_out, char **url_out,
		 const char *key, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r, rc;

	if ((r = db_prepare(db, &st, "SELECT status, body, url FROM inbox_cache WHERE key = ?", err)))
		return r;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const void *p = sqlite3_column_blob(st, 1);
		size_t n = (size_t)sqlite3_column_bytes(st, 1);
		*status_out = (long)sqlite3_column_int64(st, 0);
		r = n && buf_append(body, p, n) ? err_setf(err, -EFBIG, "the kept answer for '%s' "
							   "is larger than %zu bytes", key, body->max_bytes) : 0;
		if (!r && url_out)
			*url_out = xstrdup((const char *)sqlite3_column_text(st, 2));
	} else if (rc == SQLITE_DONE) {
		r = err_setf(err, -ENOENT, "nothing kept for '%s'", key);
	} else {
		r = db_fail(db, 0, err, "cannot read the kept answer for '%s'", key);
	}
	sqlite3_finalize(st);
	return r;
}

int db_inbox_put(struct db *db, const char *key, const char *url, long status,
		 const void *body, size_t len, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, "INSERT OR REPLACE INTO inbox_cache (key, url, status, body,"
			    " fetched_s) VALUES (?, ?, ?, ?, ?)", err)))
		return r;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, url, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, status);
	sqlite3_bind_blob(st, 4, len ? body : "", (int)len, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 5, clock_wall_s());
	r = db_step_done(db, st, err, "cannot keep the answer for '%s'", key);
	sqlite3_finalize(st);
	return r;
}
