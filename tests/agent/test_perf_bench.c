/* test_perf_bench.c - agent/perf_bench.c's parser on output of the real
 * perf 6.1 (Debian 12 linux-perf), captured on the host:
 *   perf bench --format=simple mem memcpy -s 1MB -l 10   > mem-memcpy.txt
 *   perf bench --format=simple sched messaging -l 20     > sched-messaging.txt
 *   perf bench --format=simple sched pipe -l 2000        > sched-pipe.txt
 * Expected values are read off the files. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "perf_bench.h"
#include "got.h"

static void test_mem_functions(void **state)
{
	struct got g = { .n = 0 };
	char *text = got_fixture("perf-bench", "mem-memcpy.txt");

	(void)state;
	assert_int_equal(pb_parse(text, "mem/memcpy", got_metric, &g), 4);
	assert_string_equal(g.name[0], "perf-bench:mem-memcpy:default");
	assert_float_equal(g.value[0], 30045157593.123207, 1e-3);
	assert_string_equal(g.unit[0], "bytes/s");
	assert_string_equal(g.better[0], "higher");
	assert_string_equal(g.name[3], "perf-bench:mem-memcpy:x86-64-movsb");
	assert_float_equal(g.value[3], 50901747572.815536, 1e-3);
	free(text);
}

static void test_sched_total(void **state)
{
	struct got g = { .n = 0 };
	char *msg = got_fixture("perf-bench", "sched-messaging.txt");
	char *pipe = got_fixture("perf-bench", "sched-pipe.txt");

	(void)state;
	assert_int_equal(pb_parse(msg, "sched/messaging", got_metric, &g), 1);
	assert_string_equal(g.name[0], "perf-bench:sched-messaging:total_s");
	assert_float_equal(g.value[0], 0.526, 1e-12);
	assert_string_equal(g.unit[0], "s");
	assert_string_equal(g.better[0], "lower");
	assert_int_equal(pb_parse(pipe, "sched/pipe", got_metric, &g), 1);
	assert_string_equal(g.name[1], "perf-bench:sched-pipe:total_s");
	assert_float_equal(g.value[1], 0.011, 1e-12);
	assert_int_equal(pb_parse("# Running 'sched/messaging' benchmark:\nno numbers\n", "sched/messaging",
				  got_metric, &g), 0);
	free(msg);
	free(pipe);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mem_functions),
		cmocka_unit_test(test_sched_total),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
