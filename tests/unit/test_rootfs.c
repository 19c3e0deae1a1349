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
#include <unistd.h>
#include <cmocka.h>

#include "guest/image.h"
#include "guest/rootfs.h"
#include "testutil.h"
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
	struct run_params fio = { .workload = "fio" };
	struct guest_settings gs = { .fs = "ext4", .run = &fio };
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

/* The volume name of an image: its sha256 and size, hashed once and kept
 * beside it; a later call reads the kept hash, not the image (shown by
 * changing the image's bytes behind its back: the name stays), and a kept
 * hash whose size does not match is computed again. */
static void test_volume_key(void **state)
{
	struct tmpdir *td = *state;
	char *img = xasprintf("%s/abc.sqfs", td->path), *side = xasprintf("%s.sha256", img);
	char key[96], again[96], *text = NULL;
	struct buf err = BUF_INIT;
	FILE *f = fopen(img, "w");

	assert_non_null(f);
	fputs("abc", f);
	fclose(f);
	assert_int_equal(rootfs_volume_key(key, sizeof(key), img, &err), 0);
	/* sha256("abc"), FIPS 180-2 appendix B.1 */
	assert_string_equal(key, "kc-sha256-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad-3.rootfs");
	assert_int_equal(read_file(&text, NULL, side, 4096), 0);
	assert_string_equal(text, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad 3\n");
	free(text);
	f = fopen(img, "w");
	fputs("abd", f);
	fclose(f);
	assert_int_equal(rootfs_volume_key(again, sizeof(again), img, &err), 0);
	assert_string_equal(again, key);
	/* another size: the kept hash is stale */
	f = fopen(img, "w");
	fputs("abcd", f);
	fclose(f);
	assert_int_equal(rootfs_volume_key(again, sizeof(again), img, &err), 0);
	assert_string_equal(again, "kc-sha256-88d4266fd4e6338d13b845fcf289579d209c897823b9217da3e161936f031589-4.rootfs");
	unlink(img);
	assert_int_equal(rootfs_volume_key(again, sizeof(again), img, &err), -ENOENT);
	free(img);
	free(side);
	buf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_packages),
		cmocka_unit_test(test_spec_refused),
		cmocka_unit_test(test_cmdline_word),
		cmocka_unit_test(test_host_record),
		cmocka_unit_test_setup_teardown(test_volume_key, tmpdir_setup, tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
