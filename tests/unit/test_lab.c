/* test_lab.c - lab.c and db_lab.c with a real sqlite store: choosing hosts
 * (default, all, names, labels, down hosts left out), counting a host's
 * failures to down and back, `lab check` over test:///default, and the
 * dispatch rule of builds overlapping runs (lab_pick_next()). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "store/db.h"
#include "store/db_compare.h"
#include "store/db_lab.h"
#include "exec/lab.h"
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

/* A block of two repeats' worth: variant 1 and 2, shuffled 2, 1, 2, 1. */
static const struct db_pending_run block[] = {
	{ .id = 11, .variant_id = 2 }, { .id = 12, .variant_id = 1 },
	{ .id = 13, .variant_id = 2 }, { .id = 14, .variant_id = 1 },
};

static void test_pick_next(void **state)
{
	bool taken[4] = { false };
	int64_t ready1[] = { 1 }, ready12[] = { 1, 2 };
	size_t i = 99;

	(void)state;
	/* variant 2 still building: variant 1's run goes first, out of order */
	assert_int_equal(lab_pick_next(block, taken, 4, ready1, 1, true, true, &i), LAB_PICK_RUN);
	assert_int_equal(i, 1);
	taken[1] = true;
	assert_int_equal(lab_pick_next(block, taken, 4, ready1, 1, true, true, &i), LAB_PICK_RUN);
	assert_int_equal(i, 3);
	taken[3] = true;
	/* only variant 2's runs are left: wait for its build */
	assert_int_equal(lab_pick_next(block, taken, 4, ready1, 1, true, true, &i), LAB_PICK_WAIT);
	/* built: the block's order again */
	assert_int_equal(lab_pick_next(block, taken, 4, ready12, 2, false, true, &i), LAB_PICK_RUN);
	assert_int_equal(i, 0);
	/* its build failed (builds over, never ready): the block is done */
	assert_int_equal(lab_pick_next(block, taken, 4, ready1, 1, false, true, &i), LAB_PICK_NONE);
	/* a host that does not overlap waits while builds go, ready or not */
	memset(taken, 0, sizeof(taken));
	assert_int_equal(lab_pick_next(block, taken, 4, ready1, 1, true, false, &i), LAB_PICK_WAIT);
	assert_int_equal(lab_pick_next(block, taken, 4, ready1, 1, false, false, &i), LAB_PICK_RUN);
	assert_int_equal(i, 1);
	/* nothing ready yet, builds going */
	assert_int_equal(lab_pick_next(block, taken, 4, NULL, 0, true, true, &i), LAB_PICK_WAIT);
	assert_int_equal(lab_overlap_parse(NULL), LAB_OVERLAP_AUTO);
	assert_int_equal(lab_overlap_parse("yes"), LAB_OVERLAP_YES);
	assert_int_equal(lab_overlap_parse("no"), LAB_OVERLAP_NO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_select, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_check, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_probe_accel, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test(test_pick_next),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
