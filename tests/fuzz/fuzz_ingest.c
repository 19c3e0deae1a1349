/* fuzz_ingest.c - libFuzzer target: an arbitrary byte stream as one run's
 * agent records, into a real (in-memory) store. Any input must leave the
 * store consistent: no crash, no leak, no sanitizer report, and the
 * invariants below (check_store) hold: the run's counters match its rows,
 * its status is what the stream said, nothing is left half-written. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/db.h"
#include "store/db_runs.h"
#include "store/db_internal.h"
#include "guest/ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int64_t count(struct db *db, const char *sql, int64_t run)
{
	char id[32];
	int64_t n = -1;

	snprintf(id, sizeof(id), "%lld", (long long)run);
	if (db_query_int64(db, &n, sql, id, NULL))
		abort();
	return n;
}

#define EXPECT(cond) do { if (!(cond)) { fprintf(stderr, "fuzz_ingest: invariant broken: %s\n", #cond); abort(); } } while (0)

/* After ingest_close: the counters ingest reported and the run's row both
 * match the rows stored for the run; the status follows done/error; no
 * transaction is left open (a half-written batch). */
static void check_store(struct db *db, int64_t run, const struct ingest_stats *st)
{
	EXPECT(count(db, "SELECT count(*) FROM samples WHERE run_id = ?", run) == st->samples);
	EXPECT(count(db, "SELECT count(*) FROM raw_lines WHERE run_id = ?", run) == st->bad_lines);
	EXPECT(count(db, "SELECT count(*) FROM probes WHERE run_id = ?", run) == st->probes);
	EXPECT(count(db, "SELECT bad_lines FROM runs WHERE id = ?", run) == st->bad_lines);
	EXPECT(count(db, "SELECT records FROM runs WHERE id = ?", run) == st->records);
	EXPECT(st->records + st->bad_lines <= st->lines);
	EXPECT(count(db, "SELECT count(*) FROM raw_lines WHERE run_id = ? AND line_no < 1", run) == 0);
	EXPECT(count(db, "SELECT count(*) FROM samples WHERE run_id = ? AND (value != value OR t_s != t_s)", run) == 0);
	EXPECT(!strcmp(st->status, st->saw_error ? "failed" : st->saw_done ? "ok" : "incomplete"));
	if (!strcmp(st->status, "ok"))
		EXPECT(count(db, "SELECT count(*) FROM runs WHERE id = ? AND status = 'ok'", run) == 1);
	else if (!strcmp(st->status, "failed"))
		EXPECT(count(db, "SELECT count(*) FROM runs WHERE id = ? AND status = 'failed'", run) == 1);
	else
		EXPECT(count(db, "SELECT count(*) FROM runs WHERE id = ? AND status = 'incomplete'", run) == 1);
	/* BEGIN fails inside an open transaction */
	EXPECT(db_exec(db, "BEGIN", NULL) == 0);
	EXPECT(db_exec(db, "ROLLBACK", NULL) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct db *db;
	static int64_t job, variant;
	struct ingest *in = NULL;
	struct ingest_stats st;
	int64_t run;

	if (!db) {
		if (db_open(&db, ":memory:", NULL) || db_job_create(db, &job, "fuzz", "adhoc", NULL, NULL) ||
		    db_variant_get(db, &variant, job, "base", NULL))
			abort();
	}
	if (db_run_create(db, &run, job, variant, "", 0, NULL, NULL, NULL) || ingest_open(&in, db, run, NULL))
		abort();
	/* feed in two pieces so the partial-line path is exercised */
	size_t half = size / 2;
	if (ingest_feed(in, (const char *)data, half, NULL) == 0)
		ingest_feed(in, (const char *)data + half, size - half, NULL);
	if (ingest_close(in, &st, NULL))
		abort();
	check_store(db, run, &st);
	/* keep the store small so every input costs the same */
	if (db_exec(db, "DELETE FROM runs", NULL))
		abort();
	return 0;
}
