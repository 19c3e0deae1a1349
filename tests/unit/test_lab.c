/* test_lab.c - lab.c and db_lab.c with a real sqlite store: choosing hosts
 * (default, all, names, labels, down hosts left out), counting a host's
 * failures to down and back, and `lab check` over test:///default. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "db.h"
#include "db_lab.h"
#include "lab.h"
#include "util.h"
#include "testutil.h"

static struct db *open_store(struct tmpdir *td)
{
	char *path = xasprintf("%s/kcanary.db", td->path);
	struct db *db = NULL;

	assert_int_equal(db_open(&db, path, NULL), 0);
	free(path);
	return db;
}

static char *names(const struct lab_pool *p)
{
	struct buf b = BUF_INIT;

	for (size_t i = 0; i < p->n; i++)
		buf_printf(&b, "%s%s:%d", i ? "," : "", p->v[i].name, p->v[i].slots);
	return buf_detach(&b);
}

static void expect(struct db *db, const char *spec, const char *want)
{
	struct lab_pool p;
	struct buf err = BUF_INIT;
	char *got;

	assert_int_equal(lab_select(&p, db, spec, "test:///default", &err), 0);
	got = names(&p);
	assert_string_equal(got, want);
	free(got);
	lab_pool_release(&p);
	buf_release(&err);
}

static void test_select(void **state)
{
	struct db *db = open_store(*state);
	struct buf err = BUF_INIT;
	struct lab_pool p;

	/* nothing stored: the default host alone, for every spec */
	expect(db, NULL, "local:1");
	expect(db, "all", "local:1");
	assert_int_equal(db_lab_host_add(db, "kvm1", "qemu+ssh://root@kvm1/system", 2,
					 "{\"cpu\":\"epyc\"}", &err), 0);
	assert_int_equal(db_lab_host_add(db, "kvm2", "qemu+tls://kvm2/system", 1, NULL, &err), 0);
	assert_int_equal(db_lab_host_add(db, "kvm2", "qemu:///x", 1, NULL, &err), -EEXIST);
	assert_string_equal(buf_str(&err), "there is a lab host 'kvm2' already");
	expect(db, NULL, "local:1");
	expect(db, "all", "kvm1:2,kvm2:1");
	expect(db, "kvm2,local,kvm2", "kvm2:1,local:1");
	expect(db, "cpu=epyc", "kvm1:2");
	buf_reset(&err);
	assert_int_equal(lab_select(&p, db, "kvm3", NULL, &err), -ENOENT);
	assert_non_null(strstr(buf_str(&err), "no lab host 'kvm3'"));
	buf_reset(&err);
	assert_int_equal(lab_select(&p, db, "cpu=arm", NULL, &err), -ENOENT);

	/* three infra runs in a row mark a host down; it is left out of all */
	bool down = true;
	assert_int_equal(db_lab_host_run_ended(db, "kvm1", true, 3, "gone", &down, &err), 0);
	assert_false(down);
	assert_int_equal(db_lab_host_run_ended(db, "kvm1", false, 3, NULL, &down, &err), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(db_lab_host_run_ended(db, "kvm1", true, 3, "gone", &down, &err), 0);
	assert_true(down);
	expect(db, "all", "kvm2:1");
	expect(db, "kvm1", "kvm1:2");     /* named: the user asked for it */
	buf_reset(&err);
	assert_int_equal(db_lab_host_remove(db, "kvm9", &err), -ENOENT);
	assert_int_equal(db_lab_host_remove(db, "kvm2", &err), 0);
	buf_reset(&err);
	assert_int_equal(lab_select(&p, db, "all", NULL, &err), -ENOENT);
	db_close(db);
	buf_release(&err);
}

static void test_check(void **state)
{
	struct db *db = open_store(*state);
	struct buf err = BUF_INIT;
	struct vm_host_info info;
	struct vm_accel_info ai;
	struct db_lab_host *h = NULL;
	size_t n = 0;
	bool ok = false;

	assert_int_equal(db_lab_host_add(db, "t", "test:///default", 1, NULL, &err), 0);
	assert_int_equal(db_lab_host_add(db, "gone", "qemu+unix:///system?socket=/nonexistent/s",
					 1, NULL, &err), 0);
	assert_int_equal(lab_check(db, "t", &info, &ai, &ok, &err), 0);
	assert_true(ok);
	assert_string_equal(info.driver, "TEST");
	assert_true(info.pool_ok);
	/* the host's own accelerator: the test driver offers no kvm domains */
	assert_int_equal(ai.accel, VM_ACCEL_TCG);
	assert_non_null(strstr(ai.why, "no kvm domain type"));
	assert_int_equal(lab_check(db, "gone", &info, &ai, &ok, &err), 0);
	assert_false(ok);
	assert_non_null(strstr(buf_str(&err), "cannot connect to libvirt"));
	assert_int_equal(lab_check(db, "nope", &info, &ai, &ok, &err), -ENOENT);
	assert_int_equal(db_lab_hosts(db, &h, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(h[0].name, "gone");
	assert_string_equal(h[0].state, "down");
	assert_null(strchr(h[0].state_why, '\n'));
	assert_string_equal(h[1].state, "up");
	assert_string_equal(h[1].accel, "tcg");
	assert_true(h[1].cpus > 0);
	assert_non_null(h[1].libvirt_version);
	db_lab_hosts_free(h, n);
	db_close(db);
	buf_release(&err);
}

/* lab add's probe: the accelerator stored, the state left alone */
static void test_probe_accel(void **state)
{
	struct db *db = open_store(*state);
	struct buf err = BUF_INIT;
	struct vm_accel_info ai;
	struct db_lab_host *h = NULL;
	size_t n = 0;

	unsetenv("KCANARY_ACCEL");
	assert_int_equal(db_lab_host_add(db, "gone", "qemu+unix:///system?socket=/nonexistent/s",
					 1, NULL, &err), 0);
	assert_int_equal(db_lab_host_add(db, "t", "test:///default", 1, NULL, &err), 0);
	assert_int_equal(lab_probe_accel(db, "t", &ai, &err), 0);
	assert_int_equal(ai.accel, VM_ACCEL_TCG);
	assert_int_equal(lab_probe_accel(db, "gone", &ai, &err), -EHOSTUNREACH);
	assert_non_null(strstr(buf_str(&err), "cannot connect to libvirt"));
	assert_int_equal(lab_probe_accel(db, "nope", &ai, &err), -ENOENT);
	assert_int_equal(db_lab_hosts(db, &h, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(h[0].state, "unknown");   /* not reached: not down either */
	assert_null(h[0].accel);
	assert_string_equal(h[1].state, "unknown");
	assert_string_equal(h[1].accel, "tcg");
	db_lab_hosts_free(h, n);
	db_close(db);
	buf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_select, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_check, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_probe_accel, tmpdir_setup, tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
