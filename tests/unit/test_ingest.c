/* test_ingest.c - storing agent record streams, good and bad. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "store/db.h"
#include "store/db_runs.h"
#include "store/db_internal.h"
#include "guest/ingest.h"
#include "util.h"
#include "testutil.h"

struct fx {
	struct tmpdir td;
	struct db *db;
	int64_t job, variant;
};

static int fx_setup(void **state)
{
	struct tmpdir *td;
	if (tmpdir_setup((void **)&td))
		return -1;
	struct fx *f = calloc(1, sizeof(*f));
	f->td = *td;
	free(td);
	char *path = xasprintf("%s/kc.db", f->td.path);
	int r = db_open(&f->db, path, NULL);
	free(path);
	if (r || db_job_create(f->db, &f->job, "t", "adhoc", NULL, NULL) ||
	    db_variant_get(f->db, &f->variant, f->job, "base", NULL))
		return -1;
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	db_close(f->db);
	struct tmpdir *td = malloc(sizeof(*td));
	*td = f->td;
	free(f);
	void *p = td;
	return tmpdir_teardown(&p);
}

static int64_t q(struct fx *f, const char *sql)
{
	int64_t v = -1;
	assert_int_equal(db_query_int64(f->db, &v, sql, NULL, NULL), 0);
	return v;
}

/* Feed text in chunks of `chunk` bytes (0: all at once) into a new run. */
static int64_t ingest_text(struct fx *f, const char *text, size_t chunk,
			   struct ingest_stats *st)
{
	struct ingest *in = NULL;
	int64_t run;
	size_t len = strlen(text);

	assert_int_equal(db_run_create(f->db, &run, f->job, f->variant, "", 0, NULL, NULL, NULL), 0);
	assert_int_equal(ingest_open(&in, f->db, run, NULL), 0);
	if (!chunk)
		chunk = len ? len : 1;
	for (size_t off = 0; off < len; off += chunk)
		assert_int_equal(ingest_feed(in, text + off, off + chunk > len ? len - off : chunk, NULL), 0);
	assert_int_equal(ingest_close(in, st, NULL), 0);
	return run;
}

static const char good[] =
	"{\"type\":\"hello\",\"agent_version\":\"0.1\",\"kernel_release\":\"6.12.117\",\"host\":\"g\"}\n"
	"{\"type\":\"phase\",\"t\":0.0,\"name\":\"old_writer\"}\n"
	"{\"type\":\"sample\",\"t\":1.0,\"metric\":\"lag_s\",\"value\":0.8}\n"
	"{\"type\":\"sample\",\"t\":2.0,\"metric\":\"lag_s\",\"value\":12.9}\n"
	"{\"type\":\"probe\",\"t\":2.0,\"name\":\"cgroup_writeback_by_id\",\"key\":\"-2\",\"count\":1234}\n"
	"{\"type\":\"probe\",\"t\":2.0,\"name\":\"cgroup_writeback_by_id\",\"key\":0,\"count\":5}\n"
	"{\"type\":\"summary\",\"metrics\":{\"worst_lag_s\":12.9,\"mean_lag_s\":6.85},"
	"\"probes\":{\"cgroup_writeback_by_id\":{\"-2\":1300}}}\n"
	"{\"type\":\"done\",\"status\":\"ok\"}\n";

/* kcanary-agent's summary lists final probe counts as an array */
static void test_summary_probe_array(void **state)
{
	struct fx *f = *state;
	struct ingest_stats st;
	const char *text =
		"{\"type\":\"summary\",\"metrics\":{\"worst_lag_s\":5.44},\"probes\":["
		"{\"name\":\"cgroup_writeback_by_id\",\"key\":\"-2\",\"count\":3942},"
		"{\"name\":\"balance_dirty_pages\",\"key\":\"pauses\",\"count\":17}]}\n"
		"{\"type\":\"done\",\"status\":\"ok\"}\n";
	ingest_text(f, text, 0, &st);
	assert_int_equal(st.bad_lines, 0);
	assert_int_equal(st.probes, 2);
	assert_int_equal(q(f, "SELECT count FROM probes WHERE key = '-2' AND t_s IS NULL"), 3942);
}

/* metric records give a workload's metric its unit and direction; a
 * metric the store already defines (lag_s) keeps its own; a bad
 * direction is a broken contract, kept raw */
static void test_metric_definitions(void **state)
{
	struct fx *f = *state;
	struct ingest_stats st;
	const char *text =
		"{\"type\":\"metric\",\"name\":\"fio:kc:write:bw\",\"unit\":\"bytes/s\",\"better\":\"higher\"}\n"
		"{\"type\":\"metric\",\"name\":\"lag_s\",\"unit\":\"ms\",\"better\":\"higher\"}\n"
		"{\"type\":\"metric\",\"name\":\"x\",\"better\":\"sideways\"}\n"
		"{\"type\":\"sample\",\"t\":1.0,\"metric\":\"fio:kc:write:bw\",\"value\":2462914}\n"
		"{\"type\":\"done\",\"status\":\"ok\"}\n";

	ingest_text(f, text, 0, &st);
	assert_int_equal(st.bad_lines, 1);
	assert_int_equal(q(f, "SELECT count(*) FROM metrics WHERE name = 'fio:kc:write:bw'"
			      " AND unit = 'bytes/s' AND better = 'higher'"), 1);
	assert_int_equal(q(f, "SELECT count(*) FROM metrics WHERE name = 'lag_s'"
			      " AND unit = 's' AND better = 'lower'"), 1);
	assert_int_equal(q(f, "SELECT count(*) FROM samples"), 1);
}

static void test_good_stream_any_chunking(void **state)
{
	struct fx *f = *state;
	struct ingest_stats st;
	size_t chunks[] = { 0, 1, 7, 64 };

	for (size_t i = 0; i < 4; i++) {
		int64_t run = ingest_text(f, good, chunks[i], &st);
		assert_int_equal(st.records, 8);
		assert_int_equal(st.bad_lines, 0);
		assert_int_equal(st.samples, 2);
		assert_string_equal(st.status, "ok");
		char *sql = xasprintf("SELECT count(*) FROM samples WHERE run_id = %lld", (long long)run);
		assert_int_equal(q(f, sql), 2);
		free(sql);
		sql = xasprintf("SELECT count(*) FROM runs WHERE id = %lld AND status = 'ok'"
				" AND kernel_release = '6.12.117' AND records = 8 AND finished_at IS NOT NULL",
				(long long)run);
		assert_int_equal(q(f, sql), 1);
		free(sql);
		sql = xasprintf("SELECT count FROM probes WHERE run_id = %lld AND key = '0'", (long long)run);
		assert_int_equal(q(f, sql), 5);
		free(sql);
		sql = xasprintf("SELECT count FROM probes WHERE run_id = %lld AND t_s IS NULL", (long long)run);
		assert_int_equal(q(f, sql), 1300);
		free(sql);
	}
	assert_int_equal(q(f, "SELECT CAST(value * 10 AS INTEGER) FROM run_summary"
			      " WHERE metric = 'worst_lag_s' LIMIT 1"), 129);
}

/* Garbage, a NaN, a huge number, an unknown type, a missing field, a
 * truncated last line and no done: every valid record is stored, each bad
 * line is kept raw with its reason, and the run is incomplete. */
static void test_hostile_stream(void **state)
{
	struct fx *f = *state;
	struct ingest_stats st;
	const char *text =
		"{\"type\":\"hello\",\"agent_version\":\"0.1\"}\n"
		"garbage here\n"
		"{\"type\":\"sample\",\"t\":1.0,\"metric\":\"lag_s\",\"value\":0.5}\n"
		"{\"type\":\"sample\",\"t\":2.0,\"metric\":\"lag_s\",\"value\":NaN}\n"
		"{\"type\":\"sample\",\"t\":3.0,\"metric\":\"lag_s\",\"value\":1e999}\n"
		"{\"type\":\"sample\",\"t\":4.0,\"metric\":\"lag_s\",\"value\":123456789012345678901234567890}\n"
		"{\"type\":\"sample\",\"t\":5.0,\"metric\":\"lag_s\",\"value\":1.5}\n"
		"{\"type\":\"teleport\",\"t\":5.0}\n"
		"{\"type\":\"sample\",\"t\":6.0,\"value\":1.5}\n"
		"[1,2,3]\n"
		"\n"
		"{\"type\":\"sample\",\"t\":7.0,\"metric\":\"lag_s\",\"value\":2.5}\r\n"
		"{\"type\":\"sample\",\"t\":8.0,\"metr";
	int64_t run = ingest_text(f, text, 5, &st);

	assert_string_equal(st.status, "incomplete");
	assert_int_equal(st.samples, 3);        /* 0.5, 1.5, 2.5 */
	assert_int_equal(st.bad_lines, 8);
	char *sql = xasprintf("SELECT count(*) FROM raw_lines WHERE run_id = %lld", (long long)run);
	assert_int_equal(q(f, sql), 8);
	free(sql);
	/* each reason names the problem */
	assert_int_equal(q(f, "SELECT count(*) FROM raw_lines WHERE line_no = 2 AND reason LIKE 'not JSON%'"), 1);
	assert_int_equal(q(f, "SELECT count(*) FROM raw_lines WHERE line_no = 4 AND reason LIKE '%NaN%'"), 1);
	assert_int_equal(q(f, "SELECT count(*) FROM raw_lines WHERE line_no = 5 AND reason LIKE '%overflow%'"), 1);
	assert_int_equal(q(f, "SELECT count(*) FROM raw_lines WHERE line_no = 6 AND reason LIKE '%too big%'"), 1);
	assert_int_equal(q(f, "SELECT count(*) FROM raw_lines WHERE line_no = 8 AND reason = 'unknown record type ''teleport'''"), 1);
	assert_int_equal(q(f, "SELECT count(*) FROM raw_lines WHERE line_no = 9 AND reason LIKE 'sample needs%'"), 1);
	assert_int_equal(q(f, "SELECT count(*) FROM raw_lines WHERE line_no = 10 AND reason = 'not a JSON object'"), 1);
	assert_int_equal(q(f, "SELECT count(*) FROM raw_lines WHERE line_no = 13 AND reason LIKE 'truncated%'"
			      " AND text LIKE '{\"type\":\"sample\",\"t\":8.0%'"), 1);
	sql = xasprintf("SELECT count(*) FROM runs WHERE id = %lld AND status = 'incomplete'"
			" AND bad_lines = 8", (long long)run);
	assert_int_equal(q(f, sql), 1);
	free(sql);
}

static void test_error_record_fails_run(void **state)
{
	struct fx *f = *state;
	struct ingest_stats st;
	const char *text =
		"{\"type\":\"sample\",\"t\":1.0,\"metric\":\"lag_s\",\"value\":0.5}\n"
		"{\"type\":\"error\",\"message\":\"memory controller not available in /sys/fs/cgroup\"}\n";
	int64_t run = ingest_text(f, text, 0, &st);
	assert_string_equal(st.status, "failed");
	char *sql = xasprintf("SELECT count(*) FROM runs WHERE id = %lld AND status = 'failed'"
			      " AND error LIKE 'memory controller%%'", (long long)run);
	assert_int_equal(q(f, sql), 1);
	free(sql);
	assert_int_equal(q(f, "SELECT count(*) FROM samples"), 1);
}

/* A second ingest never rewrites what the first stored: the same repeat
 * is refused, and a run's summary value is insert-only. */
static void test_nothing_rewritten(void **state)
{
	struct fx *f = *state;
	struct ingest_stats st;
	int64_t run = ingest_text(f, good, 0, &st), dup;

	assert_int_equal(db_run_create(f->db, &dup, f->job, f->variant, "", 1, NULL, NULL, NULL), -EEXIST);
	struct ingest *in = NULL;
	const char *again = "{\"type\":\"summary\",\"metrics\":{\"worst_lag_s\":99}}\n";
	assert_int_equal(ingest_open(&in, f->db, run, NULL), 0);
	assert_int_equal(ingest_feed(in, again, strlen(again), NULL), 0);
	assert_int_equal(ingest_close(in, &st, NULL), 0);
	assert_int_equal(q(f, "SELECT CAST(value * 10 AS INTEGER) FROM run_summary"
			      " WHERE metric = 'worst_lag_s'"), 129);
	assert_int_equal(ingest_open(&in, f->db, 424242, NULL), -ENOENT);
}

/* A line longer than the limit is kept raw (cut), and the stream goes on. */
static void test_overlong_line(void **state)
{
	struct fx *f = *state;
	struct ingest_stats st;
	size_t n = INGEST_MAX_LINE + 100;
	char *text = malloc(n + 200);
	memset(text, 'x', n);
	strcpy(text + n, "\n{\"type\":\"done\",\"status\":\"ok\"}\n");
	ingest_text(f, text, 4096, &st);
	free(text);
	assert_int_equal(st.bad_lines, 1);
	assert_string_equal(st.status, "ok");
	assert_int_equal(q(f, "SELECT count(*) FROM raw_lines WHERE reason LIKE 'line longer than the 1048576-byte cap%'"), 1);
}

/* Store n samples of metric m (t = 1..n, a phase after the 40th) into run
 * inside the caller's open transaction, as a fleet batch does. */
static void batch_in_tx(struct fx *f, int64_t run, const char *m, int n)
{
	struct ingest *in = NULL;
	struct ingest_stats st;

	assert_int_equal(ingest_open_at(&in, f->db, run, 0, NULL), 0);
	for (int i = 1; i <= n; i++) {
		char *l = xasprintf("{\"type\":\"sample\",\"t\":%d.0,\"metric\":\"%s\",\"value\":%d}", i, m, i);
		assert_int_equal(ingest_line(in, l, strlen(l), NULL), 0);
		free(l);
		if (i == 40) {
			const char *ph = "{\"type\":\"phase\",\"t\":40.5,\"name\":\"mid\"}";
			assert_int_equal(ingest_line(in, ph, strlen(ph), NULL), 0);
		}
	}
	assert_int_equal(ingest_detach(in, &st, NULL), 0);
	assert_int_equal(st.records, n + (n >= 40));
}

/* Inside the caller's transaction samples go 64 to a statement and are all
 * in by ingest_detach(); a rolled-back batch that interned a new metric
 * leaves no stale metric id in the connection's kept writer (the next batch
 * with the metric is stored, foreign keys on). Seen failing with the kept
 * writer remembering its metric ids: the second batch got -EINVAL (FOREIGN
 * KEY constraint failed). */
static void test_caller_tx_batches_and_rollback(void **state)
{
	struct fx *f = *state;
	int64_t run;

	assert_int_equal(db_run_create(f->db, &run, f->job, f->variant, "", 0, NULL, NULL, NULL), 0);
	assert_int_equal(db_begin(f->db, NULL), 0);
	batch_in_tx(f, run, "fresh_m", 70);
	assert_int_equal(q(f, "SELECT count(*) FROM samples"), 70);
	assert_int_equal(q(f, "SELECT count(*) FROM samples WHERE t_s < 40.5"), 40);
	db_rollback(f->db);
	assert_int_equal(q(f, "SELECT count(*) FROM samples"), 0);
	assert_int_equal(q(f, "SELECT count(*) FROM metrics WHERE name = 'fresh_m'"), 0);

	assert_int_equal(db_begin(f->db, NULL), 0);
	batch_in_tx(f, run, "fresh_m", 130);
	assert_int_equal(db_commit(f->db, NULL), 0);
	assert_int_equal(q(f, "SELECT count(*) FROM samples s JOIN metrics m ON m.id = s.metric_id"
			   " WHERE m.name = 'fresh_m'"), 130);
	assert_int_equal(q(f, "SELECT count(DISTINCT t_s) FROM samples"), 130);
}

/* A live stream (a guest's channel, read between polls) holds no write lock
 * between feeds: a second connection -- another lab host's run -- begins a
 * write at once and reads what was fed. Fed in batch mode, the same lines
 * keep the lock until the batch closes, and that connection times out. */
static void test_live_feed_keeps_no_lock(void **state)
{
	struct fx *f = *state;
	struct ingest *in = NULL;
	struct db *other = NULL;
	struct buf err = BUF_INIT;
	int64_t run, n = -1;
	char *path = xasprintf("%s/kc.db", f->td.path);

	assert_int_equal(db_open(&other, path, NULL), 0);
	assert_int_equal(db_exec(other, "PRAGMA busy_timeout = 200", NULL), 0);
	for (int live = 0; live <= 1; live++) {
		assert_int_equal(db_run_create(f->db, &run, f->job, f->variant, "", 0, NULL, NULL, NULL), 0);
		assert_int_equal(ingest_open(&in, f->db, run, NULL), 0);
		if (live)
			ingest_set_live(in);
		assert_int_equal(ingest_feed(in, good, 200, NULL), 0);   /* a cut line kept */
		assert_int_equal(ingest_feed(in, good + 200, strlen(good) - 200, NULL), 0);
		buf_reset(&err);
		int r = db_begin(other, &err);
		if (live) {
			assert_int_equal(r, 0);
			db_rollback(other);
			char *id = xasprintf("%lld", (long long)run);
			assert_int_equal(db_query_int64(other, &n, "SELECT count(*) FROM samples"
							" WHERE run_id = ?", id, NULL), 0);
			free(id);
			assert_int_equal(n, 2);
		} else {
			assert_int_equal(r, -EBUSY);
			assert_non_null(strstr(buf_str(&err), "busy"));
		}
		assert_int_equal(ingest_close(in, NULL, NULL), 0);
	}
	db_close(other);
	buf_release(&err);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_good_stream_any_chunking, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_hostile_stream, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_summary_probe_array, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_metric_definitions, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_error_record_fails_run, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_nothing_rewritten, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_overlong_line, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_caller_tx_batches_and_rollback, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_live_feed_keeps_no_lock, fx_setup, fx_teardown),
	};
	return cmocka_run_group_tests_name("ingest", tests, NULL, NULL);
}
