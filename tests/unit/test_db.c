/* test_db.c - the store: migrations, levels, jobs/variants/runs. */
#include <errno.h>
#include <pthread.h>
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
#include "store/db_writer.h"
#include "store/db_status.h"
#include "store/db_tokens.h"
#include "store/db_internal.h"
#include "store/schema.h"
#include "util.h"
#include "testutil.h"

/*
 * Two writers at once on one real store (issue 18, concurrent writers):
 * each thread opens its own connection to the same new file at the same
 * moment (so both may find it unmigrated), then ingests TW_RUNS runs of
 * TW_SAMPLES samples into one job name, a transaction every TW_BATCH
 * samples, as kcanary ingest does. Every call must succeed (the other
 * writer is waited for, never reported as busy) and every sample is
 * stored once.
 */
#define TW_RUNS 12
#define TW_SAMPLES 3000
#define TW_BATCH 500
struct tw_arg {
	const char *path;
	pthread_barrier_t *go;
	int id, r;
	char err[512];
};

static void *tw_writer(void *p)
{
	struct tw_arg *a = p;
	struct db *db = NULL;
	struct db_writer *w = NULL;
	struct buf err = BUF_INIT;
	char variant[16];
	int r;

	snprintf(variant, sizeof(variant), "w%d", a->id);
	pthread_barrier_wait(a->go);
	if ((r = db_open(&db, a->path, &err)))
		goto out;
	for (int run = 0; run < TW_RUNS && !r; run++) {
		struct db_ingest_target t = { .job = "both", .variant = variant, .cell = "",
					      .writer = "test" };
		struct db_ingest_start st;

		if ((r = db_ingest_start(db, &t, &st, &err)) ||
		    (r = db_writer_open(&w, db, st.run_id, &err)))
			break;
		for (int i = 0; i < TW_SAMPLES && !r; i++) {
			if (i % TW_BATCH == 0 && (r = db_writer_begin(w, &err)))
				break;
			if ((r = db_writer_sample(w, i, "lag_s", a->id + i * 0.001, &err)))
				break;
			if (i % TW_BATCH == TW_BATCH - 1)
				r = db_writer_commit(w, &err);
		}
		if (!r)
			r = db_writer_finish(w, "ok", NULL, TW_SAMPLES, 0, &err);
		db_writer_close(w);
		w = NULL;
	}
out:
	a->r = r;
	snprintf(a->err, sizeof(a->err), "%s", buf_str(&err));
	buf_release(&err);
	db_close(db);
	return NULL;
}

static void test_two_writers_at_once(void **state)
{
	struct tmpdir *td = *state;
	char *path = xasprintf("%s/kc.db", td->path);
	pthread_barrier_t go;
	pthread_t th[2];
	struct tw_arg a[2];
	struct db *db = NULL;
	int64_t n = -1;

	pthread_barrier_init(&go, NULL, 2);
	for (int i = 0; i < 2; i++) {
		a[i] = (struct tw_arg){ .path = path, .go = &go, .id = i + 1 };
		assert_int_equal(pthread_create(&th[i], NULL, tw_writer, &a[i]), 0);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&go);
	for (int i = 0; i < 2; i++) {
		if (a[i].r)
			fprintf(stderr, "writer %d: %d: %s\n", a[i].id, a[i].r, a[i].err);
		assert_int_equal(a[i].r, 0);
	}
	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(db_query_int64(db, &n, "SELECT count(*) FROM jobs WHERE name = 'both'",
					NULL, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(db_query_int64(db, &n, "SELECT count(*) FROM runs WHERE status = 'ok'",
					NULL, NULL), 0);
	assert_int_equal(n, 2 * TW_RUNS);
	assert_int_equal(db_query_int64(db, &n, "SELECT count(*) FROM samples", NULL, NULL), 0);
	assert_int_equal(n, 2 * TW_RUNS * TW_SAMPLES);
	assert_int_equal(db_query_int64(db, &n, "SELECT count(*) FROM (SELECT 1 FROM samples"
					" GROUP BY run_id, t_s HAVING count(*) > 1)", NULL, NULL), 0);
	assert_int_equal(n, 0);
	db_close(db);
	free(path);
}

static void test_open_applies_all_migrations(void **state)
{
	struct tmpdir *td = *state;
	struct db *db = NULL;
	char *path = xasprintf("%s/sub/dir/kc.db", td->path);
	int newest = schema_migrations[schema_migrations_count - 1].level;

	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(db_schema_level(db, NULL), newest);
	db_close(db);
	/* reopening is a no-op at the same level */
	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(db_schema_level(db, NULL), newest);
	int64_t wal = 0;
	assert_int_equal(db_query_int64(db, &wal,
		"SELECT count(*) FROM pragma_journal_mode WHERE journal_mode = 'wal'", NULL, NULL), 0);
	assert_int_equal(wal, 1);
	int64_t fk = 0;
	assert_int_equal(db_query_int64(db, &fk, "PRAGMA foreign_keys", NULL, NULL), 0);
	assert_int_equal(fk, 1);
	db_close(db);
	free(path);
}

/*
 * Migrations are kept by name: a store that has a higher-numbered
 * migration but lacks a lower one (two branches' migrations landing in
 * the other order) gets the lower one on its next open. Made here by
 * undoing 012_faults.sql on a complete store, whose user_version stays at
 * the newest level; a level-only check (before kc_migrations) skipped it.
 */
static void test_missing_lower_migration_is_applied(void **state)
{
	struct tmpdir *td = *state;
	struct db *db = NULL;
	char *path = xasprintf("%s/kc.db", td->path);
	int newest = schema_migrations[schema_migrations_count - 1].level;
	int64_t n = -1;

	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(db_exec(db, "ALTER TABLE runs DROP COLUMN writer;"
				 " ALTER TABLE tokens DROP COLUMN scopes;"
				 " DELETE FROM kc_migrations WHERE name = '012_faults.sql'", NULL), 0);
	db_close(db);
	db = NULL;
	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(db_schema_level(db, NULL), newest);
	assert_int_equal(db_query_int64(db, &n, "SELECT count(*) FROM pragma_table_info('runs')"
					" WHERE name = 'writer'", NULL, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(db_query_int64(db, &n, "SELECT count(*) FROM kc_migrations", NULL, NULL), 0);
	assert_int_equal(n, schema_migrations_count);
	db_close(db);
	free(path);
}

/* 022_skipped_runs.sql (issue 35 item 13): a store from before, whose
 * finished job kept a build-failed variant's run 'pending' for ever, gets
 * it as 'skipped' with why; a pending run of a variant with a kernel stays
 * pending. Made here by undoing 022 on a complete store. */
static void test_migration_skips_kernelless_runs(void **state)
{
	struct tmpdir *td = *state;
	struct db *db = NULL;
	char *path = xasprintf("%s/kc.db", td->path);
	int64_t job, ok_v, bad_v, ok_run, bad_run, n = -1;
	char id[32];

	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(db_job_create(db, &job, "demo", "compare", NULL, NULL), 0);
	assert_int_equal(db_variant_get(db, &ok_v, job, "base", NULL), 0);
	assert_int_equal(db_variant_get(db, &bad_v, job, "+ v6 2-3", NULL), 0);
	assert_int_equal(db_variant_set_result(db, ok_v, "ok", NULL, NULL, 0, NULL), 0);
	assert_int_equal(db_variant_set_result(db, bad_v, "build-failed", "no", NULL, 0, NULL), 0);
	assert_int_equal(db_run_create(db, &ok_run, job, ok_v, "", 0, NULL, NULL, NULL), 0);
	assert_int_equal(db_run_create(db, &bad_run, job, bad_v, "", 0, NULL, NULL, NULL), 0);
	assert_int_equal(db_job_set_status(db, job, "done", NULL, NULL), 0);
	assert_int_equal(db_exec(db, "DELETE FROM kc_migrations WHERE name = '022_skipped_runs.sql'",
				 NULL), 0);
	db_close(db);
	db = NULL;
	assert_int_equal(db_open(&db, path, NULL), 0);
	snprintf(id, sizeof(id), "%lld", (long long)bad_run);
	assert_int_equal(db_query_int64(db, &n, "SELECT status = 'skipped' AND error = 'not run:"
					" variant ''+ v6 2-3'' has no kernel (build-failed: its kernel"
					" did not build)' AND finished_at IS NOT NULL FROM runs WHERE id = ?",
					id, NULL), 0);
	assert_int_equal(n, 1);
	snprintf(id, sizeof(id), "%lld", (long long)ok_run);
	assert_int_equal(db_query_int64(db, &n, "SELECT status = 'pending' FROM runs WHERE id = ?",
					id, NULL), 0);
	assert_int_equal(n, 1);
	db_close(db);
	free(path);
}

/* A store made before kc_migrations (user_version only) is taken to hold
 * every migration at or below its level: nothing is applied twice (an
 * ALTER TABLE ADD COLUMN applied again would fail "duplicate column"). */
static void test_level_only_store_is_adopted(void **state)
{
	struct tmpdir *td = *state;
	struct db *db = NULL;
	char *path = xasprintf("%s/kc.db", td->path);
	int64_t n = -1;

	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(db_exec(db, "DROP TABLE kc_migrations", NULL), 0);
	db_close(db);
	db = NULL;
	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(db_query_int64(db, &n, "SELECT count(*) FROM kc_migrations", NULL, NULL), 0);
	assert_int_equal(n, schema_migrations_count);
	db_close(db);
	free(path);
}

static void test_newer_store_is_refused(void **state)
{
	struct tmpdir *td = *state;
	struct db *db = NULL;
	char *path = xasprintf("%s/kc.db", td->path);

	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(db_exec(db, "PRAGMA user_version = 9999", NULL), 0);
	db_close(db);
	db = NULL;
	struct buf err = BUF_INIT;
	assert_int_equal(db_open(&db, path, &err), -EPROTO);
	assert_null(db);
	/* the store's own words, once: its path and what to do */
	assert_non_null(strstr(buf_str(&err), path));
	assert_non_null(strstr(buf_str(&err), "newer than this kcanary"));
	buf_release(&err);
	free(path);
}

/* A file that is not a store: db_open says which file, that it is damaged,
 * and returns -EIO (db_fail's translation of SQLITE_NOTADB). */
static void test_damaged_store_is_named(void **state)
{
	struct tmpdir *td = *state;
	struct buf err = BUF_INIT;
	struct db *db = NULL;
	char *path = xasprintf("%s/kc.db", td->path);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	for (int i = 0; i < 512; i++)
		fputs("not a database, ", f);
	fclose(f);
	assert_int_equal(db_open(&db, path, &err), -EIO);
	assert_null(db);
	assert_non_null(strstr(buf_str(&err), path));
	assert_non_null(strstr(buf_str(&err), "is damaged"));
	buf_release(&err);
	free(path);
}

/* A uniqueness conflict is -EEXIST naming what exists; a missing row is
 * -ENOENT naming it; a failed query -EIO naming the store and sqlite's
 * reason. */
static void test_store_errors_are_specific(void **state)
{
	struct tmpdir *td = *state;
	struct buf err = BUF_INIT;
	struct db *db = NULL;
	char *path = xasprintf("%s/kc.db", td->path);
	int64_t id;

	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(db_token_add(db, "ci", "00", NULL, &err), 0);
	assert_int_equal(db_token_add(db, "ci", "11", NULL, &err), -EEXIST);
	assert_non_null(strstr(buf_str(&err), "a token named 'ci' already exists"));
	assert_int_equal(db_run_set_status(db, 4242, "ok", NULL, &err), -ENOENT);
	assert_non_null(strstr(buf_str(&err), "no run 4242"));
	assert_int_equal(db_query_int64(db, &id, "SELECT nosuchcolumn FROM jobs", NULL, &err), -EIO);
	assert_non_null(strstr(buf_str(&err), "nosuchcolumn"));
	assert_non_null(strstr(buf_str(&err), path));
	/* err may be NULL: the same code, no text */
	assert_int_equal(db_token_add(db, "ci", "22", NULL, NULL), -EEXIST);
	buf_release(&err);
	db_close(db);
	free(path);
}

static void test_jobs_variants_runs(void **state)
{
	struct tmpdir *td = *state;
	struct db *db = NULL;
	char *path = xasprintf("%s/kc.db", td->path);
	int64_t job, job2, v0, v1, v0again, r1, r2, r3, idx;

	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(db_job_create(db, &job, "dying-cgwb", "compare", NULL, NULL), 0);
	assert_int_equal(db_job_resolve(db, &job2, "dying-cgwb", NULL), 0);
	assert_int_equal(job, job2);
	char *idstr = xasprintf("%lld", (long long)job);
	assert_int_equal(db_job_resolve(db, &job2, idstr, NULL), 0);
	assert_int_equal(job, job2);
	free(idstr);
	struct buf err = BUF_INIT;
	assert_int_equal(db_job_resolve(db, &job2, "nope", &err), -ENOENT);
	assert_non_null(strstr(buf_str(&err), "no job 'nope' in the store"));
	buf_release(&err);

	assert_int_equal(db_variant_get(db, &v0, job, "base", NULL), 0);
	assert_int_equal(db_variant_get(db, &v1, job, "+ v6 2/3", NULL), 0);
	assert_int_equal(db_variant_get(db, &v0again, job, "base", NULL), 0);
	assert_int_equal(v0, v0again);
	assert_int_equal(db_query_int64(db, &idx,
		"SELECT idx FROM variants WHERE name = '+ v6 2/3'", NULL, NULL), 0);
	assert_int_equal(idx, 1);

	assert_int_equal(db_run_create(db, &r1, job, v0, "fs=ext4", 0, "ext4", NULL, NULL), 0);
	assert_int_equal(db_run_create(db, &r2, job, v0, "fs=ext4", 0, "ext4", NULL, NULL), 0);
	assert_int_equal(db_query_int64(db, &idx,
		"SELECT max(repeat_idx) FROM runs", NULL, NULL), 0);
	assert_int_equal(idx, 2);
	assert_int_equal(db_run_create(db, &r3, job, v0, "fs=ext4", 2, "ext4", NULL, NULL), -EEXIST);
	assert_int_equal(db_run_set_status(db, r1, "running", NULL, NULL), 0);
	assert_int_equal(db_run_set_status(db, r1, "timeout", "watchdog fired after 300s", NULL), 0);
	int64_t fin = 0;
	assert_int_equal(db_query_int64(db, &fin,
		"SELECT count(*) FROM runs WHERE finished_at IS NOT NULL AND started_at IS NOT NULL"
		" AND status = 'timeout' AND error LIKE 'watchdog%'", NULL, NULL), 0);
	assert_int_equal(fin, 1);
	/* statuses are a closed set */
	assert_int_equal(db_run_set_status(db, r2, "exploded", NULL, NULL), -EINVAL);
	assert_int_equal(db_run_set_status(db, 999999, "ok", NULL, NULL), -ENOENT);
	/* listing and progress */
	struct db_job_row *rows = NULL;
	size_t n = 0;
	assert_int_equal(db_jobs_list(db, &rows, &n, 0, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].runs_total, 2);
	assert_int_equal(rows[0].runs_done, 1);
	assert_int_equal(rows[0].runs_failed, 1);      /* the timeout */
	assert_int_equal(rows[0].nvariants, 2);
	db_jobs_free(rows, n);
	int64_t rid;
	char *vname = NULL, *cell = NULL;
	int rep;
	double t, v;
	assert_int_equal(db_run_progress(db, job, "lag_s", &rid, &vname, &cell, &rep, &t, &v, NULL), -ENOENT);
	assert_int_equal(db_run_set_status(db, r2, "running", NULL, NULL), 0);
	assert_int_equal(db_exec(db, "INSERT INTO samples (run_id, metric_id, t_s, value)"
		" SELECT 2, id, 5, 1.5 FROM metrics WHERE name = 'lag_s';"
		" INSERT INTO samples (run_id, metric_id, t_s, value)"
		" SELECT 2, id, 6, 2.5 FROM metrics WHERE name = 'lag_s'", NULL), 0);
	assert_int_equal(db_run_progress(db, job, "lag_s", &rid, &vname, &cell, &rep, &t, &v, NULL), 0);
	assert_int_equal(rid, r2);
	assert_string_equal(vname, "base");
	assert_string_equal(cell, "fs=ext4");
	assert_int_equal(rep, 2);
	assert_float_equal(t, 6, 1e-9);
	assert_float_equal(v, 2.5, 1e-9);
	free(vname);
	free(cell);

	/* resume: the running run is interrupted (samples kept) and a fresh
	 * repeat goes to the end of the run order */
	int64_t *ids = NULL;
	size_t nids = 0;
	assert_int_equal(db_job_interrupt_running(db, job, &ids, &nids, NULL), 0);
	assert_int_equal(nids, 1);
	assert_int_equal(ids[0], r2);
	free(ids);
	int64_t cnt;
	assert_int_equal(db_query_int64(db, &cnt, "SELECT count(*) FROM runs WHERE status = 'interrupted'"
		" AND id = 2 AND finished_at IS NOT NULL", NULL, NULL), 0);
	assert_int_equal(cnt, 1);
	assert_int_equal(db_query_int64(db, &cnt, "SELECT count(*) FROM samples WHERE run_id = 2", NULL, NULL), 0);
	assert_int_equal(cnt, 2);
	assert_int_equal(db_query_int64(db, &cnt, "SELECT count(*) FROM runs WHERE status = 'pending'"
		" AND repeat_idx = 3 AND cell = 'fs=ext4' AND seq = 3", NULL, NULL), 0);
	assert_int_equal(cnt, 1);
	assert_int_equal(db_job_interrupt_running(db, job, &ids, &nids, NULL), 0);
	assert_int_equal(nids, 0);
	db_close(db);
	free(path);
}

/* The writer's own transactions run without per-row foreign key checks
 * (issue 19, ingest speed); enforcement is back on after commit and
 * rollback, and a run deleted under the writer is named, not orphaned. */
static void test_writer_foreign_keys(void **state)
{
	struct tmpdir *td = *state;
	struct db *db = NULL;
	struct db_writer *w = NULL;
	char *path = xasprintf("%s/kc.db", td->path);
	int64_t job, v, run, fk = -1, n = -1;
	struct buf err = BUF_INIT;

	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(db_job_create(db, &job, "j", "compare", NULL, NULL), 0);
	assert_int_equal(db_variant_get(db, &v, job, "base", NULL), 0);
	assert_int_equal(db_run_create(db, &run, job, v, "", 0, "ext4", NULL, NULL), 0);
	assert_int_equal(db_writer_open(&w, db, run, NULL), 0);
	assert_int_equal(db_writer_begin(w, NULL), 0);
	assert_int_equal(db_query_int64(db, &fk, "PRAGMA foreign_keys", NULL, NULL), 0);
	assert_int_equal(fk, 0);
	assert_int_equal(db_writer_sample(w, 1, "lag_s", 1.5, NULL), 0);
	assert_int_equal(db_writer_commit(w, NULL), 0);
	assert_int_equal(db_query_int64(db, &fk, "PRAGMA foreign_keys", NULL, NULL), 0);
	assert_int_equal(fk, 1);
	/* samples go in 64 at a time: 150 = two full batches and 22 stored
	 * at commit, every value in order; a rollback drops pending ones */
	assert_int_equal(db_writer_begin(w, NULL), 0);
	for (int i = 0; i < 150; i++)
		assert_int_equal(db_writer_sample(w, 10 + i, "lag_s", i * 0.5, NULL), 0);
	assert_int_equal(db_writer_phase(w, 200, "mid", NULL), 0);	/* flushes first */
	assert_int_equal(db_writer_sample(w, 300, "lag_s", 99, NULL), 0);
	assert_int_equal(db_writer_commit(w, NULL), 0);
	assert_int_equal(db_query_int64(db, &n, "SELECT count(*) FROM samples", NULL, NULL), 0);
	assert_int_equal(n, 152);
	assert_int_equal(db_query_int64(db, &n, "SELECT count(*) FROM samples WHERE t_s >= 10 AND "
					"t_s < 160 AND value = (t_s - 10) * 0.5", NULL, NULL), 0);
	assert_int_equal(n, 150);
	assert_int_equal(db_query_int64(db, &n, "SELECT count(*) FROM samples s JOIN "
					"(SELECT rowid r, t_s FROM samples) p ON p.r = s.rowid - 1 "
					"WHERE s.t_s < p.t_s", NULL, NULL), 0);
	assert_int_equal(n, 0);	/* stored in the order written */
	assert_int_equal(db_writer_begin(w, NULL), 0);
	for (int i = 0; i < 70; i++)
		assert_int_equal(db_writer_sample(w, 400 + i, "lag_s", 1, NULL), 0);
	db_writer_rollback(w);
	assert_int_equal(db_query_int64(db, &n, "SELECT count(*) FROM samples", NULL, NULL), 0);
	assert_int_equal(n, 152);
	assert_int_equal(db_query_int64(db, &fk, "PRAGMA foreign_keys", NULL, NULL), 0);
	assert_int_equal(fk, 1);
	/* enforcement is on for everyone else: a sample of no run is refused */
	assert_true(db_exec(db, "INSERT INTO samples (run_id, metric_id, t_s, value)"
			    " VALUES (999, 1, 0, 0)", NULL) < 0);
	/* the run deleted (its samples cascade): the next batch says so */
	assert_int_equal(db_exec(db, "DELETE FROM runs", NULL), 0);
	assert_int_equal(db_query_int64(db, &n, "SELECT count(*) FROM samples", NULL, NULL), 0);
	assert_int_equal(n, 0);
	assert_int_equal(db_writer_begin(w, &err), -ENOENT);
	assert_non_null(strstr(buf_str(&err), "is no longer in the store"));
	assert_int_equal(db_query_int64(db, &fk, "PRAGMA foreign_keys", NULL, NULL), 0);
	assert_int_equal(fk, 1);
	buf_release(&err);
	db_writer_close(w);
	db_close(db);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_applies_all_migrations, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_missing_lower_migration_is_applied, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_migration_skips_kernelless_runs, tmpdir_setup, tmpdir_teardown),
				cmocka_unit_test_setup_teardown(test_level_only_store_is_adopted, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_newer_store_is_refused, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_damaged_store_is_named, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_store_errors_are_specific, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_jobs_variants_runs, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_writer_foreign_keys, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_two_writers_at_once, tmpdir_setup, tmpdir_teardown),
	};
	return cmocka_run_group_tests_name("db", tests, NULL, NULL);
}
