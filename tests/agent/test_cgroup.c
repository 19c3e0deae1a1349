/* test_cgroup.c - cgroup v2 helpers (agent/cgroup.c) on the host's real
 * cgroup2 mount: create a nested tree and remove it deepest first. Needs
 * root and a cgroup2 mount (skipped otherwise); no controllers needed. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cgroup.h"
#include "util.h"

static void test_tree(void **state)
{
	char *root = NULL, *top, *a, *b, *c;

	(void)state;
	if (geteuid() != 0 || cg_root(&root) < 0)
		skip();
	top = xasprintf("%s/kctest-%d", root, (int)getpid());
	a = xasprintf("%s/a", top);
	b = xasprintf("%s/a/b", top);
	c = xasprintf("%s/c", top);
	if (cg_create(top) < 0) {
		/* a read-only or delegated-elsewhere hierarchy */
		free(root), free(top), free(a), free(b), free(c);
		skip();
	}
	assert_int_equal(cg_create(top), -EEXIST);
	assert_int_equal(cg_create(a), 0);
	assert_int_equal(cg_create(b), 0);
	assert_int_equal(cg_create(c), 0);
	assert_int_equal(access(b, F_OK), 0);
	assert_false(cg_has_controller(top, "no-such-controller"));
	/* cgroup.procs is there and empty: a write of a bogus pid fails */
	assert_true(cg_write(c, "cgroup.procs", "999999999") < 0);
	assert_int_equal(cg_remove_tree(top, 2.0), 0);
	assert_int_equal(access(top, F_OK), -1);
	/* removing what is gone is fine */
	assert_int_equal(cg_remove_tree(top, 2.0), 0);
	free(root), free(top), free(a), free(b), free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
