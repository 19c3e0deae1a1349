/* test_error.c - the error model's helpers (error.h): set, wrap, NULL. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "error.h"

static void test_setf_replaces(void **state)
{
	(void)state;
	struct buf err = BUF_INIT;

	assert_string_equal(err_text(&err), "");
	assert_int_equal(err_setf(&err, -ENOENT, "no job %d in the store", 7), -ENOENT);
	assert_string_equal(err_text(&err), "no job 7 in the store");
	assert_int_equal(err_setf(&err, -EINVAL, "bad '%s'", "x"), -EINVAL);
	assert_string_equal(err_text(&err), "bad 'x'");
	buf_release(&err);
}

static void test_wrapf_prefixes(void **state)
{
	(void)state;
	struct buf err = BUF_INIT;

	/* empty: the context alone */
	assert_int_equal(err_wrapf(&err, -EIO, "variant '%s'", "+ v6 2"), -EIO);
	assert_string_equal(err_text(&err), "variant '+ v6 2'");
	err_setf(&err, -EIO, "fs/fs-writeback.c:853:9: error: implicit declaration");
	assert_int_equal(err_wrapf(&err, -EIO, "cannot build '%s'", "+ v6 2-3"), -EIO);
	assert_string_equal(err_text(&err),
			    "cannot build '+ v6 2-3': fs/fs-writeback.c:853:9: error: implicit declaration");
	buf_release(&err);
}

static void test_null_carrier(void **state)
{
	(void)state;
	assert_int_equal(err_setf(NULL, -EINTR, "interrupted"), -EINTR);
	assert_int_equal(err_wrapf(NULL, -EBUSY, "job %d", 3), -EBUSY);
	assert_string_equal(err_text(NULL), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_setf_replaces),
		cmocka_unit_test(test_wrapf_prefixes),
		cmocka_unit_test(test_null_carrier),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
