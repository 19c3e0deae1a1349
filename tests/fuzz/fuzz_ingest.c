/* fuzz_ingest.c - libFuzzer target: an arbitrary byte stream as one run's
 * agent records, into a real (in-memory) store. Any input must leave the
 * store consistent: no crash, no leak, no sanitizer report. */
#include <stdint.h>
#include <stdlib.h>

#include "db.h"
#include "ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct db *db;
	static int64_t job, variant;
	struct ingest *in = NULL;
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
	if (ingest_close(in, NULL, NULL))
		abort();
	/* keep the store small so every input costs the same */
	if (db_exec(db, "DELETE FROM runs", NULL))
		abort();
	return 0;
}
