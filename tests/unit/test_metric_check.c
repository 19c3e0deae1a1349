/* test_metric_check.c - metric_check() over a fresh store: the store's
 * metrics, probes, the command workload and the tool adapters' own names
 * pass; an unknown name fails with the known ones listed; a tool's
 * workload takes only its own names, wb-handover none of a tool's. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "judge/metric_check.h"
#include "store/db.h"
#include "util.h"
#include "testutil.h"

static void test_metric_check(void **state)
{
	struct tmpdir *td = *state;
	char *path = xasprintf("%s/kcanary.db", td->path);
	struct buf err = BUF_INIT;
	struct db *db = NULL;

	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(metric_check(db, "worst_lag_s", "wb-handover", &err), 0);
	assert_int_equal(metric_check(db, "probe:x:1", "wb-handover", &err), 0);
	assert_int_equal(metric_check(db, "anything", "command", &err), 0);
	assert_int_equal(metric_check(db, "fio:j:read:bw", "fio", &err), 0);
	assert_int_equal(err.len, 0);
	/* "fio:" alone names no metric of the tool */
	assert_int_equal(metric_check(db, "fio:", "fio", &err), -EINVAL);
	buf_reset(&err);
	assert_int_equal(metric_check(db, "nosuch_s", "wb-handover", &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "unknown metric 'nosuch_s' for workload "
			       "'wb-handover': expected one of bdp_pause_ms_max,"));
	assert_non_null(strstr(buf_str(&err), " worst_lag_s, "));
	assert_non_null(strstr(buf_str(&err), "(the store's metrics table), or probe:NAME:KEY"));
	/* a tool names its own metrics: wb-handover's are not fio's (issue
	 * 35: compare --workload fio --metric worst_lag_s was taken) */
	buf_reset(&err);
	assert_int_equal(metric_check(db, "worst_lag_s", "fio", &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "unknown metric 'worst_lag_s' for workload 'fio':"
			       " expected fio:JOB:DIR:bw, :iops, :clat_p50, :clat_p99, :clat_p99.9"));
	assert_null(strstr(buf_str(&err), "mean_lag_s"));
	buf_reset(&err);
	assert_int_equal(metric_check(db, "worst_lag_s", "stress-ng", &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "expected stress-ng:STRESSOR:bogo_ops_s"));
	assert_non_null(metric_names("perf-bench"));
	assert_null(metric_names("wb-handover"));
	/* and fio's names are not wb-handover's, once a run has stored them */
	buf_reset(&err);
	assert_int_equal(db_exec(db, "INSERT INTO metrics (name) VALUES ('fio:kc:write:bw')", NULL), 0);
	assert_int_equal(metric_check(db, "fio:kc:write:bw", "wb-handover", &err), -EINVAL);
	/* named once, as the input, and not among the expected */
	assert_null(strstr(strstr(buf_str(&err), "fio:kc") + 1, "fio:kc"));
	assert_non_null(strstr(buf_str(&err), " written_bytes (the store's metrics table)"));
	buf_reset(&err);
	assert_int_equal(metric_check(db, "nosuch", "fio", &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "(the store has: fio:kc:write:bw), or probe:NAME:KEY"));
	buf_release(&err);
	db_close(db);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_metric_check, tmpdir_setup, tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
