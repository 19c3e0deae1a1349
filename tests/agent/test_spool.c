/* test_spool.c - the daemon's queue (agent/spool.c): numbering, batches,
 * acknowledgements, the bound, a restart from the spool file and the
 * sequence reservation, and what a 409 or a registration does to the
 * queue (drop what the server has, renumber what it cannot have). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "spool.h"
#include "testutil.h"
#include "util.h"

static void push_n(struct spool *s, const char *run, int n)
{
	for (int i = 0; i < n; i++) {
		char line[64];
		snprintf(line, sizeof(line), "{\"type\":\"sample\",\"t\":%d}", i);
		assert_int_equal(spool_push(s, run, line, strlen(line)), 0);
	}
}

/* The seqs of the next batch (up to max records), as "a..b", and its count. */
static size_t batch_range(struct spool *s, size_t max, int64_t *first, int64_t *last)
{
	char *text = NULL, *p;
	size_t len, n;

	assert_int_equal(spool_batch(s, &text, &len, &n, max, 1 << 20), 0);
	*first = *last = 0;
	p = text;
	for (size_t i = 0; i < n; i++) {
		char *nl = strchr(p, '\n');
		assert_non_null(nl);
		json_t *o = json_loadb(p, (size_t)(nl - p), 0, NULL);
		assert_non_null(o);
		int64_t seq = json_integer_value(json_object_get(o, "seq"));
		/* records that are JSON objects travel as objects (form 2) */
		assert_true(json_is_object(json_object_get(o, "record")));
		assert_null(json_object_get(o, "line"));
		if (i == 0)
			*first = seq;
		else
			assert_int_equal(seq, *last + 1);
		*last = seq;
		json_decref(o);
		p = nl + 1;
	}
	assert_int_equal((size_t)(p - text), len);
	free(text);
	return n;
}

static void test_memory_queue(void **state)
{
	struct spool *s;
	struct spool_stats st;
	int64_t a, b;

	(void)state;
	assert_int_equal(spool_open(&s, NULL, 1 << 20), 0);
	push_n(s, "passive:x", 10);
	assert_int_equal(batch_range(s, 4, &a, &b), 4);
	assert_int_equal(a, 1);
	assert_int_equal(b, 4);
	assert_int_equal(spool_ack(s, 4), 0);
	assert_int_equal(batch_range(s, 100, &a, &b), 6);
	assert_int_equal(a, 5);
	/* a 409: the server expects 7 (5 and 6 stored, the answer lost) */
	assert_int_equal(spool_expect(s, 7), 0);
	assert_int_equal(batch_range(s, 100, &a, &b), 4);
	assert_int_equal(a, 7);
	assert_int_equal(b, 10);
	/* a 409 below the queue: the server lost 7..; renumber from 3 */
	assert_int_equal(spool_expect(s, 3), 0);
	assert_int_equal(batch_range(s, 100, &a, &b), 4);
	assert_int_equal(a, 3);
	assert_int_equal(b, 6);
	spool_stats(s, &st);
	assert_int_equal(st.next_seq, 7);
	assert_int_equal(st.renumbered, 4);
	/* rebase: a first registration numbers the whole queue from there */
	assert_int_equal(spool_rebase(s, 100), 0);
	assert_int_equal(batch_range(s, 100, &a, &b), 4);
	assert_int_equal(a, 100);
	/* a record the server refuses as too large: dropped, the hole healed
	 * by the 409 that follows */
	assert_int_equal(spool_drop_first(s), 0);
	assert_int_equal(batch_range(s, 100, &a, &b), 3);
	assert_int_equal(a, 101);
	assert_int_equal(spool_expect(s, 100), 0);
	assert_int_equal(batch_range(s, 100, &a, &b), 3);
	assert_int_equal(a, 100);
	assert_int_equal(b, 102);
	assert_int_equal(spool_ack(s, 102), 0);
	spool_stats(s, &st);
	assert_int_equal(st.pending, 0);
	assert_int_equal(st.dropped, 1);
	assert_int_equal(st.next_seq, 103);
	assert_int_equal(st.acked_seq, 102);
	spool_close(s);
}

static void test_bound(void **state)
{
	struct spool *s;
	struct spool_stats st;
	int r = 0, kept = 0;

	(void)state;
	assert_int_equal(spool_open(&s, NULL, 4096), 0);
	for (int i = 0; i < 200; i++) {
		r = spool_push(s, "passive:x", "{\"type\":\"sample\",\"t\":1,\"metric\":\"m\",\"value\":1}", 47);
		if (r == -ENOSPC)
			break;
		assert_int_equal(r, 0);
		kept++;
	}
	assert_int_equal(r, -ENOSPC);
	spool_stats(s, &st);
	assert_true(st.pending_bytes <= 4096);
	assert_int_equal(st.dropped, 1);
	/* a dropped record takes no number: the next one follows the last kept */
	assert_int_equal(st.next_seq, kept + 1);
	assert_int_equal(spool_ack(s, kept), 0);
	assert_int_equal(spool_push(s, "passive:x", "{}", 2), 0);
	spool_stats(s, &st);
	assert_int_equal(st.next_seq, kept + 2);
	spool_close(s);
}

static void test_file_restart(void **state)
{
	struct tmpdir *td = *state;
	char *path = xasprintf("%s/spool", td->path);
	struct spool *s;
	struct spool_stats st;
	int64_t a, b;

	assert_int_equal(spool_open(&s, path, 1 << 20), 0);
	push_n(s, "wl:1", 5);
	assert_int_equal(spool_ack(s, 2), 0);
	spool_close(s);   /* like a SIGKILL: nothing more is written */

	assert_int_equal(spool_open(&s, path, 1 << 20), 0);
	assert_int_equal(batch_range(s, 100, &a, &b), 3);
	assert_int_equal(a, 3);   /* 1 and 2 were acknowledged: not resent */
	assert_int_equal(b, 5);
	push_n(s, "wl:1", 1);
	assert_int_equal(batch_range(s, 100, &a, &b), 4);
	assert_int_equal(b, 6);   /* numbering goes on after the spooled ones */
	assert_int_equal(spool_ack(s, 6), 0);
	spool_close(s);

	/* an empty spool: the reservation keeps numbers from being reused */
	assert_int_equal(spool_open(&s, path, 1 << 20), 0);
	spool_stats(s, &st);
	assert_int_equal(st.pending, 0);
	assert_true(st.next_seq > 6);
	/* the registration says what the server has: numbering follows it */
	assert_int_equal(spool_expect(s, 7), 0);
	push_n(s, "wl:2", 1);
	assert_int_equal(batch_range(s, 100, &a, &b), 1);
	assert_int_equal(a, 7);
	spool_close(s);

	/* a torn last line (killed mid-write) is skipped */
	FILE *f = fopen(path, "a");
	fputs("{\"seq\":8,\"run\":\"wl:2\",\"li", f);
	fclose(f);
	assert_int_equal(spool_open(&s, path, 1 << 20), 0);
	assert_int_equal(batch_range(s, 100, &a, &b), 1);
	assert_int_equal(a, 7);
	spool_close(s);
	free(path);
}


/* The envelope forms (docs/api.md, "Batches"): a record that is a JSON
 * object is sent as one, its text unchanged ("record": form 2, one parse on
 * the server); a line that is not (or repeats a key) goes as the first
 * form's string "line". A spool an older agent wrote (form 1 lines only)
 * is read back, its records sent as objects, their numbers kept. */
static void test_envelope_forms(void **state)
{
	struct tmpdir *td = *state;
	char *path = xasprintf("%s/spool", td->path);
	const char *rec = "{\"type\":\"sample\",\"t\":1.5,\"metric\":\"m\",\"value\":2435016766}";
	const char *bad[] = { "not json", "[1,2]", "{\"a\":1,\"a\":2}" };
	char *text = NULL, *want;
	size_t len, n;
	struct spool *s;
	FILE *f;

	assert_int_equal(spool_open(&s, NULL, 1 << 20), 0);
	assert_int_equal(spool_push(s, "wl:1", rec, strlen(rec)), 0);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(spool_push(s, "wl:1", bad[i], strlen(bad[i])), 0);
	assert_int_equal(spool_batch(s, &text, &len, &n, 100, 1 << 20), 0);
	assert_int_equal(n, 4);
	want = xasprintf("{\"seq\":1,\"run\":\"wl:1\",\"record\":%s}\n"
			 "{\"seq\":2,\"run\":\"wl:1\",\"line\":\"not json\"}\n"
			 "{\"seq\":3,\"run\":\"wl:1\",\"line\":\"[1,2]\"}\n"
			 "{\"seq\":4,\"run\":\"wl:1\",\"line\":\"{\\\"a\\\":1,\\\"a\\\":2}\"}\n", rec);
	assert_string_equal(text, want);
	free(want);
	free(text);
	spool_close(s);

	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"seq\":5,\"run\":\"passive:b\",\"line\":\"{\\\"type\\\":\\\"sample\\\",\\\"t\\\":1.25,"
	      "\\\"metric\\\":\\\"m\\\",\\\"value\\\":0.1}\"}\n"
	      "{\"seq\":6,\"run\":\"passive:b\",\"record\":{\"type\":\"done\",\"status\":\"ok\"}}\n", f);
	fclose(f);
	assert_int_equal(spool_open(&s, path, 1 << 20), 0);
	assert_int_equal(spool_batch(s, &text, &len, &n, 100, 1 << 20), 0);
	assert_int_equal(n, 2);
	assert_string_equal(text,
		"{\"seq\":5,\"run\":\"passive:b\",\"record\":{\"type\":\"sample\",\"t\":1.25,"
		"\"metric\":\"m\",\"value\":0.1}}\n"
		"{\"seq\":6,\"run\":\"passive:b\",\"record\":{\"type\":\"done\",\"status\":\"ok\"}}\n");
	free(text);
	spool_close(s);
	free(path);
}

/* Garbage written over the middle of the spool (a bad sector, a stray
 * writer): every intact envelope after it is kept, the records it covered
 * are counted as dropped lines and bytes, and no batch spans the hole (a
 * batch holds consecutive numbers; the server's 409 heals the gap). Old
 * code compared each line with the last kept one and dropped all 150
 * records after the garbage. */
static void test_damaged_middle(void **state)
{
	struct tmpdir *td = *state;
	char *path = xasprintf("%s/spool", td->path);
	char *text = NULL, *garbage, *p;
	size_t len;
	struct spool *s;
	struct spool_stats st;
	int64_t a, b;
	FILE *f;

	assert_int_equal(spool_open(&s, path, 1 << 20), 0);
	push_n(s, "wl:1", 200);
	spool_close(s);
	assert_int_equal(read_file(&text, &len, path, 0), 0);
	/* records 41..50 overwritten by 1 KiB of garbage, newlines included */
	p = text;
	for (int line = 1; line < 41; line++)
		p = strchr(p, '\n') + 1;
	char *end = p;
	for (int line = 41; line <= 50; line++)
		end = strchr(end, '\n') + 1;
	garbage = xmalloc(1024);
	for (size_t i = 0; i < 1024; i++)
		garbage[i] = i % 97 == 96 ? '\n' : (char)('!' + (i * 7) % 90);
	f = fopen(path, "w");
	assert_non_null(f);
	fwrite(text, 1, (size_t)(p - text), f);
	fwrite(garbage, 1, 1024, f);
	fwrite(end, 1, len - (size_t)(end - text), f);
	fclose(f);

	assert_int_equal(spool_open(&s, path, 1 << 20), 0);
	spool_stats(s, &st);
	assert_int_equal(st.pending, 190);
	assert_true(st.load_dropped_lines >= 10);
	assert_true(st.load_dropped_bytes >= 1024);
	assert_int_equal(batch_range(s, 1000, &a, &b), 40);
	assert_int_equal(a, 1);
	assert_int_equal(b, 40);
	assert_int_equal(spool_ack(s, 40), 0);
	/* the server then says 41 (a 409): the rest is renumbered, all kept */
	assert_int_equal(spool_expect(s, 41), 0);
	assert_int_equal(batch_range(s, 1000, &a, &b), 150);
	assert_int_equal(a, 41);
	assert_int_equal(b, 190);
	assert_int_equal(spool_ack(s, 190), 0);
	spool_stats(s, &st);
	assert_int_equal(st.pending, 0);
	spool_close(s);
	free(garbage);
	free(text);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memory_queue),
		cmocka_unit_test(test_bound),
		cmocka_unit_test_setup_teardown(test_file_restart, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_damaged_middle, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_envelope_forms, tmpdir_setup, tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
