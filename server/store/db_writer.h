/* db_writer.h - the record writer for one run, used by ingest.c (db_writer.c).
 * Errors and connections as db.h says.
 */
#ifndef KC_DB_WRITER_H
#define KC_DB_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/db.h"

/*
 * struct db_writer - prepared statements for inserting one run's records.
 * Calls between db_writer_begin() and db_writer_commit() form one batch
 * (one transaction). Metric names are interned in the metrics table.
 * Insert-only: a summary metric already stored for the run is kept and the
 * new value ignored (-EEXIST), so a later ingest never rewrites data.
 * Begun while the connection is already inside a transaction (the caller's
 * db_begin()), a batch joins it: commit and rollback are then the caller's.
 * The writer inserts samples 64 rows to a statement, so a sample may be
 * stored (and a store error reported) only by a later call or
 * db_writer_commit(), which inside the caller's transaction stores the
 * pending samples and commits nothing. In its own batch it checks foreign keys once per batch (the run
 * exists) rather than per row, and the connection's enforcement is back on
 * after commit or rollback.
 */
struct db_writer;

/* db_writer_open - a writer for run_id (-ENOENT when there is no such
 * run). The connection keeps one closed writer's prepared statements and
 * gives them to the next writer it opens. db_writer_close() rolls back an
 * open batch of the writer's own and drops samples not yet stored. */
int db_writer_open(struct db_writer **out, struct db *db, int64_t run_id, struct buf *err);
void db_writer_close(struct db_writer *w);
int db_writer_begin(struct db_writer *w, struct buf *err);
int db_writer_commit(struct db_writer *w, struct buf *err);
void db_writer_rollback(struct db_writer *w);

int db_writer_sample(struct db_writer *w, double t_s, const char *metric, double value, struct buf *err);
/* t_s may be NAN for a final (summary) count. */
int db_writer_probe(struct db_writer *w, double t_s, const char *name,
		    const char *key, int64_t count, struct buf *err);
int db_writer_phase(struct db_writer *w, double t_s, const char *name, struct buf *err);
/* A metric's unit and direction (better: "higher", "lower" or NULL), as a
 * workload defines it (the agent's metric record); a metric the store
 * already knows keeps its own. */
int db_writer_metric_def(struct db_writer *w, const char *name, const char *unit,
			 const char *better, struct buf *err);
int db_writer_note(struct db_writer *w, double t_s, const char *kind, const char *text, struct buf *err);
int db_writer_summary(struct db_writer *w, const char *metric, double value, struct buf *err);
int db_writer_raw(struct db_writer *w, int64_t line_no, const char *reason,
		  const char *text, size_t len, struct buf *err);
/* Fill the run's hello columns; any string may be NULL. */
int db_writer_hello(struct db_writer *w, const char *kernel_release,
		    const char *agent_version, const char *host, const char *hello_json, struct buf *err);
/* Set the run's final status, error (may be NULL) and counters. */
int db_writer_finish(struct db_writer *w, const char *status, const char *error,
		     int64_t records, int64_t bad_lines, struct buf *err);

#endif
