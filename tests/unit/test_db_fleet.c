/* test_db_fleet.c - the host list as rows (db_fleet.h): by name, what
 * each registered and its last heartbeat as stored, NULL where nothing
 * was recorded. The JSON of /hosts is api_fleet.c's (test_fleet.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "store/db.h"
#include "store/db_fleet.h"
#include "util.h"
#include "testutil.h"

static void test_hosts_list_rows(void **state)
{
	struct tmpdir *td = *state;
	char *path = xasprintf("%s/kc.db", td->path);
	struct db_host_row *v = NULL;
	struct db_host h = { 0 };
	struct db *db = NULL;
	size_t n = 7;

	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(db_hosts_list(db, &v, &n, NULL), 0);
	assert_int_equal(n, 0);
	db_host_rows_free(v, n);

	assert_int_equal(db_host_register(db, &h, "web2", "6.12.0", "b-2", "{\"rack\":\"a\"}",
					  "1.0", "agent:web2", NULL), 0);
	db_host_release(&h);
	assert_int_equal(db_host_register(db, &h, "db1", NULL, NULL, NULL, NULL, NULL, NULL), 0);
	db_host_release(&h);
	assert_int_equal(db_host_heartbeat(db, "web2", "{\"load\":1}", NULL), 0);

	assert_int_equal(db_hosts_list(db, &v, &n, NULL), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].name, "db1");
	assert_null(v[0].kernel_release);
	assert_null(v[0].heartbeat_json);
	assert_string_equal(v[0].labels_json, "{}");
	assert_string_equal(v[1].name, "web2");
	assert_string_equal(v[1].kernel_release, "6.12.0");
	assert_string_equal(v[1].labels_json, "{\"rack\":\"a\"}");
	assert_string_equal(v[1].token, "agent:web2");
	assert_string_equal(v[1].heartbeat_json, "{\"load\":1}");
	assert_int_equal(v[1].next_seq, 1);
	assert_int_equal(v[1].runs, 0);
	assert_non_null(v[1].first_seen);
	db_host_rows_free(v, n);
	db_close(db);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hosts_list_rows, tmpdir_setup, tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
