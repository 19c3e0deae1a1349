/* test_ldd.c - ldd.c: the paths read from `ldd`'s output, as image.c and
 * rootfs.c take them (the binaries' closures themselves are built in
 * tests/integration/t_guest_rootfs.sh). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "guest/ldd.h"
#include "util.h"

static void test_dynamic(void **state)
{
	char text[] = "\tlinux-vdso.so.1 (0x00007ffc5a1f2000)\n"
		      "\tlibz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x00007f0c1c000000)\n"
		      "\tlibmissing.so.2 => not found\n"
		      "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0c1be00000)\n"
		      "\t/lib64/ld-linux-x86-64.so.2 (0x00007f0c1c1f0000)\n";
	char **v = NULL;

	(void)state;
	assert_int_equal(ldd_paths(text, &v), 3);
	assert_string_equal(v[0], "/lib/x86_64-linux-gnu/libz.so.1");
	assert_string_equal(v[1], "/lib/x86_64-linux-gnu/libc.so.6");
	assert_string_equal(v[2], "/lib64/ld-linux-x86-64.so.2");
	assert_null(v[3]);
	free(v);
}

static void test_none(void **state)
{
	char text[] = "\tnot a dynamic executable\n"
		      "ldd: warning: you do not have execution permission for `/x/y'\n"
		      "/usr/lib/libfoo.so (0x1)\n";
	char **v = NULL;

	(void)state;
	/* a message naming a path is no library; a path at the line's start is */
	assert_int_equal(ldd_paths(text, &v), 1);
	assert_string_equal(v[0], "/usr/lib/libfoo.so");
	assert_null(v[1]);
	free(v);
	assert_int_equal(ldd_paths(NULL, &v), 0);
	assert_null(v[0]);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dynamic),
		cmocka_unit_test(test_none),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
