/* test_workload.c - plumbing shared by the workloads (agent/workload.c):
 * the test directory's filesystem for hello, and the preconditions that do
 * not need a cgroup v2 memory controller (root, test dir, tmpfs). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "error.h"
#include "testutil.h"
#include "util.h"
#include "workload.h"

static void test_fs_of(void **state)
{
	char *type = NULL, *opts = NULL;

	(void)state;
	assert_int_equal(wl_fs_of(&type, &opts, "/proc/self"), 0);
	assert_string_equal(type, "proc");
	free(type);
	free(opts);
	assert_int_equal(wl_fs_of(&type, &opts, "/sys/kernel"), 0);
	assert_string_equal(type, "sysfs");
	free(type);
	free(opts);
	assert_int_equal(wl_fs_of(&type, &opts, "/nonexistent-kc/x"), -ENOENT);
}

static void test_tmpfs_dir(void **state)
{
	struct tmpdir *td = *state;
	char *sub = xasprintf("%s/sub", td->path);
	char *type = NULL, *opts = NULL, *cgroot = NULL;
	struct buf err = BUF_INIT;

	if (geteuid() != 0) {
		free(sub);
		skip();
	}
	if (mount("none", td->path, "tmpfs", 0, "size=1m") < 0) {
		free(sub);
		skip();
	}
	assert_int_equal(mkdir_p(sub, 0755), 0);
	/* the mount on the tmp dir hides the filesystem under it */
	assert_int_equal(wl_fs_of(&type, &opts, sub), 0);
	assert_string_equal(type, "tmpfs");
	assert_non_null(strstr(opts, "size=1024k"));
	assert_int_equal(wl_check_common(&cgroot, "memory io", sub, &err), -EINVAL);
	assert_non_null(strstr(err_text(&err), "is on tmpfs, which has no writeback: pass dir=PATH on ext4, xfs or btrfs"));
	assert_null(cgroot);
	assert_int_equal(wl_check_common(&cgroot, "memory io", "/nonexistent-kc", &err), -ENOENT);
	assert_string_equal(err_text(&err), "test directory '/nonexistent-kc' does not exist: create it on the filesystem under test, or pass dir=PATH");
	umount(td->path);
	buf_release(&err);
	free(type);
	free(opts);
	free(sub);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* wl_remove_flat removes a tool's directory and the files in it. */
static void test_remove_flat(void **state)
{
	struct tmpdir *td = *state;
	char *dir = xasprintf("%s/tool", td->path), *a = xasprintf("%s/out.json", dir),
	     *b = xasprintf("%s/err.txt", dir);
	struct stat st;

	assert_int_equal(mkdir_p(dir, 0755), 0);
	put(a, "{}");
	put(b, "");
	assert_int_equal(wl_remove_flat(dir), 0);
	assert_int_equal(stat(dir, &st), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(wl_remove_flat(dir), -ENOENT);
	free(dir);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fs_of),
		cmocka_unit_test_setup_teardown(test_tmpfs_dir, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_remove_flat, tmpdir_setup, tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
