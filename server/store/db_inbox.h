/* db_inbox.h - public-inbox answers kept in the store (the inbox_cache
 * table of schema/011): one row per thread or search, by key. Rules as in
 * db.h. */
#ifndef KC_DB_INBOX_H
#define KC_DB_INBOX_H

#include "store/db.h"
#include "util.h"

/*
 * db_inbox_get - the kept answer for key ("thread:<msgid>", "search:<q>"):
 * its bytes appended to body, *status_out the HTTP status it had, url_out
 * (may be NULL) a new string the caller frees. -ENOENT when none is kept.
 */
int db_inbox_get(struct db *db, struct buf *body, long *status_out, char **url_out,
		 const char *key, struct buf *err);

/* db_inbox_put - keep (or replace) the answer for key: the URL it came
 * from, its HTTP status and its len bytes, stamped with the wall clock. */
int db_inbox_put(struct db *db, const char *key, const char *url, long status,
		 const void *body, size_t len, struct buf *err);

#endif
