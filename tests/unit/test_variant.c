/* test_variant.c - the variant's one JSON form: every field survives the
 * round trip, specs written by the older writers (job_store's json_pack,
 * the bisect oracle's, the web fixture's) read back, bad specs are named,
 * and job_store writes through it into a real sqlite store. */
#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "store/db.h"
#include "store/db_compare.h"
#include "exec/job.h"
#include "util.h"
#include "kernel/variant.h"
#include "testutil.h"

/* When struct variant grows a field, this fails to compile: add the field
 * to variant_to_json/variant_from_json and to full_variant() and
 * assert_same() below, then update the size. */
_Static_assert(sizeof(struct variant) == 104,
	       "struct variant changed: extend its JSON pair and this test");

static char **strv(const char *a, const char *b)
{
	char **v = xcalloc(3, sizeof(*v));
	v[0] = xstrdup(a);
	v[1] = xstrdup(b);
	return v;
}

/* Every field set, each to a value no other field has. */
static void full_variant(struct variant *v)
{
	*v = (struct variant){
		.kind = VARIANT_SERIES, .name = xstrdup("+ v6 2-3"),
		.base = xstrdup("v6.12.117"), .series = xstrdup("/mail/wb-v6.mbox"),
		.patches = xstrdup("2-3"), .version = 6, .kernel = xstrdup("/boot/vmlinuz-x"),
		.build_base = xstrdup("v6.12.116"), .config = strv("debug-lockdep", "/k/fs.config"),
		.nconfig = 2, .subject = xstrdup("writeback: flush the dying wb"),
		.author = xstrdup("Dev One <dev1@example.org>"), .author_time = 1700000000,
	};
}

static void assert_str_same(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void assert_same(const struct variant *a, const struct variant *b)
{
	assert_int_equal(a->kind, b->kind);
	assert_str_same(a->name, b->name);
	assert_str_same(a->base, b->base);
	assert_str_same(a->series, b->series);
	assert_str_same(a->patches, b->patches);
	assert_int_equal(a->version, b->version);
	assert_str_same(a->kernel, b->kernel);
	assert_str_same(a->build_base, b->build_base);
	assert_int_equal(a->nconfig, b->nconfig);
	assert_int_equal(!a->config, !b->config);
	for (size_t i = 0; i < a->nconfig; i++)
		assert_string_equal(a->config[i], b->config[i]);
	assert_str_same(a->subject, b->subject);
	assert_str_same(a->author, b->author);
	assert_int_equal(a->author_time, b->author_time);
}

static void test_round_trip_keeps_every_field(void **state)
{
	struct variant v, back, copy;
	struct buf err = BUF_INIT;
	char *json;

	(void)state;
	full_variant(&v);
	json = variant_to_json(&v);
	assert_int_equal(variant_from_json(&back, v.name, json, &err), 0);
	assert_same(&v, &back);
	/* the same text again: key order is fixed */
	char *again = variant_to_json(&back);
	assert_string_equal(json, again);
	free(again);
	variant_copy(&copy, &v);
	assert_same(&v, &copy);
	variant_release(&copy);
	free(json);
	variant_release(&back);

	/* an empty config list is kept as one; no list stays no list */
	for (size_t i = 0; i < v.nconfig; i++)
		free(v.config[i]);
	v.nconfig = 0;
	json = variant_to_json(&v);
	assert_non_null(strstr(json, "\"config\":[]"));
	assert_int_equal(variant_from_json(&back, NULL, json, &err), 0);
	assert_non_null(back.config);
	assert_int_equal(back.nconfig, 0);
	variant_release(&back);
	free(json);
	free(v.config);
	v.config = NULL;
	json = variant_to_json(&v);
	assert_null(strstr(json, "config"));
	assert_int_equal(variant_from_json(&back, NULL, json, &err), 0);
	assert_null(back.config);
	variant_release(&back);
	free(json);
	variant_release(&v);
	variant_release(NULL);
	buf_release(&err);
}

/* job_store's writer before variant.c, as it was (job.c). */
static char *old_job_store_spec(const char *kind, const char *base, const char *series,
				const char *patches, const char *kernel)
{
	json_t *cfg = json_pack("[s]", "debug-lockdep");
	json_t *vs = json_pack("{s:s,s:s?,s:s?,s:s?,s:s?,s:o}", "kind", kind, "base", base,
			       "series", series, "patches", patches, "kernel", kernel,
			       "config", cfg);
	char *out = json_dumps(vs, JSON_COMPACT | JSON_PRESERVE_ORDER);

	json_decref(vs);
	return out;
}

static void test_old_specs_read_back(void **state)
{
	struct buf err = BUF_INIT;
	struct variant v;
	char *old;

	(void)state;
	/* a compare job's series variant: nulls for what it has not */
	old = old_job_store_spec("series", "v6.12.117", "/m/v6.mbox", "2-3", NULL);
	assert_non_null(strstr(old, "\"kernel\":null"));
	assert_int_equal(variant_from_json(&v, "+ v6 2-3", old, &err), 0);
	assert_int_equal(v.kind, VARIANT_SERIES);
	assert_string_equal(v.base, "v6.12.117");
	assert_string_equal(v.series, "/m/v6.mbox");
	assert_string_equal(v.patches, "2-3");
	assert_null(v.kernel);
	assert_int_equal(v.nconfig, 1);
	assert_string_equal(v.config[0], "debug-lockdep");
	variant_release(&v);
	free(old);
	/* ... and a prebuilt one */
	old = old_job_store_spec("prebuilt", NULL, NULL, NULL, "/boot/vmlinuz-6.12.107");
	assert_int_equal(variant_from_json(&v, "6.12.107", old, &err), 0);
	assert_int_equal(v.kind, VARIANT_PREBUILT);
	assert_null(v.base);
	assert_string_equal(v.kernel, "/boot/vmlinuz-6.12.107");
	/* what the new writer makes of it: the same keys, nulls left out */
	char *now = variant_to_json(&v);
	assert_string_equal(now, "{\"kind\":\"prebuilt\",\"kernel\":\"/boot/vmlinuz-6.12.107\","
			    "\"config\":[\"debug-lockdep\"]}");
	free(now);
	variant_release(&v);
	free(old);

	/* the bisect oracle's candidate, as bisect_exec.c wrote it */
	json_t *b = json_pack("{s:s, s:s, s:s, s:s, s:s?, s:I}", "kind", "base", "base",
			      "0123456789abcdef0123456789abcdef01234567", "subject", "mm: broken c",
			      "build_base", "76543210fedcba9876543210fedcba9876543210",
			      "author", "Dev Eloper <dev@example.org>",
			      "author_time", (json_int_t)1700000123);
	old = json_dumps(b, JSON_COMPACT);
	json_decref(b);
	assert_int_equal(variant_from_json(&v, "0123456789ab mm: broken c", old, &err), 0);
	assert_int_equal(v.kind, VARIANT_BASE);
	assert_string_equal(v.subject, "mm: broken c");
	assert_string_equal(v.build_base, "76543210fedcba9876543210fedcba9876543210");
	assert_string_equal(v.author, "Dev Eloper <dev@example.org>");
	assert_int_equal(v.author_time, 1700000123);
	assert_null(v.config);
	/* the new writer gives the oracle's text back, byte for byte */
	now = variant_to_json(&v);
	assert_string_equal(now, old);
	free(now);
	variant_release(&v);
	free(old);
	/* its prebuilt candidate, and the web fixture's (tests/fixtures/web-bisect.sh) */
	assert_int_equal(variant_from_json(&v, NULL, "{\"kind\":\"prebuilt\",\"kernel\":\"/k/bzImage\"}",
					   &err), 0);
	assert_string_equal(v.kernel, "/k/bzImage");
	variant_release(&v);
	assert_int_equal(variant_from_json(&v, NULL, "{\"kind\":\"base\",\"base\":\"abc\","
		"\"subject\":\"s\",\"build_base\":\"def\",\"author\":\"Dev Eloper <dev@example.org>\","
		"\"author_time\":1700000000}", &err), 0);
	assert_string_equal(v.build_base, "def");
	variant_release(&v);
	buf_release(&err);
}

static void expect_bad(const char *json, const char *want)
{
	struct buf err = BUF_INIT;
	struct variant v = { .base = (char *)"untouched" };

	assert_int_equal(variant_from_json(&v, "x", json, &err), -EINVAL);
	if (!strstr(buf_str(&err), want))
		fprintf(stderr, "error was: %s\n", buf_str(&err));
	assert_non_null(strstr(buf_str(&err), want));
	assert_string_equal(v.base, "untouched");       /* *out only on success */
	buf_release(&err);
}

static void test_bad_specs_are_named(void **state)
{
	(void)state;
	expect_bad("{\"kind\":", "variant spec is not a JSON object");
	expect_bad("[1]", "variant spec is not a JSON object");
	expect_bad(NULL, "none stored");
	expect_bad("{\"base\":\"v1\"}", "no 'kind' (expected base, series or prebuilt)");
	expect_bad("{\"kind\":3}", "'kind' is not a string");
	expect_bad("{\"kind\":\"tarball\"}", "unknown kind 'tarball'");
	expect_bad("{\"kind\":\"base\",\"base\":7}", "'base' is not a string");
	expect_bad("{\"kind\":\"base\"}", "a base variant needs 'base'");
	expect_bad("{\"kind\":\"series\",\"base\":\"v1\"}", "a series variant needs 'series'");
	expect_bad("{\"kind\":\"prebuilt\",\"kernel\":null}", "a prebuilt variant needs 'kernel'");
	expect_bad("{\"kind\":\"base\",\"base\":\"v1\",\"config\":\"fs\"}", "'config' is not a list");
	expect_bad("{\"kind\":\"base\",\"base\":\"v1\",\"config\":[\"fs\",2]}",
		   "'config' item 2 is not a string");
	expect_bad("{\"kind\":\"base\",\"base\":\"v1\",\"author_time\":\"today\"}",
		   "'author_time' is not a whole number");
}

/* job_store writes each variant's spec through variant_to_json; what the
 * store holds reads back as the variants job_variants() made. */
static void test_job_store_writes_typed_specs(void **state)
{
	struct tmpdir *td = *state;
	struct job_spec *s = job_spec_new();
	struct buf err = BUF_INIT;
	struct db *db = NULL;
	struct db_variant_row *rows = NULL;
	struct variant *want = NULL;
	size_t n = 0, nwant;
	int64_t job;
	char *path = xasprintf("%s/kc.db", td->path);

	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(job_spec_parse_ini(s, "[job]\nname = t\ntree = /t\nbase = v6.12.117\n"
					    "series = /m/a.mbox /m/b.mbox\npatches = 1-2\n"
					    "config = debug-lockdep\naa = yes\n", "job.ini", &err), 0);
	assert_int_equal(job_store(db, s, NULL, &job, &err), 0);
	nwant = job_variants(s, &want);
	assert_int_equal(db_job_variants(db, job, &rows, &n, NULL), 0);
	assert_int_equal(n, nwant);
	assert_int_equal(n, 4);
	for (size_t i = 0; i < n; i++) {
		struct variant got;

		assert_int_equal(variant_from_json(&got, rows[i].name, rows[i].spec_json, &err), 0);
		assert_same(&got, &want[i]);
		assert_int_equal(got.nconfig, 1);
		variant_release(&got);
	}
	assert_int_equal(want[1].kind, VARIANT_BASE);           /* the A/A copy */
	assert_string_equal(want[1].name, "base (v6.12.117) A/A");
	assert_int_equal(want[3].kind, VARIANT_SERIES);
	assert_string_equal(want[3].series, "/m/b.mbox");
	assert_string_equal(want[3].patches, "1-2");
	db_variant_rows_free(rows, n);
	job_variants_free(want, nwant);
	job_spec_free(s);
	db_close(db);
	buf_release(&err);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_keeps_every_field),
		cmocka_unit_test(test_old_specs_read_back),
		cmocka_unit_test(test_bad_specs_are_named),
		cmocka_unit_test_setup_teardown(test_job_store_writes_typed_specs, tmpdir_setup,
						tmpdir_teardown),
	};
	return cmocka_run_group_tests_name("variant", tests, NULL, NULL);
}
