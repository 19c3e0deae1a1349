/* test_fio.c - agent/fio.c's parsers on output of the real fio 3.33
 * (Debian 12), captured on the host with tests/fixtures/fio/two.fio:
 *   fio --output-format=json --output=two.json --write_bw_log=kc \
 *       --write_iops_log=kc --log_avg_msec=1000 two.fio
 * Expected values are read off two.json and the kc_*.N.log files. */
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
#include "fio.h"
#include "got.h"

static void test_json_figures(void **state)
{
	struct got g = { .n = 0 };
	struct buf err = BUF_INIT;
	char *text = got_fixture("fio", "two.json");
	size_t njobs = 0, i;

	(void)state;
	/* randrw: read and write, 5 figures each; seqwrite: write only */
	assert_int_equal(fio_parse_json(text, got_metric, &g, &njobs, &err), 15);
	assert_int_equal(njobs, 2);
	i = got_find(&g, "fio:randrw:read:bw");
	assert_float_equal(g.value[i], 6555510, 0.5);
	assert_string_equal(g.unit[i], "bytes/s");
	assert_string_equal(g.better[i], "higher");
	i = got_find(&g, "fio:randrw:write:iops");
	assert_float_equal(g.value[i], 1619.793402, 1e-6);
	assert_string_equal(g.unit[i], "ops/s");
	i = got_find(&g, "fio:randrw:read:clat_p99");
	assert_float_equal(g.value[i], 6651904, 0.5);
	assert_string_equal(g.unit[i], "ns");
	assert_string_equal(g.better[i], "lower");
	assert_float_equal(g.value[got_find(&g, "fio:randrw:read:clat_p50")], 99840, 0.5);
	assert_float_equal(g.value[got_find(&g, "fio:randrw:write:clat_p99.9")], 175104, 0.5);
	assert_float_equal(g.value[got_find(&g, "fio:seqwrite:write:bw")], 3884858775.0, 0.5);
	assert_float_equal(g.value[got_find(&g, "fio:seqwrite:write:clat_p99")], 61184, 0.5);
	for (i = 0; i < g.n; i++)
		assert_null(strstr(g.name[i], "seqwrite:read"));   /* no I/O: no figures */
	buf_release(&err);
	free(text);
}

static void test_json_job_names_and_refusals(void **state)
{
	struct buf err = BUF_INIT;
	char *text = got_fixture("fio", "two.json"), *name;
	struct got g = { .n = 0 };

	(void)state;
	name = fio_job_name(text, 1);
	assert_string_equal(name, "seqwrite");
	free(name);
	assert_null(fio_job_name(text, 2));
	/* fio may print notes before its JSON */
	{
		char *noted = xasprintf("note: both iodepth >= 1 and synchronous I/O engine\n%s", text);
		assert_int_equal(fio_parse_json(noted, got_metric, &g, NULL, &err), 15);
		free(noted);
	}
	assert_int_equal(fio_parse_json("fio: no job", got_metric, &g, NULL, &err), -EINVAL);
	assert_non_null(strstr(err_text(&err), "no JSON"));
	assert_int_equal(fio_parse_json("{\"fio version\": \"x\"}", got_metric, &g, NULL, &err), -EINVAL);
	assert_non_null(strstr(err_text(&err), "jobs"));
	buf_release(&err);
	free(text);
}

static void test_logs(void **state)
{
	struct got g = { .n = 0 };
	char *bw = got_fixture("fio", "kc_bw.1.log"), *iops = got_fixture("fio", "kc_iops.2.log");
	size_t i;

	(void)state;
	assert_int_equal(fio_parse_log(bw, "randrw", "bw", got_sample, &g), 6);
	/* "2000, 6088, 1, 0, 0": write, KiB/s -> bytes/s */
	assert_string_equal(g.name[3], "fio:randrw:write:bw");
	assert_float_equal(g.t[3], 2.0, 1e-9);
	assert_float_equal(g.value[3], 6088.0 * 1024, 1e-9);
	assert_string_equal(g.name[0], "fio:randrw:read:bw");
	g.n = 0;
	assert_int_equal(fio_parse_log(iops, "seqwrite", "iops", got_sample, &g), 2);
	i = 1;
	assert_string_equal(g.name[i], "fio:seqwrite:write:iops");
	assert_float_equal(g.value[i], 64945, 1e-9);
	g.n = 0;
	assert_int_equal(fio_parse_log("garbage\n\n1000, x\n", "j", "bw", got_sample, &g), 0);
	free(bw);
	free(iops);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_figures),
		cmocka_unit_test(test_json_job_names_and_refusals),
		cmocka_unit_test(test_logs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
