/* test_build.c - builds on the fake kernel: config merge and option check,
 * build dir reuse, cache hit, a failing build's first error. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "kernel/build.h"
#include "store/db.h"
#include "store/db_runs.h"
#include "store/db_internal.h"
#include "store/db_kernels.h"
#include "wrap/git.h"
#include "kernel/tree_import.h"
#include "util.h"
#include "testutil.h"
#include "fakekernel.h"

/* git.h's message of the last failed call (error.h) */
static struct buf gitmsg = BUF_INIT;

struct fx {
	struct tmpdir td;
	struct repo *r;
	struct db *db;
	char base[KC_OID_HEX];
	char *home, *frag, *frag_bad;
};

static int fx_setup(void **state)
{
	struct tmpdir *td;
	struct fx *fx;
	struct import_result ir;
	char *tb, *repo, *dbp;

	if (tmpdir_setup((void **)&td))
		return -1;
	fx = calloc(1, sizeof(*fx));
	fx->td = *td;
	free(td);
	repo = xasprintf("%s/linux", fx->td.path);
	fx->home = xasprintf("%s/home", fx->td.path);
	dbp = xasprintf("%s/kcanary.db", fx->home);
	tb = fk_tarball(fx->td.path, "3", NULL);
	if (repo_open(&fx->r, repo, true, &gitmsg) || tree_import_tarball(fx->r, &ir, tb, NULL, NULL) ||
	    db_open(&fx->db, dbp, NULL))
		return -1;
	memcpy(fx->base, ir.commit, KC_OID_HEX);
	fx->frag = xasprintf("%s/guest.config", fx->td.path);
	fk_write(fx->td.path, "guest.config", "CONFIG_GUEST=y\nCONFIG_64BIT=y\n# CONFIG_MODULES is not set\n");
	fx->frag_bad = xasprintf("%s/wish.config", fx->td.path);
	fk_write(fx->td.path, "wish.config", "CONFIG_IMPOSSIBLE=y\n");
	free(tb);
	free(repo);
	free(dbp);
	*state = fx;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *fx = *state;
	struct tmpdir *td = malloc(sizeof(*td));

	repo_close(fx->r);
	db_close(fx->db);
	free(fx->home);
	free(fx->frag);
	free(fx->frag_bad);
	*td = fx->td;
	free(fx);
	return tmpdir_teardown((void **)&td);
}

static char *patch_commit(struct fx *fx, const char *file, int at, const char *old,
			  const char *new_line)
{
	char c[KC_OID_HEX];
	char *d = xasprintf("diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -%d +%d,2 @@\n-%s\n+%s\n+%s\n",
			    file, file, file, file, at, at, old, old, new_line);
	struct apply_patch p = { 1, 1, "test change", "Dev One", "dev1@example.org",
				 1700000000, 0, "test change\n", d, NULL };

	if (repo_apply_patch(fx->r, c, fx->base, &p, NULL, &gitmsg))
		fail_msg("apply: %s", buf_str(&gitmsg));
	free(d);
	return xstrdup(c);
}

static void test_build_cache_and_reuse(void **state)
{
	struct fx *fx = *state;
	const char *frags[] = { fx->frag };
	struct build_spec spec = { .home = fx->home, .base_hex = fx->base, .fragments = frags,
				   .nfragments = 1, .jobs = 1, .label = "base" };
	struct build_result res;
	char *cfg = NULL;

	setenv("CCACHE_BASEDIR", "/elsewhere", 1);	/* the caller's, replaced */
	assert_int_equal(build_kernel(&res, fx->r, fx->db, fx->base, &spec, NULL), 0);
	unsetenv("CCACHE_BASEDIR");
	if (!res.ok)
		fail_msg("build: %s", res.error);
	assert_false(res.cache_hit);
	assert_int_equal(res.files_compiled, 2);       /* main.c, mm.c */
	assert_non_null(res.kernel.image_path);
	assert_int_equal(access(res.kernel.image_path, R_OK), 0);
	assert_int_equal(access(res.kernel.system_map_path, R_OK), 0);
	assert_int_equal(access(res.kernel.build_log_path, R_OK), 0);
	assert_string_equal(res.kernel.build_status, "ok");
	assert_true(res.kernel.build_s >= 0);
	/* the merged config: tinyconfig + fragment, checked and hashed */
	assert_int_equal(read_file(&cfg, NULL, res.kernel.config_path, 1 << 20), 0);
	assert_non_null(strstr(cfg, "CONFIG_GUEST=y\n"));
	char h[KC_OID_HEX];
	assert_int_equal(kc_hash_file(h, res.kernel.config_path, &gitmsg), 0);
	assert_string_equal(h, res.config_hash);
	char *dir1 = xstrdup(res.build_dir);
	/* issue 19: the build dir is inside the tree and make sees ccache's
	 * settings for hits across trees (base_dir the tree, no dir hashing,
	 * time_macros) and the fixed KBUILD_BUILD_* (the caller's replaced);
	 * before, it was $home/build/ with ccache's defaults */
	char *want_dir = xasprintf("%s/.kcanary-build/", repo_workdir(fx->r));
	assert_memory_equal(res.build_dir, want_dir, strlen(want_dir));
	char *envf = xasprintf("%s/.fake-env", res.build_dir), *env = NULL;
	assert_int_equal(read_file(&env, NULL, envf, 1 << 16), 0);
	char *want_base = xasprintf("CCACHE_BASEDIR=%s\n", repo_workdir(fx->r));
	assert_non_null(strstr(env, want_base));
	assert_non_null(strstr(env, "CCACHE_NOHASHDIR=1\n"));
	assert_non_null(strstr(env, "CCACHE_SLOPPINESS=time_macros\n"));
	assert_non_null(strstr(env, "KBUILD_BUILD_TIMESTAMP=1970-01-01\n"));
	assert_non_null(strstr(env, "KBUILD_BUILD_HOST=kcanary\n"));
	assert_null(strstr(env, "CCACHE_BASEDIR=/elsewhere"));
	free(env);
	free(envf);
	free(want_base);
	free(want_dir);
	build_result_release(&res);

	/* the same (tree, config) again: a cache hit, nothing compiled */
	assert_int_equal(build_kernel(&res, fx->r, fx->db, fx->base, &spec, NULL), 0);
	assert_true(res.ok);
	assert_true(res.cache_hit);
	assert_int_equal(res.files_compiled, 0);
	build_result_release(&res);

	/* a variant touching one .c file: same build dir, one file compiled */
	char *v = patch_commit(fx, "src/mm.c", 60, "int v60 = 60;", "int v61 = 61;");
	spec.label = "variant";
	assert_int_equal(build_kernel(&res, fx->r, fx->db, v, &spec, NULL), 0);
	assert_true(res.ok);
	assert_false(res.cache_hit);
	assert_string_equal(res.build_dir, dir1);
	assert_int_equal(res.files_compiled, 1);
	int64_t n = 0;
	assert_int_equal(db_query_int64(fx->db, &n,
		"SELECT count(*) FROM kernels WHERE build_status = 'ok'", NULL, NULL), 0);
	assert_int_equal(n, 2);
	/* the full build's file count is kept for the progress line */
	char *cnt_path = xasprintf("%s/.kcanary-files", dir1), *cnt = NULL;
	assert_int_equal(read_file(&cnt, NULL, cnt_path, 64), 0);
	assert_string_equal(cnt, "2\n");
	free(cnt);
	free(cnt_path);
	/* variants' build outcome in the store; statuses are a closed set */
	int64_t job = 0, vid = 0;
	assert_int_equal(db_job_create(fx->db, &job, "build", "adhoc", NULL, NULL), 0);
	assert_int_equal(db_variant_get(fx->db, &vid, job, "base", NULL), 0);
	assert_int_equal(db_variant_set_build(fx->db, vid, "v1.2.3", v, NULL, res.kernel.id,
					      "ok", NULL, NULL), 0);
	assert_int_equal(db_variant_set_build(fx->db, vid, "v1.2.3", v, NULL, 0, "exploded",
					      NULL, NULL), -EINVAL);
	assert_int_equal(db_variant_set_build(fx->db, 9999, "v1.2.3", v, NULL, 0, "ok", NULL, NULL),
			 -ENOENT);
	assert_int_equal(db_query_int64(fx->db, &n,
		"SELECT count(*) FROM variants WHERE status = 'ok' AND kernel_id IS NOT NULL", NULL, NULL), 0);
	assert_int_equal(n, 1);
	build_result_release(&res);
	free(v);
	free(dir1);
	free(cfg);
}

static void test_build_failure_shows_first_error(void **state)
{
	struct fx *fx = *state;
	const char *frags[] = { fx->frag };
	struct build_spec spec = { .home = fx->home, .base_hex = fx->base, .fragments = frags,
				   .nfragments = 1, .jobs = 1 };
	struct build_result res;
	char *v = patch_commit(fx, "src/main.c", 1, "int main_v = 1;", "#error broken on purpose");
	char *log = NULL;

	assert_int_equal(build_kernel(&res, fx->r, fx->db, v, &spec, NULL), 0);
	assert_false(res.ok);
	assert_non_null(res.error);
	assert_non_null(strstr(res.error, "src/main.c:2:2: error: #error broken on purpose"));
	assert_string_equal(res.where, "src/main.c:2");
	assert_string_equal(res.kernel.build_status, "failed");
	assert_string_equal(res.kernel.build_error, res.error);
	/* the whole log is kept */
	assert_int_equal(read_file(&log, NULL, res.kernel.build_log_path, 1 << 20), 0);
	assert_non_null(strstr(log, "#error broken on purpose"));
	assert_non_null(strstr(log, "CC      src/main.o"));
	free(log);
	build_result_release(&res);
	free(v);
}

static void test_missing_option_is_named(void **state)
{
	struct fx *fx = *state;
	const char *frags[] = { fx->frag, fx->frag_bad };
	struct build_spec spec = { .home = fx->home, .base_hex = fx->base, .fragments = frags,
				   .nfragments = 2, .jobs = 1 };
	struct build_result res;

	assert_int_equal(build_kernel(&res, fx->r, fx->db, fx->base, &spec, NULL), 0);
	assert_false(res.ok);
	assert_non_null(strstr(res.error, "CONFIG_IMPOSSIBLE=y (wish.config; got: is not set)"));
	assert_null(strstr(res.error, "CONFIG_GUEST"));
	build_result_release(&res);
}

static void test_first_error_parse(void **state)
{
	char *where = NULL, *e;

	(void)state;
	e = build_first_error("  CC      fs/a.o\n/src/linux/fs/fs-writeback.c:853:9: error: implicit declaration of function 'x'\n"
			      "/src/linux/fs/b.c:1:1: error: later\nmake[2]: *** [x] Error 1\n",
			      "/src/linux/", &where);
	assert_string_equal(e, "fs/fs-writeback.c:853:9: error: implicit declaration of function 'x'");
	assert_string_equal(where, "fs/fs-writeback.c:853");
	free(e);
	free(where);
	e = build_first_error("ld: vmlinux.o: in function `f':\nld: a.c:(.text+0x1): undefined reference to `g'\n",
			      NULL, &where);
	assert_non_null(strstr(e, "undefined reference to `g'"));
	assert_null(where);
	free(e);
	e = build_first_error("make[1]: *** [Makefile:1] Error 2\n", NULL, &where);
	assert_string_equal(e, "make[1]: *** [Makefile:1] Error 2");
	free(e);
	assert_null(build_first_error("all good\n", NULL, &where));
}

/* --distcc: the make step gets CCACHE_PREFIX=distcc and DISTCC_HOSTS, -j
 * sized to the farm, and the kernels row records the hosts; a build that
 * did not ask gets neither, whatever the caller's environment holds. The
 * host does not answer (port 1): distcc compiles here instead (its
 * fallback), so this needs distcc installed but no distccd; the real farm
 * is tests/integration/t_build_distcc.sh. */
static void test_build_distcc(void **state)
{
	struct fx *fx = *state;
	const char *frags[] = { fx->frag };
	struct build_spec spec = { .home = fx->home, .base_hex = fx->base, .fragments = frags,
				   .nfragments = 1, .label = "base", .distcc = "127.0.0.1:1/3" };
	struct build_result res;
	char *envf, *env = NULL, *log = NULL, *want_j;
	char *dd = xasprintf("%s/distcc-dir", fx->td.path);

	assert_int_equal(mkdir_p(dd, 0755), 0);
	setenv("DISTCC_DIR", dd, 1);
	setenv("DISTCC_HOSTS", "caller.invalid", 1);    /* the caller's, replaced */
	assert_int_equal(build_kernel(&res, fx->r, fx->db, fx->base, &spec, &gitmsg), 0);
	if (!res.ok)
		fail_msg("build: %s", res.error);
	assert_string_equal(res.kernel.distcc_hosts, "127.0.0.1:1/3");
	envf = xasprintf("%s/.fake-env", res.build_dir);
	assert_int_equal(read_file(&env, NULL, envf, 1 << 16), 0);
	assert_non_null(strstr(env, "DISTCC_HOSTS=127.0.0.1:1/3\n"));
	if (access("/usr/bin/ccache", X_OK) == 0)
		assert_non_null(strstr(env, "CCACHE_PREFIX=distcc\n"));
	assert_int_equal(read_file(&log, NULL, res.kernel.build_log_path, 1 << 20), 0);
	want_j = xasprintf(" -j%ld ", sysconf(_SC_NPROCESSORS_ONLN) + 3);
	assert_non_null(strstr(log, want_j));
	assert_non_null(strstr(log, "DISTCC_HOSTS='127.0.0.1:1/3'"));
	free(env);
	free(log);
	build_result_release(&res);

	/* no --distcc: neither variable reaches make, the row says none */
	setenv("CCACHE_PREFIX", "distcc", 1);
	char *v = patch_commit(fx, "src/mm.c", 60, "int v60 = 60;", "int v61 = 61;");
	spec.distcc = NULL;
	spec.jobs = 1;
	assert_int_equal(build_kernel(&res, fx->r, fx->db, v, &spec, &gitmsg), 0);
	unsetenv("CCACHE_PREFIX");
	unsetenv("DISTCC_HOSTS");
	unsetenv("DISTCC_DIR");
	assert_true(res.ok);
	assert_false(res.cache_hit);
	assert_null(res.kernel.distcc_hosts);
	assert_int_equal(read_file(&env, NULL, envf, 1 << 16), 0);
	assert_null(strstr(env, "DISTCC_HOSTS="));
	assert_null(strstr(env, "CCACHE_PREFIX="));
	free(env);
	build_result_release(&res);
	/* an empty list is refused before anything runs */
	spec.distcc = " ";
	buf_reset(&gitmsg);
	assert_int_equal(build_kernel(&res, fx->r, fx->db, fx->base, &spec, &gitmsg), -EINVAL);
	assert_non_null(strstr(buf_str(&gitmsg), "--distcc"));
	build_result_release(&res);
	free(v);
	free(envf);
	free(want_j);
	free(dd);
}

/* make -j for a farm: local CPUs plus each host's limit (distcc(1): 4 a
 * host, 2 for localhost, or HOST/LIMIT); options and ",opts" skipped. */
static void test_distcc_jobs(void **state)
{
	(void)state;
	assert_int_equal(build_distcc_jobs("127.0.0.1:18410", 2), 6);
	assert_int_equal(build_distcc_jobs("a/8 b:3632/3 localhost", 2), 2 + 8 + 3 + 2);
	assert_int_equal(build_distcc_jobs("--randomize a,lzo b/6,cpp,lzo", 4), 4 + 4 + 6);
	assert_int_equal(build_distcc_jobs("", 2), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_build_cache_and_reuse, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_build_failure_shows_first_error, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_missing_option_is_named, fx_setup, fx_teardown),
		cmocka_unit_test(test_first_error_parse),
		cmocka_unit_test_setup_teardown(test_build_distcc, fx_setup, fx_teardown),
		cmocka_unit_test(test_distcc_jobs),
	};
	return cmocka_run_group_tests_name("build", tests, NULL, NULL);
}
