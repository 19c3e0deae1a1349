/* ingest.h - store an agent's record stream (docs/records.md)
 * as one run, record by record, as it arrives.
 *
 * A whole stream (ingest_open) also keeps its order: a second hello,
 * anything after done, a sample's or probe's t going back for its series,
 * and a probe count that is negative or falls (counts are cumulative) are
 * kept raw with the reason, like a line that does not parse; a stream that
 * is mostly not records is cut off (INGEST_MAX_BAD_LINES).
 *
 * Records are parsed with jansson and written in batched transactions
 * (a batch closes every INGEST_BATCH records or on ingest_flush()), so a
 * reader sees a live run at most one batch behind. A line that does not
 * parse, or parses to a record that breaks the contract (unknown type,
 * missing field, non-finite number), is stored raw in raw_lines with its
 * line number and reason, counted, and the stream goes on. Nothing already
 * stored is rewritten: ingest only inserts rows for its own run and sets
 * that run's status and counters.
 *
 * One struct ingest belongs to one thread and one db connection.
 */
#ifndef KC_INGEST_H
#define KC_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "store/db.h"

#define INGEST_BATCH 20000
/* Longest line kept; longer ones are stored raw, cut, as over the cap. */
#define INGEST_MAX_LINE (1 << 20)
/*
 * A stream that is not a record stream (garbage, a flood): once more than
 * INGEST_MAX_BAD_LINES lines were bad and bad lines outnumber records, or
 * INGEST_MAX_RAW_BYTES of raw text were kept, the rest is refused: counted,
 * not stored, and the run ends 'failed' with the line where it stopped.
 */
#define INGEST_MAX_BAD_LINES 1000
#define INGEST_MAX_RAW_BYTES (8 << 20)
/* Order checks of a whole stream track at most this many series. */
#define INGEST_MAX_SERIES 100000
/* Bad lines whose reasons the stats keep for the user ("line N: why"). */
#define INGEST_BAD_SHOWN 8

struct ingest;

struct ingest_stats {
	int64_t lines;       /* lines seen, including bad ones */
	int64_t records;     /* records stored */
	int64_t bad_lines;   /* lines kept raw */
	int64_t samples;
	int64_t probes;
	bool saw_hello;
	double hello_mkfs_s; /* the hello's "mkfs_s" (seconds /init spent on mkfs and mount); 0 none */
	bool saw_done;       /* a {"type":"done"} arrived */
	bool saw_error;      /* an {"type":"error"} arrived */
	char error[256];     /* the error record's message, if any */
	char status[16];     /* status given to the run: ok, failed, incomplete */
	bool refused;        /* not a record stream: the rest was refused (error says where) */
	int64_t refused_lines;
	uint64_t refused_bytes;
	int n_bad_shown;     /* the first bad lines, "line N: reason" */
	char bad_shown[INGEST_BAD_SHOWN][160];
};

/*
 * ingest_open - start ingesting into the existing run run_id (status set
 * to 'running'). *out is owned by the caller and freed by ingest_close().
 * Returns 0, -ENOENT (no such run) or the store's error, with err.
 */
int ingest_open(struct ingest **out, struct db *db, int64_t run_id, struct buf *err);

/*
 * ingest_feed - hand over the next len bytes of the stream, in any
 * chunking; complete lines are processed, a partial line is kept until the
 * rest arrives. Bad data never fails: only a store error does (its code,
 * db.h; the batch in progress is rolled back, earlier batches stay), and
 * err says which line could not be stored and why. After a store error
 * every call fails again with the same message. These functions do not
 * log: the caller reports the error once.
 */
int ingest_feed(struct ingest *in, const char *data, size_t len, struct buf *err);

/*
 * ingest_scratch_begin, ingest_scratch_end - the jansson values this
 * thread builds between the two calls live in ingest's per-thread arena
 * (64 KiB; beyond it, malloc as usual) rather than malloc's: for a caller
 * that parses many small JSON texts (api_fleet.c: a batch's envelope
 * lines), one at a time. Decref every value made in between before
 * ingest_scratch_end(). The pair does not nest with itself, but
 * ingest_line() and ingest_record() may be called inside it: they take
 * their room after the caller's and give back only their own.
 */
void ingest_scratch_begin(void);
void ingest_scratch_end(void);

/*
 * ingest_scratch_pause, ingest_scratch_resume - inside a scratch pair,
 * for values that must outlive it or strings the caller will free()
 * (json_dumps() allocates through the same functions): between the two,
 * jansson allocates with malloc again; the arena's values stay as they
 * are. Resume with what pause returned.
 */
bool ingest_scratch_pause(void);
void ingest_scratch_resume(bool was);

/* ingest_line - process one line (no trailing newline needed). */
int ingest_line(struct ingest *in, const char *line, size_t len, struct buf *err);

/*
 * ingest_record - process one record that is parsed already (rec, borrowed;
 * an object, else it is kept raw as "not a JSON object"): what
 * ingest_line() does after its json_loadb(), so a caller that has the
 * record inside a larger JSON text (a fleet batch's envelope, api_fleet.c)
 * parses it once. Where the stored text of a record is needed (a hello's
 * JSON, a note without a message, a raw line) it is jansson's compact
 * writing of rec, reals with the digits that give the same double
 * (json_num.h). Same errors as ingest_line().
 */
int ingest_record(struct ingest *in, json_t *rec, struct buf *err);

/*
 * ingest_set_live - a stream that arrives while something else waits (a
 * guest's channel, read between polls): from now on every ingest_feed()
 * commits what it stored before it returns, so no write lock is held
 * between calls. Other writers on the same store (a second lab host's run,
 * the job's own bookkeeping) then wait for one feed, never for the guest;
 * a batch left open across the wait kept them out for seconds and, with
 * sqlite's sleeping busy handler, could starve one past DB_BUSY_TIMEOUT_MS
 * (db.h). Readers see each feed at once. A whole file fed in chunks keeps
 * the default: INGEST_BATCH records a transaction.
 */
void ingest_set_live(struct ingest *in);

/* ingest_flush - commit the batch in progress now (for a live view). */
int ingest_flush(struct ingest *in, struct buf *err);

/*
 * ingest_close - end of stream: a partial last line is stored raw as
 * "truncated line", the batch is committed, and the run's status becomes
 * 'ok' (done seen), 'failed' (error record seen; its message goes to
 * runs.error) or 'incomplete' (the stream ended without done). Every sample
 * stored so far stays. Callers that know better (a watchdog timeout) set
 * the status afterwards with db_run_set_status(). Frees in; stats_out may
 * be NULL. Returns 0 or the store's error with err.
 */
int ingest_close(struct ingest *in, struct ingest_stats *stats_out, struct buf *err);

/*
 * ingest_open_at - go on storing records of run_id, a run fed over several
 * calls (a fleet agent's stream arrives in batches, api_fleet.c): like
 * ingest_open(), but without the order checks (a restarted daemon's counts
 * start again from 0 in the same run), the run's status is left alone and raw lines are
 * numbered after line_no (the lines of the run stored before). Opened while
 * the caller holds a transaction (db_begin()), the records join it: ingest
 * then neither commits nor rolls back, so the caller stores them together
 * with its own rows, or not at all. End with ingest_detach().
 */
int ingest_open_at(struct ingest **out, struct db *db, int64_t run_id, int64_t line_no,
		   struct buf *err);

/*
 * ingest_detach - store a partial last line as it is (the caller hands over
 * whole lines), flush, and free in without finishing the run: status and
 * counters (runs.records, bad_lines) are the caller's to set. stats_out (may
 * be NULL) gets this ingest's counters. 0 or the store's error with err.
 */
int ingest_detach(struct ingest *in, struct ingest_stats *stats_out, struct buf *err);

/* ingest_stats - the counters so far (borrowed, valid until close). */
const struct ingest_stats *ingest_stats(const struct ingest *in);

#endif
