/* test_variant_build.c - the build service on real parts: a fake kernel
 * tree (fakekernel.h) imported into a git repository, mailed patches, a
 * sqlite store. Outcomes are results (apply-failed naming the patch and
 * hunk, build-failed with the first error and the log), a second build is
 * a cache hit, what could not be attempted is an error (and a failed
 * variant for a job), a spec stored by the old writer still builds, and a
 * prebuilt image gets its kernels row. */
#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "store/db.h"
#include "store/db_runs.h"
#include "store/db_compare.h"
#include "store/db_internal.h"
#include "wrap/git.h"
#include "kernel/series.h"
#include "kernel/tree_import.h"
#include "util.h"
#include "kernel/variant.h"
#include "kernel/variant_build.h"
#include "testutil.h"
#include "fakekernel.h"

/* git.h's message of the last failed call (error.h) */
static struct buf gitmsg = BUF_INIT;

struct fx {
	struct tmpdir td;
	struct db *db;
	struct variant_build *vb;
	char base[KC_OID_HEX];
	char *repo, *home, *frag;
	const char *frags[1];
};

static int fx_setup(void **state)
{
	struct tmpdir *td;
	struct fx *fx;
	struct import_result ir;
	struct repo *r = NULL;
	char *tb, *dbp;

	if (tmpdir_setup((void **)&td))
		return -1;
	fx = calloc(1, sizeof(*fx));
	fx->td = *td;
	free(td);
	fx->repo = xasprintf("%s/linux", fx->td.path);
	fx->home = xasprintf("%s/home", fx->td.path);
	dbp = xasprintf("%s/kcanary.db", fx->home);
	tb = fk_tarball(fx->td.path, "3", NULL);
	if (repo_open(&r, fx->repo, true, &gitmsg) || tree_import_tarball(r, &ir, tb, "v1.2.3", NULL) ||
	    db_open(&fx->db, dbp, NULL))
		return -1;
	repo_close(r);
	memcpy(fx->base, ir.commit, KC_OID_HEX);
	fx->frag = xasprintf("%s/guest.config", fx->td.path);
	fk_write(fx->td.path, "guest.config", "CONFIG_GUEST=y\n");
	fx->frags[0] = fx->frag;
	fx->vb = variant_build_new(fx->db, &(struct variant_build_opts){
		.tree = fx->repo, .home = fx->home, .fragments = fx->frags, .nfragments = 1,
		.no_default_fragments = true, .jobs = 1 });
	free(tb);
	free(dbp);
	*state = fx;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *fx = *state;
	struct tmpdir *td = malloc(sizeof(*td));

	variant_build_free(fx->vb);
	db_close(fx->db);
	free(fx->repo);
	free(fx->home);
	free(fx->frag);
	*td = fx->td;
	free(fx);
	return tmpdir_teardown((void **)&td);
}

/* A format-patch mail changing src/mm.c line 30 from old to new_line;
 * returns its path (caller frees). */
static char *mail(struct fx *fx, const char *file, const char *subject, const char *old,
		  const char *new_line)
{
	char *text = xasprintf(
		"From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001\n"
		"From: Dev One <dev1@example.org>\n"
		"Date: Tue, 14 Nov 2023 22:13:20 +0100\n"
		"Subject: [PATCH] %s\n\n"
		"Signed-off-by: Dev One <dev1@example.org>\n"
		"---\n"
		"diff --git a/src/mm.c b/src/mm.c\n"
		"--- a/src/mm.c\n"
		"+++ b/src/mm.c\n"
		"@@ -29,3 +29,3 @@\n"
		" int v29 = 29;\n"
		"-%s\n"
		"+%s\n"
		" int v31 = 31;\n"
		"-- \n2.43.0\n", subject, old, new_line);
	char *path = xasprintf("%s/%s", fx->td.path, file);

	fk_write(fx->td.path, file, text);
	free(text);
	return path;
}

static struct variant series_variant(const char *name, const char *path, const char *subset)
{
	return (struct variant){ .kind = VARIANT_SERIES, .name = xstrdup(name),
				 .base = xstrdup("v1.2.3"), .series = xstrdup(path),
				 .patches = subset ? xstrdup(subset) : NULL };
}

static int64_t q_int(struct db *db, const char *sql, int64_t id)
{
	char arg[32];
	int64_t v = -1;

	snprintf(arg, sizeof(arg), "%lld", (long long)id);
	if (db_query_int64(db, &v, sql, arg, NULL))
		fail_msg("query failed: %s", sql);
	return v;
}

static void test_base_builds_then_is_cached(void **state)
{
	struct fx *fx = *state;
	struct variant v = { .kind = VARIANT_BASE, .name = xstrdup("base"), .base = xstrdup("v1.2.3") };
	struct variant_build_result res, again;
	struct buf err = BUF_INIT;

	assert_int_equal(variant_build_kernel(fx->vb, &res, &v, NULL, &err), 0);
	if (res.status != VARIANT_BUILD_OK)
		fail_msg("build: %s", res.reason);
	assert_string_equal(res.commit, fx->base);
	assert_false(res.cache_hit);
	assert_true(res.kernel_id > 0);
	assert_true(res.build_s >= 0);
	assert_null(res.reason);
	assert_int_equal(access(res.image_path, R_OK), 0);
	assert_int_equal(access(res.build_log_path, R_OK), 0);

	assert_int_equal(variant_build_kernel(fx->vb, &again, &v, NULL, &err), 0);
	assert_int_equal(again.status, VARIANT_BUILD_OK);
	assert_true(again.cache_hit);
	assert_int_equal(again.kernel_id, res.kernel_id);
	assert_string_equal(again.image_path, res.image_path);
	assert_true(again.cpu_s == 0);
	assert_int_equal(q_int(fx->db, "SELECT count(*) FROM kernels WHERE id = ?", res.kernel_id), 1);
	variant_build_result_release(&res);
	variant_build_result_release(&again);
	variant_release(&v);
	buf_release(&err);
}

static void test_patch_that_does_not_apply_is_an_outcome(void **state)
{
	struct fx *fx = *state;
	char *path = mail(fx, "noapply.patch", "mm: v30 is 40", "int v30 = 31;", "int v30 = 40;");
	struct variant v = series_variant("+ noapply", path, NULL);
	struct variant_build_result res;
	struct buf err = BUF_INIT;
	int64_t job, vid;

	assert_int_equal(variant_build_kernel(fx->vb, &res, &v, NULL, &err), 0);
	assert_int_equal(res.status, VARIANT_BUILD_APPLY_FAILED);
	assert_string_equal(variant_build_status_name(res.status), "apply-failed");
	if (!strstr(res.reason, "cannot apply patch 1/1 'mm: v30 is 40': src/mm.c hunk"))
		fail_msg("reason: %s", res.reason);
	assert_non_null(strstr(res.reason, "@@ -29,3 +29,3 @@"));
	assert_string_equal(res.commit, fx->base);      /* nothing applied */
	assert_int_equal(res.kernel_id, 0);
	assert_null(res.image_path);
	assert_int_equal(err.len, 0);                   /* an outcome, not an error */
	variant_build_result_release(&res);

	/* for a job: stored on the variants row, no commit, no kernel */
	assert_int_equal(db_job_create(fx->db, &job, "t", "compare", NULL, NULL), 0);
	assert_int_equal(db_variant_get(fx->db, &vid, job, v.name, NULL), 0);
	assert_int_equal(variant_build_for_job(fx->vb, &res, vid, &v, NULL, &err), 0);
	assert_int_equal(res.status, VARIANT_BUILD_APPLY_FAILED);
	assert_int_equal(q_int(fx->db, "SELECT count(*) FROM variants WHERE id = ? AND status ="
			       " 'apply-failed' AND commit_oid IS NULL AND kernel_id IS NULL AND"
			       " error LIKE 'cannot apply patch 1/1%src/mm.c hunk%'", vid), 1);
	variant_build_result_release(&res);
	variant_release(&v);
	free(path);
	buf_release(&err);
}

static void test_series_builds_and_build_failure(void **state)
{
	struct fx *fx = *state;
	char *good = mail(fx, "good.patch", "mm: v30 bigger", "int v30 = 30;", "int v30 = 300;");
	char *bad = mail(fx, "bad.patch", "mm: break it", "int v30 = 30;", "#error broken on purpose");
	struct variant vg = series_variant("+ good", good, NULL), vbad = series_variant("+ bad", bad, NULL);
	struct variant_build_result res;
	struct buf err = BUF_INIT;
	char *log = NULL;
	int64_t job, vid;

	assert_int_equal(variant_build_kernel(fx->vb, &res, &vg, NULL, &err), 0);
	if (res.status != VARIANT_BUILD_OK)
		fail_msg("build: %s", res.reason);
	assert_string_not_equal(res.commit, fx->base);
	assert_false(res.cache_hit);
	variant_build_result_release(&res);

	assert_int_equal(db_job_create(fx->db, &job, "t", "compare", NULL, NULL), 0);
	assert_int_equal(db_variant_get(fx->db, &vid, job, vbad.name, NULL), 0);
	assert_int_equal(variant_build_for_job(fx->vb, &res, vid, &vbad, NULL, &err), 0);
	assert_int_equal(res.status, VARIANT_BUILD_BUILD_FAILED);
	if (!strstr(res.reason, "src/mm.c:30:2: error: #error broken on purpose (log: "))
		fail_msg("reason: %s", res.reason);
	assert_non_null(res.build_log_path);
	assert_non_null(strstr(res.reason, res.build_log_path));
	assert_int_equal(read_file(&log, NULL, res.build_log_path, 1 << 20), 0);
	assert_non_null(strstr(log, "broken on purpose"));
	assert_true(res.kernel_id > 0);                 /* the failed build's row, with its log */
	assert_true(res.build_s > 0);
	/* the row: build-failed, the commit that failed, its kernels row */
	assert_int_equal(q_int(fx->db, "SELECT count(*) FROM variants v JOIN kernels k ON"
			       " k.id = v.kernel_id WHERE v.id = ? AND v.status = 'build-failed' AND"
			       " k.build_status = 'failed' AND length(v.commit_oid) = 40", vid), 1);
	variant_build_result_release(&res);
	free(log);
	variant_release(&vg);
	variant_release(&vbad);
	free(good);
	free(bad);
	buf_release(&err);
}

static void test_what_cannot_be_attempted_is_an_error(void **state)
{
	struct fx *fx = *state;
	struct variant v = { .kind = VARIANT_BASE, .name = xstrdup("base (v9.9)"), .base = xstrdup("v9.9") };
	struct variant_build_result res;
	struct variant_build *notree;
	struct buf err = BUF_INIT;
	int64_t job, vid;

	assert_int_equal(variant_build_kernel(fx->vb, &res, &v, NULL, &err), -ENOENT);
	assert_non_null(strstr(buf_str(&err), "'v9.9'"));
	buf_reset(&err);
	/* a mail file that is not there */
	struct variant vm = series_variant("+ gone", "/nonexistent/x.mbox", NULL);
	assert_true(variant_build_kernel(fx->vb, &res, &vm, NULL, &err) < 0);
	assert_non_null(strstr(buf_str(&err), "/nonexistent/x.mbox"));
	buf_reset(&err);
	/* no tree at all */
	notree = variant_build_new(fx->db, &(struct variant_build_opts){ .home = fx->home });
	assert_int_equal(variant_build_kernel(notree, &res, &v, NULL, &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "no kernel tree"));
	variant_build_free(notree);
	buf_reset(&err);

	/* for a job, a failed variant all the same: stored, and the caller goes on */
	assert_int_equal(db_job_create(fx->db, &job, "t", "compare", NULL, NULL), 0);
	assert_int_equal(db_variant_get(fx->db, &vid, job, v.name, NULL), 0);
	assert_int_equal(variant_build_for_job(fx->vb, &res, vid, &v, NULL, &err), 0);
	assert_int_equal(res.status, VARIANT_BUILD_BUILD_FAILED);
	assert_non_null(strstr(res.reason, "'v9.9'"));
	assert_int_equal(err.len, 0);
	assert_int_equal(q_int(fx->db, "SELECT count(*) FROM variants WHERE id = ? AND status ="
			       " 'build-failed' AND error LIKE '%v9.9%'", vid), 1);
	variant_build_result_release(&res);
	variant_release(&v);
	variant_release(&vm);
	buf_release(&err);
}

/* A compare job stored by the old writer (job_store's json_pack, nulls
 * and all) builds from its stored spec. */
static void test_old_stored_spec_still_builds(void **state)
{
	struct fx *fx = *state;
	char *good = mail(fx, "good.patch", "mm: v30 bigger", "int v30 = 30;", "int v30 = 300;");
	json_t *o = json_pack("{s:s,s:s?,s:s?,s:s?,s:s?,s:[]}", "kind", "series", "base", "v1.2.3",
			      "series", good, "patches", NULL, "kernel", NULL, "config");
	char *old = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	struct db_variant_row *rows = NULL;
	struct variant_build_result res;
	struct buf err = BUF_INIT;
	struct variant v;
	size_t n = 0;
	int64_t job, vid;

	assert_int_equal(db_job_create(fx->db, &job, "old", "compare", NULL, NULL), 0);
	assert_int_equal(db_variant_get(fx->db, &vid, job, "+ v1", NULL), 0);
	assert_int_equal(db_variant_set_spec(fx->db, vid, "v1.2.3", NULL, old, NULL), 0);
	assert_int_equal(db_job_variants(fx->db, job, &rows, &n, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(variant_from_json(&v, rows[0].name, rows[0].spec_json, &err), 0);
	assert_int_equal(variant_build_for_job(fx->vb, &res, vid, &v, NULL, &err), 0);
	if (res.status != VARIANT_BUILD_OK)
		fail_msg("build: %s", res.reason);
	assert_int_equal(q_int(fx->db, "SELECT count(*) FROM variants WHERE id = ? AND status = 'ok'"
			       " AND kernel_id IS NOT NULL AND base_rev = 'v1.2.3'", vid), 1);
	variant_build_result_release(&res);
	variant_release(&v);
	db_variant_rows_free(rows, n);
	json_decref(o);
	free(old);
	free(good);
	buf_release(&err);
}

/* series apply's step: resolve, read the mail, apply; a subset the
 * revision does not have is an error naming it. */
static void test_apply_step(void **state)
{
	struct fx *fx = *state;
	char *good = mail(fx, "good.patch", "mm: v30 bigger", "int v30 = 30;", "int v30 = 300;");
	char *paths[] = { good };
	struct series **revs = NULL;
	struct apply_result ar;
	struct buf err = BUF_INIT;
	char base[KC_OID_HEX];
	size_t n = 0;

	assert_int_equal(variant_build_resolve(fx->vb, base, "v1.2.3", &err), 0);
	assert_string_equal(base, fx->base);
	assert_int_equal(variant_build_load_series(fx->vb, &revs, &n, paths, 1, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(variant_build_apply(fx->vb, &ar, base, revs[0], NULL, &err), 0);
	assert_int_equal(ar.napplied, 1);
	assert_string_equal(ar.branch, "kcanary/mm-v30-bigger/v1");
	apply_result_release(&ar);
	assert_int_equal(variant_build_apply(fx->vb, &ar, base, revs[0], "3", &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "3"));
	apply_result_release(&ar);
	series_free_all(revs, n);
	free(good);
	buf_release(&err);
}

/* kcanary build's job: the base and a revision already read, stored. */
static void test_adhoc_job(void **state)
{
	struct fx *fx = *state;
	char *bad = mail(fx, "noapply.patch", "mm: v30 is 40", "int v30 = 31;", "int v30 = 40;");
	char *paths[] = { bad };
	struct series **revs = NULL;
	struct variant_build_item items[2] = { 0 };
	struct buf err = BUF_INIT;
	size_t n = 0;
	int64_t job = 0;

	assert_int_equal(variant_build_load_series(fx->vb, &revs, &n, paths, 1, &err), 0);
	items[0].v = (struct variant){ .kind = VARIANT_BASE, .name = xstrdup("base"),
				       .base = xstrdup("v1.2.3") };
	items[1].v = (struct variant){ .kind = VARIANT_SERIES, .name = xstrdup("mm v1"),
				       .base = xstrdup("v1.2.3") };
	items[1].rev = revs[0];
	assert_int_equal(variant_build_adhoc(fx->vb, &job, "build v1.2.3", items, 2, &err), 0);
	assert_int_equal(items[0].res.status, VARIANT_BUILD_OK);
	assert_int_equal(items[1].res.status, VARIANT_BUILD_APPLY_FAILED);
	assert_int_equal(q_int(fx->db, "SELECT count(*) FROM jobs WHERE id = ? AND kind = 'adhoc'"
			       " AND status = 'failed'", job), 1);
	assert_int_equal(q_int(fx->db, "SELECT count(*) FROM variants WHERE job_id = ?", job), 2);
	for (int i = 0; i < 2; i++) {
		variant_release(&items[i].v);
		variant_build_result_release(&items[i].res);
	}
	series_free_all(revs, n);
	free(bad);
	buf_release(&err);
}

/* A bzImage-shaped file: "HdrS" at 0x202, the version string's offset
 * (minus 0x200) at 0x20e (Documentation/arch/x86/boot.rst). */
static char *fake_bzimage(struct fx *fx, const char *release)
{
	char *path = xasprintf("%s/bzImage-%s", fx->td.path, release);
	unsigned char img[0x400] = { 0 };
	FILE *f = fopen(path, "w");

	memcpy(img + 0x202, "HdrS", 4);
	img[0x20e] = 0x00;
	img[0x20f] = 0x01;                              /* 0x100 + 0x200 = 0x300 */
	snprintf((char *)img + 0x300, 64, "%s (kcanary@test) #1", release);
	assert_non_null(f);
	assert_int_equal(fwrite(img, 1, sizeof(img), f), sizeof(img));
	fclose(f);
	return path;
}

static void test_prebuilt_image(void **state)
{
	struct fx *fx = *state;
	char *img = fake_bzimage(fx, "1.2.3-kctest");
	struct variant v = { .kind = VARIANT_PREBUILT, .name = xstrdup("1.2.3"), .kernel = xstrdup(img) };
	struct variant_build_result res, again;
	struct buf err = BUF_INIT;
	int64_t id = 0;

	assert_int_equal(variant_build_kernel(fx->vb, &res, &v, NULL, &err), 0);
	assert_int_equal(res.status, VARIANT_BUILD_OK);
	assert_true(res.kernel_id > 0);
	assert_string_equal(res.image_path, img);
	assert_int_equal(variant_build_kernel(fx->vb, &again, &v, NULL, &err), 0);
	assert_int_equal(again.kernel_id, res.kernel_id);
	assert_int_equal(q_int(fx->db, "SELECT count(*) FROM kernels WHERE id = ? AND source ="
			       " 'prebuilt' AND release = '1.2.3-kctest'", res.kernel_id), 1);
	/* not a bzImage: an error that says so */
	assert_int_equal(variant_prebuilt_kernel(fx->db, fx->frag, &id, &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "is not a bzImage"));
	variant_build_result_release(&res);
	variant_build_result_release(&again);
	variant_release(&v);
	free(img);
	buf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_base_builds_then_is_cached, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_patch_that_does_not_apply_is_an_outcome, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_series_builds_and_build_failure, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_what_cannot_be_attempted_is_an_error, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_old_stored_spec_still_builds, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_apply_step, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_adhoc_job, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_prebuilt_image, fx_setup, fx_teardown),
	};
	return cmocka_run_group_tests_name("variant_build", tests, NULL, NULL);
}
