/* test_db_compare.c - db_compare.c's queries for the executors on a real
 * sqlite file: a job's kind, a run's summary value of a metric (a bound
 * parameter: a name with a quote is a name, not SQL). */
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
#include "store/db_compare.h"
#include "store/db_writer.h"
#include "util.h"
#include "testutil.h"

static struct db *open_store(const struct tmpdir *td)
{
	char *path = xasprintf("%s/kc.db", td->path);
	struct db *db = NULL;

	assert_int_equal(db_open(&db, path, NULL), 0);
	free(path);
	return db;
}

static void test_job_kind(void **state)
{
	struct db *db = open_store(*state);
	struct buf err = BUF_INIT;
	int64_t compare, adhoc;
	char *kind = NULL;

	assert_int_equal(db_job_create(db, &compare, "c", "compare", NULL, NULL), 0);
	assert_int_equal(db_job_create(db, &adhoc, "a", "adhoc", NULL, NULL), 0);
	assert_int_equal(db_job_kind(db, compare, &kind, &err), 0);
	assert_string_equal(kind, "compare");
	free(kind);
	assert_int_equal(db_job_kind(db, adhoc, &kind, NULL), 0);
	assert_string_equal(kind, "adhoc");
	free(kind);
	kind = NULL;
	assert_int_equal(db_job_kind(db, adhoc + 100, &kind, &err), -ENOENT);
	assert_null(kind);
	assert_string_equal(buf_str(&err), "no job 102 in the store");
	buf_release(&err);
	db_close(db);
}

static void test_run_summary_value(void **state)
{
	struct db *db = open_store(*state);
	struct db_writer *w = NULL;
	struct buf err = BUF_INIT;
	int64_t job, variant, run;
	double v = 0;

	assert_int_equal(db_job_create(db, &job, "c", "compare", NULL, NULL), 0);
	assert_int_equal(db_variant_get(db, &variant, job, "base", NULL), 0);
	assert_int_equal(db_run_create(db, &run, job, variant, "", 0, "ext4", NULL, NULL), 0);
	assert_int_equal(db_writer_open(&w, db, run, NULL), 0);
	assert_int_equal(db_writer_begin(w, NULL), 0);
	assert_int_equal(db_writer_summary(w, "worst_lag_s", 12.875, NULL), 0);
	assert_int_equal(db_writer_summary(w, "it's_s", 3.5, NULL), 0);
	/* a sample is not a summary: never read as one */
	assert_int_equal(db_writer_sample(w, 1.0, "lag_s", 9.0, NULL), 0);
	assert_int_equal(db_writer_commit(w, NULL), 0);
	db_writer_close(w);

	assert_int_equal(db_run_summary_value(db, run, "worst_lag_s", &v, &err), 0);
	assert_true(v == 12.875);
	/* the metric is bound, not spliced into the SQL */
	assert_int_equal(db_run_summary_value(db, run, "it's_s", &v, &err), 0);
	assert_true(v == 3.5);
	assert_int_equal(db_run_summary_value(db, run, "x' OR '1'='1", &v, &err), -ENOENT);
	assert_int_equal(db_run_summary_value(db, run, "lag_s", &v, &err), -ENOENT);
	assert_non_null(strstr(buf_str(&err), "has no summary value of 'lag_s'"));
	buf_release(&err);
	db_close(db);
}

/* Whether a job was cancelled, as the lab's workers ask between runs
 * (lab.c): false for a running job, true once cancelled, -ENOENT for a
 * job that is not there. */
static void test_job_is_cancelled(void **state)
{
	struct db *db = open_store(*state);
	struct buf err = BUF_INIT;
	int64_t job = 0;
	bool yes = true;

	assert_int_equal(db_job_create(db, &job, "c", "compare", NULL, NULL), 0);
	assert_int_equal(db_job_set_status(db, job, "running", NULL, NULL), 0);
	assert_int_equal(db_job_is_cancelled(db, job, &yes, NULL), 0);
	assert_false(yes);
	assert_int_equal(db_job_set_status(db, job, "cancelled", NULL, NULL), 0);
	assert_int_equal(db_job_is_cancelled(db, job, &yes, NULL), 0);
	assert_true(yes);
	assert_int_equal(db_job_is_cancelled(db, job + 1, &yes, &err), -ENOENT);
	assert_false(yes);
	assert_non_null(strstr(buf_str(&err), "no job"));
	buf_release(&err);
	db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_job_kind, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_run_summary_value, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_job_is_cancelled, tmpdir_setup, tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
