/* test_git_range.c - the bisection range (repo_range) on a small history
 * with a merge, made by the `git` CLI and checked against `git rev-list`. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "exec/bisect_exec.h"
#include "wrap/git.h"
#include "util.h"
#include "testutil.h"

/* git.h's message of the last failed call (error.h) */
static struct buf gitmsg = BUF_INIT;

#define GIT "git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=main " \
	"-c commit.gpgsign=false"

static void sh(const char *dir, const char *cmd)
{
	char *c = xasprintf("cd '%s' && %s >/dev/null 2>&1", dir, cmd);
	assert_int_equal(system(c), 0);
	free(c);
}

/* Run cmd in dir and return its stdout (new string). */
static char *sh_out(const char *dir, const char *cmd)
{
	char *c = xasprintf("cd '%s' && %s", dir, cmd);
	FILE *f = popen(c, "r");
	struct buf b = BUF_INIT;
	char line[256];

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		buf_puts(&b, line);
	assert_int_equal(pclose(f), 0);
	free(c);
	return buf_detach(&b);
}

/*
 * History (dates fixed so ids are stable):
 *   A - B - C ------- M - F     (main; tag good at A, bad at F)
 *        \           /
 *         D1 - D2 --'           (side branch off B)
 */
static void make_history(const char *dir)
{
	sh(dir, GIT " init -q .");
	const char *steps[] = {
		"echo a > f && " GIT " add f && " GIT " commit -qm A && " GIT " tag good",
		"echo b >> f && " GIT " commit -qam B",
		GIT " checkout -qb side && echo d1 > g && " GIT " add g && " GIT " commit -qm D1",
		"echo d2 >> g && " GIT " commit -qam D2",
		GIT " checkout -q main && echo c >> f && " GIT " commit -qam C",
		GIT " merge -q --no-ff -m M side",
		"echo f >> f && " GIT " commit -qam F && " GIT " tag bad",
	};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		sh(dir, steps[i]);
}

static void check_against_rev_list(const char *dir, struct repo *r, bool first_parent)
{
	char (*v)[KC_OID_HEX] = NULL;
	size_t n = 0;
	char *want = sh_out(dir, first_parent ?
			    "(git rev-parse good; git rev-list --first-parent --topo-order --reverse good..bad)" :
			    "(git rev-parse good; git rev-list --topo-order --reverse good..bad)");
	struct buf got = BUF_INIT;

	assert_int_equal(repo_range(r, &v, &n, "good", "bad", first_parent, &gitmsg), 0);
	for (size_t i = 0; i < n; i++)
		buf_printf(&got, "%s\n", v[i]);
	assert_string_equal(buf_str(&got), want);
	assert_int_equal(n, first_parent ? 5 : 7);  /* A B C M F / A B C D1 D2 M F */
	free(v);
	free(want);
	buf_release(&got);
}

static void test_range(void **state)
{
	struct tmpdir *td = *state;
	struct repo *r = NULL;
	char (*v)[KC_OID_HEX] = NULL;
	size_t n = 99;

	make_history(td->path);
	assert_int_equal(repo_open(&r, td->path, false, &gitmsg), 0);
	check_against_rev_list(td->path, r, false);
	check_against_rev_list(td->path, r, true);

	/* the ends: first is good's commit, last bad's; every parent comes
	 * before its child */
	assert_int_equal(repo_range(r, &v, &n, "good", "bad", false, &gitmsg), 0);
	{
		char good[KC_OID_HEX], bad[KC_OID_HEX];
		assert_int_equal(repo_resolve(r, good, "good", &gitmsg), 0);
		assert_int_equal(repo_resolve(r, bad, "bad", &gitmsg), 0);
		assert_string_equal(v[0], good);
		assert_string_equal(v[n - 1], bad);
		for (size_t i = 1; i < n; i++) {
			char parent[KC_OID_HEX];
			assert_int_equal(repo_commit_parent(r, parent, v[i], &gitmsg), 0);
			size_t j;
			for (j = 0; j < n && strcmp(v[j], parent); j++)
				;
			assert_true(j < i);
		}
	}
	free(v);

	/* bad input: unknown rev, not an ancestor, the same commit */
	v = NULL;
	assert_int_equal(repo_range(r, &v, &n, "v9.9", "bad", false, &gitmsg), -ENOENT);
	assert_non_null(strstr(buf_str(&gitmsg), "v9.9"));
	assert_int_equal(repo_range(r, &v, &n, "bad", "good", false, &gitmsg), -EINVAL);
	assert_non_null(strstr(buf_str(&gitmsg), "is not an ancestor of 'good'"));
	assert_int_equal(repo_range(r, &v, &n, "side", "main~2", false, &gitmsg), -EINVAL);
	assert_int_equal(repo_range(r, &v, &n, "bad", "main", false, &gitmsg), -EINVAL);
	assert_non_null(strstr(buf_str(&gitmsg), "same commit"));
	assert_null(v);
	assert_int_equal(n, 0);
	/* two candidates: the least range there is */
	assert_int_equal(repo_range(r, &v, &n, "bad~1", "bad", false, &gitmsg), 0);
	assert_int_equal(n, 2);
	free(v);
	/* parents: M is the merge */
	{
		const char *revs[] = { "bad~1", "bad", "good" };
		const int want[] = { 2, 1, 0 };
		char hex[KC_OID_HEX];

		for (size_t i = 0; i < 3; i++) {
			assert_int_equal(repo_resolve(r, hex, revs[i], &gitmsg), 0);
			assert_int_equal(repo_commit_nparents(r, hex, &gitmsg), want[i]);
		}
		assert_true(repo_commit_nparents(r, "0000000000000000000000000000000000000001", &gitmsg) < 0);
	}
	repo_close(r);

	/* the bisect candidates: named by short sha and subject, with author */
	{
		struct bisect_cands cs;
		struct buf err = BUF_INIT;
		char *want;

		assert_int_equal(bisect_cands_from_repo(&cs, td->path, "good", "bad", true, &err), 0);
		assert_int_equal(cs.n, 5);
		want = xasprintf("%.12s M", cs.c[3].sha);
		assert_string_equal(cs.c[3].name, want);
		free(want);
		assert_string_equal(cs.c[0].subject, "A");
		assert_string_equal(cs.c[4].subject, "F");
		assert_string_equal(cs.c[4].author, "t <t@example.org>");
		assert_null(cs.c[4].kernel);
		bisect_cands_release(&cs);
		/* without first_parent, a range with a merge is still bisected on
		 * its first-parent chain (a linearised side branch would read as
		 * noise); a linear range keeps every commit */
		assert_int_equal(bisect_cands_from_repo(&cs, td->path, "good", "bad", false, &err), 0);
		assert_int_equal(cs.n, 5);
		assert_string_equal(cs.c[3].subject, "M");
		bisect_cands_release(&cs);
		assert_int_equal(bisect_cands_from_repo(&cs, td->path, "side~1", "side", false, &err), 0);
		assert_int_equal(cs.n, 2);
		bisect_cands_release(&cs);
		assert_int_equal(bisect_cands_from_repo(&cs, td->path, "bad", "good", false, &err),
				 -EINVAL);
		assert_non_null(strstr(buf_str(&err), "not an ancestor"));
		assert_null(cs.c);
		buf_release(&err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_range, tmpdir_setup, tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
