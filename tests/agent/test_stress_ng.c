/* test_stress_ng.c - agent/stress_ng.c's parser on the YAML of the real
 * stress-ng 0.15.06 (Debian 12), captured on the host as
 * tests/fixtures/stress-ng/cpu-vm.yaml:
 *   stress-ng --cpu 1 --vm 1 --vm-bytes 32M --timeout 2s --metrics-brief --yaml F
 * Expected values are read off the file. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "error.h"
#include "stress_ng.h"
#include "got.h"

static void test_yaml_metrics(void **state)
{
	struct got g = { .n = 0 };
	struct buf err = BUF_INIT;
	char *text = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(read_file(&text, &len, "tests/fixtures/stress-ng/cpu-vm.yaml", 1 << 20), 0);
	assert_int_equal(sng_parse_yaml(text, len, got_metric, &g, &err), 2);
	assert_int_equal(g.n, 4);
	assert_string_equal(g.name[0], "stress-ng:cpu:bogo_ops_s");
	assert_float_equal(g.value[0], 1101.096951, 1e-9);
	assert_string_equal(g.unit[0], "ops/s");
	assert_string_equal(g.better[0], "higher");
	assert_string_equal(g.name[1], "stress-ng:cpu:bogo_ops");
	assert_float_equal(g.value[1], 2205, 1e-9);
	assert_string_equal(g.name[2], "stress-ng:vm:bogo_ops_s");
	assert_float_equal(g.value[2], 21290.208863, 1e-9);
	buf_release(&err);
	free(text);
}

static void test_yaml_refused(void **state)
{
	struct got g = { .n = 0 };
	struct buf err = BUF_INIT;
	const char *no_metrics = "---\nsystem-info:\n  cpus: 2\n...\n";
	const char *broken = "metrics: [\n";

	(void)state;
	assert_int_equal(sng_parse_yaml(no_metrics, strlen(no_metrics), got_metric, &g, &err), -EINVAL);
	assert_non_null(strstr(err_text(&err), "no metrics"));
	assert_int_equal(sng_parse_yaml(broken, strlen(broken), got_metric, &g, &err), -EINVAL);
	assert_non_null(strstr(err_text(&err), "does not parse"));
	assert_int_equal(g.n, 0);
	buf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_yaml_metrics),
		cmocka_unit_test(test_yaml_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
