/* test_report.c - the cover-letter table from a store filled by ingest,
 * against golden files in tests/fixtures/report/ (set KCANARY_UPDATE_GOLDEN=1
 * to rewrite them after a deliberate format change, then review the diff). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "store/db.h"
#include "store/db_cells.h"
#include "store/db_runs.h"
#include "store/db_writer.h"
#include "store/db_lab.h"
#include "store/db_overhead.h"
#include "guest/ingest.h"
#include "judge/report.h"
#include "util.h"
#include "testutil.h"

#ifndef FIXTURES
#define FIXTURES "tests/fixtures"
#endif

static struct db *open_db(struct tmpdir *td)
{
	struct db *db = NULL;
	char *path = xasprintf("%s/kc.db", td->path);
	assert_int_equal(db_open(&db, path, NULL), 0);
	free(path);
	return db;
}

/* Store one fixture stream as a run of variant in cell. */
static int64_t add_run(struct db *db, int64_t job, const char *variant,
		       const char *stream, const char *status_override)
{
	int64_t v, run;
	char *path = xasprintf(FIXTURES "/streams/%s", stream), *text = NULL;
	size_t len;
	struct ingest *in = NULL;
	const char *cell = "fs=ext4 workload=wb-handover rate_mbps=250 measure_s=120";
	const char *params = "{\"fs\":\"ext4\",\"measure_s\":\"120\",\"rate_mbps\":\"250\","
			     "\"workload\":\"wb-handover\"}";

	assert_int_equal(read_file(&text, &len, path, 1 << 24), 0);
	assert_int_equal(db_variant_get(db, &v, job, variant, NULL), 0);
	assert_int_equal(db_run_create(db, &run, job, v, cell, 0, "ext4", params, NULL), 0);
	assert_int_equal(ingest_open(&in, db, run, NULL), 0);
	assert_int_equal(ingest_feed(in, text, len, NULL), 0);
	assert_int_equal(ingest_close(in, NULL, NULL), 0);
	if (status_override)
		assert_int_equal(db_run_set_status(db, run, status_override, "watchdog fired", NULL), 0);
	free(text);
	free(path);
	return run;
}

static void check_golden(const char *name, const char *got)
{
	char *path = xasprintf(FIXTURES "/report/%s", name), *want = NULL;
	size_t len;
	int update = golden_update();

	assert_int_not_equal(update, -1);
	if (update) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(got, f);
		fclose(f);
	}
	assert_int_equal(read_file(&want, &len, path, 1 << 20), 0);
	if (strcmp(want, got))
		fprintf(stderr, "--- %s (golden)\n%s--- got\n%s", path, want, got);
	assert_string_equal(want, got);
	free(want);
	free(path);
}

static int64_t seed_job(struct db *db)
{
	int64_t job;
	assert_int_equal(db_job_create(db, &job, "dying-cgwb", "compare", NULL, NULL), 0);
	add_run(db, job, "base (v6.12.117)", "lag-85.3.jsonl", NULL);
	add_run(db, job, "+ v6 2/3", "lag-1.0.jsonl", NULL);
	add_run(db, job, "base (v6.12.117)", "lag-46.9.jsonl", NULL);
	add_run(db, job, "+ v6 2/3", "lag-1.2.jsonl", NULL);
	add_run(db, job, "base (v6.12.117)", "lag-52.1.jsonl", NULL);
	add_run(db, job, "+ v6 2/3", "lag-1.2.jsonl", NULL);
	return job;
}

static void test_cover_letter_formats(void **state)
{
	struct db *db = open_db(*state);
	int64_t job = seed_job(db);
	static const struct { enum report_format fmt; const char *golden; } cases[] = {
		{ REPORT_TEXT, "cover.txt" },
		{ REPORT_MARKDOWN, "cover.md" },
		{ REPORT_CSV, "cover.csv" },
		{ REPORT_JSON, "cover.json" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct report *rep = NULL;
		struct buf out = BUF_INIT;
		assert_int_equal(report_build(&rep, db, job, NULL, NULL), 0);
		assert_int_equal(report_format(&out, rep, cases[i].fmt), 0);
		check_golden(cases[i].golden, buf_str(&out));
		report_free(rep);
		buf_release(&out);
	}
	/* the text table fits an email: no line over 80 columns */
	struct report *rep = NULL;
	struct buf out = BUF_INIT;
	assert_int_equal(report_build(&rep, db, job, NULL, NULL), 0);
	report_format(&out, rep, REPORT_TEXT);
	for (char *line = out.ptr, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		assert_true(n <= 80);
	}
	assert_non_null(strstr(out.ptr, "-97.7% (p=0.10, MWU)"));
	assert_non_null(strstr(out.ptr, "stalled (worst lag > 5s): base 3 of 3, + v6 2/3 0 of 3"));
	report_free(rep);
	buf_release(&out);
	db_close(db);
}

/* A failed variant is shown with its reason and the others still report;
 * a timed-out run shows its status and carries no value; an incomplete
 * run's value comes from its samples and is marked; 4 against 4 can reach
 * p < 0.05, so no note then. */
static void test_failures_and_partial_runs(void **state)
{
	struct db *db = open_db(*state);
	int64_t job, vfail;
	struct report *rep = NULL;
	struct buf out = BUF_INIT;

	assert_int_equal(db_job_create(db, &job, "mixed", "compare", NULL, NULL), 0);
	add_run(db, job, "base", "lag-85.3.jsonl", NULL);
	add_run(db, job, "base", "lag-46.9.jsonl", NULL);
	add_run(db, job, "base", "lag-52.1.jsonl", NULL);
	add_run(db, job, "base", "incomplete-30.jsonl", NULL);
	add_run(db, job, "+ v6 2/3", "lag-1.0.jsonl", NULL);
	add_run(db, job, "+ v6 2/3", "lag-1.2.jsonl", NULL);
	add_run(db, job, "+ v6 2/3", "lag-1.2.jsonl", NULL);
	add_run(db, job, "+ v6 2/3", "lag-1.0.jsonl", NULL);
	add_run(db, job, "+ v6 2/3", "lag-1.0.jsonl", "timeout");
	assert_int_equal(db_variant_get(db, &vfail, job, "+ v6 1/3", NULL), 0);
	assert_int_equal(db_exec(db, "UPDATE variants SET status = 'apply-failed', error ="
		" 'cannot apply patch 1/3 ''writeback: clear the old wb''s dirty IO state'':"
		" fs/fs-writeback.c hunk @@ -566,6 +566,12 @@' WHERE name = '+ v6 1/3'", NULL), 0);

	assert_int_equal(report_build(&rep, db, job, NULL, NULL), 0);
	assert_int_equal(report_format(&out, rep, REPORT_TEXT), 0);
	const char *t = buf_str(&out);
	/* the incomplete run stored 19 s of a lag triangle peaking at 30 s
	 * (t = 15) and no summary: its value is the max of its samples */
	assert_non_null(strstr(t, "30.0s*"));
	assert_non_null(strstr(t, "timeout"));
	assert_non_null(strstr(t, "* incomplete run"));
	assert_non_null(strstr(t, "  + v6 1/3  apply-failed\n"));
	assert_non_null(strstr(t, "+ v6 1/3: apply-failed: cannot apply patch 1/3"));
	assert_non_null(strstr(t, "stalled (worst lag > 5s): base 4 of 4, + v6 2/3 0 of 4"));
	assert_null(strstr(t, "cannot reach p < 0.05"));
	/* 4 against 4, separated: p = 2/70 = 0.029 */
	assert_non_null(strstr(t, "-97.8% (p=0.03, MWU)"));
	report_free(rep);

	/* a threshold and another metric from the summary */
	struct report_opts ro = { .metric = "mean_lag_s", .threshold = 20, .has_threshold = true };
	buf_reset(&out);
	assert_int_equal(report_build(&rep, db, job, &ro, NULL), 0);
	assert_int_equal(report_format(&out, rep, REPORT_TEXT), 0);
	assert_non_null(strstr(buf_str(&out), "Mean lag behind schedule over 120s"));
	assert_non_null(strstr(buf_str(&out), "stalled (mean lag > 20s): base 3 of 4"));
	report_free(rep);
	buf_release(&out);

	assert_int_equal(report_build(&rep, db, 999, NULL, NULL), -ENOENT);
	db_close(db);
}

/* Store one fixture stream as a run of variant with mode in its cell
 * (the seed's control: the old cgroup removed, or kept alive). */
static int64_t add_mode_run_m(struct db *db, int64_t job, const char *variant, const char *mode,
			      const char *stream, const char *measure_s)
{
	int64_t v, run;
	char *path = xasprintf(FIXTURES "/streams/%s", stream), *text = NULL;
	char *cell = xasprintf("fs=ext4 mode=%s", mode);
	char *params = xasprintf("{\"fs\":\"ext4\",\"measure_s\":\"%s\",\"mode\":\"%s\","
				 "\"workload\":\"wb-handover\"}", measure_s, mode);
	size_t len;
	struct ingest *in = NULL;

	assert_int_equal(read_file(&text, &len, path, 1 << 24), 0);
	assert_int_equal(db_variant_get(db, &v, job, variant, NULL), 0);
	assert_int_equal(db_run_create(db, &run, job, v, cell, 0, "ext4", params, NULL), 0);
	assert_int_equal(ingest_open(&in, db, run, NULL), 0);
	assert_int_equal(ingest_feed(in, text, len, NULL), 0);
	assert_int_equal(ingest_close(in, NULL, NULL), 0);
	free(text);
	free(path);
	free(cell);
	free(params);
	return run;
}

static int64_t add_mode_run(struct db *db, int64_t job, const char *variant, const char *mode,
			    const char *stream)
{
	return add_mode_run_m(db, job, variant, mode, stream, "120");
}

static char *report_text(struct db *db, int64_t job, const struct report_opts *ro)
{
	struct report *rep = NULL;
	struct buf out = BUF_INIT, err = BUF_INIT;
	int r = report_build(&rep, db, job, ro, &err);
	if (r)
		fprintf(stderr, "report_build: %s\n", buf_str(&err));
	assert_int_equal(r, 0);
	assert_int_equal(report_format(&out, rep, REPORT_TEXT), 0);
	report_free(rep);
	buf_release(&err);
	return buf_detach(&out);
}

/* removed against alive on one kernel: one table, not two, with the
 * change and the p-value; the per-run probe counts and "k of n". On the
 * old code --by did not exist and the two modes were two tables with no
 * comparison between them. */
static void test_by_knob(void **state)
{
	struct db *db = open_db(*state);
	int64_t job;
	static const char *removed[] = { "lag-85.3.jsonl", "lag-46.9.jsonl", "lag-52.1.jsonl",
					 "lag-46.9.jsonl" };
	static const char *alive[] = { "lag-1.0.jsonl", "lag-1.2.jsonl", "lag-1.2.jsonl",
				       "lag-1.0.jsonl" };

	assert_int_equal(db_job_create(db, &job, "modes", "compare", NULL, NULL), 0);
	for (int i = 0; i < 4; i++) {
		add_mode_run(db, job, "6.12.117", "removed", removed[i]);
		add_mode_run(db, job, "6.12.117", "alive", alive[i]);
	}
	/* by variant (the default): each mode is a cell of its own */
	char *t = report_text(db, job, NULL);
	assert_non_null(strstr(t, "(wb-handover, ext4, mode=removed)"));
	assert_non_null(strstr(t, "(wb-handover, ext4, mode=alive)"));
	assert_null(strstr(t, "MWU"));
	free(t);

	struct report_opts ro = { .by = "mode" };
	t = report_text(db, job, &ro);
	/* one table: the variant is the cell, the modes are its rows */
	assert_non_null(strstr(t, "over 120s (6.12.117, wb-handover, ext4):\n"));
	assert_null(strstr(t, "mode=removed)"));
	assert_non_null(strstr(t, "  mode=removed     85.3s   46.9s   52.1s   46.9s    49.5s\n"));
	assert_non_null(strstr(t, "  mode=alive        1.0s    1.2s    1.2s    1.0s     1.1s"
				  "   -97.8% (p=0.03, MWU)\n"));
	assert_non_null(strstr(t, "stalled (worst lag > 5s): mode=removed 4 of 4, mode=alive 0 of 4\n"));
	assert_non_null(strstr(t, "shift vs mode=removed (Hodges-Lehmann, 95% CI):\n      mode=alive"));
	assert_non_null(strstr(t, "  per run: mode=removed 300 300 300 300, mode=alive 0 0 0 0\n"));
	assert_non_null(strstr(t, "  -ENOENT in 4 of 4 mode=removed runs, 0 of 4 mode=alive runs\n"));
	free(t);

	/* another baseline; its change column makes the row 82 columns, so
	 * the runs wrap into two blocks (issue 35 item 7e: <= 80 columns) */
	ro.baseline = "alive";
	t = report_text(db, job, &ro);
	assert_non_null(strstr(t, "  mode=removed     85.3s   46.9s\n"));
	assert_non_null(strstr(t, "                   run 3   run 4   median\n"));
	assert_non_null(strstr(t, "  mode=removed     52.1s   46.9s    49.5s"
				  "   +4400.0% (p=0.03, MWU)\n"));
	free(t);

	/* the job file's `by` and `baseline` (stored in the spec) are the default */
	assert_int_equal(db_exec(db, "UPDATE jobs SET spec_json ="
				 " '{\"by\":\"mode\",\"baseline\":\"alive\"}'", NULL), 0);
	t = report_text(db, job, NULL);
	assert_non_null(strstr(t, "+4400.0% (p=0.03, MWU)"));
	free(t);
	assert_int_equal(db_exec(db, "UPDATE jobs SET spec_json = '{}'", NULL), 0);

	/* an axis the job does not have, a baseline it does not have */
	struct report *rep = NULL;
	struct buf err = BUF_INIT;
	struct report_opts bad = { .by = "nosuch" };
	assert_int_equal(report_build(&rep, db, job, &bad, &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "job 'modes' has no axis 'nosuch'"));
	assert_non_null(strstr(buf_str(&err), "mode"));
	buf_reset(&err);
	struct report_opts badb = { .by = "mode", .baseline = "fresh" };
	assert_int_equal(report_build(&rep, db, job, &badb, &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "baseline 'fresh' is not a value of axis 'mode'"
				  " (its values: 'removed', 'alive')"));
	buf_release(&err);

	/* the same numbers in JSON, under "groups" */
	struct report_opts ro2 = { .by = "mode" };
	struct buf out = BUF_INIT;
	assert_int_equal(report_build(&rep, db, job, &ro2, NULL), 0);
	assert_int_equal(report_format(&out, rep, REPORT_JSON), 0);
	assert_non_null(strstr(buf_str(&out), "\"by\": \"mode\""));
	assert_non_null(strstr(buf_str(&out), "\"groups\""));
	assert_non_null(strstr(buf_str(&out), "\"value\": \"alive\""));
	report_free(rep);
	buf_release(&out);
	db_close(db);
}

/* variant x mode: the patch helps only when the old cgroup is removed.
 * The 2-D table gives each entry's median, k of n and change against
 * (base, removed), and the interaction line its difference of differences
 * with the permutation test; on the old code --by took no second axis. */
static void test_by_two_axes(void **state)
{
	struct db *db = open_db(*state);
	int64_t job;
	static const char *stall[] = { "lag-85.3.jsonl", "lag-46.9.jsonl", "lag-52.1.jsonl",
				       "lag-46.9.jsonl" };
	static const char *fine[] = { "lag-1.0.jsonl", "lag-1.2.jsonl", "lag-1.2.jsonl",
				      "lag-1.0.jsonl" };

	assert_int_equal(db_job_create(db, &job, "patch-x-mode", "compare", NULL, NULL), 0);
	for (int i = 0; i < 4; i++) {
		add_mode_run(db, job, "base (v6.12.117)", "removed", stall[i]);
		add_mode_run(db, job, "base (v6.12.117)", "alive", fine[i]);
		add_mode_run(db, job, "+ v6 2/3", "removed", fine[i]);
		add_mode_run(db, job, "+ v6 2/3", "alive", fine[i]);
	}
	struct report_opts ro = { .by = "variant,mode" };
	char *t = report_text(db, job, &ro);
	assert_non_null(strstr(t, "over 120s (wb-handover, ext4):\n"));
	assert_non_null(strstr(t, "  median, stalled > 5s             mode=removed      mode=alive\n"
				  "  base (v6.12.117)                    49.5s 4/4        1.1s 0/4\n"
				  "  + v6 2/3                             1.1s 0/4        1.1s 0/4\n"));
	assert_non_null(strstr(t, "  change vs base / mode=removed    mode=removed      mode=alive\n"
				  "  base (v6.12.117)                     baseline   -97.8% p=0.03\n"
				  "  + v6 2/3                        -97.8% p=0.03   -97.8% p=0.03\n"));
	assert_non_null(strstr(t, "interaction: + v6 2/3 against base is -48.4s with mode=removed,\n"
				  "      0.0s with mode=alive;\n"
				  "      difference of differences +48.4s (p<0.001, permutation,"
				  " Freedman-Lane)\n"));
	assert_non_null(strstr(t, "  -ENOENT in 4 of 4 base / mode=removed runs, 0 of 4 base / mode=alive"));
	/* every line fits an email */
	for (char *line = t, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		assert_true((nl ? (size_t)(nl - line) : strlen(line)) <= 80);
	}
	free(t);
	/* the JSON carries the interaction */
	struct report *rep = NULL;
	struct buf out = BUF_INIT;
	assert_int_equal(report_build(&rep, db, job, &ro, NULL), 0);
	assert_int_equal(report_format(&out, rep, REPORT_JSON), 0);
	assert_non_null(strstr(buf_str(&out), "\"by\": \"variant,mode\""));
	assert_non_null(strstr(buf_str(&out), "\"difference_of_differences\": 48.4"));
	report_free(rep);
	buf_release(&out);
	db_close(db);
}

/* --prefixes over two revisions: the revision x patch-prefix matrix,
 * every entry against the base (--by revision,patches); on the old code
 * there was no such axis. */
static void test_revision_by_prefix(void **state)
{
	struct db *db = open_db(*state);
	int64_t job;
	static const struct { const char *variant, *streams[3]; } v[] = {
		{ "base (v6.12.117)", { "lag-85.3.jsonl", "lag-46.9.jsonl", "lag-52.1.jsonl" } },
		{ "+ v5 1", { "lag-46.9.jsonl", "lag-52.1.jsonl", "lag-85.3.jsonl" } },
		{ "+ v5 1-2", { "lag-1.0.jsonl", "lag-1.2.jsonl", "lag-1.2.jsonl" } },
		{ "+ v6 1", { "lag-52.1.jsonl", "lag-46.9.jsonl", "lag-85.3.jsonl" } },
		{ "+ v6 1-2", { "lag-1.2.jsonl", "lag-1.0.jsonl", "lag-1.0.jsonl" } },
	};

	assert_int_equal(db_job_create(db, &job, "prefixes", "compare", NULL, NULL), 0);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		for (int k = 0; k < 3; k++)
			add_run(db, job, v[i].variant, v[i].streams[k], NULL);
	struct report_opts ro = { .by = "revision,patches" };
	char *t = report_text(db, job, &ro);
	assert_non_null(strstr(t, "  median, stalled > 5s             patches none       patches 1     patches 1-2\n"
				  "  base                                52.1s 3/3               -               -\n"
				  "  v5                                          -       52.1s 3/3        1.2s 0/3\n"
				  "  v6                                          -       52.1s 3/3        1.0s 0/3\n"));
	assert_non_null(strstr(t, "  v6                                          -    +0.0% p=1.00   -98.1% p=0.10\n"
				  "  (two-sided Mann-Whitney U against the baseline)\n\ncgroup_writeback_by_id"));
	free(t);
	/* one part as the axis: the other stays in the cell, and the base
	 * is every revision's baseline */
	struct report_opts ro1 = { .by = "patches" };
	t = report_text(db, job, &ro1);
	assert_non_null(strstr(t, "(revision v6, wb-handover, ext4, rate_mbps=250):\n\n"
				  "                   run 1   run 2   run 3   median\n"
				  "  patches none     85.3s   46.9s   52.1s    52.1s\n"
				  "  patches 1        52.1s   46.9s   85.3s    52.1s   +0.0% (p=1.00, MWU)\n"
				  "  patches 1-2       1.2s    1.0s    1.0s     1.0s   -98.1% (p=0.10, MWU)\n"));
	assert_null(strstr(t, "(revision base"));
	free(t);
	db_close(db);
}

/* Real records: tests/fixtures/streams/guest-{removed,alive}-N.jsonl are
 * three TCG guest runs of each mode on Debian's 6.12.117 cloud kernel
 * (record-guest-stream.sh, rate_mbps=48 pod_max=192M, 8 s measured). The
 * removed runs' foreign flushes miss the dying wb (-ENOENT), the alive
 * runs' find it (0): the seed's evidence, in one table with the lags. */
static void test_guest_modes(void **state)
{
	struct db *db = open_db(*state);
	int64_t job;
	char name[64];

	assert_int_equal(db_job_create(db, &job, "guest-modes", "compare", NULL, NULL), 0);
	for (int i = 1; i <= 3; i++) {
		snprintf(name, sizeof(name), "guest-removed-%d.jsonl", i);
		add_mode_run_m(db, job, "6.12.117+deb12-cloud-amd64", "removed", name, "8");
		snprintf(name, sizeof(name), "guest-alive-%d.jsonl", i);
		add_mode_run_m(db, job, "6.12.117+deb12-cloud-amd64", "alive", name, "8");
	}
	struct report_opts ro = { .by = "mode" };
	char *t = report_text(db, job, &ro);
	assert_non_null(strstr(t, "(6.12.117+deb12-cloud-amd64, wb-handover, ext4):\n"));
	assert_null(strstr(t, "\n\nWorst lag"));   /* one table */
	assert_non_null(strstr(t, "  mode=removed      5.6s    2.4s    4.0s     4.0s\n"
				  "  mode=alive        5.2s    2.3s    1.9s     2.3s   -42.6% (p=0.40, MWU)\n"));
	assert_non_null(strstr(t, "  per run: mode=removed 658 568 735, mode=alive 0 0 0\n"));
	assert_non_null(strstr(t, "  per run: mode=removed 851 568 996, mode=alive 385 728 626\n"));
	assert_non_null(strstr(t, "  0 (wb found) in 0 of 3 mode=removed runs, 3 of 3 mode=alive runs\n"));
	assert_non_null(strstr(t, "  -ENOENT in 3 of 3 mode=removed runs, 0 of 3 mode=alive runs\n"));
	free(t);
	db_close(db);
}

/* Issue 19 item 5: the per-run phases stored with each run and summed
 * up per job in the text footer and the JSON report (medians over the
 * finished runs: the timed-out one is left out). On the old code there was
 * no run_overhead table and no footer. */
static void test_overhead_footer(void **state)
{
	struct db *db = open_db(*state);
	int64_t job = seed_job(db), timed_out;
	struct buf err = BUF_INIT, js = BUF_INIT;
	/* image, upload, create, boot, mkfs, workload, teardown (ms) */
	static const int64_t ph[3][DB_OV_NPHASES] = {
		{ 100, 200, 300, 30000, 3000, 120000, 4000 },
		{ 120, 250, 310, 31000, 2900, 121000, 4200 },
		{ 90, 180, 290, 29000, 3100, 119000, 3900 },
	};
	struct report *rep = NULL;

	timed_out = add_run(db, job, "+ v6 2/3", "lag-1.2.jsonl", "timeout");
	for (int i = 0; i < 3; i++) {
		struct db_overhead o = { .run_id = i + 1 };
		for (int p = 0; p < DB_OV_NPHASES; p++) {
			o.phase_ms[p] = ph[i][p];
			o.wall_ms += ph[i][p];
		}
		assert_int_equal(db_run_set_overhead(db, &o, &err), 0);
	}
	struct db_overhead bad = { .run_id = timed_out, .wall_ms = 999999,
				   .phase_ms = { [DB_OV_BOOT] = 999999 } };
	assert_int_equal(db_run_set_overhead(db, &bad, &err), 0);
	/* phases that do not add up, a run that does not exist */
	bad.wall_ms = 5;
	assert_int_equal(db_run_set_overhead(db, &bad, &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "sum to 999999 ms, expected the wall time 5 ms"));
	bad = (struct db_overhead){ .run_id = 4242 };
	assert_int_equal(db_run_set_overhead(db, &bad, &err), -ENOENT);
	{
		struct db_overhead got;
		assert_int_equal(db_run_overhead(db, &got, 2, &err), 0);
		assert_int_equal(got.wall_ms, 120 + 250 + 310 + 31000 + 2900 + 121000 + 4200);
		assert_int_equal(got.phase_ms[DB_OV_MKFS], 2900);
		assert_int_equal(db_run_overhead(db, &got, 5, &err), -ENOENT);
	}
	char *text = report_text(db, job, NULL);
	/* medians of runs 1-3: overhead 37.60, 38.78, 36.56 s; wall 157.60,
	 * 159.78, 155.56 s; 37.6 / 157.6 = 24% */
	assert_non_null(strstr(text, "\noverhead: median 37.6 s of 157.6 s wall per run (24%, 3 runs):"
			       " image 0.1 s,\n  upload 0.2 s, create 0.3 s, boot 30.0 s, mkfs 3.0 s,"
			       " teardown 4.0 s;\n  workload 120.0 s\n"));
	assert_int_equal(report_build(&rep, db, job, NULL, &err), 0);
	assert_int_equal(report_format(&js, rep, REPORT_JSON), 0);
	json_error_t je;
	json_t *root = json_loads(buf_str(&js), 0, &je), *ov = json_object_get(root, "overhead");
	assert_non_null(ov);
	assert_int_equal(json_integer_value(json_object_get(ov, "runs")), 3);
	assert_true(fabs(json_real_value(json_object_get(ov, "overhead_s")) - 37.6) < 1e-9);
	assert_true(fabs(json_real_value(json_object_get(json_object_get(ov, "phases_s"), "boot")) - 30) < 1e-9);
	json_decref(root);
	report_free(rep);
	free(text);
	buf_release(&js);
	buf_release(&err);
	db_close(db);
}

/* Issue 35 item 8 (the review): the one scratch disk every run of a job
 * got, stored when the job was checked (db_cells.h), is in the text
 * footer and the JSON report, with the cell it was sized from; a job
 * stored before has none and says nothing. 10002 MiB written (the seed's
 * knobs with measure_s 10) is 9.8 GiB; 12 GiB is 12 x 2^30 bytes. On the
 * old code the report had no such line or field. */
static void test_scratch_disk_footer(void **state)
{
	struct db *db = open_db(*state);
	int64_t job = seed_job(db);
	struct buf js = BUF_INIT;
	struct report *rep = NULL;
	char *text = report_text(db, job, NULL);
	json_t *root, *sd;

	assert_null(strstr(text, "scratch disk"));
	free(text);
	assert_int_equal(db_job_scratch_set(db, job, 12ULL << 30, "measure_s=10", 10487857152LL,
					    false, NULL), 0);
	text = report_text(db, job, NULL);
	assert_non_null(strstr(text, "\nscratch disk: 12 GiB, every run (sized from measure_s=10's"
			       " 9.8 GiB written)\n"));
	assert_int_equal(report_build(&rep, db, job, NULL, NULL), 0);
	assert_int_equal(report_format(&js, rep, REPORT_JSON), 0);
	root = json_loads(buf_str(&js), 0, NULL);
	sd = json_object_get(root, "scratch_disk");
	assert_true(json_is_object(sd));
	assert_true(json_integer_value(json_object_get(sd, "bytes")) == 12884901888LL);
	assert_string_equal(json_string_value(json_object_get(sd, "cell")), "measure_s=10");
	assert_true(json_integer_value(json_object_get(sd, "data_bytes")) == 10487857152LL);
	assert_true(json_is_false(json_object_get(sd, "asked")));
	json_decref(root);
	report_free(rep);
	free(text);
	/* a workload the agent cannot size: the floor, said so */
	assert_int_equal(db_job_scratch_set(db, job, 4ULL << 30, NULL, 0, false, NULL), 0);
	text = report_text(db, job, NULL);
	assert_non_null(strstr(text, "\nscratch disk: 4 GiB, every run (the floor: the agent cannot"
			       " tell what the workload writes)\n"));
	free(text);
	/* given by name (compare --disk) */
	assert_int_equal(db_job_scratch_set(db, job, 100ULL << 30, "measure_s=10", 10487857152LL,
					    true, NULL), 0);
	text = report_text(db, job, NULL);
	assert_non_null(strstr(text, "\nscratch disk: 100 GiB, every run (given by name: disk, --disk;"
			       " the most a cell writes: measure_s=10's 9.8 GiB)\n"));
	free(text);
	buf_release(&js);
	db_close(db);
}

/* A run of variant with worst_lag_s v on lab host host (NULL: none stored). */
static void add_host_run(struct db *db, int64_t job, const char *variant, double v,
			 const char *host)
{
	int64_t vid, run;
	struct ingest *in = NULL;
	char *text = xasprintf("{\"type\":\"hello\",\"agent_version\":\"t\",\"kernel_release\":"
			       "\"6.12.117\",\"host\":\"t\"}\n"
			       "{\"type\":\"sample\",\"t\":1.0,\"metric\":\"lag_s\",\"value\":%g}\n"
			       "{\"type\":\"summary\",\"metrics\":{\"worst_lag_s\":%g}}\n"
			       "{\"type\":\"done\",\"status\":\"ok\"}\n", v, v);

	assert_int_equal(db_variant_get(db, &vid, job, variant, NULL), 0);
	assert_int_equal(db_run_create(db, &run, job, vid, "fs=ext4", 0, "ext4",
				       "{\"fs\":\"ext4\"}", NULL), 0);
	assert_int_equal(ingest_open(&in, db, run, NULL), 0);
	assert_int_equal(ingest_feed(in, text, strlen(text), NULL), 0);
	assert_int_equal(ingest_close(in, NULL, NULL), 0);
	if (host)
		assert_int_equal(db_run_set_lab_host(db, run, host, NULL), 0);
	free(text);
}

static char *report_json(struct db *db, int64_t job, const struct report_opts *ro)
{
	struct report *rep = NULL;
	struct buf out = BUF_INIT;
	assert_int_equal(report_build(&rep, db, job, ro, NULL), 0);
	assert_int_equal(report_format(&out, rep, REPORT_JSON), 0);
	report_free(rep);
	return buf_detach(&out);
}

/* Runs on two lab hosts, kvm1 ten times slower than local, the patched
 * kernel lower on each: the headline p is van Elteren's, stratified by
 * host, 2 (1/70)^2 (each host separates 4 against 4 completely;
 * test_stats.c checks the test itself); pooled, Mann-Whitney sees p=0.21.
 * On one host nothing changes. On the old code the report gave the
 * pooled p and said nothing of the hosts' strata. */
static void test_stratified_by_host(void **state)
{
	struct db *db = open_db(*state);
	int64_t job, one;
	static const double kb[] = { 101, 102, 103, 104 }, kp[] = { 97, 98, 99, 100 };
	static const double lb[] = { 11, 12, 13, 14 }, lp[] = { 7, 8, 9, 10 };

	assert_int_equal(db_job_create(db, &job, "two-hosts", "compare", NULL, NULL), 0);
	for (int i = 0; i < 4; i++) {
		add_host_run(db, job, "base", kb[i], "kvm1");
		add_host_run(db, job, "patched", kp[i], "kvm1");
		add_host_run(db, job, "base", lb[i], "local");
		add_host_run(db, job, "patched", lp[i], "local");
	}
	char *text = report_text(db, job, NULL);
	if (getenv("KC_SHOW_REPORT"))
		fputs(text, stderr);
	assert_non_null(strstr(text, "\np: van Elteren, stratified by lab host (kvm1: 4+4 runs, local: 4+4)\n"));
	assert_non_null(strstr(text, "(p<0.001, van Elteren)"));
	free(text);
	char *js = report_json(db, job, NULL);
	json_t *root = json_loads(js, 0, NULL), *g;
	assert_non_null(root);
	g = json_array_get(json_object_get(json_array_get(json_object_get(root, "cells"), 0),
					   "variants"), 1);
	assert_true(json_is_true(json_object_get(g, "stratified_by_host")));
	assert_string_equal(json_string_value(json_object_get(g, "p_method")), "van-elteren-exact");
	assert_float_equal(json_real_value(json_object_get(g, "p")), 2.0 / 4900, 1e-12);
	assert_true(json_real_value(json_object_get(g, "p_unstratified")) > 0.1);
	json_t *st = json_object_get(g, "strata");
	assert_int_equal(json_array_size(st), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(st, 1), "host")), "local");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(st, 1), "n_baseline")), 4);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(st, 1), "n")), 4);
	json_decref(root);
	free(js);
	/* --by host compares the hosts: nothing to stratify */
	struct report_opts ro = { .by = "host" };
	text = report_text(db, job, &ro);
	assert_null(strstr(text, "van Elteren"));
	free(text);

	/* base only on kvm1, patched only on local: nothing to stratify, and
	 * the report says the hosts and the change are inseparable */
	int64_t conf;
	assert_int_equal(db_job_create(db, &conf, "confounded", "compare", NULL, NULL), 0);
	for (int i = 0; i < 4; i++) {
		add_host_run(db, conf, "base", kb[i], "kvm1");
		add_host_run(db, conf, "patched", lp[i], "local");
	}
	text = report_text(db, conf, NULL);
	if (getenv("KC_SHOW_REPORT"))
		fputs(text, stderr);
	assert_non_null(strstr(text, "\np: Mann-Whitney, pooled: no lab host ran both sides,\n"
			       "      host and change are confounded (kvm1: 4+0 runs, local: 0+4)\n"));
	assert_non_null(strstr(text, "MWU)"));
	free(text);
	js = report_json(db, conf, NULL);
	assert_non_null(strstr(js, "\"hosts_confounded\": true"));
	free(js);

	/* one host (and runs with none stored, which ran on the default host):
	 * the plain Mann-Whitney test, as before */
	assert_int_equal(db_job_create(db, &one, "one-host", "compare", NULL, NULL), 0);
	for (int i = 0; i < 4; i++) {
		add_host_run(db, one, "base", kb[i], i ? "local" : NULL);
		add_host_run(db, one, "patched", kp[i], "local");
	}
	text = report_text(db, one, NULL);
	assert_null(strstr(text, "van Elteren"));
	assert_non_null(strstr(text, "MWU)"));
	free(text);
	js = report_json(db, one, NULL);
	assert_null(strstr(js, "stratified_by_host"));
	assert_non_null(strstr(js, "\"mwu-exact\""));
	free(js);
	db_close(db);
}

/* A run of variant (status ok in the store) with one summary value. */
static int64_t add_value_run(struct db *db, int64_t job, const char *variant, double value,
			     const char *status)
{
	struct db_writer *w = NULL;
	int64_t v, run;

	assert_int_equal(db_variant_get(db, &v, job, variant, NULL), 0);
	assert_int_equal(db_variant_set_result(db, v, "ok", NULL, NULL, 0, NULL), 0);
	assert_int_equal(db_run_create(db, &run, job, v, "", 0, "ext4", NULL, NULL), 0);
	if (!strcmp(status, "pending"))
		return run;
	assert_int_equal(db_writer_open(&w, db, run, NULL), 0);
	assert_int_equal(db_writer_begin(w, NULL), 0);
	assert_int_equal(db_writer_summary(w, "worst_lag_s", value, NULL), 0);
	assert_int_equal(db_writer_finish(w, status, NULL, 1, 0, NULL), 0);
	assert_int_equal(db_writer_commit(w, NULL), 0);
	db_writer_close(w);
	return run;
}

static int64_t seq_job(struct db *db, const char *repeat, const double *a, const double *b,
		       size_t nblocks)
{
	int64_t job;
	char *spec = xasprintf("{\"repeat\":\"%s\",\"margin\":\"5%%\"}", repeat);

	assert_int_equal(db_job_create(db, &job, "seq", "compare", spec, NULL), 0);
	assert_int_equal(db_job_set_meta(db, job, 1, "worst_lag_s", NULL), 0);
	for (size_t k = 0; k < nblocks; k++) {
		add_value_run(db, job, "base", a[k], "ok");
		add_value_run(db, job, "patched", b[k], "ok");
	}
	free(spec);
	return job;
}

/* The job's sequential state as the report has it; the executor's look
 * (report_seq_look: the runs' values only) must say the same. */
static void seq_state(struct db *db, int64_t job, struct report_seq_state *st)
{
	struct report *rep = NULL;
	struct report_seq_state look;

	assert_int_equal(report_build(&rep, db, job, NULL, NULL), 0);
	report_seq_state(rep, st);
	report_free(rep);
	assert_int_equal(report_seq_look(&look, db, job, NULL), 0);
	assert_int_equal(look.sequential, st->sequential);
	assert_int_equal(look.max_blocks, st->max_blocks);
	assert_int_equal(look.blocks, st->blocks);
	assert_int_equal(look.ncomparisons, st->ncomparisons);
	assert_int_equal(look.ndecided, st->ndecided);
	assert_int_equal(look.done, st->done);
}

/* A look reads the runs' values only: a store whose probes and overheads
 * cannot be read (renamed away here) still gives the same state, which the
 * whole report cannot build. */
static void test_sequential_look_reads_values_only(void **state)
{
	struct db *db = open_db(*state);
	struct report_seq_state st;
	struct report *rep = NULL;
	struct buf err = BUF_INIT;
	const double base[] = { 1.0, 1.1, 1.2 }, bad[] = { 40, 50, 45 };
	int64_t job = seq_job(db, "auto:4", base, bad, 3);

	assert_int_equal(db_exec(db, "ALTER TABLE probes RENAME TO probes_away;"
				 " ALTER TABLE run_overhead RENAME TO run_overhead_away", NULL), 0);
	assert_int_not_equal(report_build(&rep, db, job, NULL, &err), 0);
	assert_null(rep);
	assert_int_equal(report_seq_look(&st, db, job, &err), 0);
	assert_true(st.sequential);
	assert_int_equal(st.blocks, 3);
	assert_int_equal(st.ncomparisons, 1);
	assert_int_equal(st.ndecided, 1);
	assert_true(st.done);
	/* no such job: the report's error */
	assert_int_equal(report_seq_look(&st, db, 9999, &err), -ENOENT);
	buf_release(&err);
	db_close(db);
}

/* compare --repeat auto: the looks replayed from the store, one per
 * complete block; the comparison stops at its first decided look and the
 * report says why; an interrupted run's fresh repeat takes its place in its
 * block; a block with a run not yet run is no look. */
static void test_sequential(void **state)
{
	struct db *db = open_db(*state);
	struct report_seq_state st;
	const double base[] = { 1.0, 1.1, 1.2, 1.0 }, bad[] = { 40, 50, 45, 60 };
	int64_t job = seq_job(db, "auto:4", base, bad, 1);
	char *text;

	seq_state(db, job, &st);
	assert_true(st.sequential);
	assert_int_equal(st.max_blocks, 4);
	assert_int_equal(st.blocks, 1);
	assert_int_equal(st.ncomparisons, 1);
	assert_int_equal(st.ndecided, 0);
	assert_false(st.done);
	/* block 2: the patched run is interrupted and its fresh repeat runs */
	add_value_run(db, job, "base", base[1], "ok");
	add_value_run(db, job, "patched", 2.0, "interrupted");
	int64_t fresh = add_value_run(db, job, "patched", bad[1], "pending");
	seq_state(db, job, &st);
	assert_int_equal(st.blocks, 1);   /* block 2 is not complete */
	assert_false(st.done);
	struct db_writer *w = NULL;
	assert_int_equal(db_writer_open(&w, db, fresh, NULL), 0);
	assert_int_equal(db_writer_begin(w, NULL), 0);
	assert_int_equal(db_writer_summary(w, "worst_lag_s", bad[1], NULL), 0);
	assert_int_equal(db_writer_finish(w, "ok", NULL, 1, 0, NULL), 0);
	assert_int_equal(db_writer_commit(w, NULL), 0);
	db_writer_close(w);
	seq_state(db, job, &st);
	assert_int_equal(st.blocks, 2);
	/* e = 42 >= 20 at 2 a side, but no look decides before block 3 */
	assert_int_equal(REPORT_SEQ_MIN_BLOCKS, 3);
	assert_int_equal(st.ndecided, 0);
	assert_false(st.done);
	add_value_run(db, job, "base", base[2], "ok");
	add_value_run(db, job, "patched", bad[2], "ok");
	seq_state(db, job, &st);
	assert_int_equal(st.blocks, 3);
	assert_int_equal(st.ndecided, 1);
	assert_true(st.done);
	text = report_text(db, job, NULL);
	if (!strstr(text, "patched vs base: stop: difference after 3 blocks (e=4.1e3 >= 20)"))
		fprintf(stderr, "%s", text);
	assert_non_null(strstr(text, "patched vs base: stop: difference after 3 blocks"
				     " (e=4.1e3 >= 20)"));
	/* decided: the answer is the stop line, not "3 against 3 cannot
	 * reach p < 0.05" (issue 19: the demo's job must end with an answer) */
	assert_null(strstr(text, "cannot reach p < 0.05"));
	assert_non_null(strstr(text, "note: decided by the anytime-valid test (the stop line)"));
	free(text);
	/* a fourth block later (another comparison's sake) keeps it at 3 */
	add_value_run(db, job, "base", base[3], "ok");
	add_value_run(db, job, "patched", 1.0, "ok");
	{
		struct report *rep = NULL;
		struct buf out = BUF_INIT;
		assert_int_equal(report_build(&rep, db, job, NULL, NULL), 0);
		assert_int_equal(report_format(&out, rep, REPORT_JSON), 0);
		json_t *root = json_loads(buf_str(&out), 0, NULL), *seq, *c;
		assert_non_null(root);
		seq = json_object_get(root, "sequential");
		assert_true(json_is_object(seq));
		assert_int_equal(json_integer_value(json_object_get(seq, "blocks")), 4);
		assert_int_equal(json_integer_value(json_object_get(seq, "max_blocks")), 4);
		c = json_array_get(json_object_get(seq, "comparisons"), 0);
		assert_string_equal(json_string_value(json_object_get(c, "decision")), "difference");
		assert_int_equal(json_integer_value(json_object_get(c, "blocks")), 3);
		assert_string_equal(json_string_value(json_object_get(c, "value")), "patched");
		assert_string_equal(json_string_value(json_object_get(c, "baseline")), "base");
		json_decref(root);
		report_free(rep);
		buf_release(&out);
	}
	/* A/A with noise up to the cap: undecided, said so */
	const double n1[] = { 1.0, 2.2, 1.1, 1.5 }, n2[] = { 1.3, 1.0, 2.0, 1.2 };
	job = seq_job(db, "auto:3", n1, n2, 3);
	seq_state(db, job, &st);
	assert_true(st.done);
	assert_int_equal(st.ndecided, 0);
	text = report_text(db, job, NULL);
	assert_non_null(strstr(text, "stop: cap of 3 blocks reached, undecided"));
	/* undecided: the fixed-sample note stays */
	assert_non_null(strstr(text, "3 runs against 3 cannot reach p < 0.05"));
	free(text);
	/* long names (the demo's kernels): the stop line wraps at 80 columns */
	{
		int64_t j2;
		const char *ka = "6.12.107+deb12-cloud-amd64", *kb = "6.12.117+deb12-cloud-amd64";
		assert_int_equal(db_job_create(db, &j2, "long", "compare", "{\"repeat\":\"auto:3\"}",
					       NULL), 0);
		assert_int_equal(db_job_set_meta(db, j2, 1, "worst_lag_s", NULL), 0);
		for (size_t k = 0; k < 3; k++) {
			add_value_run(db, j2, ka, n1[k], "ok");
			add_value_run(db, j2, kb, n2[k], "ok");
		}
		text = report_text(db, j2, NULL);
		char *want = xasprintf("%s vs %s:\n      stop: cap of 3 blocks reached, undecided\n", kb, ka);
		assert_non_null(strstr(text, want));
		for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
			nl = strchr(line, '\n');
			size_t len = nl ? (size_t)(nl - line) : strlen(line);
			if (strstr(line, "stop:") && strstr(line, "stop:") < line + len)
				assert_true(len <= 80);
		}
		free(want);
		free(text);
	}
	/* tight equal runs: no difference within 5% */
	const double t1[] = { 100.0, 100.2, 99.9, 100.1, 99.8, 100.0, 100.3, 99.7 };
	const double t2[] = { 100.1, 99.9, 100.0, 100.2, 99.8, 100.1, 99.9, 100.0 };
	job = seq_job(db, "auto:10", t1, t2, 8);
	/* a variant whose kernel did not build: its pending runs are in no
	 * block and it is no comparison to wait for */
	{
		int64_t v, run;
		assert_int_equal(db_variant_get(db, &v, job, "broken", NULL), 0);
		assert_int_equal(db_variant_set_result(db, v, "build-failed", "no", NULL, 0, NULL), 0);
		assert_int_equal(db_run_create(db, &run, job, v, "", 0, "ext4", NULL, NULL), 0);
	}
	seq_state(db, job, &st);
	assert_int_equal(st.ncomparisons, 1);
	assert_int_equal(st.blocks, 8);
	assert_true(st.done);
	assert_int_equal(st.ndecided, 1);
	text = report_text(db, job, NULL);
	if (!strstr(text, "stop: no difference within ±5% after 3 blocks"))
		fprintf(stderr, "%s", text);
	assert_non_null(strstr(text, "stop: no difference within ±5% after 3 blocks"));
	free(text);
	/* a job of fixed repeats has "sequential": null */
	job = seed_job(db);
	{
		struct report *rep = NULL;
		struct buf out = BUF_INIT;
		assert_int_equal(report_build(&rep, db, job, NULL, NULL), 0);
		report_seq_state(rep, &st);
		assert_false(st.sequential);
		assert_int_equal(report_format(&out, rep, REPORT_JSON), 0);
		assert_non_null(strstr(buf_str(&out), "\"sequential\": null"));
		report_free(rep);
		buf_release(&out);
	}
	db_close(db);
}

/* Issue 35 item 13: runs that will never run are no pending work. A job
 * ended with a pending run of a variant whose build failed (as stores from
 * before db_runs_skip_pending() hold them) is not "unfinished"; runs
 * skipped after the sequential test decided (db_runs_skip_pending) count
 * in no block, so the looks stay at the deciding block. On the old code
 * the report began "job 'seq' is unfinished (done): 1 of 7 runs pending"
 * and the skipped block 4 made 4 complete blocks. */
static void test_runs_never_run(void **state)
{
	struct db *db = open_db(*state);
	struct report_seq_state st;
	const double base[] = { 1.0, 1.1, 1.2 }, bad[] = { 40, 50, 45 };
	int64_t job = seq_job(db, "auto:6", base, bad, 3), v, run;
	int n = -1;
	char *text;

	assert_int_equal(db_variant_get(db, &v, job, "broken", NULL), 0);
	assert_int_equal(db_variant_set_result(db, v, "build-failed", "no", NULL, 0, NULL), 0);
	assert_int_equal(db_run_create(db, &run, job, v, "", 0, "ext4", NULL, NULL), 0);
	assert_int_equal(db_job_set_status(db, job, "done", NULL, NULL), 0);
	text = report_text(db, job, NULL);
	if (strstr(text, "unfinished"))
		fprintf(stderr, "%s", text);
	assert_null(strstr(text, "unfinished"));
	free(text);
	/* a block stored beyond the deciding one, never run: skipped */
	add_value_run(db, job, "base", 0, "pending");
	add_value_run(db, job, "patched", 0, "pending");
	assert_int_equal(db_runs_skip_pending(db, job, 0, "not needed: the sequential test decided"
					      " after block 3", &n, NULL), 0);
	assert_int_equal(n, 3);   /* the two of block 4 and the broken variant's */
	assert_int_equal(db_runs_skip_pending(db, job, 0, "again", &n, NULL), 0);
	assert_int_equal(n, 0);   /* nothing pending is left; ok runs untouched */
	seq_state(db, job, &st);
	assert_int_equal(st.blocks, 3);
	assert_int_equal(st.ndecided, 1);
	assert_true(st.done);
	text = report_text(db, job, NULL);
	assert_null(strstr(text, "unfinished"));
	assert_non_null(strstr(text, "stop: difference after 3 blocks"));
	free(text);
	db_close(db);
}

/* The jobs lists' headline (issue 35 item 5): of the report's
 * comparisons the one with the smallest p, the same numbers as the whole
 * report (report_headline on report_build's) from the light path
 * (report_job_headline: values only, no shift CI). Numbers by hand: base
 * {1.0, 1.1, 1.2} against {40, 50, 45}: change (45 - 1.1) / 1.1, p the
 * exact two-sided MWU of 3 against 3 wholly apart, 2 / C(6,3) = 0.1;
 * against {1.0, 1.15, 1.3} (U = 4.5 of 9) p is far larger. */
static void test_headline(void **state)
{
	struct db *db = open_db(*state);
	struct report_headline h, full;
	struct report *rep = NULL;
	int64_t job;

	assert_int_equal(db_job_create(db, &job, "three", "compare", NULL, NULL), 0);
	assert_int_equal(db_job_set_meta(db, job, 1, "worst_lag_s", NULL), 0);
	const double base[] = { 1.0, 1.1, 1.2 }, a[] = { 40, 50, 45 }, b[] = { 1.0, 1.15, 1.3 };
	for (size_t k = 0; k < 3; k++) {
		add_value_run(db, job, "base", base[k], "ok");
		add_value_run(db, job, "same", b[k], "ok");
		add_value_run(db, job, "slow", a[k], "ok");
	}
	assert_int_equal(report_job_headline(&h, db, job, NULL), 0);
	assert_true(h.has);
	assert_string_equal(h.label, "slow vs base");
	assert_float_equal(h.change_pct, (45 - 1.1) / 1.1 * 100, 1e-9);
	assert_float_equal(h.p, 2.0 / 20, 1e-12);
	assert_int_equal(h.ncomparisons, 2);
	assert_int_equal(report_build(&rep, db, job, NULL, NULL), 0);
	report_headline(rep, &full);
	report_free(rep);
	assert_string_equal(full.label, h.label);
	assert_float_equal(full.change_pct, h.change_pct, 1e-12);
	assert_float_equal(full.p, h.p, 1e-12);
	/* one variant: nothing compared */
	assert_int_equal(db_job_create(db, &job, "one", "compare", NULL, NULL), 0);
	add_value_run(db, job, "base", 1.0, "ok");
	assert_int_equal(report_job_headline(&h, db, job, NULL), 0);
	assert_false(h.has);
	assert_int_equal(report_job_headline(&h, db, 9999, NULL), -ENOENT);
	db_close(db);
}

/* A fleet host's passive run (cell workload=passive, 'running' while the
 * host streams, samples but no summary): its value of a metric is the
 * median of all its samples of it (issue 35: the fleet's report printed
 * "running -"). Medians by hand: {5, 1, 100, 3} -> (3 + 5) / 2 = 4, {7, 2,
 * 9} -> 7; worst_X is still the max; a running run of another workload
 * has no value. */
static int64_t add_stream_run(struct db *db, int64_t job, const char *cell, int repeat,
			      const double *v, size_t n)
{
	int64_t var, run;
	struct ingest *in = NULL;
	struct buf text = BUF_INIT;

	assert_int_equal(db_variant_get(db, &var, job, "6.12.117", NULL), 0);
	char *params = xasprintf("{\"workload\":\"%s\"}", strchr(cell, '=') + 1);

	assert_int_equal(db_run_create(db, &run, job, var, cell, repeat, NULL, params, NULL), 0);
	free(params);
	buf_printf(&text, "{\"type\":\"hello\",\"agent_version\":\"t\",\"host\":\"h%d\"}\n", repeat);
	for (size_t i = 0; i < n; i++)
		buf_printf(&text, "{\"type\":\"sample\",\"t\":%zu,\"metric\":\"dirty_pages\","
			   "\"value\":%g}\n", i + 1, v[i]);
	assert_int_equal(ingest_open(&in, db, run, NULL), 0);
	assert_int_equal(ingest_feed(in, text.ptr, text.len, NULL), 0);
	assert_int_equal(ingest_close(in, NULL, NULL), 0);
	assert_int_equal(db_run_set_status(db, run, "running", NULL, NULL), 0);
	buf_release(&text);
	return run;
}

static void test_passive_median(void **state)
{
	struct db *db = open_db(*state);
	static const double a[] = { 5, 1, 100, 3 }, b[] = { 7, 2, 9 }, c[] = { 1, 2, 3 };
	struct report_opts ro = { .metric = "dirty_pages" };
	int64_t job;

	assert_int_equal(db_job_create(db, &job, "fleet", "canary", NULL, NULL), 0);
	add_stream_run(db, job, "workload=passive", 1, a, 4);
	add_stream_run(db, job, "workload=passive", 2, b, 3);
	add_stream_run(db, job, "workload=command", 1, c, 3);
	char *text = report_text(db, job, &ro);
	assert_non_null(strstr(text, "dirty_pages, median of each host boot's samples (passive):"));
	assert_non_null(strstr(text, "each value: the median of all the dirty_pages samples of one"
			       " host's boot so far"));
	assert_non_null(strstr(text, "6.12.117's runs, in order: host h1, host h2"));
	free(text);

	char *js = report_json(db, job, &ro);
	json_t *root = json_loads(js, 0, NULL);
	assert_non_null(root);
	size_t ci;
	json_t *cell, *got[2] = { NULL, NULL }, *cmd = NULL;
	json_array_foreach(json_object_get(root, "cells"), ci, cell) {
		json_t *runs = json_object_get(json_array_get(json_object_get(cell, "variants"), 0), "runs");
		if (!strcmp(json_string_value(json_object_get(cell, "cell")), "workload=passive")) {
			got[0] = json_array_get(runs, 0);
			got[1] = json_array_get(runs, 1);
		} else {
			cmd = json_array_get(runs, 0);
		}
	}
	assert_non_null(got[0]);
	assert_non_null(got[1]);
	assert_non_null(cmd);
	assert_true(json_real_value(json_object_get(got[0], "value")) == 4);
	assert_true(json_real_value(json_object_get(got[1], "value")) == 7);
	assert_string_equal(json_string_value(json_object_get(got[0], "value_is")), "median of samples");
	assert_string_equal(json_string_value(json_object_get(got[1], "host")), "h2");
	assert_true(json_is_null(json_object_get(cmd, "value")));
	json_decref(root);
	free(js);

	struct report *rep = NULL;
	ro.metric = "worst_dirty_pages";
	assert_int_equal(report_build(&rep, db, job, &ro, NULL), 0);
	assert_int_equal(report_nvalues(rep), 3);   /* max of each run's, command's too */
	struct buf out = BUF_INIT;
	assert_int_equal(report_format(&out, rep, REPORT_TEXT), 0);
	assert_null(strstr(out.ptr, "median of"));   /* the max, as for any run */
	assert_non_null(strstr(out.ptr, " 100*"));
	buf_release(&out);
	report_free(rep);
	db_close(db);
}

/* A run (ok) with two summary values: the job's decision metric and
 * worst lag, as the seed's demo stores them. */
static void add_two_value_run(struct db *db, int64_t job, const char *variant, double enoent,
			      double lag_s)
{
	struct db_writer *w = NULL;
	int64_t v, run;

	assert_int_equal(db_variant_get(db, &v, job, variant, NULL), 0);
	assert_int_equal(db_variant_set_result(db, v, "ok", NULL, NULL, 0, NULL), 0);
	assert_int_equal(db_run_create(db, &run, job, v, "", 0, "ext4", NULL, NULL), 0);
	assert_int_equal(db_writer_open(&w, db, run, NULL), 0);
	assert_int_equal(db_writer_begin(w, NULL), 0);
	assert_int_equal(db_writer_summary(w, "wb_by_id_enoent", enoent, NULL), 0);
	if (!isnan(lag_s))
		assert_int_equal(db_writer_summary(w, "worst_lag_s", lag_s, NULL), 0);
	assert_int_equal(db_writer_finish(w, "ok", NULL, 1, 0, NULL), 0);
	assert_int_equal(db_writer_commit(w, NULL), 0);
	db_writer_close(w);
}

/* Issue 35 item 12: a job that decides on wb_by_id_enoent (make demo)
 * still shows the workload's headline, worst lag, in a second table
 * labelled as not the decision metric, with its values (the runs' own:
 * base 19.0 9.1 9.1 against 5.1 5.3 5.2, the measured demo), in
 * text and JSON; not with --metric, not when the headline is the decided
 * metric, not when no run has it. On the old code the report had only the
 * wb_by_id_enoent table. */
static void test_also_headline(void **state)
{
	struct db *db = open_db(*state);
	const double en_b[] = { 30, 41, 35 }, en_p[] = { 0, 0, 1 };
	const double lag_b[] = { 19.0, 9.1, 9.1 }, lag_p[] = { 5.1, 5.3, 5.2 };
	struct report_opts ro = { .metric = "wb_by_id_enoent" };
	int64_t job, job2;
	char *t, *js;

	assert_int_equal(db_job_create(db, &job, "demo-wb-v6", "compare",
				       "{\"workload\":\"wb-handover\"}", NULL), 0);
	assert_int_equal(db_job_set_meta(db, job, 1, "wb_by_id_enoent", NULL), 0);
	for (size_t k = 0; k < 3; k++) {
		add_two_value_run(db, job, "base", en_b[k], lag_b[k]);
		add_two_value_run(db, job, "+ v6 2", en_p[k], lag_p[k]);
	}
	t = report_text(db, job, NULL);
	const char *also = strstr(t, "also measured (not the decision metric)");
	if (!also)
		fprintf(stderr, "%s", t);
	assert_non_null(also);
	/* the decided table first, then the headline's */
	assert_true(strstr(t, "wb_by_id_enoent") < also);
	assert_non_null(strstr(also, "Worst lag behind schedule"));
	assert_non_null(strstr(also, "19.0s"));
	assert_non_null(strstr(also, "9.1s"));
	assert_non_null(strstr(also, "5.1s"));
	assert_non_null(strstr(also, "5.3s"));
	assert_non_null(strstr(also, "5.2s"));
	char *first = strndup(t, (size_t)(also - t));   /* the decided table has no lag */
	assert_null(strstr(first, "19.0s"));
	free(first);
	free(t);
	js = report_json(db, job, NULL);
	json_t *root = json_loads(js, 0, NULL);
	assert_non_null(root);
	assert_string_equal(json_string_value(json_object_get(root, "metric")), "wb_by_id_enoent");
	json_t *a = json_object_get(root, "also_measured");
	assert_true(json_is_array(a));
	assert_int_equal(json_array_size(a), 1);
	json_t *a0 = json_array_get(a, 0);
	assert_string_equal(json_string_value(json_object_get(a0, "metric")), "worst_lag_s");
	assert_string_equal(json_string_value(json_object_get(a0, "unit")), "s");
	json_t *cells = json_object_get(a0, "cells");
	assert_int_equal(json_array_size(cells), 1);
	json_t *vs = json_object_get(json_array_get(cells, 0), "variants");
	assert_int_equal(json_array_size(vs), 2);
	assert_float_equal(json_number_value(json_object_get(json_array_get(vs, 0), "median")),
			   9.1, 1e-9);
	assert_float_equal(json_number_value(json_object_get(json_array_get(vs, 1), "median")),
			   5.2, 1e-9);
	json_decref(root);
	free(js);
	/* a metric named: that report alone */
	t = report_text(db, job, &ro);
	assert_null(strstr(t, "also measured"));
	free(t);
	/* the headline is the decided metric, or no run has it: one table */
	assert_int_equal(db_job_set_meta(db, job, 1, "worst_lag_s", NULL), 0);
	t = report_text(db, job, NULL);
	assert_null(strstr(t, "also measured"));
	free(t);
	assert_int_equal(db_job_create(db, &job2, "enoent-only", "compare", NULL, NULL), 0);
	assert_int_equal(db_job_set_meta(db, job2, 1, "wb_by_id_enoent", NULL), 0);
	add_two_value_run(db, job2, "base", 3, NAN);
	add_two_value_run(db, job2, "+ v6 2", 0, NAN);
	t = report_text(db, job2, NULL);
	assert_null(strstr(t, "also measured"));
	free(t);
	js = report_json(db, job2, NULL);
	root = json_loads(js, 0, NULL);
	assert_null(json_object_get(root, "also_measured"));
	json_decref(root);
	free(js);
	db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sequential, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_sequential_look_reads_values_only, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_cover_letter_formats, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_failures_and_partial_runs, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_by_knob, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_by_two_axes, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_guest_modes, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_revision_by_prefix, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_overhead_footer, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_scratch_disk_footer, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_stratified_by_host, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_runs_never_run, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_headline, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_passive_median, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_also_headline, tmpdir_setup, tmpdir_teardown),
	};
	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
