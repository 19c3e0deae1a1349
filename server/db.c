/* db.c - opening the store and applying migrations (see db.h). */
#define LOG_MODULE "db"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "db.h"
#include "db_internal.h"
#include "log.h"
#include "schema.h"
#include "util.h"

char *kc_home(void)
{
	const char *h = getenv("KCANARY_HOME");

	if (h && *h)
		return xstrdup(h);
	h = getenv("HOME");
	return xasprintf("%s/.local/share/kcanary", h && *h ? h : "/root");
}

char *db_default_path(void)
{
	char *home = kc_home();
	char *p = xasprintf("%s/kcanary.db", home);

	free(home);
	return p;
}

int db_fail(struct db *db, const char *what)
{
	snprintf(db->err, sizeof(db->err), "%s: %s", what, sqlite3_errmsg(db->h));
	return -EIO;
}

const char *db_errmsg(const struct db *db)
{
	return db->err;
}

int db_exec(struct db *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(db->err, sizeof(db->err), "%s", msg ? msg : "sqlite error");
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

int db_begin(struct db *db) { return db_exec(db, "BEGIN IMMEDIATE"); }
int db_commit(struct db *db) { return db_exec(db, "COMMIT"); }
int db_rollback(struct db *db) { return db_exec(db, "ROLLBACK"); }

int db_prepare(struct db *db, sqlite3_stmt **out, const char *sql)
{
	if (sqlite3_prepare_v2(db->h, sql, -1, out, NULL) != SQLITE_OK)
		return db_fail(db, "prepare");
	return 0;
}

int db_query_int64(struct db *db, int64_t *out, const char *sql, const char *arg)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, sql)))
		return r;
	if (arg)
		sqlite3_bind_text(st, 1, arg, -1, SQLITE_TRANSIENT);
	switch (sqlite3_step(st)) {
	case SQLITE_ROW:
		*out = sqlite3_column_int64(st, 0);
		r = 0;
		break;
	case SQLITE_DONE:
		r = -ENOENT;
		break;
	default:
		r = db_fail(db, "query");
	}
	sqlite3_finalize(st);
	return r;
}

int db_schema_level(struct db *db)
{
	int64_t v = 0;

	if (db_query_int64(db, &v, "PRAGMA user_version", NULL))
		return -EIO;
	return (int)v;
}

static int db_migrate(struct db *db)
{
	int level = db_schema_level(db);
	int newest = 0;

	if (level < 0)
		return level;
	for (int i = 0; i < schema_migrations_count; i++)
		if (schema_migrations[i].level > newest)
			newest = schema_migrations[i].level;
	if (level > newest) {
		snprintf(db->err, sizeof(db->err),
			 "store schema level %d is newer than this kcanary (%d): upgrade kcanary",
			 level, newest);
		return -EPROTO;
	}
	for (int i = 0; i < schema_migrations_count; i++) {
		const struct schema_migration *m = &schema_migrations[i];
		char pragma[64];

		if (m->level <= level)
			continue;
		if (db_begin(db))
			return -EIO;
		if (db_exec(db, m->sql)) {
			char *why = xstrdup(db->err);
			db_rollback(db);
			snprintf(db->err, sizeof(db->err), "migration %.64s failed: %.400s",
				 m->name, why);
			free(why);
			return -EIO;
		}
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", m->level);
		if (db_exec(db, pragma) || db_commit(db)) {
			db_rollback(db);
			return -EIO;
		}
		log_info("applied migration %s", m->name);
	}
	return 0;
}

int db_open(struct db **out, const char *path)
{
	struct db *db = xcalloc(1, sizeof(*db));
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	int r;

	if (slash && slash != dir) {
		*slash = '\0';
		if ((r = mkdir_p(dir, 0755)) < 0) {
			log_err("cannot create directory '%s': %s", dir, strerror(-r));
			goto fail;
		}
	}
	if (sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		log_err("cannot open store '%s': %s", path,
			db->h ? sqlite3_errmsg(db->h) : "out of memory");
		r = -EIO;
		goto fail;
	}
	sqlite3_busy_timeout(db->h, 10000);
	if ((r = db_exec(db, "PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON;"
			 "PRAGMA synchronous = NORMAL;"))) {
		log_err("cannot set up store '%s': %s", path, db->err);
		goto fail;
	}
	if ((r = db_migrate(db))) {
		log_err("store '%s': %s", path, db->err);
		goto fail;
	}
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
	sqlite3_close_v2(db->h);
	free(db);
}
