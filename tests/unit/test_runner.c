/* test_runner.c - runner.c: console tail and panic lines, and whole runs on
 * libvirt's test:///default driver with a real sqlite store: the watchdog,
 * a paused guest failing at once, and teardown of domain and files. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/un.h>
#include <cmocka.h>

#include "store/db.h"
#include "store/db_runs.h"
#include "store/db_internal.h"
#include "guest/runner.h"
#include "util.h"
#include "wrap/vm.h"
#include "testutil.h"

static void test_console_tail(void **state)
{
	struct tmpdir *td = *state;
	char *path = xasprintf("%s/console.log", td->path), *tail = NULL;
	FILE *f = fopen(path, "w");

	for (int i = 1; i <= 300; i++)
		fprintf(f, "line %d\r\n", i);
	fclose(f);
	assert_int_equal(runner_console_tail(&tail, path, 200), 0);
	assert_non_null(tail);
	assert_true(!strncmp(tail, "line 101\nline 102\n", 18));
	assert_non_null(strstr(tail, "line 300\n"));
	assert_null(strchr(tail, '\r'));
	int lines = 0;
	for (char *p = tail; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 200);
	free(tail);

	/* fewer lines than asked: all of them */
	f = fopen(path, "w");
	fputs("only\nthree\nlines", f);
	fclose(f);
	assert_int_equal(runner_console_tail(&tail, path, 200), 0);
	assert_string_equal(tail, "only\nthree\nlines");
	free(tail);

	unlink(path);
	assert_int_equal(runner_console_tail(&tail, path, 200), 0);
	assert_null(tail);
	free(path);
}

static void test_find_panic(void **state)
{
	char line[256];

	(void)state;
	assert_false(runner_find_panic(line, sizeof(line), "[ 1.0] all good\n"));
	assert_false(runner_find_panic(line, sizeof(line), NULL));
	assert_true(runner_find_panic(line, sizeof(line),
		"[ 3.8] Run /init as init process\n"
		"[ 3.9] Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000100\n"
		"[ 3.9] CPU: 0 PID: 1\n"));
	assert_string_equal(line, "Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000100");
}

/* /init's own first line counts as reaching it: at loglevel=5 the kernel's
 * "Run /init" is not on the console. */
static void test_reached_init(void **state)
{
	(void)state;
	assert_false(runner_reached_init(NULL));
	assert_false(runner_reached_init("[ 1.0] Linux version 6.12\n[ 2.0] Kernel panic\n"));
	assert_true(runner_reached_init("[ 3.8] Run /init as init process\n"));
	assert_true(runner_reached_init("kcanary-init: [1.83] started\n"));
}

/* ---- whole runs on test:///default ---- */

struct fixture {
	struct tmpdir td;
	struct db *db;
	int64_t job, variant;
	char name[96];            /* the guest's domain name, from on_start */
	bool scratch_seen;        /* its scratch volume was in the pool while it ran */
	bool suspend_on_start;
	/* Held open for the whole test: test:///default's state lives only
	 * while a connection to it is open, so a connection opened after the
	 * runner closed its own would see a new, empty driver whatever the
	 * runner left behind. Every check goes through this one. */
	struct vm_conn *conn;
};

static int fixture_setup(void **state)
{
	struct fixture *fx;
	char *path;

	if (tmpdir_setup(state))
		return -1;
	fx = xcalloc(1, sizeof(*fx));
	fx->td = *(struct tmpdir *)*state;
	free(*state);
	*state = fx;
	if (vm_conn_open(&fx->conn, "test:///default", NULL))
		return -1;
	path = xasprintf("%s/kcanary.db", fx->td.path);
	if (db_open(&fx->db, path, NULL) || db_job_create(fx->db, &fx->job, "unit", "adhoc", NULL, NULL) ||
	    db_variant_get(fx->db, &fx->variant, fx->job, "k", NULL))
		return -1;
	free(path);
	return 0;
}

static int fixture_teardown(void **state)
{
	struct fixture *fx = *state;
	struct tmpdir *td = xmalloc(sizeof(*td));

	db_close(fx->db);
	vm_conn_close(fx->conn);
	*td = fx->td;
	free(fx);
	*state = td;
	return tmpdir_teardown(state);
}

static void on_start(const char *name, void *arg)
{
	struct fixture *fx = arg;
	struct vm_domain *d = NULL;
	struct buf err = BUF_INIT;

	snprintf(fx->name, sizeof(fx->name), "%s", name);
	/* the guest runs: the runner's domain is visible on our connection,
	 * and so is its scratch volume (what assert_scratch_gone() looks for) */
	assert_int_equal(vm_domain_lookup(&d, fx->conn, name, &err), 0);
	char *vol = xasprintf("%s-scratch.img", name);
	fx->scratch_seen = vm_volume_exists(fx->conn, vol);
	free(vol);
	/* What an emulation failure looks like to libvirt: the guest pauses. */
	if (fx->suspend_on_start)
		assert_int_equal(vm_domain_suspend(d, &err), 0);
	vm_domain_free(d);
	buf_release(&err);
}

/* A file of a few bytes (the test driver boots nothing). */
static const char *small_file(struct fixture *fx, const char *name)
{
	static char path[2][512];
	int i = !strcmp(name, "initrd");
	FILE *f;

	snprintf(path[i], sizeof(path[i]), "%s/%s", fx->td.path, name);
	f = fopen(path[i], "w");
	assert_non_null(f);
	fputs(name, f);
	fclose(f);
	return path[i];
}

static struct runner_opts test_opts(struct fixture *fx, double watchdog_s)
{
	return (struct runner_opts){
		.uri = "test:///default", .home = fx->td.path,
		.kernel = small_file(fx, "kernel"), .initrd = small_file(fx, "initrd"),
		.cmdline = "console=ttyS0", .accel = VM_ACCEL_TCG,
		.disk_bytes = 64 << 20, .watchdog_s = watchdog_s,
		.on_start = on_start, .on_start_arg = fx,
	};
}

static void assert_run(struct db *db, int64_t run_id, const char *sql_cond)
{
	char *sql = xasprintf("SELECT count(*) FROM runs WHERE id = ? AND %s", sql_cond);
	char *id = xasprintf("%lld", (long long)run_id);
	int64_t n = -1;

	assert_int_equal(db_query_int64(db, &n, sql, id, NULL), 0);
	if (n != 1)
		fprintf(stderr, "run %s does not satisfy: %s\n", id, sql_cond);
	assert_int_equal(n, 1);
	free(sql);
	free(id);
}

/* The guest is gone, seen on the connection that saw it run (on_start). */
static void assert_domain_gone(struct fixture *fx)
{
	struct vm_domain *d = NULL;
	struct buf err = BUF_INIT;

	assert_true(fx->name[0]);
	assert_int_equal(vm_domain_lookup(&d, fx->conn, fx->name, &err), -ENOENT);
	buf_release(&err);
}

/* The run's scratch volume (NAME-scratch.img in the pool, runner.c) was
 * there while the guest ran and is gone now. */
static void assert_scratch_gone(struct fixture *fx)
{
	char *vol = xasprintf("%s-scratch.img", fx->name);

	assert_true(fx->name[0]);
	assert_true(fx->scratch_seen);
	assert_false(vm_volume_exists(fx->conn, vol));
	free(vol);
}

static void test_watchdog_destroys(void **state)
{
	struct fixture *fx = *state;
	struct runner_opts o = test_opts(fx, 0.6);
	struct runner_result res;
	int64_t run;
	double t0;

	assert_int_equal(db_run_create(fx->db, &run, fx->job, fx->variant, "", 0, "ext4", NULL, NULL), 0);
	t0 = clock_mono_s();
	assert_int_equal(runner_run(&res, fx->db, run, &o, NULL), 0);
	assert_true(clock_mono_s() - t0 < 5);
	if (strcmp(res.status, "timeout")) fprintf(stderr, "error: %s\n", res.error);
	assert_string_equal(res.status, "timeout");
	assert_non_null(strstr(res.error, "watchdog: the guest ran longer than 1 s"));
	assert_run(fx->db, run, "status = 'timeout' AND error LIKE 'watchdog:%' AND accel = 'tcg'"
		   " AND console_log_path LIKE '%/runs/%/console.log' AND finished_at IS NOT NULL");
	assert_true(fx->name[0]);
	assert_run(fx->db, run, "json_extract(guest_json, '$.cmdline') = 'console=ttyS0'"
		   " AND json_extract(guest_json, '$.uri') = 'test:///default'"
		   " AND json_extract(guest_json, '$.vcpus') = 2"
		   " AND json_extract(guest_json, '$.memory_mib') = 2048"
		   " AND json_extract(guest_json, '$.disk_bytes') = 67108864"
		   " AND json_extract(guest_json, '$.domain') LIKE 'kcanary-r%'");
	assert_domain_gone(fx);
	assert_scratch_gone(fx);
}

static void test_paused_fails_at_once(void **state)
{
	struct fixture *fx = *state;
	struct runner_opts o = test_opts(fx, 60);
	struct runner_result res;
	int64_t run;
	double t0;

	fx->suspend_on_start = true;
	assert_int_equal(db_run_create(fx->db, &run, fx->job, fx->variant, "", 0, "xfs", NULL, NULL), 0);
	t0 = clock_mono_s();
	assert_int_equal(runner_run(&res, fx->db, run, &o, NULL), 0);
	/* at once: nowhere near the 60 s watchdog */
	assert_true(clock_mono_s() - t0 < 5);
	assert_string_equal(res.status, "paused");
	assert_non_null(strstr(res.error, "guest paused by the hypervisor (suspended (paused), "
				       "libvirt reason 'user')"));
	assert_run(fx->db, run, "status = 'paused' AND error LIKE 'guest paused%'");
	assert_domain_gone(fx);
	assert_scratch_gone(fx);
}

/* What a dead coordinator's run left (its scratch volume) goes by name;
 * a second sweep finds nothing; a host that does not answer is an error. */
static void test_clean_host(void **state)
{
	struct fixture *fx = *state;
	struct buf err = BUF_INIT;
	char *path = NULL;
	int n = -1;

	assert_int_equal(vm_pool_ensure(fx->conn, &err), 0);
	assert_int_equal(vm_volume_scratch(fx->conn, "kcanary-r9-p1-0000-scratch.img", 1 << 20, &path,
					   &err), 0);
	assert_true(vm_volume_exists(fx->conn, "kcanary-r9-p1-0000-scratch.img"));
	assert_int_equal(runner_clean_host("test:///default", "kcanary-r9-p1-0000", &n, &err), 0);
	assert_int_equal(n, 1);
	assert_false(vm_volume_exists(fx->conn, "kcanary-r9-p1-0000-scratch.img"));
	assert_int_equal(runner_clean_host("test:///default", "kcanary-r9-p1-0000", &n, &err), 0);
	assert_int_equal(n, 0);
	assert_true(runner_clean_host("qemu+tcp://127.0.0.1:1/system", "kcanary-r9-p1-0000", &n, &err) < 0);
	assert_non_null(strstr(buf_str(&err), "127.0.0.1:1"));
	free(path);
	buf_release(&err);
}

static void test_start_failure_is_stored(void **state)
{
	struct fixture *fx = *state;
	struct runner_opts o = test_opts(fx, 60);
	struct runner_result res;
	int64_t run;

	o.uri = "qemu+unix:///system?socket=/nonexistent/kc.sock";
	assert_int_equal(db_run_create(fx->db, &run, fx->job, fx->variant, "", 0, "ext4", NULL, NULL), 0);
	assert_int_equal(runner_run(&res, fx->db, run, &o, NULL), 0);
	/* a host that does not answer is the host's fault: never a result */
	assert_string_equal(res.status, "infra");
	assert_non_null(strstr(res.error, "cannot connect to libvirt"));
	assert_run(fx->db, run, "status = 'infra' AND error LIKE 'cannot connect to libvirt%'");
	/* no connection, so no guest and no volume was ever made */
	assert_false(fx->name[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_console_tail, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test(test_find_panic),
		cmocka_unit_test(test_reached_init),
		cmocka_unit_test_setup_teardown(test_watchdog_destroys, fixture_setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_paused_fails_at_once, fixture_setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_start_failure_is_stored, fixture_setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_clean_host, fixture_setup, fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
