/* test_db_bisect.c - what the bisect oracle reads from a run (summary
 * value, a command workload's samples, a probe's final count) and the
 * stored event log, on a real sqlite store in a temp dir. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "store/db.h"
#include "store/db_runs.h"
#include "store/db_compare.h"
#include "store/db_writer.h"
#include "store/db_bisect.h"
#include "store/db_lab.h"
#include "util.h"
#include "testutil.h"

static int64_t new_run(struct db *db, int64_t job, int64_t variant, int rep)
{
	int64_t id;

	assert_int_equal(db_run_create(db, &id, job, variant, "", rep, "ext4", NULL, NULL), 0);
	return id;
}

static void test_metric_and_log(void **state)
{
	struct tmpdir *td = *state;
	char *path = xasprintf("%s/kc.db", td->path), *log = NULL;
	struct db *db = NULL;
	struct db_writer *w = NULL;
	int64_t job, var, r1, r2, r3;
	double v = -1;
	bool hiw;

	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(db_job_create(db, &job, "b", "bisect", NULL, NULL), 0);
	assert_int_equal(db_variant_get(db, &var, job, "abc subject", NULL), 0);
	r1 = new_run(db, job, var, 1);
	r2 = new_run(db, job, var, 2);
	r3 = new_run(db, job, var, 3);

	/* r1: a summary value, lag samples, probes with a running and a final count */
	assert_int_equal(db_writer_open(&w, db, r1, NULL), 0);
	assert_int_equal(db_writer_begin(w, NULL), 0);
	assert_int_equal(db_writer_sample(w, 1, "lag_s", 3.5, NULL), 0);
	assert_int_equal(db_writer_sample(w, 2, "lag_s", 7.25, NULL), 0);
	assert_int_equal(db_writer_summary(w, "worst_lag_s", 7.25, NULL), 0);
	assert_int_equal(db_writer_probe(w, 1, "cgroup_writeback_by_id", "-2", 4, NULL), 0);
	assert_int_equal(db_writer_probe(w, 2, "cgroup_writeback_by_id", "-2", 9, NULL), 0);
	assert_int_equal(db_writer_probe(w, NAN, "cgroup_writeback_by_id", "-2", 11, NULL), 0);
	assert_int_equal(db_writer_probe(w, NAN, "cgroup_writeback_by_id", "0", 5, NULL), 0);
	assert_int_equal(db_writer_commit(w, NULL), 0);
	db_writer_close(w);
	/* r2: a command workload's metric lines, a probe with no final count */
	assert_int_equal(db_writer_open(&w, db, r2, NULL), 0);
	assert_int_equal(db_writer_begin(w, NULL), 0);
	assert_int_equal(db_writer_sample(w, 1, "sublevel", 107, NULL), 0);
	assert_int_equal(db_writer_sample(w, 2, "sublevel", 117, NULL), 0);
	assert_int_equal(db_writer_sample(w, 3, "sublevel", 110, NULL), 0);
	assert_int_equal(db_writer_probe(w, 2, "cgroup_writeback_by_id", "-2", 6, NULL), 0);
	assert_int_equal(db_writer_commit(w, NULL), 0);
	db_writer_close(w);

	assert_int_equal(db_run_metric(db, r1, "worst_lag_s", &v, NULL), 0);
	assert_true(v == 7.25);
	assert_int_equal(db_run_metric(db, r1, "probe:cgroup_writeback_by_id:-2", &v, NULL), 0);
	assert_true(v == 11);   /* the final count, not the largest running one */
	assert_int_equal(db_run_metric(db, r1, "probe:cgroup_writeback_by_id:0", &v, NULL), 0);
	assert_true(v == 5);
	/* probes ran, that key never fired: 0, which is evidence */
	assert_int_equal(db_run_metric(db, r1, "probe:cgroup_writeback_by_id:-7", &v, NULL), 0);
	assert_true(v == 0);
	assert_int_equal(db_run_metric(db, r2, "sublevel", &v, NULL), 0);
	assert_true(v == 117);  /* the largest sample */
	assert_int_equal(db_run_metric(db, r2, "probe:cgroup_writeback_by_id:-2", &v, NULL), 0);
	assert_true(v == 6);
	assert_int_equal(db_run_metric(db, r2, "worst_lag_s", &v, NULL), -ENOENT);
	/* r3 has nothing: no probes at all is no evidence */
	assert_int_equal(db_run_metric(db, r3, "probe:cgroup_writeback_by_id:-2", &v, NULL), -ENOENT);
	assert_int_equal(db_run_metric(db, r3, "sublevel", &v, NULL), -ENOENT);
	assert_int_equal(db_run_metric(db, r3, "probe:nokey", &v, NULL), -EINVAL);

	/* direction from the metrics table */
	assert_int_equal(db_metric_higher_is_worse(db, "worst_lag_s", &hiw, NULL), 0);
	assert_true(hiw);
	assert_int_equal(db_metric_higher_is_worse(db, "rate_mbps", &hiw, NULL), 0);
	assert_false(hiw);
	assert_int_equal(db_metric_higher_is_worse(db, "sublevel", &hiw, NULL), 0);
	assert_true(hiw);

	/* the log: none yet, then stored and replaced */
	assert_int_equal(db_bisect_log_get(db, job, &log, NULL), -ENOENT);
	assert_int_equal(db_bisect_log_set(db, job, "kcanary-bisect-log 1\n", NULL), 0);
	assert_int_equal(db_bisect_log_set(db, job, "kcanary-bisect-log 1\nrun idx=0\n", NULL), 0);
	assert_int_equal(db_bisect_log_get(db, job, &log, NULL), 0);
	assert_string_equal(log, "kcanary-bisect-log 1\nrun idx=0\n");
	free(log);
	db_close(db);
	free(path);
}

/* A lab round read back (bisect_exec.c): the next repeat of the job, and
 * the runs from an id on that ended with a result, infra and pending
 * ones left out, in id order, with their host. */
static void test_lab_round_runs(void **state)
{
	struct tmpdir *td = *state;
	char *path = xasprintf("%s/kc.db", td->path);
	struct db *db = NULL;
	struct db_bisect_run *b = NULL;
	size_t n = 0;
	int64_t job, v0, v1, r1, r2, r3, r4, fresh;
	int rep = 0;

	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(db_job_create(db, &job, "b", "bisect", NULL, NULL), 0);
	assert_int_equal(db_job_next_repeat(db, job, &rep, NULL), 0);
	assert_int_equal(rep, 1);
	assert_int_equal(db_variant_get(db, &v0, job, "k0", NULL), 0);
	assert_int_equal(db_variant_get(db, &v1, job, "k2", NULL), 0);
	r1 = new_run(db, job, v0, 1);
	r2 = new_run(db, job, v1, 1);
	r3 = new_run(db, job, v0, 2);
	r4 = new_run(db, job, v1, 2);
	assert_int_equal(db_job_next_repeat(db, job, &rep, NULL), 0);
	assert_int_equal(rep, 3);
	assert_int_equal(db_run_set_lab_host(db, r1, "local", NULL), 0);
	assert_int_equal(db_run_set_status(db, r1, "ok", NULL, NULL), 0);
	assert_int_equal(db_run_set_lab_host(db, r2, "h2", NULL), 0);
	assert_int_equal(db_run_set_status(db, r2, "infra", "the connection dropped", NULL), 0);
	assert_int_equal(db_run_reschedule_id(db, r2, &fresh, NULL), 0);
	assert_int_equal(db_run_set_status(db, r3, "timeout", "no end", NULL), 0);
	/* r4 pending, fresh pending: not yet */
	assert_int_equal(db_bisect_runs_since(db, job, r2, &b, &n, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(b[0].id, r3);
	assert_string_equal(b[0].status, "timeout");
	assert_string_equal(b[0].error, "no end");
	assert_string_equal(b[0].lab_host, "");
	db_bisect_runs_free(b, n);
	assert_int_equal(db_run_set_lab_host(db, fresh, "local", NULL), 0);
	assert_int_equal(db_run_set_status(db, fresh, "ok", NULL, NULL), 0);
	assert_int_equal(db_run_set_status(db, r4, "ok", NULL, NULL), 0);
	assert_int_equal(db_bisect_runs_since(db, job, r1, &b, &n, NULL), 0);
	assert_int_equal(n, 4);
	assert_int_equal(b[0].id, r1);
	assert_string_equal(b[0].lab_host, "local");
	assert_int_equal(b[1].id, r3);
	assert_int_equal(b[2].id, r4);
	assert_int_equal(b[3].id, fresh);
	assert_int_equal(b[3].variant_id, v1);
	assert_string_equal(b[3].lab_host, "local");
	db_bisect_runs_free(b, n);
	db_close(db);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_metric_and_log, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_lab_round_runs, tmpdir_setup, tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
