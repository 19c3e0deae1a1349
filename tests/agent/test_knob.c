/* test_knob.c - parsing name=value knobs against a workload's table
 * (agent/knob.c): defaults, sizes, durations, choices, unknown knobs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "error.h"
#include "knob.h"

static const char *const modes[] = { "removed", "alive", "fresh", NULL };
static const struct knob_def defs[] = {
	{ "rate_mbps", KNOB_NUMBER, "MiB/s", "250", "rate", NULL },
	{ "pod_max", KNOB_SIZE_MAX, "bytes", "4G", "pod limit", NULL },
	{ "block", KNOB_SIZE, "bytes", "1M", "write size", NULL },
	{ "old_s", KNOB_SECONDS, "s", "30", "old writer", NULL },
	{ "nfiles", KNOB_UINT, "files", "1000", "files", NULL },
	{ "dirty_after", KNOB_BOOL, "", "0", "append", NULL },
	{ "mode", KNOB_ENUM, "", "removed", "mode", modes },
	{ "cmd", KNOB_STRING, "", "", "command", NULL },
};
static const struct knob_def req_defs[] = {
	{ "cmd", KNOB_STRING, "", NULL, "command", NULL },
	{ "dir", KNOB_STRING, "", ".", "directory", NULL },
};
#define N (sizeof(defs) / sizeof(defs[0]))

static void test_defaults(void **state)
{
	struct knobs k;
	struct buf err = BUF_INIT;

	(void)state;
	assert_int_equal(knobs_parse(&k, "w", defs, N, 0, NULL, &err), 0);
	assert_float_equal(knobs_double(&k, "rate_mbps"), 250.0, 0);
	assert_int_equal(knobs_u64(&k, "pod_max"), 4ULL << 30);
	assert_int_equal(knobs_u64(&k, "block"), 1ULL << 20);
	assert_float_equal(knobs_double(&k, "old_s"), 30.0, 0);
	assert_int_equal(knobs_u64(&k, "nfiles"), 1000);
	assert_false(knobs_bool(&k, "dirty_after"));
	assert_string_equal(knobs_str(&k, "mode"), "removed");
	assert_string_equal(knobs_str(&k, "cmd"), "");
	assert_false(k.vals[0].given);
	knobs_release(&k);
	buf_release(&err);
}

static void test_values(void **state)
{
	char a0[] = "pod_max=max", a1[] = "block=64K", a2[] = "old_s=2m",
	     a3[] = "nfiles=5000", a4[] = "dirty_after=yes", a5[] = "mode=alive",
	     a6[] = "rate_mbps=12.5", a7[] = "cmd=echo a=b", a8[] = "pod_max=512M";
	char *argv[] = { a0, a1, a2, a3, a4, a5, a6, a7, a8 };
	struct knobs k;
	struct buf err = BUF_INIT;

	(void)state;
	assert_int_equal(knobs_parse(&k, "w", defs, N, 9, argv, &err), 0);
	/* the last setting wins */
	assert_int_equal(knobs_u64(&k, "pod_max"), 512ULL << 20);
	assert_int_equal(knobs_u64(&k, "block"), 65536);
	assert_float_equal(knobs_double(&k, "old_s"), 120.0, 0);
	assert_int_equal(knobs_u64(&k, "nfiles"), 5000);
	assert_true(knobs_bool(&k, "dirty_after"));
	assert_string_equal(knobs_str(&k, "mode"), "alive");
	assert_float_equal(knobs_double(&k, "rate_mbps"), 12.5, 0);
	/* only the first '=' splits */
	assert_string_equal(knobs_str(&k, "cmd"), "echo a=b");
	/* text is kept as given, for the hello record's params */
	assert_string_equal(k.vals[1].text, "512M");
	assert_true(k.vals[1].given);
	knobs_release(&k);
	buf_release(&err);
}

static void expect_error(const char *arg, const char *msg)
{
	char first[] = "nfiles=7", second[128];
	char *argv[] = { first, second };
	struct knobs k = { NULL, 0, NULL };
	struct buf err = BUF_INIT;

	snprintf(second, sizeof(second), "%s", arg);
	assert_int_equal(knobs_parse(&k, "wb-handover", defs, N, 2, argv, &err), -EINVAL);
	assert_string_equal(buf_str(&err), msg);
	assert_null(k.vals);
	buf_release(&err);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("foo=1", "unknown knob 'foo' for workload 'wb-handover' (see 'kcanary-agent list')");
	expect_error("pod_max=4Q", "knob 'pod_max': '4Q' is not a size (expected bytes with an optional K, M, G or T suffix, or max)");
	expect_error("block=max", "knob 'block': 'max' is not a size (expected bytes with an optional K, M, G or T suffix)");
	expect_error("old_s=soon", "knob 'old_s': 'soon' is not a duration (expected seconds, like 120, 90s, 2m or 1.5s)");
	expect_error("nfiles=-3", "knob 'nfiles': '-3' is not a whole number (expected 0, 1, 2, ...)");
	expect_error("rate_mbps=0", "knob 'rate_mbps': '0' is not a positive number (expected e.g. 250 or 12.5)");
	expect_error("dirty_after=maybe", "knob 'dirty_after': 'maybe' is not a yes/no value (expected 0 or 1)");
	expect_error("mode=dead", "knob 'mode': 'dead' is not a choice (expected one of: removed, alive, fresh)");
	expect_error("mode", "argument 'mode' is not a knob setting (expected name=value)");
	expect_error("=1", "argument '=1' is not a knob setting (expected name=value)");
	expect_error("nfile=1", "unknown knob 'nfile' for workload 'wb-handover' (see 'kcanary-agent list')");
}

/* A required knob left at its empty default, or given empty, is refused;
 * given, it parses like any other. */
static void test_required(void **state)
{
	char empty[] = "cmd=", given[] = "cmd=./repro.sh", dir[] = "dir=/tmp";
	char *argv[] = { dir, empty };
	struct knobs k = { NULL, 0, NULL };
	struct buf err = BUF_INIT;
	const size_t n = sizeof(req_defs) / sizeof(req_defs[0]);
	const char *msg = "knob 'cmd' is required by workload 'command' and is empty "
			  "(pass cmd=VALUE; see 'kcanary-agent list')";

	(void)state;
	assert_int_equal(knobs_parse(&k, "command", req_defs, n, 1, argv, &err), -EINVAL);
	assert_string_equal(buf_str(&err), msg);
	assert_null(k.vals);
	buf_reset(&err);
	assert_int_equal(knobs_parse(&k, "command", req_defs, n, 2, argv, &err), -EINVAL);
	assert_string_equal(buf_str(&err), msg);
	argv[1] = given;
	assert_int_equal(knobs_parse(&k, "command", req_defs, n, 2, argv, &err), 0);
	assert_string_equal(knobs_str(&k, "cmd"), "./repro.sh");
	assert_string_equal(knobs_str(&k, "dir"), "/tmp");
	knobs_release(&k);
	buf_release(&err);
}

/* knobs_parse_fault names the knob at fault (none for an argument that
 * is no setting) and puts knobs_parse()'s message in err. */
static void test_fault(void **state)
{
	char bad[] = "pod_max=4Q", unknown[] = "foo=1", bare[] = "mode";
	char *argv[] = { bad };
	struct knobs k = { NULL, 0, NULL };
	struct knob_fault f = { "x" };
	struct buf err = BUF_INIT;

	(void)state;
	assert_int_equal(knobs_parse_fault(&k, "wb-handover", defs, N, 1, argv, &f, &err), -EINVAL);
	assert_string_equal(f.knob, "pod_max");
	assert_string_equal(err_text(&err), "knob 'pod_max': '4Q' is not a size (expected bytes with an optional K, M, G or T suffix, or max)");
	argv[0] = unknown;
	assert_int_equal(knobs_parse_fault(&k, "wb-handover", defs, N, 1, argv, &f, &err), -EINVAL);
	assert_string_equal(f.knob, "foo");
	assert_string_equal(err_text(&err), "unknown knob 'foo' for workload 'wb-handover' (see 'kcanary-agent list')");
	argv[0] = bare;
	assert_int_equal(knobs_parse_fault(&k, "wb-handover", defs, N, 1, argv, &f, &err), -EINVAL);
	assert_string_equal(f.knob, "");
	assert_string_equal(err_text(&err), "argument 'mode' is not a knob setting (expected name=value)");
	assert_null(k.vals);
	buf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_required),
		cmocka_unit_test(test_fault),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
