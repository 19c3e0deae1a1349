/* test_record.c - the record stream (agent/record.c): golden lines for
 * each record type, one line per record, and finding a virtio-serial port
 * by name in a sysfs-like tree. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "record.h"
#include "testutil.h"
#include "util.h"

static char *slurp(const char *path)
{
	char *s = NULL;
	size_t len;

	assert_int_equal(read_file(&s, &len, path, 1 << 20), 0);
	return s;
}

static void test_golden_lines(void **state)
{
	struct tmpdir *td = *state;
	char *path = xasprintf("%s/out.jsonl", td->path);
	struct buf err = BUF_INIT;
	struct rec_out *r;
	char *got;

	assert_int_equal(rec_open(&r, path, &err), 0);
	assert_int_equal(rec_emit(r, json_pack("{s:s, s:s, s:s, s:{s:s, s:s}}",
		"type", "hello", "agent_version", "0.1", "kernel_release", "6.12.117",
		"params", "mode", "removed", "pod_max", "4G")), 0);
	assert_int_equal(rec_phase(r, 0.0, "old_writer"), 0);
	assert_int_equal(rec_sample(r, 12.0, "lag_s", 0.8), 0);
	assert_int_equal(rec_sample(r, 13.00049, "lag_s", 0.1), 0);
	assert_int_equal(rec_probe(r, 12.0, "cgroup_writeback_by_id", "-2", 1234), 0);
	assert_int_equal(rec_emit(r, json_pack("{s:s, s:{s:f, s:I}}", "type", "summary",
		"metrics", "worst_lag_s", 12.9, "written_bytes", (json_int_t)7516192768LL)), 0);
	assert_int_equal(rec_error(r, "cannot write 'f1': No space left on device"), 0);
	assert_int_equal(rec_done(r), 0);
	rec_close(r);

	got = slurp(path);
	assert_string_equal(got,
		"{\"type\":\"hello\",\"agent_version\":\"0.1\",\"kernel_release\":\"6.12.117\",\"params\":{\"mode\":\"removed\",\"pod_max\":\"4G\"}}\n"
		"{\"type\":\"phase\",\"t\":0.0,\"name\":\"old_writer\"}\n"
		"{\"type\":\"sample\",\"t\":12.0,\"metric\":\"lag_s\",\"value\":0.8}\n"
		"{\"type\":\"sample\",\"t\":13.0,\"metric\":\"lag_s\",\"value\":0.1}\n"
		"{\"type\":\"probe\",\"t\":12.0,\"name\":\"cgroup_writeback_by_id\",\"key\":\"-2\",\"count\":1234}\n"
		"{\"type\":\"summary\",\"metrics\":{\"worst_lag_s\":12.9,\"written_bytes\":7516192768}}\n"
		"{\"type\":\"error\",\"message\":\"cannot write 'f1': No space left on device\"}\n"
		"{\"type\":\"done\",\"status\":\"ok\"}\n");
	free(got);
	free(path);
	buf_release(&err);
}

/* Sample values written so that each reads back as the same double: an
 * exact integer above 1e9 (a byte or page count) stays that integer, as
 * do values that need 16 or 17 digits, and a short decimal stays short.
 * The agent wrote 9 significant digits before (JSON_REAL_PRECISION(9)):
 * 2435016766 went out as 2435016770.0. */
static void test_values_round_trip(void **state)
{
	struct tmpdir *td = *state;
	char *path = xasprintf("%s/out.jsonl", td->path);
	const double v[] = { 2435016766.0, 9007199254740993.0 /* 2^53: rounds to 2^53 */,
			     123456789012345678.0, 1.0 / 3.0, 0.1, 12345.678901234567, -7.25e-300,
			     4.9e-324, 1.7976931348623157e308 };
	const size_t n = sizeof(v) / sizeof(v[0]);
	struct buf err = BUF_INIT;
	struct rec_out *r;
	char *got, *p;

	assert_int_equal(rec_open(&r, path, &err), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(rec_sample(r, (double)i, "x", v[i]), 0);
	rec_close(r);
	got = slurp(path);
	p = got;
	for (size_t i = 0; i < n; i++) {
		char *nl = strchr(p, '\n');
		json_t *o;
		assert_non_null(nl);
		o = json_loadb(p, (size_t)(nl - p), 0, NULL);
		assert_non_null(o);
		if (json_number_value(json_object_get(o, "value")) != v[i])
			fail_msg("value %.17g written as %.*s", v[i], (int)(nl - p), p);
		json_decref(o);
		p = nl + 1;
	}
	assert_non_null(strstr(got, "\"value\":2435016766.0}"));
	assert_non_null(strstr(got, "\"value\":0.1}"));
	free(got);
	free(path);
	buf_release(&err);
}

static void test_reopen_truncates(void **state)
{
	struct tmpdir *td = *state;
	char *path = xasprintf("%s/out.jsonl", td->path);
	struct buf err = BUF_INIT;
	struct rec_out *r;
	char *got;

	for (int i = 0; i < 2; i++) {
		assert_int_equal(rec_open(&r, path, &err), 0);
		assert_int_equal(rec_done(r), 0);
		rec_close(r);
	}
	got = slurp(path);
	assert_string_equal(got, "{\"type\":\"done\",\"status\":\"ok\"}\n");
	free(got);
	free(path);
	buf_release(&err);
}

static void test_unencodable(void **state)
{
	int fds[2];
	struct rec_out *r;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	r = rec_open_fd(fds[1]);
	/* NaN cannot be JSON: an error, and nothing half-written */
	assert_int_equal(rec_sample(r, 1.0, "lag_s", 0.0 / 0.0), -EIO);
	assert_int_equal(rec_done(r), 0);
	rec_close(r);
	close(fds[1]);
	{
		char buf[128] = "";
		ssize_t n = read(fds[0], buf, sizeof(buf) - 1);
		assert_true(n > 0);
		assert_string_equal(buf, "{\"type\":\"done\",\"status\":\"ok\"}\n");
	}
	close(fds[0]);
}

static void put(const char *dir, const char *port, const char *name)
{
	char *d = xasprintf("%s/%s", dir, port);
	char *f = xasprintf("%s/name", d);
	FILE *fp;

	assert_int_equal(mkdir_p(d, 0755), 0);
	fp = fopen(f, "w");
	assert_non_null(fp);
	fprintf(fp, "%s\n", name);
	fclose(fp);
	free(f);
	free(d);
}

static void test_find_port(void **state)
{
	struct tmpdir *td = *state;
	char *root = xasprintf("%s/virtio-ports", td->path);
	char *out = NULL;

	put(root, "vport0p0", "");
	put(root, "vport1p1", "org.qemu.guest_agent.0");
	put(root, "vport2p1", "kcanary.records");
	assert_int_equal(rec_find_port(&out, root, "kcanary.records"), 0);
	assert_string_equal(out, "/dev/vport2p1");
	free(out);
	out = NULL;
	assert_int_equal(rec_find_port(&out, root, "kcanary"), -ENOENT);
	assert_null(out);
	free(root);
	root = xasprintf("%s/nope", td->path);
	assert_int_equal(rec_find_port(&out, root, "x"), -ENOENT);
	free(root);
}

static void test_open_errors(void **state)
{
	struct rec_out *r = NULL;
	struct buf err = BUF_INIT;

	(void)state;
	assert_true(rec_open(&r, "/nonexistent-dir/out", &err) < 0);
	assert_string_equal(buf_str(&err), "cannot open output '/nonexistent-dir/out': No such file or directory");
	assert_null(r);
	buf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_golden_lines, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_values_round_trip, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_reopen_truncates, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test(test_unencodable),
		cmocka_unit_test_setup_teardown(test_find_port, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test(test_open_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
