/* db_writer.c - insert one run's records with prepared statements (db_writer.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/db.h"
#include "store/db_runs.h"
#include "store/db_writer.h"
#include "store/db_internal.h"
#include "error.h"
#include "util.h"

struct metric_slot {
	char *name;
	int64_t id;
};

/*
 * Samples are inserted SAMPLE_ROWS at a time, one multi-row INSERT, while
 * the writer is in its own transaction (issue 19, CLI ingest speed: per
 * statement, SQLite halts the VM, closes its cursors and seeks the table's
 * last rowid again; under callgrind that was about 15% of an ingest of
 * samples). They wait in pend[] until the batch is full, any other record
 * is written, or the transaction commits; a rollback drops them with the
 * rest. Inside a caller's transaction (fleet batches) the same, flushed by
 * db_writer_commit() (which commits nothing there), so the caller commits
 * them with its own rows: per 100-record batch, one statement a sample
 * was a tenth of the server's time (issue 19 item 3).
 */
#define SAMPLE_ROWS 64
struct pending_sample {
	int64_t metric_id;
	double t_s, value;
};

struct db_writer {
	struct db *db;
	int64_t run_id;
	bool in_tx;
	sqlite3_stmt *sample, *sample_many, *probe, *phase, *note, *summary, *raw;
	struct pending_sample pend[SAMPLE_ROWS];
	size_t npend;
	sqlite3_stmt *metric_ins, *metric_sel;
	struct metric_slot *metrics;
	size_t nmetrics;
};

static int flush_samples(struct db_writer *w, struct buf *err);

/* Finalize w's statements and free it. */
static void writer_free(struct db_writer *w)
{
	sqlite3_finalize(w->sample);
	sqlite3_finalize(w->sample_many);
	sqlite3_finalize(w->probe);
	sqlite3_finalize(w->phase);
	sqlite3_finalize(w->note);
	sqlite3_finalize(w->summary);
	sqlite3_finalize(w->raw);
	sqlite3_finalize(w->metric_ins);
	sqlite3_finalize(w->metric_sel);
	for (size_t i = 0; i < w->nmetrics; i++)
		free(w->metrics[i].name);
	free(w->metrics);
	free(w);
}

int db_writer_open(struct db_writer **out, struct db *db, int64_t run_id, struct buf *err)
{
	struct db_writer *w;
	int64_t exists;
	int r;

	char *id = xasprintf("%lld", (long long)run_id);
	r = db_query_int64(db, &exists, "SELECT id FROM runs WHERE id = ?", id, err);
	free(id);
	if (r == -ENOENT)
		err_setf(err, r, "no run %lld in the store", (long long)run_id);
	if (r)
		return r;
	/* the connection's spare writer: its statements are prepared already
	 * (a fleet batch opens a writer per stream; preparing the ten
	 * statements, the 256-parameter INSERT most, was a fifth of the
	 * server's time per 100-record batch, issue 19 item 3) */
	if ((w = db->spare_writer)) {
		db->spare_writer = NULL;
		w->run_id = run_id;
		*out = w;
		return 0;
	}
	w = xcalloc(1, sizeof(*w));
	w->db = db;
	w->run_id = run_id;
	struct buf many = BUF_INIT;
	buf_puts(&many, "INSERT INTO samples (run_id, metric_id, t_s, value) VALUES (?, ?, ?, ?)");
	for (int i = 1; i < SAMPLE_ROWS; i++)
		buf_puts(&many, ", (?, ?, ?, ?)");
	r = db_prepare(db, &w->sample_many, buf_str(&many), err);
	buf_release(&many);
	if (r)
		goto fail;
	if ((r = db_prepare(db, &w->sample,
			    "INSERT INTO samples (run_id, metric_id, t_s, value) VALUES (?, ?, ?, ?)", err)) ||
	    (r = db_prepare(db, &w->probe,
			    "INSERT INTO probes (run_id, t_s, name, key, count) VALUES (?, ?, ?, ?, ?)", err)) ||
	    (r = db_prepare(db, &w->phase,
			    "INSERT INTO phases (run_id, t_s, name) VALUES (?, ?, ?)", err)) ||
	    (r = db_prepare(db, &w->note,
			    "INSERT INTO run_notes (run_id, t_s, kind, text) VALUES (?, ?, ?, ?)", err)) ||
	    (r = db_prepare(db, &w->summary,
			    "INSERT OR IGNORE INTO run_summary (run_id, metric, value) VALUES (?, ?, ?)", err)) ||
	    (r = db_prepare(db, &w->raw,
			    "INSERT INTO raw_lines (run_id, line_no, reason, text) VALUES (?, ?, ?, ?)", err)) ||
	    (r = db_prepare(db, &w->metric_ins,
			    "INSERT OR IGNORE INTO metrics (name) VALUES (?)", err)) ||
	    (r = db_prepare(db, &w->metric_sel,
			    "SELECT id FROM metrics WHERE name = ?", err)))
		goto fail;
	*out = w;
	return 0;
fail:
	writer_free(w);
	return r;
}

void db_writer_close(struct db_writer *w)
{
	if (!w)
		return;
	if (w->in_tx)
		db_writer_rollback(w);
	w->npend = 0;	/* unflushed samples of a caller's transaction go with it */
	if (w->db->spare_writer) {
		writer_free(w);
		return;
	}
	/* kept for the connection's next writer. Metric ids are forgotten: one
	 * interned inside a caller's transaction that is then rolled back does
	 * not exist, and the writer cannot tell which will be. */
	for (size_t i = 0; i < w->nmetrics; i++)
		free(w->metrics[i].name);
	w->nmetrics = 0;
	w->db->spare_writer = w;
	w->db->spare_writer_free = writer_free;
}

int db_writer_begin(struct db_writer *w, struct buf *err)
{
	int r;

	if (w->in_tx)
		return 0;
	/* inside the caller's transaction (fleet batches, db_fleet.c): the
	 * caller commits or rolls back, together with its own rows */
	if (!sqlite3_get_autocommit(w->db->h))
		return 0;
	/* Our own transaction runs without foreign key enforcement: the
	 * parents of what it inserts are the run, checked below inside the
	 * same (IMMEDIATE, so no other writer can delete it) transaction, and
	 * metric ids this writer read from the metrics table itself. Checking
	 * them on every row was about 40% of SQLite's time per sample (issue
	 * 19: sqlite3's own .import of the same rows into the same schema, 0.51
	 * against 0.72 s of CPU for 300,000 rows). The pragma is a no-op inside
	 * a transaction, hence before BEGIN; commit and rollback restore it. */
	if ((r = db_exec(w->db, "PRAGMA foreign_keys = OFF", err)))
		return r;
	if ((r = db_begin(w->db, err)))
		goto fk_on;
	char *id = xasprintf("%lld", (long long)w->run_id);
	int64_t exists;
	r = db_query_int64(w->db, &exists, "SELECT id FROM runs WHERE id = ?", id, err);
	free(id);
	if (r == -ENOENT)
		err_setf(err, r, "run %lld is no longer in the store", (long long)w->run_id);
	if (r) {
		db_rollback(w->db);
		goto fk_on;
	}
	w->in_tx = true;
	return 0;
fk_on:
	db_exec(w->db, "PRAGMA foreign_keys = ON", NULL);	/* err says why we stopped */
	return r;
}

int db_writer_commit(struct db_writer *w, struct buf *err)
{
	int r;

	if (!w->in_tx)	/* the caller's transaction: its samples go in now */
		return w->npend ? flush_samples(w, err) : 0;
	w->in_tx = false;
	if ((r = flush_samples(w, err)) || (r = db_commit(w->db, err)))
		db_rollback(w->db);
	int fr = db_exec(w->db, "PRAGMA foreign_keys = ON", r ? NULL : err);
	return r ? r : fr;
}

void db_writer_rollback(struct db_writer *w)
{
	if (w->in_tx) {
		db_rollback(w->db);
		db_exec(w->db, "PRAGMA foreign_keys = ON", NULL);
	}
	w->in_tx = false;
	w->npend = 0;
}

static int run_stmt(struct db_writer *w, sqlite3_stmt *st, const char *what, struct buf *err)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		return db_fail(w->db, rc, err, "cannot %s of run %lld", what, (long long)w->run_id);
	return 0;
}

/* Insert the pending samples: one statement for a full batch, else one a
 * row. Empties pend[] either way. */
static int flush_samples(struct db_writer *w, struct buf *err)
{
	size_t n = w->npend;
	int r;

	w->npend = 0;
	if (n == SAMPLE_ROWS) {
		for (size_t i = 0; i < n; i++) {
			int k = 4 * (int)i;
			sqlite3_bind_int64(w->sample_many, k + 1, w->run_id);
			sqlite3_bind_int64(w->sample_many, k + 2, w->pend[i].metric_id);
			sqlite3_bind_double(w->sample_many, k + 3, w->pend[i].t_s);
			sqlite3_bind_double(w->sample_many, k + 4, w->pend[i].value);
		}
		return run_stmt(w, w->sample_many, "store samples", err);
	}
	for (size_t i = 0; i < n; i++) {
		sqlite3_bind_int64(w->sample, 1, w->run_id);
		sqlite3_bind_int64(w->sample, 2, w->pend[i].metric_id);
		sqlite3_bind_double(w->sample, 3, w->pend[i].t_s);
		sqlite3_bind_double(w->sample, 4, w->pend[i].value);
		if ((r = run_stmt(w, w->sample, "store a sample", err)))
			return r;
	}
	return 0;
}

/* Before any other record: the samples before it are stored first. */
#define FLUSH_FIRST(w, err) do {						\
		int fr_ = (w)->npend ? flush_samples((w), (err)) : 0;		\
		if (fr_)							\
			return fr_;						\
	} while (0)

static int metric_id(struct db_writer *w, const char *name, int64_t *out, struct buf *err)
{
	int r;

	for (size_t i = 0; i < w->nmetrics; i++) {
		if (!strcmp(w->metrics[i].name, name)) {
			*out = w->metrics[i].id;
			return 0;
		}
	}
	sqlite3_bind_text(w->metric_ins, 1, name, -1, SQLITE_STATIC);
	if ((r = run_stmt(w, w->metric_ins, "store a metric name", err)))
		return r;
	sqlite3_bind_text(w->metric_sel, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(w->metric_sel) != SQLITE_ROW) {
		r = db_fail(w->db, 0, err, "cannot read metric '%s'", name);
		sqlite3_reset(w->metric_sel);
		return r;
	}
	*out = sqlite3_column_int64(w->metric_sel, 0);
	sqlite3_reset(w->metric_sel);
	w->metrics = xrealloc(w->metrics, (w->nmetrics + 1) * sizeof(*w->metrics));
	w->metrics[w->nmetrics].name = xstrdup(name);
	w->metrics[w->nmetrics].id = *out;
	w->nmetrics++;
	return 0;
}

int db_writer_sample(struct db_writer *w, double t_s, const char *metric, double value, struct buf *err)
{
	int64_t mid = 0;
	int r;

	if ((r = metric_id(w, metric, &mid, err)))
		return r;
	if (w->in_tx || !sqlite3_get_autocommit(w->db->h)) {
		w->pend[w->npend++] = (struct pending_sample){ mid, t_s, value };
		return w->npend == SAMPLE_ROWS ? flush_samples(w, err) : 0;
	}
	sqlite3_bind_int64(w->sample, 1, w->run_id);
	sqlite3_bind_int64(w->sample, 2, mid);
	sqlite3_bind_double(w->sample, 3, t_s);
	sqlite3_bind_double(w->sample, 4, value);
	return run_stmt(w, w->sample, "store a sample", err);
}

int db_writer_metric_def(struct db_writer *w, const char *name, const char *unit,
			 const char *better, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int64_t mid;
	int r;

	if ((r = metric_id(w, name, &mid, err)))
		return r;
	if ((r = db_prepare(w->db, &st,
			    "UPDATE metrics SET unit = coalesce(unit, ?2), better = coalesce(better, ?3)"
			    " WHERE id = ?1", err)))
		return r;
	sqlite3_bind_int64(st, 1, mid);
	db_bind_text_or_null(st, 2, unit);
	db_bind_text_or_null(st, 3, better);
	r = run_stmt(w, st, "store a metric's unit and direction", err);
	sqlite3_finalize(st);
	return r;
}

int db_writer_probe(struct db_writer *w, double t_s, const char *name,
		    const char *key, int64_t count, struct buf *err)
{
	FLUSH_FIRST(w, err);
	sqlite3_bind_int64(w->probe, 1, w->run_id);
	if (isnan(t_s))
		sqlite3_bind_null(w->probe, 2);
	else
		sqlite3_bind_double(w->probe, 2, t_s);
	sqlite3_bind_text(w->probe, 3, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(w->probe, 4, key ? key : "", -1, SQLITE_STATIC);
	sqlite3_bind_int64(w->probe, 5, count);
	return run_stmt(w, w->probe, "store a probe count", err);
}

int db_writer_phase(struct db_writer *w, double t_s, const char *name, struct buf *err)
{
	FLUSH_FIRST(w, err);
	sqlite3_bind_int64(w->phase, 1, w->run_id);
	sqlite3_bind_double(w->phase, 2, t_s);
	sqlite3_bind_text(w->phase, 3, name, -1, SQLITE_STATIC);
	return run_stmt(w, w->phase, "store a phase", err);
}

int db_writer_note(struct db_writer *w, double t_s, const char *kind, const char *text, struct buf *err)
{
	FLUSH_FIRST(w, err);
	sqlite3_bind_int64(w->note, 1, w->run_id);
	if (isnan(t_s))
		sqlite3_bind_null(w->note, 2);
	else
		sqlite3_bind_double(w->note, 2, t_s);
	sqlite3_bind_text(w->note, 3, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(w->note, 4, text, -1, SQLITE_STATIC);
	return run_stmt(w, w->note, "store a note", err);
}

int db_writer_summary(struct db_writer *w, const char *metric, double value, struct buf *err)
{
	int r;

	FLUSH_FIRST(w, err);

	sqlite3_bind_int64(w->summary, 1, w->run_id);
	sqlite3_bind_text(w->summary, 2, metric, -1, SQLITE_STATIC);
	sqlite3_bind_double(w->summary, 3, value);
	if ((r = run_stmt(w, w->summary, "store a summary value", err)))
		return r;
	return sqlite3_changes(w->db->h) ? 0 :
	       err_setf(err, -EEXIST, "run %lld already has a summary value of '%s'; kept",
			(long long)w->run_id, metric);
}

int db_writer_raw(struct db_writer *w, int64_t line_no, const char *reason,
		  const char *text, size_t len, struct buf *err)
{
	FLUSH_FIRST(w, err);
	sqlite3_bind_int64(w->raw, 1, w->run_id);
	sqlite3_bind_int64(w->raw, 2, line_no);
	sqlite3_bind_text(w->raw, 3, reason, -1, SQLITE_STATIC);
	/* kept as text; invalid UTF-8 is stored as the bytes it was */
	sqlite3_bind_text(w->raw, 4, text, (int)len, SQLITE_STATIC);
	return run_stmt(w, w->raw, "store a raw line", err);
}

int db_writer_hello(struct db_writer *w, const char *kernel_release,
		    const char *agent_version, const char *host, const char *hello_json, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	FLUSH_FIRST(w, err);

	if ((r = db_prepare(w->db, &st,
			    "UPDATE runs SET kernel_release = coalesce(kernel_release, ?1),"
			    " agent_version = coalesce(agent_version, ?2), host = coalesce(host, ?3),"
			    " hello_json = coalesce(hello_json, ?4) WHERE id = ?5", err)))
		return r;
	db_bind_text_or_null(st, 1, kernel_release);
	db_bind_text_or_null(st, 2, agent_version);
	db_bind_text_or_null(st, 3, host);
	db_bind_text_or_null(st, 4, hello_json);
	sqlite3_bind_int64(st, 5, w->run_id);
	r = run_stmt(w, st, "store the hello", err);
	sqlite3_finalize(st);
	return r;
}

int db_writer_finish(struct db_writer *w, const char *status, const char *error,
		     int64_t records, int64_t bad_lines, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	FLUSH_FIRST(w, err);

	if ((r = db_run_set_status(w->db, w->run_id, status, error, err)))
		return r;
	if ((r = db_prepare(w->db, &st,
			    "UPDATE runs SET records = records + ?, bad_lines = bad_lines + ? WHERE id = ?", err)))
		return r;
	sqlite3_bind_int64(st, 1, records);
	sqlite3_bind_int64(st, 2, bad_lines);
	sqlite3_bind_int64(st, 3, w->run_id);
	r = run_stmt(w, st, "store the end", err);
	sqlite3_finalize(st);
	return r;
}
