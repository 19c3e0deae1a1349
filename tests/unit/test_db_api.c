/* test_db_api.c - the store's reads behind the web API return rows
 * (db_api.h): a run's value of a metric and where it came from (its
 * summary, its samples for worst_X/mean_X, none), a job's cells in byte
 * order, curves grouped by run in run order, and the errors for a job,
 * run or metric that is not there. The JSON is api_view.c's (test_api.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "store/db.h"
#include "store/db_runs.h"
#include "store/db_writer.h"
#include "store/db_api.h"
#include "util.h"
#include "testutil.h"

/* job "rows": base (run a: summary lag_s 2.5 and samples 1, 4; run b:
 * samples 3 only) and patched (run c: nothing), cells "mode=b" and
 * "mode=a". */
static struct db *fixture(const struct tmpdir *td, int64_t *job, int64_t run[3])
{
	char *path = xasprintf("%s/kc.db", td->path);
	struct db_writer *w = NULL;
	struct db *db = NULL;
	int64_t v0, v1;

	assert_int_equal(db_open(&db, path, NULL), 0);
	free(path);
	assert_int_equal(db_job_create(db, job, "rows", "compare", NULL, NULL), 0);
	assert_int_equal(db_variant_get(db, &v0, *job, "base", NULL), 0);
	assert_int_equal(db_variant_get(db, &v1, *job, "patched", NULL), 0);
	assert_int_equal(db_run_create(db, &run[0], *job, v0, "mode=b", 0, NULL, NULL, NULL), 0);
	assert_int_equal(db_run_create(db, &run[1], *job, v0, "mode=a", 0, NULL, NULL, NULL), 0);
	assert_int_equal(db_run_create(db, &run[2], *job, v1, "mode=b", 0, NULL, NULL, NULL), 0);
	assert_int_equal(db_writer_open(&w, db, run[0], NULL), 0);
	assert_int_equal(db_writer_summary(w, "lag_s", 2.5, NULL), 0);
	assert_int_equal(db_writer_sample(w, 1.0, "lag_s", 1.0, NULL), 0);
	assert_int_equal(db_writer_sample(w, 2.0, "lag_s", 4.0, NULL), 0);
	db_writer_close(w);
	assert_int_equal(db_writer_open(&w, db, run[1], NULL), 0);
	assert_int_equal(db_writer_sample(w, 0.5, "lag_s", 3.0, NULL), 0);
	db_writer_close(w);
	return db;
}

static void test_runs_values_and_sources(void **state)
{
	struct db_api_run *v = NULL;
	int64_t job, run[3];
	struct db *db = fixture(*state, &job, run);
	size_t n = 0;

	/* lag_s: the summary where there is one, else nothing (not derived) */
	assert_int_equal(db_api_runs(db, job, "lag_s", &v, &n, NULL), 0);
	assert_int_equal(n, 3);
	assert_int_equal(v[0].id, run[0]);
	assert_int_equal(v[0].source, DB_VALUE_SUMMARY);
	assert_true(v[0].value == 2.5);
	assert_int_equal(v[1].source, DB_VALUE_NONE);
	assert_int_equal(v[2].source, DB_VALUE_NONE);
	assert_string_equal(v[0].variant, "base");
	assert_string_equal(v[0].cell, "mode=b");
	assert_null(v[0].fs);
	db_api_runs_free(v, n);

	/* worst_lag_s: no summary of it, so the max of the samples */
	assert_int_equal(db_api_runs(db, job, "worst_lag_s", &v, &n, NULL), 0);
	assert_int_equal(v[0].source, DB_VALUE_SAMPLES);
	assert_true(v[0].value == 4.0);
	assert_int_equal(v[1].source, DB_VALUE_SAMPLES);
	assert_true(v[1].value == 3.0);
	assert_int_equal(v[2].source, DB_VALUE_NONE);
	db_api_runs_free(v, n);
	assert_int_equal(db_api_runs(db, job, "mean_lag_s", &v, &n, NULL), 0);
	assert_true(v[0].value == 2.5);
	db_api_runs_free(v, n);

	assert_int_equal(db_api_runs(db, job + 1, "lag_s", &v, &n, NULL), -ENOENT);
	db_close(db);
}

static void test_cells_and_curves(void **state)
{
	struct db_api_curve *c = NULL;
	struct buf err = BUF_INIT;
	int64_t job, run[3];
	struct db *db = fixture(*state, &job, run);
	char **cells = NULL;
	size_t n = 0;

	assert_int_equal(db_api_job_cells(db, job, &cells, &n, NULL), 0);
	assert_int_equal(n, 2);
	assert_string_equal(cells[0], "mode=a");
	assert_string_equal(cells[1], "mode=b");
	for (size_t i = 0; i < n; i++)
		free(cells[i]);
	free(cells);

	/* the job's curves: one per run with samples, in run order */
	assert_int_equal(db_api_samples(db, job, 0, "lag_s", &c, &n, NULL), 0);
	assert_int_equal(n, 2);
	assert_int_equal(c[0].run_id, run[0]);
	assert_int_equal(c[0].n, 2);
	assert_true(c[0].t[1] == 2.0 && c[0].v[1] == 4.0);
	assert_int_equal(c[1].run_id, run[1]);
	assert_int_equal(c[1].n, 1);
	db_api_curves_free(c, n);
	/* one run's; none for a run without samples */
	assert_int_equal(db_api_samples(db, 0, run[2], "lag_s", &c, &n, NULL), 0);
	assert_int_equal(n, 0);
	db_api_curves_free(c, n);

	assert_int_equal(db_api_samples(db, job, 0, "nope", &c, &n, &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "no metric 'nope'"));
	assert_int_equal(db_api_samples(db, 0, run[2] + 1, "lag_s", &c, &n, &err), -ENOENT);
	assert_int_equal(db_api_samples(db, job + 1, 0, "lag_s", &c, &n, &err), -ENOENT);
	buf_release(&err);
	db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_runs_values_and_sources, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_cells_and_curves, tmpdir_setup, tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
