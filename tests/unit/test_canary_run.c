/* test_canary_run.c - the canary pipeline (judge/canary_run.c) over a real
 * store: metric specs, cohorts by selectors, default metrics and their
 * directions, per-host medians, and the errors that make `kcanary canary`
 * exit 2 (-EINVAL) or 4 (-ENODATA). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "store/db_writer.h"
#include "store/db_runs.h"
#include "judge/canary_run.h"
#include "store/db.h"
#include "util.h"
#include "testutil.h"

/* One finished run of kernel release on host with a worst_lag_s summary. */
static void add_run(struct db *db, int64_t job, const char *release, const char *host,
		    double worst)
{
	struct db_writer *w = NULL;
	int64_t v, run;

	assert_int_equal(db_variant_get(db, &v, job, release, NULL), 0);
	assert_int_equal(db_run_create(db, &run, job, v, "", 0, "ext4", "{}", NULL), 0);
	assert_int_equal(db_writer_open(&w, db, run, NULL), 0);
	assert_int_equal(db_writer_begin(w, NULL), 0);
	assert_int_equal(db_writer_hello(w, release, "test", host, NULL, NULL), 0);
	assert_int_equal(db_writer_summary(w, "worst_lag_s", worst, NULL), 0);
	assert_int_equal(db_writer_finish(w, "ok", NULL, 4, 0, NULL), 0);
	assert_int_equal(db_writer_commit(w, NULL), 0);
	db_writer_close(w);
}

static void test_metric_spec(void **state)
{
	struct canary_metric_spec m;
	struct buf err = BUF_INIT;

	(void)state;
	assert_int_equal(canary_metric_spec_parse(&m, "worst_lag_s,critical,weight=2,"
						  "direction=decrease,tolerance=0.2,min-runs=3",
						  &err), 0);
	assert_string_equal(m.name, "worst_lag_s");
	assert_true(m.cfg.critical && m.has_direction && m.has_tolerance && !m.has_nodata);
	assert_int_equal(m.cfg.direction, CANARY_DIR_DECREASE);
	assert_true(m.cfg.weight == 2 && m.cfg.tolerance == 0.2 && m.cfg.min_n == 3);
	canary_metric_spec_release(&m);
	assert_int_equal(canary_metric_spec_parse(&m, "x,weight=0", &err), -EINVAL);
	assert_string_equal(buf_str(&err), "--metric 'x,weight=0': bad option 'weight=0'; expected "
			    "critical, nospread, weight=W (> 0), direction=increase|decrease|either,"
			    " tolerance=F, spread-tolerance=F (>= 0), nodata=ignore|fail|pass or "
			    "min-runs=N (>= 2)");
	canary_metric_spec_release(&m);
	buf_release(&err);
}

/* A store with 6.1 on hosts a a a b b c d e (worst lag 1..8) and 6.2 on
 * hosts f..m (worst lag 11..18). */
static struct db *fleet(struct tmpdir *td)
{
	char *path = xasprintf("%s/kcanary.db", td->path);
	struct db *db = NULL;
	const char *ctl_hosts[] = { "a", "a", "a", "b", "b", "c", "d", "e" };
	int64_t job;

	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(db_job_create(db, &job, "fleet", "canary", NULL, NULL), 0);
	for (int i = 0; i < 8; i++) {
		char host[2] = { (char)('f' + i), 0 };
		add_run(db, job, "6.1", ctl_hosts[i], 1 + i);
		add_run(db, job, "6.2", host, 11 + i);
	}
	free(path);
	return db;
}

static void test_store(void **state)
{
	struct db *db = fleet(*state);
	struct canary_run_opts o;
	struct canary_run run = { 0 };
	struct buf err = BUF_INIT;

	canary_run_opts_init(&o);
	o.control = "kernel=6.1";
	o.canary = "kernel=6.2";
	assert_int_equal(canary_run_store(&run, db, &o, &err), 0);
	/* the default metrics: what the runs have; worst_lag_s is lower-is-better */
	assert_int_equal(o.nspecs, 1);
	assert_string_equal(o.specs[0].name, "worst_lag_s");
	assert_int_equal(run.n, 1);
	assert_int_equal(run.verdict.metrics[0].direction, CANARY_DIR_INCREASE);
	assert_int_equal(run.verdict.metrics[0].cls, CANARY_CLASS_HIGH);
	assert_int_equal(run.verdict.result, CANARY_RESULT_FAIL);
	assert_true(run.cohorts.control_runs == 8 && run.cohorts.canary_runs == 8);
	assert_true(run.weights[0] == 1 && run.verdict.metrics[0].median_control == 4.5);
	canary_run_release(&run);

	/* per host: a's runs 1 2 3 give 2, b's 4 5 give 4.5, then 6 7 8 */
	o.by_host = true;
	assert_int_equal(canary_run_store(&run, db, &o, &err), 0);
	assert_true(run.cohorts.control_hosts == 5 && run.cohorts.canary_hosts == 8);
	assert_int_equal(run.verdict.metrics[0].n_control, 5);
	assert_true(run.verdict.metrics[0].median_control == 6);
	canary_run_release(&run);
	canary_run_opts_release(&o);
	buf_release(&err);
	db_close(db);
}

static void test_store_errors(void **state)
{
	struct db *db = fleet(*state);
	struct canary_run_opts o;
	struct canary_run run = { 0 };
	struct buf err = BUF_INIT;

	canary_run_opts_init(&o);
	o.control = "kernel=6.1";
	o.canary = "kernel=6.3";
	assert_int_equal(canary_run_store(&run, db, &o, &err), -ENODATA);
	assert_string_equal(buf_str(&err), "--canary 'kernel=6.3' matches no runs (NODATA): no "
			    "verdict\n  kernels in the store: 6.1, 6.2");
	buf_reset(&err);
	o.canary = "host=a";
	assert_int_equal(canary_run_store(&run, db, &o, &err), -EINVAL);
	assert_string_equal(buf_str(&err), "--control 'kernel=6.1' and --canary 'host=a' share 3 "
			    "of their runs; a run can be in one cohort only");
	buf_reset(&err);
	o.canary = "kernel";
	assert_int_equal(canary_run_store(&run, db, &o, &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "--canary: "));
	canary_run_opts_release(&o);
	buf_release(&err);
	db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metric_spec),
		cmocka_unit_test_setup_teardown(test_store, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_store_errors, tmpdir_setup, tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
