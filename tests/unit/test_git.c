/* test_git.c - trees (resolve, branches) and applying mailed patches, on
 * a small repository made from a fake kernel tarball (its import is
 * test_tree_import.c's). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "kernel/apply.h"
#include "error.h"
#include "wrap/git.h"
#include "kernel/tree_import.h"
#include "util.h"
#include "testutil.h"
#include "fakekernel.h"

/* git.h's message of the last failed call (error.h) */
static struct buf gitmsg = BUF_INIT;

/* The fixture: a repo with release 1.2.3 imported (tag v1.2.3). */
struct fx {
	struct tmpdir td;
	struct repo *r;
	char base[KC_OID_HEX];
	char *repo_path;
};

static int fx_setup(void **state)
{
	struct tmpdir *td;
	struct fx *fx;
	struct import_result ir;
	struct buf err = BUF_INIT;
	char *tb;

	if (tmpdir_setup((void **)&td))
		return -1;
	fx = calloc(1, sizeof(*fx));
	fx->td = *td;
	free(td);
	fx->repo_path = xasprintf("%s/linux", fx->td.path);
	tb = fk_tarball(fx->td.path, "3", NULL);
	if (repo_open(&fx->r, fx->repo_path, true, &gitmsg)) {
		fprintf(stderr, "fixture: %s\n", buf_str(&gitmsg));
		return -1;
	}
	if (tree_import_tarball(fx->r, &ir, tb, NULL, &err)) {
		fprintf(stderr, "fixture: %s\n", err_text(&err));
		return -1;
	}
	memcpy(fx->base, ir.commit, KC_OID_HEX);
	free(tb);
	*state = fx;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *fx = *state;
	struct tmpdir *td = malloc(sizeof(*td));

	repo_close(fx->r);
	free(fx->repo_path);
	*td = fx->td;
	free(fx);
	return tmpdir_teardown((void **)&td);
}

static void test_resolve(void **state)
{
	struct fx *fx = *state;
	char c[KC_OID_HEX], prefix[8];

	assert_int_equal(repo_branch_set(fx->r, "topic", fx->base, &gitmsg), 0);
	assert_int_equal(repo_resolve(fx->r, c, "topic", &gitmsg), 0);
	assert_string_equal(c, fx->base);
	snprintf(prefix, sizeof(prefix), "%.7s", fx->base);
	assert_int_equal(repo_resolve(fx->r, c, prefix, &gitmsg), 0);
	assert_string_equal(c, fx->base);

	assert_int_equal(repo_resolve(fx->r, c, "v9.9", &gitmsg), -ENOENT);
	assert_non_null(strstr(buf_str(&gitmsg), "unknown revision 'v9.9'"));

	/* a name that is both a tag and a branch, at different commits */
	struct apply_patch p = { 1, 1, "mm: change v10", "Dev One", "dev1@example.org",
		1700000000, 60, "mm: change v10\n\nBody.\n",
		"diff --git a/src/mm.c b/src/mm.c\n--- a/src/mm.c\n+++ b/src/mm.c\n"
		"@@ -9,3 +9,3 @@\n int v9 = 9;\n-int v10 = 10;\n+int v10 = 100;\n int v11 = 11;\n", NULL };
	char other[KC_OID_HEX];
	assert_int_equal(repo_apply_patch(fx->r, other, fx->base, &p, NULL, &gitmsg), 0);
	assert_int_equal(repo_branch_set(fx->r, "v1.2.3", other, &gitmsg), 0);
	assert_int_equal(repo_resolve(fx->r, c, "v1.2.3", &gitmsg), -EINVAL);
	assert_non_null(strstr(buf_str(&gitmsg), "ambiguous"));

	/* an abbreviated id matching two objects: two blobs whose ids share 4
	 * hex digits, found by hashing, committed in one tree */
	char h1[KC_OID_HEX], h2[KC_OID_HEX];
	static char (*tab)[12];
	tab = calloc(65536, sizeof(*tab));
	int a = -1, b = -1;
	for (int i = 0; i < 100000 && a < 0; i++) {
		char txt[12];
		snprintf(txt, sizeof(txt), "x%d\n", i);
		assert_int_equal(kc_hash_buf(h1, txt, strlen(txt), &gitmsg), 0);
		unsigned key = (unsigned)strtoul((char[5]){ h1[0], h1[1], h1[2], h1[3], 0 }, NULL, 16);
		if (tab[key][0]) {
			a = atoi(tab[key] + 1);
			b = i;
		} else {
			snprintf(tab[key], 12, "x%d", i);
		}
	}
	assert_true(a >= 0);
	struct buf diff = BUF_INIT;
	buf_printf(&diff, "diff --git a/c1 b/c1\nnew file mode 100644\n--- /dev/null\n+++ b/c1\n@@ -0,0 +1 @@\n+x%d\n", a);
	buf_printf(&diff, "diff --git a/c2 b/c2\nnew file mode 100644\n--- /dev/null\n+++ b/c2\n@@ -0,0 +1 @@\n+x%d\n", b);
	struct apply_patch p2 = { 1, 1, "two blobs", "Dev One", "dev1@example.org", 1700000000, 0,
				  "two blobs\n", buf_str(&diff), NULL };
	assert_int_equal(repo_apply_patch(fx->r, other, fx->base, &p2, NULL, &gitmsg), 0);
	/* new files already there: the reverse (a deletion) applies */
	char again[KC_OID_HEX];
	assert_int_equal(repo_apply_patch(fx->r, again, other, &p2, NULL, &gitmsg), -EALREADY);
	/* creating a file that exists with other content: refused by name */
	struct apply_patch p3 = p2;
	struct apply_failure f3;
	p3.diff = "diff --git a/src/main.c b/src/main.c\nnew file mode 100644\n--- /dev/null\n"
		  "+++ b/src/main.c\n@@ -0,0 +1 @@\n+int other;\n";
	assert_int_equal(repo_apply_patch(fx->r, again, fx->base, &p3, &f3, &gitmsg), -ENOEXEC);
	assert_string_equal(f3.file, "src/main.c");
	assert_non_null(strstr(buf_str(&gitmsg), "src/main.c already exists"));
	/* deleting a file: only when its content is what the patch removes */
	p3.diff = "diff --git a/src/main.c b/src/main.c\ndeleted file mode 100644\n--- a/src/main.c\n"
		  "+++ /dev/null\n@@ -1 +0,0 @@\n-int other;\n";
	assert_int_equal(repo_apply_patch(fx->r, again, fx->base, &p3, &f3, &gitmsg), -ENOEXEC);
	assert_non_null(strstr(buf_str(&gitmsg), "src/main.c to delete"));
	p3.diff = "diff --git a/src/main.c b/src/main.c\ndeleted file mode 100644\n--- a/src/main.c\n"
		  "+++ /dev/null\n@@ -1 +0,0 @@\n-int main_v = 1;\n";
	assert_int_equal(repo_apply_patch(fx->r, again, fx->base, &p3, &f3, &gitmsg), 0);
	assert_int_equal(repo_resolve(fx->r, c, again, &gitmsg), 0);
	char *spec = xasprintf("%s:src/main.c", again);
	assert_int_equal(repo_resolve(fx->r, c, spec, &gitmsg), -ENOENT);
	free(spec);
	char txt[12];
	snprintf(txt, sizeof(txt), "x%d\n", a);
	kc_hash_buf(h2, txt, strlen(txt), &gitmsg);
	snprintf(prefix, sizeof(prefix), "%.4s", h2);
	assert_int_equal(repo_resolve(fx->r, c, prefix, &gitmsg), -EINVAL);
	assert_non_null(strstr(buf_str(&gitmsg), "ambiguous"));
	buf_release(&diff);
	free(tab);
}

/* A hunk changing v10, with context v7..v13, its header placed at line
 * `at` (7 = where it belongs) and context line v8 replaced by ctx8. */
static char *mm_patch(int at, const char *ctx8, const char *newv10)
{
	return xasprintf("diff --git a/src/mm.c b/src/mm.c\n"
			 "index 3b18e51..a9c3f2e 100644\n"
			 "--- a/src/mm.c\n+++ b/src/mm.c\n"
			 "@@ -%d,7 +%d,7 @@ int v6 = 6;\n"
			 " int v7 = 7;\n %s\n int v9 = 9;\n-int v10 = 10;\n+%s\n"
			 " int v11 = 11;\n int v12 = 12;\n int v13 = 13;\n"
			 "-- \n2.43.0\n", at, at, ctx8, newv10);
}

static void test_apply_commit(void **state)
{
	struct fx *fx = *state;
	char *d = mm_patch(7, "int v8 = 8;", "int v10 = 100;");
	struct apply_patch p = { 1, 3, "mm: make v10 bigger", "Karel Novák", "dev17@example.org",
		1700000000, -300, "Longer explanation.\n\nSigned-off-by: Karel Novák <dev17@example.org>\n", d, NULL };
	char c1[KC_OID_HEX], c2[KC_OID_HEX], par[KC_OID_HEX], *author = NULL, *msg = NULL;
	int64_t t = 0;
	int tz = 0;

	assert_int_equal(repo_apply_patch(fx->r, c1, fx->base, &p, NULL, &gitmsg), 0);
	assert_int_equal(repo_commit_parent(fx->r, par, c1, &gitmsg), 0);
	assert_string_equal(par, fx->base);
	assert_int_equal(repo_commit_info(fx->r, c1, &author, &t, &tz, &msg, &gitmsg), 0);
	assert_string_equal(author, "Karel Novák <dev17@example.org>");
	assert_int_equal(t, 1700000000);
	assert_int_equal(tz, -300);
	assert_string_equal(msg, "mm: make v10 bigger\n\nLonger explanation.\n\n"
			    "Signed-off-by: Karel Novák <dev17@example.org>\n");
	/* the same patch on the same parent is the same commit */
	assert_int_equal(repo_apply_patch(fx->r, c2, fx->base, &p, NULL, &gitmsg), 0);
	assert_string_equal(c1, c2);
	/* the patch is in c1 now: reverse-applies, so "already applied" */
	assert_int_equal(repo_apply_patch(fx->r, c2, c1, &p, NULL, &gitmsg), -EALREADY);
	assert_string_equal(c2, c1);
	assert_non_null(strstr(buf_str(&gitmsg), "already applied"));
	/* checkout writes the change into the work tree */
	assert_int_equal(repo_checkout(fx->r, c1, &gitmsg), 0);
	char *path = xasprintf("%s/src/mm.c", fx->repo_path), *text = NULL;
	assert_int_equal(read_file(&text, NULL, path, 1 << 20), 0);
	assert_non_null(strstr(text, "int v10 = 100;\n"));
	free(text);
	free(path);
	free(author);
	free(msg);
	free(d);
}

static void test_apply_offset_but_no_fuzz(void **state)
{
	struct fx *fx = *state;
	char c[KC_OID_HEX];
	struct apply_failure f;
	char *off = mm_patch(27, "int v8 = 8;", "int v10 = 100;");
	char *fuzz = mm_patch(7, "int v8 = 88;", "int v10 = 100;");
	struct apply_patch p = { 2, 3, "mm: moved hunk", "Dev One", "dev1@example.org",
				 1700000000, 0, "moved", off, NULL };

	/* header says line 27, the text is at line 7: an offset, applies */
	assert_int_equal(repo_apply_patch(fx->r, c, fx->base, &p, NULL, &gitmsg), 0);
	/* and the other way: header says line 3 (libgit2 alone tries only the
	 * header's line; git.c finds the nearest exact match, as git am does) */
	char *off2 = mm_patch(3, "int v8 = 8;", "int v10 = 100;");
	char c2[KC_OID_HEX];
	p.diff = off2;
	assert_int_equal(repo_apply_patch(fx->r, c2, fx->base, &p, NULL, &gitmsg), 0);
	assert_string_equal(c2, c);
	free(off2);
	/* one context line differs: git would need fuzz; must fail, and say
	 * which patch, file and hunk */
	p.diff = fuzz;
	p.subject = "mm: needs fuzz";
	assert_int_equal(repo_apply_patch(fx->r, c, fx->base, &p, &f, &gitmsg), -ENOEXEC);
	assert_string_equal(f.file, "src/mm.c");
	assert_string_equal(f.hunk, "@@ -7,7 +7,7 @@ int v6 = 6;");
	assert_int_equal(f.hunk_no, 1);
	const char *m = buf_str(&gitmsg);
	assert_non_null(strstr(m, "2/3 'mm: needs fuzz'"));
	assert_non_null(strstr(m, "src/mm.c"));
	assert_non_null(strstr(m, "@@ -7,7 +7,7 @@"));
	/* a missing file is named too */
	p.diff = "diff --git a/src/gone.c b/src/gone.c\n--- a/src/gone.c\n+++ b/src/gone.c\n"
		 "@@ -1 +1 @@\n-a\n+b\n";
	assert_int_equal(repo_apply_patch(fx->r, c, fx->base, &p, &f, &gitmsg), -ENOEXEC);
	assert_string_equal(f.file, "src/gone.c");
	/* garbage in a hunk: corrupt patch */
	p.diff = "diff --git a/src/mm.c b/src/mm.c\n--- a/src/mm.c\n+++ b/src/mm.c\n"
		 "@@ -1,3 +1,3 @@\n int v1 = 1;\n-int v2 = 2;\n";
	assert_int_equal(repo_apply_patch(fx->r, c, fx->base, &p, &f, &gitmsg), -EBADMSG);
	assert_non_null(strstr(buf_str(&gitmsg), "corrupt patch 2/3"));
	assert_non_null(strstr(f.detail, "corrupt patch"));
	/* the parser found the diff damaged: refused with its reason */
	p.diff = off;
	p.corrupt = "corrupt patch at diff line 1: index line joined onto the diff line";
	assert_int_equal(repo_apply_patch(fx->r, c, fx->base, &p, &f, &gitmsg), -EBADMSG);
	assert_non_null(strstr(f.detail, "index line joined"));
	assert_non_null(strstr(buf_str(&gitmsg), "index line joined"));
	free(off);
	free(fuzz);
}

static void test_series_subset_and_failure(void **state)
{
	struct fx *fx = *state;
	/* 1/3 changes v10, 2/3 changes v30 (independent), 3/3 changes v10
	 * again and so needs 1/3's context */
	char *d1 = mm_patch(7, "int v8 = 8;", "int v10 = 100;");
	char *d2 = xasprintf("diff --git a/src/mm.c b/src/mm.c\n--- a/src/mm.c\n+++ b/src/mm.c\n"
			     "@@ -29,3 +29,3 @@\n int v29 = 29;\n-int v30 = 30;\n+int v30 = 300;\n int v31 = 31;\n");
	char *d3 = xasprintf("diff --git a/src/mm.c b/src/mm.c\n--- a/src/mm.c\n+++ b/src/mm.c\n"
			     "@@ -9,3 +9,3 @@ int v8 = 8;\n int v9 = 9;\n-int v10 = 100;\n+int v10 = 1000;\n int v11 = 11;\n");
	struct apply_patch ps[3] = {
		{ 1, 3, "mm: one", "Dev One", "dev1@example.org", 1700000000, 0, "one\n", d1, NULL },
		{ 2, 3, "mm: two", "Dev One", "dev1@example.org", 1700000060, 0, "two\n", d2, NULL },
		{ 3, 3, "mm: three", "Dev One", "dev1@example.org", 1700000120, 0, "three\n", d3, NULL },
	};
	struct apply_series s = { "mm cleanup", 6, 3, ps };
	struct apply_result res;
	char c[KC_OID_HEX], par[KC_OID_HEX];

	/* all three: three commits, branch kcanary/mm-cleanup/v6 */
	assert_int_equal(apply_series(&res, fx->r, fx->base, &s, NULL, &gitmsg), 0);
	assert_int_equal(res.napplied, 3);
	assert_string_equal(res.branch, "kcanary/mm-cleanup/v6");
	assert_int_equal(repo_resolve(fx->r, c, "kcanary/mm-cleanup/v6", &gitmsg), 0);
	assert_string_equal(c, res.tip);
	assert_int_equal(repo_resolve(fx->r, c, "kcanary/mm-cleanup/v6~3", &gitmsg), 0);
	assert_string_equal(c, fx->base);
	apply_result_release(&res);

	/* subset "2": one commit on the base */
	assert_int_equal(apply_series(&res, fx->r, fx->base, &s, "2", &gitmsg), 0);
	assert_int_equal(res.npatches, 1);
	assert_int_equal(res.patches[0].k, 2);
	assert_string_equal(res.branch, "kcanary/mm-cleanup/v6-p2");
	assert_int_equal(repo_commit_parent(fx->r, par, res.tip, &gitmsg), 0);
	assert_string_equal(par, fx->base);
	apply_result_release(&res);

	/* subset "1-2" */
	assert_int_equal(apply_series(&res, fx->r, fx->base, &s, "1-2", &gitmsg), 0);
	assert_int_equal(res.napplied, 2);
	assert_int_equal(res.nfailed, 0);
	apply_result_release(&res);

	/* "2-3": 3/3 needs 1/3, so it fails; 2/3 still applied; no branch */
	assert_int_equal(apply_series(&res, fx->r, fx->base, &s, "2-3", &gitmsg), 0);
	assert_int_equal(res.napplied, 1);
	assert_int_equal(res.nfailed, 1);
	assert_int_equal(res.patches[1].outcome, APPLY_FAILED);
	assert_string_equal(res.patches[1].fail.file, "src/mm.c");
	assert_string_equal(res.patches[1].fail.hunk, "@@ -9,3 +9,3 @@ int v8 = 8;");
	assert_string_equal(res.branch, "");
	assert_non_null(strstr(res.error, "3/3 'mm: three'"));
	char *out = NULL;
	size_t outlen = 0;
	FILE *f = open_memstream(&out, &outlen);
	apply_result_print(f, &res);
	fclose(f);
	assert_non_null(strstr(out, "2/3 applied "));
	assert_non_null(strstr(out, "3/3 failed: src/mm.c hunk @@ -9,3 +9,3 @@ int v8 = 8;\n"));
	free(out);
	apply_result_release(&res);

	/* a subset outside 1..3 is refused by name */
	assert_int_equal(apply_series(&res, fx->r, fx->base, &s, "4", &gitmsg), -EINVAL);
	assert_non_null(strstr(buf_str(&gitmsg), "'4'"));
	apply_result_release(&res);
	free(d1);
	free(d2);
	free(d3);
}

static void test_range_parse(void **state)
{
	bool sel[6];
	struct buf err = BUF_INIT;

	(void)state;
	assert_int_equal(patch_range_parse(sel, 5, "2", &err), 0);
	assert_true(sel[2] && !sel[1] && !sel[3]);
	assert_int_equal(patch_range_parse(sel, 5, "1-2,5", &err), 0);
	assert_true(sel[1] && sel[2] && !sel[3] && !sel[4] && sel[5]);
	assert_int_equal(patch_range_parse(sel, 5, "3-", &err), 0);
	assert_true(!sel[2] && sel[3] && sel[5]);
	assert_int_equal(patch_range_parse(sel, 5, NULL, &err), 0);
	assert_true(sel[1] && sel[5] && !sel[0]);
	assert_int_equal(patch_range_parse(sel, 5, "0", &err), -EINVAL);
	assert_int_equal(patch_range_parse(sel, 5, "2-1", &err), -EINVAL);
	assert_int_equal(patch_range_parse(sel, 5, "x", &err), -EINVAL);
	assert_int_equal(patch_range_parse(sel, 5, "1,", &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "'1,'"));
	buf_release(&err);
}

/* --patches 1,3 and 1-3 are different subsets, so different branches;
 * the full set keeps the plain vN (#16: both were ".../v2-p1-3"). */
static void test_branch_names(void **state)
{
	struct apply_patch p[3] = { { .k = 1 }, { .k = 2 }, { .k = 3 } };
	struct apply_series s = { .name = "mm cleanup", .version = 2, .npatches = 3, .patches = p };
	char b[256];

	(void)state;
	apply_branch_name(b, sizeof(b), &s, "1,3");
	assert_string_equal(b, "kcanary/mm-cleanup/v2-p1+3");
	apply_branch_name(b, sizeof(b), &s, "1-2");
	assert_string_equal(b, "kcanary/mm-cleanup/v2-p1-2");
	apply_branch_name(b, sizeof(b), &s, "1-3");
	assert_string_equal(b, "kcanary/mm-cleanup/v2");
	apply_branch_name(b, sizeof(b), &s, NULL);
	assert_string_equal(b, "kcanary/mm-cleanup/v2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_branch_names),
		cmocka_unit_test_setup_teardown(test_resolve, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_apply_commit, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_apply_offset_but_no_fuzz, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_series_subset_and_failure, fx_setup, fx_teardown),
		cmocka_unit_test(test_range_parse),
	};
	return cmocka_run_group_tests_name("git", tests, NULL, NULL);
}
