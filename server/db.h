/* db.h - the results store: one sqlite file, migrations, typed queries.
 *
 * Only the db*.c files include <sqlite3.h>; everything else goes through
 * these functions. A struct db is one connection: use it from one thread
 * (open one per thread). The file is in WAL mode with foreign keys on and a
 * busy timeout, so readers (kcanary serve) and one writer (a job) coexist.
 *
 * Errors: functions return 0 or a negative errno; -EIO means sqlite failed,
 * -EEXIST a uniqueness conflict, -EINVAL a value outside a checked set (a
 * status, a missing parent row), and db_errmsg() says why (valid until the next call on that db).
 * Query helpers in other db_*.c files follow the same rules.
 */
#ifndef KC_DB_H
#define KC_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct db;

/*
 * db_default_path - where the store lives: $KCANARY_HOME/kcanary.db, else
 * ~/.local/share/kcanary/kcanary.db. Returns a new string; caller frees.
 */
char *db_default_path(void);

/* kc_home - $KCANARY_HOME or ~/.local/share/kcanary (new string; caller frees). */
char *kc_home(void);

/*
 * db_open - open (creating if needed) the store at path and bring its schema
 * to the newest level, applying schema/NNN_*.sql in order, each in its own
 * transaction; PRAGMA user_version records the level. A store newer than
 * this binary is refused (-EPROTO) rather than touched. Parent directories
 * are created. *out is set only on success; free with db_close().
 */
int db_open(struct db **out, const char *path);
void db_close(struct db *db);

/* Last error message of this connection (borrowed). */
const char *db_errmsg(const struct db *db);

/* Schema level of the open store (PRAGMA user_version). */
int db_schema_level(struct db *db);

/* Transactions. db_begin() takes the write lock at once (BEGIN IMMEDIATE). */
int db_begin(struct db *db);
int db_commit(struct db *db);
int db_rollback(struct db *db);

/* Run SQL without results (several statements allowed). For tests, tools. */
int db_exec(struct db *db, const char *sql);

/*
 * db_query_int64 - run a one-row, one-column query with up to one text
 * parameter (arg may be NULL for none) and return its integer in *out.
 * -ENOENT when there is no row.
 */
int db_query_int64(struct db *db, int64_t *out, const char *sql, const char *arg);

/* ---- jobs, variants, runs (db_runs.c) ---- */

/*
 * db_job_create - insert a job; kind is one of adhoc, compare, bisect,
 * canary; spec_json may be NULL ("{}"). *out_id gets its id.
 */
int db_job_create(struct db *db, int64_t *out_id, const char *name,
		  const char *kind, const char *spec_json);

/*
 * db_job_resolve - find a job by numeric id or by name (the newest job of
 * that name). -ENOENT when none.
 */
int db_job_resolve(struct db *db, int64_t *out_id, const char *id_or_name);

/* db_job_set_status - set status (and error, may be NULL); stamps
 * started_at on 'running'/'building' and finished_at on terminal states. */
int db_job_set_status(struct db *db, int64_t job_id, const char *status,
		      const char *error);

/*
 * db_variant_get - id of the variant named name in job, creating it at the
 * next idx when missing (the first variant created is the baseline).
 */
int db_variant_get(struct db *db, int64_t *out_id, int64_t job_id,
		   const char *name);

/*
 * db_run_create - insert a pending run of variant in cell (canonical matrix
 * cell text, "" for none) with repeat_idx; repeat_idx 0 takes the next free
 * one. -EEXIST when that (variant, cell, repeat) exists: stored runs are
 * never replaced. params_json may be NULL.
 */
int db_run_create(struct db *db, int64_t *out_id, int64_t job_id,
		  int64_t variant_id, const char *cell, int repeat_idx,
		  const char *fs, const char *params_json);

/*
 * db_run_set_status - set a run's status and error (may be NULL). Stamps
 * started_at on 'running' and finished_at on any other non-pending status.
 */
int db_run_set_status(struct db *db, int64_t run_id, const char *status,
		      const char *error);


/* ---- record writer for one run (db_writer.c), used by ingest.c ---- */

/*
 * struct db_writer - prepared statements for inserting one run's records.
 * Calls between db_writer_begin() and db_writer_commit() form one batch
 * (one transaction). Metric names are interned in the metrics table.
 * Insert-only: a summary metric already stored for the run is kept and the
 * new value ignored (-EEXIST), so a later ingest never rewrites data.
 */
struct db_writer;

int db_writer_open(struct db_writer **out, struct db *db, int64_t run_id);
void db_writer_close(struct db_writer *w);
int db_writer_begin(struct db_writer *w);
int db_writer_commit(struct db_writer *w);
void db_writer_rollback(struct db_writer *w);

int db_writer_sample(struct db_writer *w, double t_s, const char *metric, double value);
/* t_s may be NAN for a final (summary) count. */
int db_writer_probe(struct db_writer *w, double t_s, const char *name,
		    const char *key, int64_t count);
int db_writer_phase(struct db_writer *w, double t_s, const char *name);
int db_writer_note(struct db_writer *w, double t_s, const char *kind, const char *text);
int db_writer_summary(struct db_writer *w, const char *metric, double value);
int db_writer_raw(struct db_writer *w, int64_t line_no, const char *reason,
		  const char *text, size_t len);
/* Fill the run's hello columns; any string may be NULL. */
int db_writer_hello(struct db_writer *w, const char *kernel_release,
		    const char *agent_version, const char *host, const char *hello_json);
/* Set the run's final status, error (may be NULL) and counters. */
int db_writer_finish(struct db_writer *w, const char *status, const char *error,
		     int64_t records, int64_t bad_lines);

#endif
