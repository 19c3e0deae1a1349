/* test_tree_import.c - `kcanary tree import`: fake kernel release tarballs
 * imported as commits on kcanary/import, tagged, no-ops on a second look. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "error.h"
#include "wrap/git.h"
#include "kernel/tree_import.h"
#include "util.h"
#include "testutil.h"
#include "fakekernel.h"

/* git.h's message of the last failed call (error.h) */
static struct buf gitmsg = BUF_INIT;

/* The fixture: an empty repository DIR/linux, made as `tree import` makes
 * it (repo_open with create). */
struct fx {
	struct tmpdir td;
	struct repo *r;
	char *repo_path;
	struct buf err;
};

static int fx_setup(void **state)
{
	struct tmpdir *td;
	struct fx *fx;

	if (tmpdir_setup((void **)&td))
		return -1;
	fx = calloc(1, sizeof(*fx));
	fx->td = *td;
	free(td);
	fx->repo_path = xasprintf("%s/linux", fx->td.path);
	if (repo_open(&fx->r, fx->repo_path, true, &gitmsg)) {
		fprintf(stderr, "fixture: %s\n", buf_str(&gitmsg));
		return -1;
	}
	*state = fx;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *fx = *state;
	struct tmpdir *td = malloc(sizeof(*td));

	repo_close(fx->r);
	free(fx->repo_path);
	buf_release(&fx->err);
	*td = fx->td;
	free(fx);
	return tmpdir_teardown((void **)&td);
}

static void test_import(void **state)
{
	struct fx *fx = *state;
	struct import_result ir;
	char c[KC_OID_HEX], base[KC_OID_HEX], parent[KC_OID_HEX], *msg = NULL;
	char *tb3 = fk_tarball(fx->td.path, "3", NULL);
	char *tb4 = fk_tarball(fx->td.path, "4", "src/new.c=int new_v;\n");
	char *gi = xasprintf("%s/.gitignore", fx->repo_path);

	/* the first import: a root commit tagged v1.2.3 (from the Makefile),
	 * ignored files kept */
	assert_int_equal(tree_import_tarball(fx->r, &ir, tb3, NULL, &fx->err), 0);
	assert_false(ir.noop);
	assert_string_equal(ir.version, "1.2.3");
	assert_string_equal(ir.tag, "v1.2.3");
	memcpy(base, ir.commit, KC_OID_HEX);
	assert_int_equal(repo_commit_parent(fx->r, parent, base, &gitmsg), -ENOENT);
	assert_int_equal(repo_resolve(fx->r, c, "v1.2.3", &gitmsg), 0);
	assert_string_equal(c, base);
	assert_int_equal(repo_resolve(fx->r, c, "v1.2.3:src/mm.c", &gitmsg), -ENOTDIR);
	assert_int_equal(repo_resolve(fx->r, c, "v1.2.3:Makefile", &gitmsg), -ENOTDIR);
	assert_int_equal(repo_resolve(fx->r, c, "v1.2.3:nope.c", &gitmsg), -ENOENT);
	assert_int_equal(access(gi, F_OK), 0);

	/* the same tarball again: a no-op giving the same commit */
	assert_int_equal(tree_import_tarball(fx->r, &ir, tb3, NULL, &fx->err), 0);
	assert_true(ir.noop);
	assert_string_equal(ir.commit, base);
	assert_string_equal(ir.version, "1.2.3");

	/* the same tree packed again (another tarball): also a no-op */
	char *cmd = xasprintf("tar -C '%s/src-3' -cJf '%s/again.tar.xz' linux-1.2", fx->td.path, fx->td.path);
	char *again = xasprintf("%s/again.tar.xz", fx->td.path);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(tree_import_tarball(fx->r, &ir, again, NULL, &fx->err), 0);
	assert_true(ir.noop);
	assert_string_equal(ir.commit, base);
	free(cmd);
	free(again);

	/* the next release: a commit on top of the previous import; kcanary's
	 * build dirs inside the tree (build.c, issue 19) survive it and are
	 * not part of the commit */
	char *bd = xasprintf("%s/" REPO_BUILD_DIR "/b-c", fx->repo_path);
	char *obj = xasprintf("%s/mm.o", bd);
	char *mk = xasprintf("mkdir -p '%s' && echo obj > '%s'", bd, obj);
	assert_int_equal(system(mk), 0);
	assert_int_equal(tree_import_tarball(fx->r, &ir, tb4, "rel-4", &fx->err), 0);
	assert_int_equal(access(obj, R_OK), 0);
	assert_int_equal(repo_resolve(fx->r, c, "rel-4:" REPO_BUILD_DIR, &gitmsg), -ENOENT);
	free(mk);
	free(obj);
	free(bd);
	assert_false(ir.noop);
	assert_string_equal(ir.tag, "rel-4");
	assert_string_not_equal(ir.commit, base);
	assert_int_equal(repo_commit_parent(fx->r, parent, ir.commit, &gitmsg), 0);
	assert_string_equal(parent, base);
	assert_int_equal(repo_resolve(fx->r, c, "rel-4:src/new.c", &gitmsg), -ENOTDIR);
	assert_int_equal(repo_resolve(fx->r, c, "kcanary/import", &gitmsg), 0);
	assert_string_equal(c, ir.commit);
	assert_int_equal(repo_commit_info(fx->r, ir.commit, NULL, NULL, NULL, &msg, &gitmsg), 0);
	assert_non_null(strstr(msg, "Import Linux 1.2.4"));
	assert_non_null(strstr(msg, "Kcanary-Tarball: "));
	/* the older tarball is found further down the branch: a no-op */
	assert_int_equal(tree_import_tarball(fx->r, &ir, tb3, NULL, &fx->err), 0);
	assert_true(ir.noop);
	assert_string_equal(ir.commit, base);
	/* a tag that exists elsewhere is refused, by name */
	assert_int_equal(tree_import_tarball(fx->r, &ir, tb3, "rel-4", &fx->err), -EEXIST);
	assert_non_null(strstr(err_text(&fx->err), "tag 'rel-4' already exists"));
	free(msg);
	free(gi);
	free(tb3);
	free(tb4);
}

/* What cannot be imported says what and where. */
static void test_import_errors(void **state)
{
	struct fx *fx = *state;
	struct import_result ir;
	char *missing = xasprintf("%s/nope.tar.xz", fx->td.path);
	char *junk = xasprintf("%s/junk.tar.gz", fx->td.path);

	assert_int_equal(tree_import_tarball(fx->r, &ir, missing, NULL, &fx->err), -ENOENT);
	assert_non_null(strstr(err_text(&fx->err), "cannot read '"));
	assert_non_null(strstr(err_text(&fx->err), "nope.tar.xz"));
	fk_write(fx->td.path, "junk.tar.gz", "not a tarball\n");
	assert_int_equal(tree_import_tarball(fx->r, &ir, junk, NULL, &fx->err), -EIO);
	assert_non_null(strstr(err_text(&fx->err), "junk.tar.gz': tar failed"));
	/* nothing was committed */
	char c[KC_OID_HEX];
	assert_int_equal(repo_resolve(fx->r, c, "kcanary/import", &gitmsg), -ENOENT);
	free(missing);
	free(junk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_import, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_import_errors, fx_setup, fx_teardown),
	};
	return cmocka_run_group_tests_name("tree_import", tests, NULL, NULL);
}
