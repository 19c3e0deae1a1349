/* db.c - opening the store and applying migrations (see db.h). */
#define LOG_MODULE "db"
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <time.h>

#include "store/db.h"
#include "store/db_internal.h"
#include "error.h"
#include "log.h"
#include "store/schema.h"
#include "util.h"

char *kc_home(void)
{
	const char *h = getenv("KCANARY_HOME");

	if (h && *h)
		return xstrdup(h);
	h = getenv("HOME");
	return xasprintf("%s/.local/share/kcanary", h && *h ? h : "/root");
}

char *db_path_in(const char *home)
{
	return xasprintf("%s/kcanary.db", home);
}

/*
 * The one translation of a sqlite failure (db_internal.h). The reason is
 * worded here, once, for every db*.c function: a full disk, a lock held
 * too long, a damaged file and an I/O error each say what the user can do
 * about them; a constraint or anything else gives sqlite's own message.
 */
static int db_reason(struct db *db, int rc, const char *msg, struct buf *out)
{
	const char *path = db->path ? db->path : "(memory)";

	/* an I/O error whose cause is a full file system (the WAL index or
	 * journal could not grow: sqlite says SQLITE_IOERR, errno ENOSPC) is
	 * said as the full disk it is */
	if ((rc & 0xff) == SQLITE_IOERR && db->h &&
	    (sqlite3_system_errno(db->h) == ENOSPC || sqlite3_system_errno(db->h) == EDQUOT))
		rc = SQLITE_FULL;
	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		buf_printf(out, "the store '%s' is busy: another process held its write lock"
			   " for more than %d s (%s)", path, DB_BUSY_TIMEOUT_MS / 1000, msg);
		return -EBUSY;
	case SQLITE_FULL:
		buf_printf(out, "the file system of the store '%s' is full", path);
		buf_free_space(out, db->path);
		buf_printf(out, " (%s); free space there and run the command again", msg);
		return -ENOSPC;
	case SQLITE_IOERR:
		buf_printf(out, "I/O error on the store '%s' (%s)", path, msg);
		return -EIO;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		buf_printf(out, "the store '%s' is damaged (%s)", path, msg);
		return -EIO;
	case SQLITE_CONSTRAINT:
		buf_puts(out, msg);
		switch (rc) {
		case SQLITE_CONSTRAINT_UNIQUE:
		case SQLITE_CONSTRAINT_PRIMARYKEY:
			return -EEXIST;
		default:       /* CHECK, FOREIGNKEY, NOTNULL: a value outside the set */
			return -EINVAL;
		}
	default:
		buf_printf(out, "%s (store '%s')", msg, path);
		return -EIO;
	}
}

static int db_vfail(struct db *db, int rc, struct buf *err, const char *fmt, va_list ap)
{
	struct buf why = BUF_INIT;
	const char *msg;
	int code;

	/* a step's own rc is the primary code; the connection has the
	 * extended one (SQLITE_CONSTRAINT_UNIQUE) and the message */
	if (!rc || (rc & 0xff) == (sqlite3_extended_errcode(db->h) & 0xff)) {
		rc = sqlite3_extended_errcode(db->h);
		msg = sqlite3_errmsg(db->h);
	} else {
		msg = sqlite3_errstr(rc);
	}
	code = db_reason(db, rc, msg, &why);
	if (err) {
		buf_reset(err);
		buf_vprintf(err, fmt, ap);
		buf_puts(err, ": ");
		buf_append(err, why.ptr, why.len);
	}
	buf_release(&why);
	return code;
}

int db_fail(struct db *db, int rc, struct buf *err, const char *fmt, ...)
{
	va_list ap;
	int code;

	va_start(ap, fmt);
	code = db_vfail(db, rc, err, fmt, ap);
	va_end(ap);
	return code;
}

int db_step_done(struct db *db, sqlite3_stmt *st, struct buf *err, const char *fmt, ...)
{
	va_list ap;
	int rc = sqlite3_step(st), code;

	if (rc == SQLITE_DONE)
		return 0;
	va_start(ap, fmt);
	code = db_vfail(db, sqlite3_extended_errcode(db->h), err, fmt, ap);
	va_end(ap);
	return code;
}

int db_exec(struct db *db, const char *sql, struct buf *err)
{
	char *msg = NULL;
	int rc = sqlite3_exec(db->h, sql, NULL, NULL, &msg), r = 0;

	if (rc != SQLITE_OK)
		r = db_fail(db, sqlite3_extended_errcode(db->h), err, "cannot run '%.40s%s'",
			    sql, strlen(sql) > 40 ? "…" : "");
	sqlite3_free(msg);
	return r;
}

int db_begin(struct db *db, struct buf *err)
{
	if (sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(db, 0, err, "cannot start a transaction");
	return 0;
}

int db_commit(struct db *db, struct buf *err)
{
	if (sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(db, 0, err, "cannot commit");
	return 0;
}

void db_rollback(struct db *db)
{
	/* nothing to roll back when sqlite already did (a full disk, an I/O
	 * error) or no transaction was open; a rollback that fails leaves
	 * the connection to be closed by its owner, which reports the first
	 * error, not this one */
	if (!sqlite3_get_autocommit(db->h) &&
	    sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL) != SQLITE_OK)
		log_warn("cannot roll back on the store '%s': %s",
			 db->path ? db->path : "(memory)", sqlite3_errmsg(db->h));
}

char *db_col_strdup(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? xstrdup((const char *)t) : NULL;
}

int db_rows(struct db *db, sqlite3_stmt *st, size_t size, db_row_fn *read,
	    db_row_release_fn *release, void **rows, size_t *n, struct buf *err, const char *fmt, ...)
{
	va_list ap;
	char *v = NULL;
	size_t k = 0, cap = 0;
	int r, rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (k == cap) {
			cap = cap ? 2 * cap : 16;
			v = xrealloc(v, cap * size);
		}
		memset(v + k * size, 0, size);
		read(st, v + k++ * size);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		va_start(ap, fmt);
		r = db_vfail(db, rc, err, fmt, ap);
		va_end(ap);
		db_rows_free(v, k, size, release);
		return r;
	}
	*rows = v;
	*n = k;
	return 0;
}

int db_job_row(struct db *db, sqlite3_stmt *st, int64_t job_id, const char *what, struct buf *err)
{
	int rc;

	sqlite3_bind_int64(st, 1, job_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc == SQLITE_DONE)
		return err_setf(err, -ENOENT, "no job %lld in the store", (long long)job_id);
	if (what)
		return db_fail(db, rc, err, "cannot read job %lld's %s", (long long)job_id, what);
	return db_fail(db, rc, err, "cannot read job %lld", (long long)job_id);
}

void db_read_int64(sqlite3_stmt *st, void *row)
{
	*(int64_t *)row = sqlite3_column_int64(st, 0);
}

void db_rows_free(void *rows, size_t n, size_t size, db_row_release_fn *release)
{
	for (size_t i = 0; release && i < n; i++)
		release((char *)rows + i * size);
	free(rows);
}

int db_prepare(struct db *db, sqlite3_stmt **out, const char *sql, struct buf *err)
{
	if (sqlite3_prepare_v2(db->h, sql, -1, out, NULL) != SQLITE_OK)
		return db_fail(db, 0, err, "cannot prepare '%.40s%s'", sql,
			       strlen(sql) > 40 ? "…" : "");
	return 0;
}

int db_prepare_kept(struct db *db, sqlite3_stmt **out, const char *sql, struct buf *err)
{
	struct db_kept *k = NULL;
	int r;

	for (size_t i = 0; i < db->nkept && !k; i++)
		if (db->kept[i].sql == sql)
			k = &db->kept[i];
	if (k && !k->busy) {
		k->busy = 1;
		*out = k->st;
		return 0;
	}
	if (k || db->nkept == DB_KEPT_MAX)
		return db_prepare(db, out, sql, err);
	if ((r = db_prepare(db, out, sql, err)))
		return r;
	db->kept[db->nkept++] = (struct db_kept){ .sql = sql, .st = *out, .busy = 1 };
	return 0;
}

void db_stmt_done(struct db *db, sqlite3_stmt *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < db->nkept; i++)
		if (db->kept[i].st == st) {
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			db->kept[i].busy = 0;
			return;
		}
	sqlite3_finalize(st);
}

int db_query_int64(struct db *db, int64_t *out, const char *sql, const char *arg,
		   struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, sql, err)))
		return r;
	if (arg)
		sqlite3_bind_text(st, 1, arg, -1, SQLITE_TRANSIENT);
	switch (sqlite3_step(st)) {
	case SQLITE_ROW:
		*out = sqlite3_column_int64(st, 0);
		r = 0;
		break;
	case SQLITE_DONE:
		r = err_setf(err, -ENOENT, "no row for '%.40s%s'", sql, strlen(sql) > 40 ? "…" : "");
		break;
	default:
		r = db_fail(db, 0, err, "cannot run '%.40s%s'", sql, strlen(sql) > 40 ? "…" : "");
	}
	sqlite3_finalize(st);
	return r;
}

int db_schema_level(struct db *db, struct buf *err)
{
	int64_t v = 0;
	int r;

	if ((r = db_query_int64(db, &v, "PRAGMA user_version", NULL, err)))
		return r;
	return (int)v;
}

/*
 * Which migrations a store has is kept by name in kc_migrations, not only
 * as a level: two migrations written on two branches (say 013 and 015)
 * can land in either order, and a store made by a tree holding only the
 * higher one must still get the lower one when it arrives. PRAGMA
 * user_version stays the highest level applied, so an older kcanary still
 * refuses a newer store. A store made before the table existed is taken
 * to hold every migration at or below its user_version (what the level
 * meant then). Called inside the caller's transaction.
 */
static int db_migrations_table(struct db *db, struct buf *err)
{
	int64_t rows = 0;
	int level = 0, r;

	if ((r = db_exec(db, "CREATE TABLE IF NOT EXISTS kc_migrations ("
			 " name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)", err)))
		return r;
	if ((r = db_query_int64(db, &rows, "SELECT count(*) FROM kc_migrations", NULL, err)))
		return r;
	if (rows || (level = db_schema_level(db, err)) <= 0)
		return rows ? 0 : level;
	for (int i = 0; i < schema_migrations_count; i++) {
		char sql[160];

		if (schema_migrations[i].level > level)
			continue;
		snprintf(sql, sizeof(sql), "INSERT INTO kc_migrations VALUES ('%s', strftime('%%s'))",
			 schema_migrations[i].name);
		if ((r = db_exec(db, sql, err)))
			return r;
	}
	return 0;
}

/* 1 when the store holds migration NAME (a file name from schema/, no
 * quote in it), 0 when not, < 0 on a store error. */
static int db_has_migration(struct db *db, const char *name, struct buf *err)
{
	int64_t n = 0;
	int r = db_query_int64(db, &n, "SELECT count(*) FROM kc_migrations WHERE name = ?", name, err);

	return r ? r : n > 0;
}

/* Apply migration M unless the store has it (read inside BEGIN IMMEDIATE:
 * another process opening the same new store may have applied it while
 * we waited for the lock, issue 18's two writers). */
static int db_apply_migration(struct db *db, const struct schema_migration *m, struct buf *err)
{
	char sql[192];
	int64_t known = 0;
	int r, level = 0;

	/* the common case, a store that has it: no write lock taken */
	if ((r = db_query_int64(db, &known, "SELECT count(*) FROM sqlite_master"
				" WHERE type = 'table' AND name = 'kc_migrations'", NULL, err)))
		return r;
	if (known && (r = db_has_migration(db, m->name, err)) != 0)
		return r < 0 ? r : 0;
	if ((r = db_begin(db, err)))
		return r;
	if ((r = db_migrations_table(db, err)) || (r = db_has_migration(db, m->name, err)) < 0 ||
	    (level = db_schema_level(db, err)) < 0)
		goto fail;
	if (r == 1)	/* another process applied it, or the store was adopted */
		return db_commit(db, err);
	if ((r = db_exec(db, m->sql, err)))
		goto fail;
	snprintf(sql, sizeof(sql), "INSERT INTO kc_migrations VALUES ('%s', strftime('%%s'))", m->name);
	if ((r = db_exec(db, sql, err)))
		goto fail;
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", m->level > level ? m->level : level);
	if ((r = db_exec(db, sql, err)) || (r = db_commit(db, err)))
		goto fail;
	log_info("applied migration %s", m->name);
	return 0;
fail:
	db_rollback(db);
	return err_wrapf(err, r < 0 ? r : level, "migration %s of the store '%s'", m->name, db->path);
}

static int db_migrate(struct db *db, struct buf *err)
{
	int level = db_schema_level(db, err);
	int newest = 0, r;

	if (level < 0)
		return level;
	for (int i = 0; i < schema_migrations_count; i++)
		if (schema_migrations[i].level > newest)
			newest = schema_migrations[i].level;
	if (level > newest)
		return err_setf(err, -EPROTO, "the store '%s' is at schema level %d, newer than"
				" this kcanary (%d): upgrade kcanary", db->path, level, newest);
	for (int i = 0; i < schema_migrations_count; i++)
		if ((r = db_apply_migration(db, &schema_migrations[i], err)))
			return r;
	return 0;
}

/*
 * Put the store in WAL mode (kept in the file, so this changes something
 * only for a new store). Switching a file to WAL takes its exclusive lock
 * and sqlite does not call the busy handler for it: a second process
 * opening the same new store at that moment gets SQLITE_BUSY at once
 * (seen in test_db.c's test_two_writers_at_once). Retried here every
 * 10 ms for up to DB_BUSY_TIMEOUT_MS, the wait every other step gets.
 */
static int db_set_wal(struct db *db, struct buf *err)
{
	double until = clock_mono_s() + DB_BUSY_TIMEOUT_MS / 1000.0;
	const struct timespec tick = { 0, 10 * 1000 * 1000 };
	int rc;

	while ((rc = sqlite3_exec(db->h, "PRAGMA journal_mode = WAL", NULL, NULL, NULL)) != SQLITE_OK &&
	       (rc & 0xff) == SQLITE_BUSY && clock_mono_s() < until)
		nanosleep(&tick, NULL);
	if (rc != SQLITE_OK)
		return db_fail(db, rc, err, "cannot put the store in WAL mode");
	return 0;
}

int db_open(struct db **out, const char *path, struct buf *err)
{
	struct db *db = xcalloc(1, sizeof(*db));
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	int r;

	db->path = xstrdup(path);
	if (slash && slash != dir) {
		*slash = '\0';
		if ((r = mkdir_p(dir, 0755)) < 0) {
			err_setf(err, r, "cannot open the store '%s': cannot create its directory"
				 " '%s': %s", path, dir, strerror(-r));
			goto fail;
		}
	}
	if (sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		if (db->h)
			r = db_fail(db, 0, err, "cannot open the store '%s'", path);
		else
			r = err_setf(err, -ENOMEM, "cannot open the store '%s': out of memory", path);
		goto fail;
	}
	sqlite3_busy_timeout(db->h, DB_BUSY_TIMEOUT_MS);
	if ((r = db_set_wal(db, err)) ||
	    (r = db_exec(db, "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;", err))) {
		err_wrapf(err, r, "cannot set up the store '%s'", path);
		goto fail;
	}
	if ((r = db_migrate(db, err)))
		goto fail;
	free(dir);
	*out = db;
	return 0;
fail:
	free(dir);
	db_close(db);
	return r;
}

void db_close(struct db *db)
{
	if (!db)
		return;
	if (db->spare_writer)
		db->spare_writer_free(db->spare_writer);
	for (size_t i = 0; i < db->nkept; i++)
		sqlite3_finalize(db->kept[i].st);
	sqlite3_close_v2(db->h);
	free(db->path);
	free(db);
}
