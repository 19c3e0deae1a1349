/* test_bpftrace.c - agent/bpftrace.c's parser on output of the real
 * bpftrace 0.17 (Debian 12), captured on the host (which lets BEGIN run but
 * not kprobes) as tests/fixtures/bpftrace/maps.json:
 *   bpftrace -f json -e 'BEGIN { @ret[(int32)-2] = count(); @ret[(int32)-2] = count();
 *     @ret[(int32)0] = count(); @n = count(); @s = sum(42);
 *     @bytes["sda", 1] = sum(4096); @h = hist(5); @h = hist(100); exit(); }'
 * and the command workload's metric line parser (agent/command.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bpftrace.h"
#include "util.h"
#include "workload.h"

struct got {
	char line[16][96];
	size_t n;
};

static void on_entry(void *ud, const char *name, const char *key, int64_t value)
{
	struct got *g = ud;

	assert_true(g->n < 16);
	snprintf(g->line[g->n++], sizeof(g->line[0]), "%s|%s|%lld", name, key, (long long)value);
}

static bool has(const struct got *g, const char *line)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->line[i], line))
			return true;
	return false;
}

static void test_maps(void **state)
{
	struct got g = { .n = 0 };
	char *text = NULL;

	(void)state;
	assert_int_equal(read_file(&text, NULL, "tests/fixtures/bpftrace/maps.json", 1 << 20), 0);
	/* @ret 2 keys, @n, @s, @bytes 1 key, @h 5 buckets */
	assert_int_equal(bt_parse(text, on_entry, &g), 10);
	assert_true(has(&g, "bpftrace:ret|-2|2"));    /* the seed's -ENOENT count */
	assert_true(has(&g, "bpftrace:ret|0|1"));
	assert_true(has(&g, "bpftrace:n||1"));
	assert_true(has(&g, "bpftrace:s||42"));
	assert_true(has(&g, "bpftrace:bytes|sda,1|4096"));
	assert_true(has(&g, "bpftrace:h|4-7|1"));
	assert_true(has(&g, "bpftrace:h|64-127|1"));
	free(text);
	g.n = 0;
	assert_int_equal(bt_parse("not json\n{\"type\": \"printf\", \"data\": \"x\"}\n", on_entry, &g), 0);
}

static void test_metric_lines(void **state)
{
	char name[128], unit[32];
	const char *better = "x";
	double v = 0;

	(void)state;
	assert_int_equal(cmd_metric_line("metric elapsed_s 12.5 s lower", name, unit, &v, &better), 0);
	assert_string_equal(name, "elapsed_s");
	assert_string_equal(unit, "s");
	assert_float_equal(v, 12.5, 1e-12);
	assert_string_equal(better, "lower");
	assert_int_equal(cmd_metric_line("metric ops 7", name, unit, &v, &better), 0);
	assert_null(better);
	assert_string_equal(unit, "");
	assert_int_equal(cmd_metric_line("hello", name, unit, &v, &better), -ENOENT);
	assert_int_equal(cmd_metric_line("metric x 1 s", name, unit, &v, &better), -EINVAL);
	assert_int_equal(cmd_metric_line("metric x 1 s sideways", name, unit, &v, &better), -EINVAL);
	assert_int_equal(cmd_metric_line("metric x 1 s lower extra", name, unit, &v, &better), -EINVAL);
	assert_int_equal(cmd_metric_line("metric x abc", name, unit, &v, &better), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maps),
		cmocka_unit_test(test_metric_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
