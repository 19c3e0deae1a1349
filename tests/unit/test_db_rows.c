/* test_db_rows.c - db_rows(), the store's one loop over a list query's
 * rows (db_internal.h): every row read into a zeroed element in order,
 * none for an empty result, and on a step that fails part way the rows
 * read so far released, the caller's array left as it was and the
 * context in the error; db_job_row(), the one step of a job's row. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "store/db.h"
#include "store/db_internal.h"
#include "store/db_runs.h"
#include "util.h"
#include "testutil.h"

struct row {
	char *text;
	int64_t num;
	int zeroed;    /* 1 when the element came zeroed */
};

static int released;

static void read_row(sqlite3_stmt *st, void *p)
{
	struct row *r = p;

	r->zeroed = !r->text && !r->num;
	r->text = db_col_strdup(st, 0);
	r->num = sqlite3_column_int64(st, 1);
}

static void release_row(void *p)
{
	free(((struct row *)p)->text);
	released++;
}

static struct db *open_db(const struct tmpdir *td)
{
	char *path = xasprintf("%s/kc.db", td->path);
	struct db *db = NULL;

	assert_int_equal(db_open(&db, path, NULL), 0);
	free(path);
	return db;
}

static void test_rows_in_order(void **state)
{
	struct db *db = open_db(*state);
	sqlite3_stmt *st = NULL;
	void *v = NULL;
	struct row *x;
	size_t n = 99;

	/* more rows than the first allocation holds */
	assert_int_equal(db_prepare(db, &st, "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL"
				    " SELECT i + 1 FROM c WHERE i < 40) SELECT 'r' || i, i FROM c", NULL), 0);
	assert_int_equal(db_rows(db, st, sizeof(*x), read_row, release_row, &v, &n, NULL,
				 "cannot count"), 0);
	x = v;
	assert_int_equal(n, 40);
	for (size_t i = 0; i < n; i++) {
		char want[32];

		snprintf(want, sizeof(want), "r%zu", i + 1);
		assert_string_equal(x[i].text, want);
		assert_int_equal(x[i].num, (int64_t)i + 1);
		assert_int_equal(x[i].zeroed, 1);
	}
	released = 0;
	db_rows_free(v, n, sizeof(*x), release_row);
	assert_int_equal(released, 40);

	assert_int_equal(db_prepare(db, &st, "SELECT 'x', 1 WHERE 0", NULL), 0);
	assert_int_equal(db_rows(db, st, sizeof(*x), read_row, release_row, &v, &n, NULL,
				 "cannot read none"), 0);
	assert_null(v);
	assert_int_equal(n, 0);
	db_rows_free(v, n, sizeof(*x), release_row);
	db_close(db);
}

static void test_failure_part_way(void **state)
{
	struct db *db = open_db(*state);
	struct buf err = BUF_INIT;
	sqlite3_stmt *st = NULL;
	void *v = &err;
	size_t n = 7;
	int r;

	/* two good rows, then an integer overflow at the third step */
	assert_int_equal(db_prepare(db, &st, "WITH c(i) AS (VALUES (1), (2), (0))"
				    " SELECT 'r', CASE i WHEN 0 THEN abs(-9223372036854775807 - 1)"
				    " ELSE i END FROM c", NULL), 0);
	released = 0;
	r = db_rows(db, st, sizeof(struct row), read_row, release_row, &v, &n, &err,
		    "cannot list job %d's rows", 5);
	assert_true(r < 0);
	assert_int_equal(released, 2);
	assert_ptr_equal(v, &err);
	assert_int_equal(n, 7);
	assert_non_null(strstr(buf_str(&err), "cannot list job 5's rows: "));
	buf_release(&err);
	db_close(db);
}

static void test_job_row(void **state)
{
	struct db *db = open_db(*state);
	struct buf err = BUF_INIT;
	sqlite3_stmt *st = NULL;
	int64_t job;

	assert_int_equal(db_job_create(db, &job, "one", "compare", NULL, NULL), 0);
	assert_int_equal(db_prepare(db, &st, "SELECT name FROM jobs WHERE id = ?", NULL), 0);
	assert_int_equal(db_job_row(db, st, job, "name", &err), 0);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "one");
	sqlite3_finalize(st);

	assert_int_equal(db_prepare(db, &st, "SELECT name FROM jobs WHERE id = ?", NULL), 0);
	assert_int_equal(db_job_row(db, st, job + 41, "name", &err), -ENOENT);
	assert_string_equal(buf_str(&err), "no job 42 in the store");
	sqlite3_finalize(st);

	/* a step that fails names the job and what was read */
	assert_int_equal(db_prepare(db, &st, "SELECT abs(-9223372036854775807 - 1) FROM jobs"
				    " WHERE id = ?", NULL), 0);
	assert_true(db_job_row(db, st, job, "name", &err) < 0);
	assert_non_null(strstr(buf_str(&err), "cannot read job 1's name: "));
	sqlite3_finalize(st);
	assert_int_equal(db_prepare(db, &st, "SELECT abs(-9223372036854775807 - 1) FROM jobs"
				    " WHERE id = ?", NULL), 0);
	assert_true(db_job_row(db, st, job, NULL, &err) < 0);
	assert_non_null(strstr(buf_str(&err), "cannot read job 1: "));
	sqlite3_finalize(st);
	buf_release(&err);
	db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rows_in_order, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_failure_part_way, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_job_row, tmpdir_setup, tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
