/* test_series.c - mail → series on the real mails of tests/fixtures/mail:
 * each case asserts what tests/fixtures/mail/INDEX.md says it must give
 * (subjects, k/M, versions, authors, trailers, base-commit, files), and each
 * diff is compared byte for byte with git mailinfo's (NN.mailinfo-patch,
 * written by tools/mail-golden.sh). */
#include <errno.h>
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/series.h"
#include "util.h"

static char *fixture_path(const char *rel)
{
	const char *dir = getenv("KC_FIXTURES");
	return xasprintf("%s/mail/%s", dir && *dir ? dir : "tests/fixtures", rel);
}

/* The NN.eml files of one or more case directories, in order. */
static size_t case_files(glob_t *g, const char *const *cases, size_t ncases)
{
	memset(g, 0, sizeof(*g));
	for (size_t i = 0; i < ncases; i++) {
		char *pat = fixture_path(cases[i]);
		char *full = xasprintf("%s/*.eml", pat);
		int r = glob(full, i ? GLOB_APPEND : 0, NULL, g);
		if (r)
			fail_msg("no fixture mails match '%s'", full);
		free(full);
		free(pat);
	}
	return g->gl_pathc;
}

static int load_cases(struct series ***out, size_t *n, struct buf *err,
		      const char *const *cases, size_t ncases)
{
	glob_t g;
	int ret;

	case_files(&g, cases, ncases);
	ret = series_load(out, n, g.gl_pathv, g.gl_pathc, err);
	globfree(&g);
	return ret;
}

static struct series **load1(size_t *n, const char *c)
{
	struct series **v = NULL;
	struct buf err = BUF_INIT;
	const char *cases[] = { c };

	if (load_cases(&v, n, &err, cases, 1) < 0)
		fail_msg("'%s': %s", c, buf_str(&err));
	buf_release(&err);
	return v;
}

static char *read_fixture(const char *rel, size_t *len)
{
	char *path = fixture_path(rel), *data = NULL;

	if (read_file(&data, len, path, 64 << 20) < 0)
		fail_msg("cannot read '%s'", path);
	free(path);
	return data;
}

static void assert_trailer(const struct patch *p, size_t i, const char *key, const char *value)
{
	assert_true(i < p->ntrailers);
	assert_string_equal(p->trailers[i].key, key);
	assert_string_equal(p->trailers[i].value, value);
}

static void assert_prefix(const char *s, const char *prefix)
{
	if (strncmp(s, prefix, strlen(prefix)))
		fail_msg("'%.80s' does not start with '%s'", s, prefix);
}

/* The '+'/'-' lines of a diff without the file headers: what git patch-id
 * hashes, apart from whitespace. */
static char *changed_lines(const char *diff)
{
	struct buf b = BUF_INIT;

	for (const char *p = diff; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
		if ((p[0] == '+' || p[0] == '-') && strncmp(p, "+++ ", 4) && strncmp(p, "--- ", 4))
			buf_append(&b, p, n);
		p += n;
	}
	return buf_detach(&b);
}

static bool has_file(const struct patch *p, const char *f)
{
	for (size_t i = 0; i < p->nfiles; i++)
		if (!strcmp(p->files[i], f))
			return true;
	return false;
}

/* Our diff must be git mailinfo's patch from the first diff line up to the
 * mail signature ("-- " or, whitespace-damaged, "--"). */
static void assert_diff_matches_mailinfo(const struct patch *p)
{
	char *golden_path = xstrdup(p->source);
	size_t len, dl = strlen(p->diff);
	char *dot = strrchr(golden_path, '.');

	assert_non_null(dot);
	*dot = '\0';
	char *gp = xasprintf("%s.mailinfo-patch", golden_path);
	char *golden = NULL;
	assert_int_equal(read_file(&golden, &len, gp, 64 << 20), 0);
	const char *at = strstr(golden, p->diff[0] == 'd' ? "diff --git " : "--- ");
	if (at && at != golden && at[-1] != '\n')
		at = NULL;
	assert_non_null(at);
	assert_true(dl > 0);
	assert_true((size_t)(golden + len - at) >= dl);
	assert_memory_equal(at, p->diff, dl);
	assert_true(!strncmp(at + dl, "-- \n", 4) || !strncmp(at + dl, "--\n", 3));
	free(golden);
	free(gp);
	free(golden_path);
}

static void assert_all_diffs(struct series **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < v[i]->npatches; j++)
			assert_diff_matches_mailinfo(&v[i]->patches[j]);
}

/* A1: three revisions × (cover + 2), loaded together. */
static void test_a1_three_revisions(void **state)
{
	const char *cases[] = { "A1-memcg-vmscan-tracepoints-v1", "A1-memcg-vmscan-tracepoints-v2",
				"A1-memcg-vmscan-tracepoints-v3" };
	struct series **v = NULL;
	struct buf err = BUF_INIT;
	size_t n = 0;

	(void)state;
	assert_int_equal(load_cases(&v, &n, &err, cases, 3), 0);
	assert_int_equal(n, 3);
	for (int i = 0; i < 3; i++) {
		struct series *s = v[i];
		assert_string_equal(s->name, "mm-memcg-improve-vmscan-tracepoints");
		assert_int_equal(s->version, i + 1);
		assert_false(s->rfc);
		assert_string_equal(s->cover_subject, "mm: memcg: improve vmscan tracepoints");
		assert_int_equal(s->npatches, 2);
		for (int k = 0; k < 2; k++) {
			const struct patch *p = &s->patches[k];
			assert_int_equal(p->k, k + 1);
			assert_int_equal(p->m, 2);
			assert_string_equal(p->author_name, "Dev One");
			assert_string_equal(p->author_email, "dev1@example.org");
			assert_int_equal(p->nfiles, 2);
			assert_string_equal(p->files[0], "include/trace/events/vmscan.h");
			assert_string_equal(p->files[1], "mm/vmscan.c");
			assert_int_equal(p->ntrailers, 1);
			assert_trailer(p, 0, "Signed-off-by", "Dev One <dev1@example.org>");
			assert_null(p->corrupt);
		}
		assert_string_equal(s->patches[0].subject, i == 2 ?
			"mm: memcg: print out cgroup ino in the memcg tracepoints" :
			"mm: memcg: print out cgroup name in the memcg tracepoints");
		assert_string_equal(s->patches[1].subject,
				    "mm: memcg: introduce new event to trace shrink_memcg");
		assert_prefix(s->patches[1].message,
			      "mm: memcg: introduce new event to trace shrink_memcg\n\n");
	}
	/* v1's cover starts with an in-body From: at another address */
	assert_non_null(strstr(v[0]->cover_body, "dev1@example.com"));
	assert_int_equal(v[0]->patches[0].date_s, 1698834516); /* Wed, 1 Nov 2023 13:28:36 +0300 */
	assert_int_equal(v[0]->patches[0].tz_offset_min, 180);
	assert_all_diffs(v, n);
	series_free_all(v, n);
	buf_release(&err);
}

/* A2: "[next -v1 k/5]" and "[PATCH -v2 next k/4]"; in-body From: wins. */
static void test_a2_irregular_tags_inbody_from(void **state)
{
	size_t n1 = 0, n2 = 0;
	struct series **v1 = load1(&n1, "A2-memcg-cleanup-next-v1");
	struct series **v2 = load1(&n2, "A2-memcg-cleanup-next-v2");

	(void)state;
	assert_int_equal(n1, 1);
	assert_int_equal(n2, 1);
	assert_int_equal(v1[0]->version, 1);
	assert_int_equal(v2[0]->version, 2);
	assert_string_equal(v1[0]->prefix_tags, "next");
	assert_string_equal(v2[0]->prefix_tags, "next");
	assert_string_equal(v1[0]->name, v2[0]->name);
	assert_int_equal(v1[0]->npatches, 5);
	assert_int_equal(v2[0]->npatches, 4);
	for (size_t i = 0; i < 5; i++) {
		assert_string_equal(v1[0]->patches[i].author_email, "dev12@example.com");
		assert_int_equal(v1[0]->patches[i].nfiles, 1);
		assert_string_equal(v1[0]->patches[i].files[0], "mm/memcontrol.c");
	}
	const struct patch *p = &v2[0]->patches[0];
	assert_string_equal(p->author_name, "Dev Twelve");
	assert_string_equal(p->author_email, "dev12@example.com");
	assert_int_equal(p->ntrailers, 4);
	assert_trailer(p, 0, "Signed-off-by", "Dev Twelve <dev12@example.com>");
	assert_trailer(p, 1, "Reviewed-by", "Karel Nov\xc3\xa1k <dev17@example.org>");
	assert_trailer(p, 2, "Acked-by", "Dev Fourteen <dev14@example.org>");
	assert_trailer(p, 3, "Acked-by", "Dev Seven <dev7@example.com>");
	p = &v2[0]->patches[1];
	assert_int_equal(p->ntrailers, 3);
	assert_trailer(p, 1, "Reviewed-by", "Karel Nov\xc3\xa1k <dev17@example.org>");
	assert_trailer(p, 2, "Acked-by", "Dev Seven <dev7@example.com>");
	/* the in-body From: line is not part of the commit message */
	assert_null(strstr(p->message, "From:"));
	assert_string_equal(v2[0]->patches[2].subject,
			    "memcg: factor out the replace_stock_objcg function");
	assert_all_diffs(v1, n1);
	assert_all_diffs(v2, n2);
	series_free_all(v1, n1);
	series_free_all(v2, n2);
}

/* A4: "[PATCH RFC -next k/7]" (v1 implicit) and "[PATCH RFC v2 k/7]". */
static void test_a4_rfc_revisions(void **state)
{
	static const size_t files_v1[] = { 1, 1, 2, 1, 1, 1, 3 };
	static const size_t files_v2[] = { 3, 1, 2, 1, 1, 1, 3 };
	size_t n1 = 0, n2 = 0;
	struct series **v1 = load1(&n1, "A4-blk-iocost-module-rfc-v1");
	struct series **v2 = load1(&n2, "A4-blk-iocost-module-rfc-v2");

	(void)state;
	assert_int_equal(n1, 1);
	assert_int_equal(n2, 1);
	assert_true(v1[0]->rfc);
	assert_true(v2[0]->rfc);
	assert_int_equal(v1[0]->version, 1);
	assert_int_equal(v2[0]->version, 2);
	assert_string_equal(v1[0]->prefix_tags, "-next");
	assert_int_equal(v1[0]->npatches, 7);
	assert_int_equal(v2[0]->npatches, 7);
	for (size_t i = 0; i < 7; i++) {
		assert_int_equal(v1[0]->patches[i].nfiles, files_v1[i]);
		assert_int_equal(v2[0]->patches[i].nfiles, files_v2[i]);
		assert_string_equal(v1[0]->patches[i].author_email, "dev20@example.com");
		assert_string_equal(v2[0]->patches[i].author_email, "dev20@example.com");
	}
	assert_string_equal(v1[0]->patches[0].subject, "kernfs: export pr_cont_kernfs_path()");
	assert_string_equal(v1[0]->patches[0].files[0], "fs/kernfs/dir.c");
	assert_string_equal(v2[0]->patches[0].subject, "blk-cgroup: add a new helper pr_cont_blkg_path()");
	assert_true(has_file(&v1[0]->patches[6], "block/Kconfig"));
	assert_true(has_file(&v1[0]->patches[6], "include/linux/blk_types.h"));
	/* patches 2-7 are the same change in both revisions (git patch-id
	 * equal: the same +/- lines), patch 1 is not */
	for (size_t i = 0; i < 7; i++) {
		char *a = changed_lines(v1[0]->patches[i].diff);
		char *b = changed_lines(v2[0]->patches[i].diff);
		assert_true(*a);
		if (i == 0)
			assert_string_not_equal(a, b);
		else
			assert_string_equal(a, b);
		free(a);
		free(b);
	}
	assert_all_diffs(v1, n1);
	assert_all_diffs(v2, n2);
	series_free_all(v1, n1);
	series_free_all(v2, n2);
}

/* B1: 02 has an in-body From: of another person. */
static void test_b1_second_author(void **state)
{
	size_t n = 0;
	struct series **v = load1(&n, "B1-writeback-inode_to_wb-v3");

	(void)state;
	assert_int_equal(n, 1);
	assert_int_equal(v[0]->version, 3);
	assert_int_equal(v[0]->npatches, 2);
	assert_string_equal(v[0]->patches[0].author_name, "Dev Thirty-One");
	assert_int_equal(v[0]->patches[0].nfiles, 7);
	assert_true(has_file(&v[0]->patches[0], "fs/gfs2/glock.c"));
	assert_non_null(strstr(v[0]->patches[0].message, "Dev One Hundred Seventy-Five"));
	const struct patch *p = &v[0]->patches[1];
	assert_string_equal(p->author_name, "Dev Thirty-Three");
	assert_string_equal(p->author_email, "dev33@example.org");
	assert_int_equal(p->ntrailers, 2);
	assert_trailer(p, 0, "Signed-off-by", "Dev Thirty-Three <dev33@example.org>");
	assert_trailer(p, 1, "Reviewed-by", "Dev Thirty-One <dev31@example.org>");
	assert_string_equal(p->files[0], "include/linux/backing-dev.h");
	assert_all_diffs(v, n);
	series_free_all(v, n);
}

/* B2 (+ C7a, the same message as B2 02): deduplicated by Message-ID. */
static void test_b2_trailers_and_dedupe(void **state)
{
	const char *cases[] = { "B2-block-wbt-locking-v1", "C7a-body-line-From" };
	struct series **v = NULL;
	struct buf err = BUF_INIT;
	size_t n = 0;

	(void)state;
	assert_int_equal(load_cases(&v, &n, &err, cases, 2), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0]->version, 1);
	assert_int_equal(v[0]->npatches, 2);
	for (size_t i = 0; i < 2; i++) {
		const struct patch *p = &v[0]->patches[i];
		assert_string_equal(p->author_name, "Dev Thirty-Five");
		assert_int_equal(p->ntrailers, 4);
		assert_trailer(p, 0, "Fixes",
			"245618f8e45f (\"block: protect wbt_lat_usec using q->elevator_lock\")");
		assert_trailer(p, 1, "Reported-by", "kernel test robot <dev41@example.org>");
		assert_trailer(p, 2, "Closes",
			"https://lore.kernel.org/oe-lkp/202503171650.cc082b66-lkp@intel.com");
		assert_trailer(p, 3, "Signed-off-by", "Dev Thirty-Five <dev35@example.org>");
	}
	assert_int_equal(v[0]->patches[1].nfiles, 3);
	assert_non_null(strstr(v[0]->patches[1].message, "\n\nFrom the above log it's apparent"));
	assert_string_equal(v[0]->patches[1].message_id, "20250319105518.468941-3-dev35@example.org");
	assert_all_diffs(v, n);
	series_free_all(v, n);
	buf_release(&err);
}

/* C7a alone is patch 2/2 without 1/2: an error naming the missing k. */
/* C7a: [PATCH 2/2] mailed alone is that patch, with 1/2 named as missing
 * in a warning, not an error (#16; it was -EINVAL before). */
static void test_c7a_alone_is_missing_patch_1(void **state)
{
	const char *cases[] = { "C7a-body-line-From" };
	struct series **v = NULL;
	struct buf err = BUF_INIT;
	size_t n = 0;

	(void)state;
	assert_int_equal(load_cases(&v, &n, &err, cases, 1), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0]->npatches, 1);
	assert_int_equal(v[0]->patches[0].k, 2);
	assert_int_equal(v[0]->m, 2);
	assert_int_equal(v[0]->nmissing, 1);
	assert_int_equal(v[0]->missing[0], 1);
	assert_false(v[0]->cover_only);
	assert_non_null(strstr(buf_str(&err), "patch 1 of 2 of "));
	assert_non_null(strstr(buf_str(&err), "is missing"));
	assert_non_null(strstr(buf_str(&err), "C7a-body-line-From/01.eml"));
	series_free_all(v, n);
	buf_release(&err);
}

/* A1 v1's cover letter alone is a cover (its subject, no patches), not
 * "patch 1 is missing" (#16). */
static void test_cover_alone(void **state)
{
	char *path = fixture_path("A1-memcg-vmscan-tracepoints-v1/00.eml");
	char *paths[] = { path };
	struct series **v = NULL;
	struct buf err = BUF_INIT;
	size_t n = 0;

	(void)state;
	assert_int_equal(series_load(&v, &n, paths, 1, &err), 0);
	assert_int_equal(n, 1);
	assert_true(v[0]->cover_only);
	assert_int_equal(v[0]->npatches, 0);
	assert_int_equal(v[0]->m, 2);
	assert_int_equal(v[0]->nmissing, 0);
	assert_string_equal(v[0]->cover_subject, "mm: memcg: improve vmscan tracepoints");
	assert_int_equal((int)err.len, 0);
	series_free_all(v, n);
	free(path);
	buf_release(&err);
}

/* C1a: QP, RFC v2, Cc: list after '---' is not a trailer. */
static void test_c1a_qp(void **state)
{
	size_t n = 0;
	struct series **v = load1(&n, "C1a-qp-utf8");

	(void)state;
	assert_int_equal(n, 1);
	assert_true(v[0]->rfc);
	assert_int_equal(v[0]->version, 2);
	assert_null(v[0]->cover_subject);
	const struct patch *p = &v[0]->patches[0];
	assert_int_equal(p->k, 1);
	assert_int_equal(p->m, 1);
	assert_string_equal(p->subject, "cgroup: Track time in cgroup v2 freezer");
	assert_string_equal(p->author_name, "Dev Forty-Two");
	assert_int_equal(p->nfiles, 4);
	assert_string_equal(p->files[0], "Documentation/admin-guide/cgroup-v2.rst");
	assert_int_equal(p->ntrailers, 1);
	assert_trailer(p, 0, "Signed-off-by", "Dev Forty-Two <dev42@example.org>");
	assert_non_null(strstr(p->notes, "Karel Nov\xc3\xa1k"));
	assert_prefix(p->diff, "diff --git a/Documentation/admin-guide/cgroup-v2.rst "
		      "b/Documentation/admin-guide/cgroup-v2.rst\n");
	assert_null(strstr(p->diff, "=3D"));
	assert_all_diffs(v, n);
	series_free_all(v, n);
}

/* C2: base64, CRLF inside, lower-case user name as the display name. */
static void test_c2_base64_crlf(void **state)
{
	size_t n = 0;
	struct series **v = load1(&n, "C2-base64-singlepart-crlf");

	(void)state;
	const struct patch *p = &v[0]->patches[0];
	assert_string_equal(p->subject,
		"cgroup: Fix compilation issue due to cgroup_mutex not being exported");
	assert_string_equal(p->author_name, "dev53");
	assert_string_equal(p->author_email, "dev53@example.org");
	assert_int_equal(p->ntrailers, 1);
	assert_trailer(p, 0, "Signed-off-by", "dev fifty-three <dev53@example.org>");
	assert_null(strchr(p->diff, '\r'));
	assert_null(strchr(p->message, '\r'));
	assert_int_equal(p->nfiles, 1);
	assert_string_equal(p->files[0], "kernel/cgroup/cgroup.c");
	assert_null(p->corrupt);
	assert_all_diffs(v, n);
	series_free_all(v, n);
}

/* C3: a reply whose attachment is a complete format-patch. */
static void test_c3_reply_with_patch_attachment(void **state)
{
	size_t n = 0;
	struct series **v = load1(&n, "C3-multipart-mixed-patch-attachment");

	(void)state;
	assert_int_equal(n, 1);
	assert_int_equal(v[0]->npatches, 1);
	const struct patch *p = &v[0]->patches[0];
	/* the attachment's subject, not the reply's "Re: [PATCH -next] …" */
	assert_string_equal(p->subject, "cgroup/cpuset: fix bitwise shift in top_cpuset initialization");
	assert_string_equal(p->author_name, "Dev Fifty-Six");
	assert_string_equal(p->author_email, "dev56@example.org");
	assert_int_equal(p->nfiles, 1);
	assert_string_equal(p->files[0], "kernel/cgroup/cpuset.c");
	assert_int_equal(p->ntrailers, 2);
	assert_trailer(p, 0, "Fixes", "8996f93fc388 (\"cgroup/cpuset: Statically initialize more "
		       "members of top_cpuset\")");
	assert_null(strstr(p->diff, "\n> "));
	assert_null(strstr(p->diff, "bisect"));
	assert_non_null(strstr(p->diff, "+\t\t  (1 << CS_MEM_EXCLUSIVE) | (1 << CS_SCHED_LOAD_BALANCE)),"));
	assert_non_null(strstr(p->diff, "@@ -369,7 +369,7 @@"));
	assert_all_diffs(v, n);
	series_free_all(v, n);
}

/* A reply with only an inline (quoted or not) diff is not a new series. */
static void test_reply_is_skipped(void **state)
{
	size_t len;
	char *data = read_fixture("B2-block-wbt-locking-v1/01.eml", &len);
	char *s = strstr(data, "\nSubject: [PATCH 1/2]");
	struct buf mod = BUF_INIT, err = BUF_INIT;
	struct series **v = NULL;
	size_t n = 0;

	(void)state;
	assert_non_null(s);
	buf_append(&mod, data, (size_t)(s - data) + 10);
	buf_puts(&mod, "Re: ");
	buf_append(&mod, s + 10, len - (size_t)(s + 10 - data));
	assert_int_equal(series_load_buffer(&v, &n, mod.ptr, mod.len, "re.eml", &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "no patches in 're.eml'"));
	assert_non_null(strstr(buf_str(&err), "is a reply"));
	buf_release(&mod);
	buf_release(&err);
	free(data);
}

/* C4a: RFC 2047 Q author, quoted trailer name, two addresses. */
static void test_c4a_rfc2047_author(void **state)
{
	size_t n = 0;
	struct series **v = load1(&n, "C4a-rfc2047-utf8-q-author");

	(void)state;
	const struct patch *p = &v[0]->patches[0];
	assert_int_equal(v[0]->version, 2);
	assert_string_equal(p->author_name, "Karel Nov\xc3\xa1k");
	assert_string_equal(p->author_email, "dev17@example.org");
	assert_int_equal(p->ntrailers, 6);
	assert_string_equal(p->trailers[0].key, "Link");
	assert_non_null(strstr(p->trailers[0].value, "@host3.example.net"));
	assert_trailer(p, 1, "Reported-by", "\"Dev Fifty-Eight\" <dev58@example.org>");
	assert_string_equal(p->trailers[2].key, "Closes");
	assert_trailer(p, 3, "Cc", "Dev Fifty-Nine <dev59@example.org>");
	assert_trailer(p, 4, "Acked-by", "Dev Fifty-Eight <dev58@example.com>");
	assert_trailer(p, 5, "Signed-off-by", "Karel Nov\xc3\xa1k <dev17@example.org>");
	assert_non_null(strstr(p->notes, "20251217162744.352391-1-dev17@example.org"));
	assert_int_equal(p->nfiles, 2);
	assert_int_equal(p->tz_offset_min, 60);
	assert_all_diffs(v, n);
	series_free_all(v, n);
}

/* C5: whitespace-damaged by Outlook: flagged corrupt, with a reason. */
static void test_c5_corrupt_patch(void **state)
{
	size_t n = 0;
	struct series **v = load1(&n, "C5-crlf-base64-corrupt-patch");

	(void)state;
	const struct patch *p = &v[0]->patches[0];
	assert_string_equal(p->subject, "cgroups: Remove steal time from usage_usec");
	assert_string_equal(p->author_name, "Dev Sixty-Three");
	assert_int_equal(p->ntrailers, 3);
	assert_trailer(p, 0, "Fixes", "936f2a70f2077 (\"cgroup: add cpu.stat file to root cgroup\")");
	assert_trailer(p, 1, "Acked-by", "Dev Sixty-Four <dev64@example.org>");
	assert_trailer(p, 2, "Signed-off-by", "Dev Sixty-Three <dev63@example.org>");
	assert_non_null(p->corrupt);
	assert_non_null(strstr(p->corrupt, "corrupt patch"));
	assert_non_null(strstr(p->corrupt, "whitespace-damaged"));
	assert_int_equal(p->nfiles, 1);
	assert_string_equal(p->files[0], "kernel/cgroup/rstat.c");
	assert_null(strchr(p->diff, '\r'));
	assert_all_diffs(v, n);
	series_free_all(v, n);
}

/* A hunk that does not add up is corrupt too (a line lost its prefix). */
static void test_hunk_count_mismatch_is_corrupt(void **state)
{
	static const char mail[] =
		"From: A <a@example.org>\nSubject: [PATCH] x: y\n\nbody\n---\n"
		"diff --git a/f.c b/f.c\n--- a/f.c\n+++ b/f.c\n@@ -1,3 +1,3 @@\n a\n-b\n+c\nd\n";
	struct series **v = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(series_load_buffer(&v, &n, mail, strlen(mail), "x.eml", NULL), 0);
	assert_non_null(v[0]->patches[0].corrupt);
	assert_non_null(strstr(v[0]->patches[0].corrupt, "diff line 8"));
	series_free_all(v, n);
}

/* A stable review cover (hand-written after the public format, no real one
 * is at hand: tests/fixtures/mail-stable/README) is a review cycle; a
 * cover alone with a version-like tag but another title is not. */
static void test_stable_review_cover(void **state)
{
	char *path = fixture_path("../mail-stable/6.12.84-rc1-review-00.eml");
	char *paths[] = { path };
	struct series **v = NULL, **c = NULL;
	size_t n = 0, nc = 0;

	(void)state;
	assert_int_equal(series_load(&v, &n, paths, 1, NULL), 0);
	assert_int_equal(n, 1);
	assert_non_null(v[0]->stable_review);
	assert_string_equal(v[0]->stable_review, "6.12.84-rc1");
	assert_int_equal(v[0]->m, 35);
	assert_int_equal(v[0]->npatches, 0);
	c = load1(&nc, "C6a-base-commit-prereq-series");
	assert_null(c[0]->stable_review);
	series_free_all(v, n);
	series_free_all(c, nc);
	free(path);
}

/* C6a: base-commit and prerequisite-patch-id in the cover. */
static void test_c6a_base_commit_prereq(void **state)
{
	size_t n = 0;
	struct series **v = load1(&n, "C6a-base-commit-prereq-series");

	(void)state;
	assert_int_equal(n, 1);
	assert_int_equal(v[0]->version, 1);
	assert_string_equal(v[0]->base_commit, "f03359bca01bf4372cf2c118cd9a987a5951b1c8");
	assert_int_equal(v[0]->nprereq, 1);
	assert_string_equal(v[0]->prerequisite_patch_ids[0], "b901ece2a5b78503e2fb5480f20e304d36a0ea27");
	assert_null(v[0]->change_id);
	assert_int_equal(v[0]->npatches, 4);
	assert_int_equal(v[0]->patches[0].nfiles, 2);
	assert_string_equal(v[0]->patches[0].files[0], "tools/testing/selftests/cgroup/cgroup_util.h");
	assert_string_equal(v[0]->patches[1].files[0], "tools/testing/selftests/cgroup/test_memcontrol.c");
	assert_string_equal(v[0]->patches[2].files[0], "tools/testing/selftests/cgroup/test_cpu.c");
	assert_string_equal(v[0]->patches[3].files[0], "tools/testing/selftests/cgroup/test_zswap.c");
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(v[0]->patches[i].author_name, "Dev Sixty-Six");
	assert_all_diffs(v, n);
	series_free_all(v, n);
}

/* C7c: a full format-patch embedded after '---': its message is the real one. */
static void test_c7c_embedded_format_patch(void **state)
{
	size_t n = 0;
	struct series **v = load1(&n, "C7c-embedded-format-patch");

	(void)state;
	const struct patch *p = &v[0]->patches[0];
	assert_string_equal(p->subject, "Revert \"mm: add nodes= arg to memory.reclaim\"");
	assert_string_equal(p->author_name, "Dev Five");
	assert_string_equal(p->author_email, "dev5@example.com");
	assert_non_null(p->warning);
	assert_non_null(strstr(p->warning, "embedded"));
	assert_prefix(p->message, "Revert \"mm: add nodes= arg to memory.reclaim\"\n\n"
		      "This reverts commit 12a5d3955227b0d7e04fb793ccceeb2a1dd275c5.\n");
	assert_non_null(strstr(p->message, "\nFrom a follow up discussion it became clear"));
	assert_null(strstr(p->message, "Dev Nine,"));
	assert_int_equal(p->ntrailers, 1);
	assert_trailer(p, 0, "Signed-off-by", "Dev Five <dev5@example.com>");
	assert_int_equal(p->nfiles, 4);
	assert_string_equal(p->files[0], "Documentation/admin-guide/cgroup-v2.rst");
	assert_int_equal(p->date_s, 1671183993);  /* Fri, 16 Dec 2022 10:46:33 +0100 */
	assert_all_diffs(v, n);
	series_free_all(v, n);
}

/* D1: a kernel test robot report is not a series but is named as a
 * report, with what INDEX.md says to extract (#16: main dropped it as
 * "no patches"). */
static void test_d1_report_is_not_a_series(void **state)
{
	const char *cases[] = { "D1-lkp-vm-scalability-regression" };
	struct series **v = NULL;
	struct buf err = BUF_INIT;
	size_t n = 0;
	const struct lkp_report *r;

	(void)state;
	assert_int_equal(load_cases(&v, &n, &err, cases, 1), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0]->npatches, 0);
	assert_non_null(r = v[0]->report);
	assert_string_equal(r->metric, "vm-scalability.throughput");
	assert_true(r->change_pct > -36.61 && r->change_pct < -36.59);
	assert_string_equal(r->kind, "regression");
	assert_string_equal(r->commit, "8d59d2214c2362e7a9d185d80b613e632581af7b");
	assert_string_equal(r->commit_subject, "mm: memcg: make stats flushing threshold per-memcg");
	assert_string_equal(r->base, "e0bf1dc859");
	assert_string_equal(r->branch, "linus:master");
	assert_string_equal(r->tree, "https://git.kernel.org/cgit/linux/kernel/git/torvalds/linux.git master");
	assert_int_equal(r->nparams, 4);
	assert_string_equal(r->params[0].key, "runtime");
	assert_string_equal(r->params[0].value, "300s");
	assert_string_equal(r->params[2].value, "lru-shm");
	assert_int_equal(r->nfurther, 1);
	assert_string_equal(r->further[0].metric, "will-it-scale.per_process_ops");
	assert_true(r->further[0].change_pct > -32.31 && r->further[0].change_pct < -32.29);
	assert_string_equal(r->further[0].params[3].value, "tlb_flush2");
	series_free_all(v, n);
	buf_release(&err);
}

/* The seed's v6 series: b4 cover trailers, name from the change-id. */
static void test_v6_mbox(void **state)
{
	char *path = fixture_path("wb-dying-cgwb-flush-v6.mbox");
	struct series **v = NULL;
	struct buf err = BUF_INIT;
	size_t n = 0;

	(void)state;
	assert_int_equal(series_load(&v, &n, &path, 1, &err), 0);
	assert_int_equal(n, 1);
	struct series *s = v[0];
	assert_string_equal(s->name, "wb-dying-cgwb-flush");
	assert_int_equal(s->version, 6);
	assert_string_equal(s->base_commit, "168a8c13159c6e3f0f08da6f8fa2f633a91ba9fd");
	assert_string_equal(s->change_id, "20260926-wb-dying-cgwb-flush-06e260e2abad");
	assert_string_equal(s->cover_subject, "writeback: let foreign flushes reach dying cgwbs");
	assert_int_equal(s->npatches, 3);
	assert_int_equal(s->patches[0].nfiles, 1);
	assert_int_equal(s->patches[1].nfiles, 3);
	assert_int_equal(s->patches[2].nfiles, 5);
	assert_string_equal(s->patches[1].files[0], "include/linux/backing-dev-defs.h");
	assert_trailer(&s->patches[0], 0, "Suggested-by", "Tejun Heo <tj@kernel.org>");
	assert_int_equal(s->patches[0].ntrailers, 5);
	/* the diff ends with its last hunk, before "-- \n2.53.0" */
	const char *d = s->patches[0].diff;
	static const char end[] = " \tspin_unlock(&old_wb->list_lock);\n \n";
	assert_prefix(d, "diff --git a/fs/fs-writeback.c b/fs/fs-writeback.c\n");
	assert_string_equal(d + strlen(d) - strlen(end), end);
	for (size_t i = 0; i < 3; i++)
		assert_null(s->patches[i].corrupt);
	series_free_all(v, n);
	buf_release(&err);
	free(path);
}

/* One mailbox holding three revisions gives one series per vN. */
static void test_mailbox_with_revisions(void **state)
{
	const char *cases[] = { "A1-memcg-vmscan-tracepoints-v3", "A1-memcg-vmscan-tracepoints-v1",
				"A1-memcg-vmscan-tracepoints-v2" };
	struct buf mb = BUF_INIT, err = BUF_INIT;
	struct series **v = NULL;
	size_t n = 0;
	glob_t g;

	(void)state;
	case_files(&g, cases, 3);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char *data = NULL;
		size_t len;
		assert_int_equal(read_file(&data, &len, g.gl_pathv[i], 1 << 24), 0);
		buf_puts(&mb, "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n");
		buf_append(&mb, data, len);
		buf_puts(&mb, "\n");
		free(data);
	}
	globfree(&g);
	assert_int_equal(series_load_buffer(&v, &n, mb.ptr, mb.len, "a1.mbox", &err), 0);
	assert_int_equal(n, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(v[i]->version, i + 1);
		assert_int_equal(v[i]->npatches, 2);
		assert_int_equal(v[i]->patches[0].k, 1);
		assert_int_equal(v[i]->patches[1].k, 2);
		assert_non_null(strstr(v[i]->patches[0].source, "a1.mbox:"));
	}
	series_free_all(v, n);
	buf_release(&mb);
	buf_release(&err);
}

/* A second, different 1/2 in the same revision: duplicated, naming both. */
static void test_duplicated_k(void **state)
{
	size_t l0, l1;
	char *m0 = read_fixture("B2-block-wbt-locking-v1/00.eml", &l0);
	char *m1 = read_fixture("B2-block-wbt-locking-v1/01.eml", &l1);
	struct buf mb = BUF_INIT, err = BUF_INIT;
	struct series **v = NULL;
	size_t n = 0;

	(void)state;
	buf_puts(&mb, "From x Mon Sep 17 00:00:00 2001\n");
	buf_append(&mb, m0, l0);
	buf_puts(&mb, "\nFrom x Mon Sep 17 00:00:00 2001\n");
	buf_append(&mb, m1, l1);
	buf_puts(&mb, "\nFrom x Mon Sep 17 00:00:00 2001\n");
	/* the same patch again under another Message-ID: a resend mixed in */
	char *dup = strstr(m1, "20250319105518.468941-2-dev35@example.org");
	assert_non_null(dup);
	dup[0] = '3';
	dup[1] = '0';
	buf_append(&mb, m1, l1);
	assert_int_equal(series_load_buffer(&v, &n, mb.ptr, mb.len, "dup.mbox", &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "patch 1/2 is duplicated"));
	assert_non_null(strstr(buf_str(&err), "'dup.mbox:"));
	buf_release(&mb);
	buf_release(&err);
	free(m0);
	free(m1);
}

/* Patches come out ordered by k whatever the file order. */
static void test_order_by_k(void **state)
{
	char *paths[3];
	struct series **v = NULL;
	size_t n = 0;

	(void)state;
	paths[0] = fixture_path("B1-writeback-inode_to_wb-v3/02.eml");
	paths[1] = fixture_path("B1-writeback-inode_to_wb-v3/00.eml");
	paths[2] = fixture_path("B1-writeback-inode_to_wb-v3/01.eml");
	assert_int_equal(series_load(&v, &n, paths, 3, NULL), 0);
	assert_int_equal(v[0]->npatches, 2);
	assert_int_equal(v[0]->patches[0].k, 1);
	assert_string_equal(v[0]->patches[0].subject, "gfs2: replace sd_aspace with sd_inode");
	assert_int_equal(v[0]->patches[1].k, 2);
	series_free_all(v, n);
	for (int i = 0; i < 3; i++)
		free(paths[i]);
}

static void test_missing_file(void **state)
{
	char *path = (char *)"/nonexistent/x.mbox";
	struct series **v = NULL;
	struct buf err = BUF_INIT;
	size_t n = 0;

	(void)state;
	assert_int_equal(series_load(&v, &n, &path, 1, &err), -ENOENT);
	assert_string_equal(buf_str(&err), "cannot read '/nonexistent/x.mbox': No such file or directory");
	buf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a1_three_revisions),
		cmocka_unit_test(test_a2_irregular_tags_inbody_from),
		cmocka_unit_test(test_a4_rfc_revisions),
		cmocka_unit_test(test_b1_second_author),
		cmocka_unit_test(test_b2_trailers_and_dedupe),
		cmocka_unit_test(test_c7a_alone_is_missing_patch_1),
		cmocka_unit_test(test_cover_alone),
		cmocka_unit_test(test_c1a_qp),
		cmocka_unit_test(test_c2_base64_crlf),
		cmocka_unit_test(test_c3_reply_with_patch_attachment),
		cmocka_unit_test(test_reply_is_skipped),
		cmocka_unit_test(test_c4a_rfc2047_author),
		cmocka_unit_test(test_c5_corrupt_patch),
		cmocka_unit_test(test_hunk_count_mismatch_is_corrupt),
		cmocka_unit_test(test_c6a_base_commit_prereq),
		cmocka_unit_test(test_stable_review_cover),
		cmocka_unit_test(test_c7c_embedded_format_patch),
		cmocka_unit_test(test_d1_report_is_not_a_series),
		cmocka_unit_test(test_v6_mbox),
		cmocka_unit_test(test_mailbox_with_revisions),
		cmocka_unit_test(test_duplicated_k),
		cmocka_unit_test(test_order_by_k),
		cmocka_unit_test(test_missing_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
