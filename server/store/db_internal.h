/* db_internal.h - what the db*.c files share. Outside the store only
 * white-box tests include it (to read a row the store has no named
 * function for); SQL stays in the store. */
#ifndef KC_DB_INTERNAL_H
#define KC_DB_INTERNAL_H

#include <sqlite3.h>

#include "error.h"
#include "util.h"

struct db_writer;

/* Statements one connection keeps prepared (db_prepare_kept). */
#define DB_KEPT_MAX 16

struct db {
	sqlite3 *h;
	char *path;        /* the store's file, for messages */
	/* a closed db_writer kept with its prepared statements for the next
	 * db_writer_open() on this connection (db_writer.c); owned, and freed
	 * by db_close() through spare_writer_free, which db_writer_close()
	 * sets when it parks one: the connection does not know the writer */
	struct db_writer *spare_writer;
	void (*spare_writer_free)(struct db_writer *w);
	/* statements kept prepared for db_prepare_kept(); owned */
	struct db_kept {
		const char *sql;   /* a string literal: matched by address */
		sqlite3_stmt *st;
		int busy;          /* handed out, not yet db_stmt_done() */
	} kept[DB_KEPT_MAX];
	size_t nkept;
};

/*
 * db_fail - the one translation of a sqlite failure into error.h's model,
 * for every db*.c function: the code for rc (a sqlite result code, primary
 * or extended; 0: this connection's last error) and, in err (may be NULL),
 * the formatted context, ": ", and the reason in words (db.c):
 *     return db_fail(db, 0, err, "cannot store run %lld", id);
 *     -> "cannot store run 5: the file system of the store '/x.db' is full (…)"
 * Codes: SQLITE_BUSY/LOCKED -EBUSY (the lock held past DB_BUSY_TIMEOUT_MS),
 * SQLITE_FULL -ENOSPC, SQLITE_IOERR -EIO, SQLITE_CORRUPT/NOTADB -EIO ("the
 * store '…' is damaged"), SQLITE_CONSTRAINT -EEXIST for a unique or primary
 * key, -EINVAL for the others (check, foreign key, not null), else -EIO.
 * Every reason names the store's path. Read it at once: sqlite's last
 * error is per connection and the next call replaces it.
 */
int db_fail(struct db *db, int rc, struct buf *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * db_query_int64 - run a one-row, one-column query with up to one text
 * parameter (arg may be NULL for none) and return its integer in *out.
 * -ENOENT when there is no row. The store's own and tests': callers
 * elsewhere use a named db_* function.
 */
int db_query_int64(struct db *db, int64_t *out, const char *sql, const char *arg, struct buf *err);

/* db_col_strdup - column i of st's current row as a string the caller
 * frees, or NULL when the column is NULL. */
char *db_col_strdup(sqlite3_stmt *st, int i);

/* db_row_fn - fill row (zeroed, of the caller's element type) from st's
 * current row. db_row_release_fn - free what one filled in row (not row). */
typedef void db_row_fn(sqlite3_stmt *st, void *row);
typedef void db_row_release_fn(void *row);

/*
 * db_rows - the list queries' loop, whose copies differed only in their
 * columns: step st (prepared and bound) to its end, one element of size
 * bytes a row, each zeroed and filled by read(), and finalize it. The
 * array in *rows (NULL for none; the caller frees it with db_rows_free()
 * or its own *_free) and its length in *n. On a step's failure, db_fail
 * with the formatted context ("cannot list the hosts"): the rows read are
 * freed (release() on each, may be NULL) and *rows, *n are left as they were.
 */
int db_rows(struct db *db, sqlite3_stmt *st, size_t size, db_row_fn *read,
	    db_row_release_fn *release, void **rows, size_t *n, struct buf *err, const char *fmt, ...)
	__attribute__((format(printf, 9, 10)));

/*
 * db_job_row - bind job_id to st's first parameter and step it once, for
 * a query of one job's row: 0 with st on the row; -ENOENT "no job ID in
 * the store" when there is none; else db_fail "cannot read job ID" (what
 * NULL) or "cannot read job ID's <what>". st stays the caller's to
 * finalize.
 */
int db_job_row(struct db *db, sqlite3_stmt *st, int64_t job_id, const char *what, struct buf *err);

/* db_read_int64 - a db_row_fn for a list of ids: column 0 into an
 * int64_t element. */
void db_read_int64(sqlite3_stmt *st, void *row);

/* db_rows_free - release() (may be NULL) each of the n elements of size
 * bytes at rows, then free rows. NULL rows is fine. */
void db_rows_free(void *rows, size_t n, size_t size, db_row_release_fn *release);

/* sqlite3_prepare_v2; a failure through db_fail ("cannot prepare '<sql>…'"). */
int db_prepare(struct db *db, sqlite3_stmt **out, const char *sql, struct buf *err);

/*
 * db_prepare_kept - db_prepare() for a statement a hot path runs again and
 * again (each fleet batch reads its host and token, finds its streams,
 * advances the sequence): the statement for sql, a string literal (matched
 * by its address), is prepared once per connection and kept (at most
 * DB_KEPT_MAX; beyond, prepared each time). End each use with
 * db_stmt_done(), never sqlite3_finalize(). A second use of the same sql
 * before the first is done gets a statement of its own. Preparing them was
 * about 6% of the server's instructions per 100-record batch (callgrind,
 * bench/fleet_cg.c; issue 19 item 3).
 */
int db_prepare_kept(struct db *db, sqlite3_stmt **out, const char *sql, struct buf *err);

/* db_stmt_done - end a use of st: a kept statement is reset and its
 * bindings cleared for the next use, any other finalized. NULL is fine. */
void db_stmt_done(struct db *db, sqlite3_stmt *st);

/*
 * db_step_done - step st once expecting SQLITE_DONE; a failure through
 * db_fail with the formatted context (so a unique conflict is -EEXIST).
 */
int db_step_done(struct db *db, sqlite3_stmt *st, struct buf *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Bind a text that may be NULL. */
static inline void db_bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/*
 * A fleet host's passive stream (kcanary-agent daemon) is a run of cell
 * DB_PASSIVE_CELL (db_fleet.h): it never has a summary, only samples. Its value
 * of a metric is the median of all its samples of that metric so far (one
 * run per host and boot), the SQL below: a correlated scalar over run id
 * RUN (an SQL expression) and metric name METRIC (an SQL expression, e.g.
 * a parameter "?2"); NULL when the run has no such sample. For an even
 * count, the mean of the two middle values. db_report.c and db_api.c (the
 * report and the API's runs) share it, so both give the same number.
 */
#define DB_SAMPLES_MEDIAN_SQL(RUN, METRIC) \
	"(SELECT avg(v) FROM (SELECT s.value AS v, row_number() OVER (ORDER BY s.value) AS i," \
	" count(*) OVER () AS n FROM samples s WHERE s.run_id = " RUN " AND s.metric_id =" \
	" (SELECT id FROM metrics WHERE name = " METRIC ")) WHERE i IN ((n + 1) / 2, (n + 2) / 2))"

#endif
