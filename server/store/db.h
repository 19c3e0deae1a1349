/* db.h - the results store: one sqlite file, migrations, typed queries.
 *
 * Only the db*.c files include <sqlite3.h>; everything else goes through
 * these functions. A struct db is one connection: use it from one thread
 * (open one per thread). The file is in WAL mode with foreign keys on and a
 * busy timeout, so readers (kcanary serve) and one writer (a job) coexist.
 *
 * Errors (error.h): functions return 0 or a negative errno and put the
 * reason in err (their last parameter, may be NULL) in words, naming what
 * failed and the store: "cannot set run 5's status to 'ok': the file
 * system of the store '/x/kcanary.db' is full (…)". -EIO the store or
 * sqlite failed (a damaged store says so), -ENOSPC its file system is
 * full, -EBUSY another process held the write lock for more than
 * DB_BUSY_TIMEOUT_MS, -EEXIST a uniqueness conflict, -EINVAL a value
 * outside a checked set (a status, a missing parent row), -ENOENT the
 * named job, run, variant, kernel, host or token is not there. The
 * translation from sqlite is one function (db_fail, db_internal.h). The
 * functions do not log; their callers report the error once.
 * Each db_X.c has its own db_X.h (db_runs.h, db_compare.h, db_writer.h,
 * db_report.h, db_status.h, db_api.h, db_tokens.h, …), whose functions
 * follow the same rules.
 */
#ifndef KC_DB_H
#define KC_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct db;

/* How long a connection waits for another's write lock before a step
 * fails with -EBUSY (sqlite3_busy_timeout). */
#define DB_BUSY_TIMEOUT_MS 10000

/* ---- the store: path, open, errors, transactions (db.c) ---- */

/* db_path_in - the store of the home directory home: "HOME/kcanary.db",
 * the one place that name is made. Returns a new string; caller frees. */
char *db_path_in(const char *home);


/* kc_home - $KCANARY_HOME or ~/.local/share/kcanary (new string; caller frees). */
char *kc_home(void);

/*
 * db_open - open (creating if needed) the store at path and bring its schema
 * to the newest level, applying schema/NNN_*.sql in order, each in its own
 * transaction; PRAGMA user_version records the level. A store newer than
 * this binary is refused (-EPROTO) rather than touched. Parent directories
 * are created. *out is set only on success; free with db_close().
 */
int db_open(struct db **out, const char *path, struct buf *err);
void db_close(struct db *db);

/* Schema level of the open store (PRAGMA user_version). */
int db_schema_level(struct db *db, struct buf *err);

/* Transactions. db_begin() takes the write lock at once (BEGIN IMMEDIATE). */
int db_begin(struct db *db, struct buf *err);
int db_commit(struct db *db, struct buf *err);
/* db_rollback - roll back the open transaction, if any: cleanup that
 * cannot fail the caller (a failure is logged; the first error is what the
 * caller reports). */
void db_rollback(struct db *db);

/* Run SQL without results (several statements allowed). For tests, tools. */
int db_exec(struct db *db, const char *sql, struct buf *err);

#endif
