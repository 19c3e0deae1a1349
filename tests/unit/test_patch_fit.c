/* test_patch_fit.c - hunk relocation (offsets, never fuzz), diff reversal
 * and the deleted-file check, on text: files are strings in a table. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "wrap/patch_fit.h"
#include "util.h"

/* The tree: up to 4 files; reads are counted. */
struct fake_tree {
	const char *path[4];
	char *text[4];
	int reads;
};

static int fake_read(void *payload, const char *path, const char **data, size_t *len)
{
	struct fake_tree *t = payload;

	t->reads++;
	for (int i = 0; i < 4 && t->path[i]; i++)
		if (!strcmp(t->path[i], path)) {
			*data = t->text[i];
			*len = strlen(t->text[i]);
			return 0;
		}
	return -ENOENT;
}

static void fake_tree_release(struct fake_tree *t)
{
	for (int i = 0; i < 4; i++)
		free(t->text[i]);
}

/* "int vN = N;" on line N for N = 1..n (test_git.c's src/mm.c has 60). */
static char *mm_text(int n)
{
	struct buf b = BUF_INIT;

	for (int i = 1; i <= n; i++)
		buf_printf(&b, "int v%d = %d;\n", i, i);
	return buf_detach(&b);
}

/* test_git.c's hunk: v10 changed, context v7..v13, header at line `at`,
 * context line v8 replaced by ctx8. */
static char *mm_patch(int at, const char *ctx8)
{
	return xasprintf("diff --git a/src/mm.c b/src/mm.c\n"
			 "index 3b18e51..a9c3f2e 100644\n"
			 "--- a/src/mm.c\n+++ b/src/mm.c\n"
			 "@@ -%d,7 +%d,7 @@ int v6 = 6;\n"
			 " int v7 = 7;\n %s\n int v9 = 9;\n-int v10 = 10;\n+int v10 = 100;\n"
			 " int v11 = 11;\n int v12 = 12;\n int v13 = 13;\n"
			 "-- \n2.43.0\n", at, at, ctx8);
}

/* The fitted text of diff against t (caller frees). */
static char *fit(struct patch_fit_result *res, const char *diff, struct fake_tree *t)
{
	const struct patch_fit_source src = { fake_read, t };
	struct buf o = BUF_INIT;

	patch_fit_hunks(&o, res, diff, &src);
	return buf_detach(&o);
}

static void test_exact_position(void **state)
{
	struct fake_tree t = { { "src/mm.c" }, { mm_text(60) }, 0 };
	struct patch_fit_result res;
	char *d = mm_patch(7, "int v8 = 8;");
	char *out = fit(&res, d, &t);

	(void)state;
	assert_string_equal(out, d);
	assert_int_equal(res.placed, 1);
	assert_int_equal(res.moved, 0);
	assert_int_equal(res.unplaced, 0);
	assert_int_equal(t.reads, 1);
	free(out);
	free(d);
	fake_tree_release(&t);
}

/* The header says 27 (below the text) or 3 (above it): either way the
 * hunk moves to line 7, where its context is; the rest of the patch (the
 * header's section heading, the signature) is kept. */
static void test_offset_up_and_down(void **state)
{
	struct fake_tree t = { { "src/mm.c" }, { mm_text(60) }, 0 };
	struct patch_fit_result res;
	char *want = mm_patch(7, "int v8 = 8;");

	(void)state;
	for (int at = 1; at <= 54; at += 1) {
		char *d = mm_patch(at, "int v8 = 8;"), *out = fit(&res, d, &t);
		assert_string_equal(out, want);
		assert_int_equal(res.placed, 1);
		assert_int_equal(res.moved, at != 7);
		free(out);
		free(d);
	}
	free(want);
	fake_tree_release(&t);
}

/* The same three lines twice in the file (lines 10-12 and 40-42): the
 * match nearest to the header wins; on a tie, the earlier one. */
static void test_nearest_match(void **state)
{
	struct buf f = BUF_INIT;
	struct patch_fit_result res;

	(void)state;
	for (int i = 1; i <= 60; i++) {
		if (i == 10 || i == 40)
			buf_puts(&f, "a();\n");
		else if (i == 11 || i == 41)
			buf_puts(&f, "b();\n");
		else if (i == 12 || i == 42)
			buf_puts(&f, "c();\n");
		else
			buf_printf(&f, "line%d();\n", i);
	}
	struct fake_tree t = { { "f.c" }, { buf_detach(&f) }, 0 };
	static const struct { int at, found; } cases[] = {
		{ 35, 40 }, { 50, 40 }, { 20, 10 }, { 1, 10 }, { 24, 10 }, { 26, 40 },
		{ 25, 10 },	/* 15 lines from each: the earlier */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = xasprintf("--- a/f.c\n+++ b/f.c\n@@ -%d,3 +%d,3 @@\n a();\n-b();\n+B();\n"
				    " c();\n", cases[i].at, cases[i].at);
		char *want = xasprintf("--- a/f.c\n+++ b/f.c\n@@ -%d,3 +%d,3 @@\n a();\n-b();\n"
				       "+B();\n c();\n", cases[i].found, cases[i].found);
		char *out = fit(&res, d, &t);
		assert_string_equal(out, want);
		assert_int_equal(res.placed, 1);
		free(out);
		free(want);
		free(d);
	}
	fake_tree_release(&t);
}

/* One context line differs (git apply would need fuzz), or the file is
 * not in the tree, or the hunk has no pre-image to anchor it: the text is
 * left as it was, for libgit2 to refuse (and name) or place as it says. */
static void test_refused(void **state)
{
	struct fake_tree t = { { "src/mm.c" }, { mm_text(60) }, 0 };
	struct patch_fit_result res;
	char *d = mm_patch(27, "int v8 = 88;"), *out = fit(&res, d, &t);

	(void)state;
	assert_string_equal(out, d);
	assert_int_equal(res.placed, 0);
	assert_int_equal(res.unplaced, 1);
	free(out);
	free(d);

	d = xasprintf("diff --git a/src/gone.c b/src/gone.c\n--- a/src/gone.c\n+++ b/src/gone.c\n"
		      "@@ -1 +1 @@\n-a\n+b\n");
	out = fit(&res, d, &t);
	assert_string_equal(out, d);
	assert_int_equal(res.placed + res.unplaced + res.unanchored, 0);
	free(out);
	free(d);

	/* -U0: two lines added after line 5; matches anywhere, so stays */
	d = xasprintf("--- a/src/mm.c\n+++ b/src/mm.c\n@@ -5,0 +6,2 @@\n+int x;\n+int y;\n");
	out = fit(&res, d, &t);
	assert_string_equal(out, d);
	assert_int_equal(res.unanchored, 1);
	assert_int_equal(res.placed, 0);
	free(out);
	free(d);

	/* a new file: nothing to read, left alone */
	t.reads = 0;
	d = xasprintf("diff --git a/n.c b/n.c\nnew file mode 100644\n--- /dev/null\n+++ b/n.c\n"
		      "@@ -0,0 +1 @@\n+int n;\n");
	out = fit(&res, d, &t);
	assert_string_equal(out, d);
	assert_int_equal(t.reads, 0);
	free(out);
	free(d);
	fake_tree_release(&t);
}

/* A hunk at the file's first lines with its header further down, and one
 * at its last lines with its header past the end (line 90 of 60): found
 * at the edges (the search window is clamped to the file). */
static void test_file_start_and_end(void **state)
{
	struct fake_tree t = { { "src/mm.c" }, { mm_text(60) }, 0 };
	struct patch_fit_result res;
#define START "--- a/src/mm.c\n+++ b/src/mm.c\n@@ -%d,3 +%d,4 @@\n+int v0 = 0;\n" \
		" int v1 = 1;\n int v2 = 2;\n int v3 = 3;\n"
#define END "--- a/src/mm.c\n+++ b/src/mm.c\n@@ -%d,3 +%d,2 @@\n int v58 = 58;\n" \
		" int v59 = 59;\n-int v60 = 60;\n"
	char *d = xasprintf(START, 12, 12), *want = xasprintf(START, 1, 1), *out = fit(&res, d, &t);

	(void)state;
	assert_string_equal(out, want);
	assert_int_equal(res.moved, 1);
	free(out);
	free(want);
	free(d);
	d = xasprintf(END, 90, 90);
	want = xasprintf(END, 58, 58);
	out = fit(&res, d, &t);
	assert_string_equal(out, want);
	assert_int_equal(res.moved, 1);
	free(out);
	free(want);
	free(d);
	fake_tree_release(&t);
}

/* Two hunks in one file, both 5 lines off: the second is looked for at
 * the first one's offset and never before the end of the first; its new
 * side's start counts the line the first added. A second file starts
 * afresh. */
static void test_several_hunks_and_files(void **state)
{
	struct fake_tree t = { { "src/mm.c", "src/other.c" }, { mm_text(60), mm_text(60) }, 0 };
	struct patch_fit_result res;
#define TWO_FILES \
		"diff --git a/src/mm.c b/src/mm.c\n--- a/src/mm.c\n+++ b/src/mm.c\n" \
		"@@ -%d,3 +%d,4 @@ first\n int v20 = 20;\n+int v20b;\n int v21 = 21;\n int v22 = 22;\n" \
		"@@ -%d,3 +%d,3 @@ second\n int v30 = 30;\n-int v31 = 31;\n+int v31 = 0;\n int v32 = 32;\n" \
		"diff --git a/src/other.c b/src/other.c\n--- a/src/other.c\n+++ b/src/other.c\n" \
		"@@ -%d,2 +%d,2 @@\n-int v5 = 5;\n+int v5 = 0;\n int v6 = 6;\n"
	char *d = xasprintf(TWO_FILES, 15, 15, 25, 26, 5, 5);
	char *want = xasprintf(TWO_FILES, 20, 20, 30, 31, 5, 5);
	char *out = fit(&res, d, &t);

	(void)state;
	assert_string_equal(out, want);
	assert_int_equal(res.placed, 3);
	assert_int_equal(res.moved, 2);
	assert_int_equal(t.reads, 2);
	free(out);
	free(want);
	free(d);

	/* the second hunk's text is only before the first: not looked for
	 * there (hunks apply in order) */
	d = xasprintf("--- a/src/mm.c\n+++ b/src/mm.c\n"
		      "@@ -30,2 +30,2 @@\n-int v30 = 30;\n+int v30 = 0;\n int v31 = 31;\n"
		      "@@ -40,2 +40,2 @@\n-int v10 = 10;\n+int v10 = 0;\n int v11 = 11;\n");
	out = fit(&res, d, &t);
	assert_string_equal(out, d);
	assert_int_equal(res.placed, 1);
	assert_int_equal(res.unplaced, 1);
	free(out);
	free(d);

	/* the first hunk is 20 lines off, so the second is looked for 20 lines
	 * below its header: at line 50, not at line 34 (nearer the header) */
	fake_tree_release(&t);
	struct buf f = BUF_INIT;
	for (int i = 1; i <= 60; i++)
		buf_puts(&f, i == 21 ? "a();\n" : i == 22 ? "b();\n" : i == 34 || i == 50 ? "x();\n" :
			     i == 35 || i == 51 ? "y();\n" : "z();\n");
	memset(&t, 0, sizeof(t));
	t.path[0] = "f.c";
	t.text[0] = buf_detach(&f);
#define OFFSETS "--- a/f.c\n+++ b/f.c\n@@ -%d,2 +%d,2 @@\n-a();\n+A();\n b();\n" \
		"@@ -%d,2 +%d,2 @@\n-x();\n+X();\n y();\n"
	d = xasprintf(OFFSETS, 1, 1, 30, 30);
	want = xasprintf(OFFSETS, 21, 21, 50, 50);
	out = fit(&res, d, &t);
	assert_string_equal(out, want);
	free(out);
	free(want);
	free(d);
	fake_tree_release(&t);
}

/* A removed line that starts "-- " is "--- ..." in the hunk body: body,
 * not the next file's header, so the file's second hunk is still placed
 * (and a removed "-- a/x" line does not read x). */
static void test_body_line_like_header(void **state)
{
	struct fake_tree t = { { "sig.txt", "x" }, { NULL, xstrdup("other\n") }, 0 };
	struct buf f = BUF_INIT;
	struct patch_fit_result res;

	(void)state;
	for (int i = 1; i <= 40; i++)
		buf_printf(&f, "%s\n", i == 5 ? "-- a/x" : i == 6 ? "-- " : i == 30 ? "last" : "text");
	t.text[0] = buf_detach(&f);
#define SIG "--- a/sig.txt\n+++ b/sig.txt\n@@ -%d,3 +%d,1 @@\n text\n--- a/x\n--- \n" \
		"@@ -%d,2 +%d,3 @@\n text\n+more\n last\n"
	char *d = xasprintf(SIG, 4, 4, 19, 19), *want = xasprintf(SIG, 4, 4, 29, 27);
	char *out = fit(&res, d, &t);

	assert_string_equal(out, want);
	assert_int_equal(res.placed, 2);
	assert_int_equal(t.reads, 1);
	free(out);
	free(want);
	free(d);
	fake_tree_release(&t);
}

static char *reverse(const char *diff)
{
	struct buf o = BUF_INIT;

	patch_reverse(&o, diff);
	return buf_detach(&o);
}

/* A modification (two hunks), a creation and a deletion, with the
 * signature after them: every header, range and line the other way. */
static void test_reverse_multi(void **state)
{
	const char *d =
		"diff --git a/src/mm.c b/src/mm.c\n"
		"index 3b18e51..a9c3f2e 100644\n"
		"--- a/src/mm.c\n+++ b/src/mm.c\n"
		"@@ -9,3 +9,4 @@ int v8 = 8;\n int v9 = 9;\n-int v10 = 10;\n+int v10 = 100;\n+int v10b;\n"
		" int v11 = 11;\n"
		"@@ -30,2 +31,1 @@\n-int v30 = 30;\n int v31 = 31;\n"
		"diff --git a/src/new.c b/src/new.c\n"
		"new file mode 100644\n"
		"index 0000000..1111111\n"
		"--- /dev/null\n+++ b/src/new.c\n"
		"@@ -0,0 +1,2 @@\n+int a;\n+int b;\n"
		"diff --git a/src/old.c b/src/old.c\n"
		"deleted file mode 100644\n"
		"index 2222222..0000000\n"
		"--- a/src/old.c\n+++ /dev/null\n"
		"@@ -1 +0,0 @@\n-int old;\n"
		"\\ No newline at end of file\n"
		"-- \n2.43.0\n";
	const char *want =
		"diff --git a/src/mm.c b/src/mm.c\n"
		"index a9c3f2e..3b18e51 100644\n"
		"--- a/src/mm.c\n+++ b/src/mm.c\n"
		"@@ -9,4 +9,3 @@ int v8 = 8;\n int v9 = 9;\n+int v10 = 10;\n-int v10 = 100;\n-int v10b;\n"
		" int v11 = 11;\n"
		"@@ -31,1 +30,2 @@\n+int v30 = 30;\n int v31 = 31;\n"
		"diff --git a/src/new.c b/src/new.c\n"
		"deleted file mode 100644\n"
		"index 1111111..0000000\n"
		"--- a/src/new.c\n+++ /dev/null\n"
		"@@ -1,2 +0,0 @@\n-int a;\n-int b;\n"
		"diff --git a/src/old.c b/src/old.c\n"
		"new file mode 100644\n"
		"index 0000000..2222222\n"
		"--- /dev/null\n+++ b/src/old.c\n"
		"@@ -0,0 +1,1 @@\n+int old;\n"
		"\\ No newline at end of file\n"
		"-- \n2.43.0\n";
	char *out = reverse(d), *back;

	(void)state;
	assert_string_equal(out, want);
	/* and back again: the original, up to the explicit ",1" counts */
	back = reverse(out);
	assert_non_null(strstr(back, "@@ -9,3 +9,4 @@ int v8 = 8;\n int v9 = 9;\n-int v10 = 10;\n"));
	assert_non_null(strstr(back, "new file mode 100644\nindex 0000000..1111111\n--- /dev/null\n"
			       "+++ b/src/new.c\n@@ -0,0 +1,2 @@\n+int a;\n"));
	assert_non_null(strstr(back, "--- a/src/old.c\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-int old;\n"));
	free(back);
	free(out);
}

/* test_git.c's cases: the creation of two files reverses into their
 * deletion ("already applied" when they are there), and a hunk's empty
 * line is context, kept as it is. */
static void test_reverse_git_cases(void **state)
{
	char *out = reverse("diff --git a/c1 b/c1\nnew file mode 100644\n--- /dev/null\n+++ b/c1\n"
			    "@@ -0,0 +1 @@\n+x1\n"
			    "diff --git a/c2 b/c2\nnew file mode 100644\n--- /dev/null\n+++ b/c2\n"
			    "@@ -0,0 +1 @@\n+x2\n");

	(void)state;
	assert_string_equal(out, "diff --git a/c1 b/c1\ndeleted file mode 100644\n--- a/c1\n"
			    "+++ /dev/null\n@@ -1,1 +0,0 @@\n-x1\n"
			    "diff --git a/c2 b/c2\ndeleted file mode 100644\n--- a/c2\n"
			    "+++ /dev/null\n@@ -1,1 +0,0 @@\n-x2\n");
	free(out);
	out = reverse("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n");
	assert_string_equal(out, "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n\n+b\n-c\n");
	free(out);
}

static void test_deletions(void **state)
{
	struct fake_tree t = { { "src/main.c", "src/nonl.c" },
			       { xstrdup("int main_v = 1;\n"), xstrdup("int x;") }, 0 };
	const struct patch_fit_source src = { fake_read, &t };
	struct buf bad = BUF_INIT;
#define DEL "diff --git a/src/main.c b/src/main.c\ndeleted file mode 100644\n" \
		"--- a/src/main.c\n+++ /dev/null\n@@ -1 +0,0 @@\n-%s\n"
	char *d = xasprintf(DEL, "int main_v = 1;");

	(void)state;
	assert_true(patch_fit_deletions(&bad, d, &src));
	assert_string_equal(buf_str(&bad), "");
	free(d);
	/* test_git.c: other content than the patch removes */
	d = xasprintf(DEL, "int other;");
	assert_false(patch_fit_deletions(&bad, d, &src));
	assert_string_equal(buf_str(&bad), "src/main.c");
	free(d);
	/* a file that is not there */
	assert_false(patch_fit_deletions(&bad, "--- a/src/gone.c\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n",
					 &src));
	assert_string_equal(buf_str(&bad), "src/gone.c");
	/* "\ No newline at end of file": the content has no last '\n' */
	d = xstrdup("--- a/src/nonl.c\n+++ /dev/null\n@@ -1 +0,0 @@\n-int x;\n"
		    "\\ No newline at end of file\n");
	assert_true(patch_fit_deletions(&bad, d, &src));
	free(d);
	assert_false(patch_fit_deletions(&bad, "--- a/src/nonl.c\n+++ /dev/null\n@@ -1 +0,0 @@\n"
					 "-int x;\n", &src));
	/* modifications are not its business; NULL bad_path is fine */
	d = mm_patch(7, "int v8 = 8;");
	assert_true(patch_fit_deletions(NULL, d, &src));
	free(d);
	buf_release(&bad);
	fake_tree_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_position),
		cmocka_unit_test(test_offset_up_and_down),
		cmocka_unit_test(test_nearest_match),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_file_start_and_end),
		cmocka_unit_test(test_several_hunks_and_files),
		cmocka_unit_test(test_body_line_like_header),
		cmocka_unit_test(test_reverse_multi),
		cmocka_unit_test(test_reverse_git_cases),
		cmocka_unit_test(test_deletions),
	};
	return cmocka_run_group_tests_name("patch_fit", tests, NULL, NULL);
}
