/* db_internal.h - what the db*.c files share; nothing else includes it. */
#ifndef KC_DB_INTERNAL_H
#define KC_DB_INTERNAL_H

#include <sqlite3.h>

struct db {
	sqlite3 *h;
	char err[512];
};

/* Record sqlite's message for the failed step `what`; returns -EIO. */
int db_fail(struct db *db, const char *what);
/* sqlite3_prepare_v2 with error capture. */
int db_prepare(struct db *db, sqlite3_stmt **out, const char *sql);

/* Bind a text that may be NULL. */
static inline void db_bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

#endif
