/* test_rootfs.c - rootfs.c: the --rootfs spec (package names, sorting,
 * duplicates, what is refused) and the kernel command line word that
 * tells /init to use the second disk. The build itself (mmdebstrap,
 * mksquashfs) runs in tests/integration/t_guest_rootfs.sh. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "image.h"
#include "rootfs.h"
#include "util.h"

static void test_spec_packages(void **state)
{
	struct buf err = BUF_INIT;
	char **v = NULL;

	(void)state;
	assert_int_equal(rootfs_parse_spec(&v, "debian:fio,bpftrace,fio,g++-12,libc6.1", &err), 0);
	assert_string_equal(v[0], "bpftrace");
	assert_string_equal(v[1], "fio");
	assert_string_equal(v[2], "g++-12");
	assert_string_equal(v[3], "libc6.1");
	assert_null(v[4]);
	rootfs_strv_free(v);
	v = NULL;
	assert_int_equal(rootfs_parse_spec(&v, "debian", &err), 0);
	assert_null(v[0]);
	rootfs_strv_free(v);
	buf_release(&err);
}

static void test_spec_refused(void **state)
{
	static const char *const bad[] = {
		"ubuntu:fio", "debianx", "debian:Fio", "debian:fio;rm", "debian:a", "debian:-x",
		"debian:fio bash", NULL,
	};
	struct buf err = BUF_INIT;

	(void)state;
	for (size_t i = 0; bad[i]; i++) {
		char **v = NULL;

		buf_reset(&err);
		assert_int_equal(rootfs_parse_spec(&v, bad[i], &err), -EINVAL);
		assert_null(v);
		assert_non_null(strstr(buf_str(&err), "--rootfs"));
	}
	buf_release(&err);
}

static void test_cmdline_word(void **state)
{
	struct guest_settings gs = { .fs = "ext4", .workload = "fio" };
	struct buf err = BUF_INIT;
	char *line = NULL;

	(void)state;
	assert_int_equal(image_cmdline(&line, &gs, &err), 0);
	assert_null(strstr(line, "kc.rootfs"));
	free(line);
	gs.rootfs = true;
	assert_int_equal(image_cmdline(&line, &gs, &err), 0);
	assert_non_null(strstr(line, " kc.rootfs=vdb"));
	free(line);
	gs.rootfs_host = true;
	assert_int_equal(image_cmdline(&line, &gs, &err), 0);
	assert_non_null(strstr(line, " kc.rootfs=host"));
	assert_null(strstr(line, "kc.rootfs=vdb"));
	free(line);
	buf_release(&err);
}

/* --rootfs host: the record is the host's dpkg list (this machine is
 * Debian: dpkg itself is in it), its hash the same on a second read. */
static void test_host_record(void **state)
{
	struct rootfs_image a, b;
	struct buf err = BUF_INIT;

	(void)state;
	assert_true(rootfs_is_host("host"));
	assert_false(rootfs_is_host("debian:host"));
	assert_false(rootfs_is_host(NULL));
	assert_int_equal(rootfs_host(&a, &err), 0);
	assert_int_equal(rootfs_host(&b, &err), 0);
	assert_int_equal(strlen(a.hash), 64);
	assert_string_equal(a.hash, b.hash);
	assert_non_null(strstr(a.packages, "\ndpkg "));
	assert_string_equal(a.path, "/");
	assert_false(a.built);
	rootfs_image_release(&a);
	rootfs_image_release(&b);
	buf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_packages),
		cmocka_unit_test(test_spec_refused),
		cmocka_unit_test(test_cmdline_word),
		cmocka_unit_test(test_host_record),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
