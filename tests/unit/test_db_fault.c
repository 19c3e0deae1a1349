/* test_db_fault.c - the store under I/O errors (issue 18): a fault-
 * injecting sqlite VFS shim (sqlite's test_vfs.c and its crash tests are
 * the model) made the process's default VFS, so db_open() uses it without
 * knowing. It passes every call to the real VFS ("unix") and fails the
 * Nth xWrite or xSync with SQLITE_IOERR. For N = 1, 2, … until a run goes
 * through untouched, a real record stream is stored as kcanary ingest
 * stores it (db_ingest_start, ingest_*): never a crash, an error that says
 * "I/O error on the store '…'", no half-stored batch (a run has all of
 * its samples or none), no run left 'running' by a process that is alive,
 * and PRAGMA integrity_check 'ok' when the store is opened again. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "store/db.h"
#include "store/db_runs.h"
#include "store/db_internal.h"
#include "guest/ingest.h"
#include "exec/job.h"
#include "util.h"
#include "testutil.h"

/* ---- the shim ---- */

enum fault_kind { FAULT_WRITE, FAULT_SYNC };

static struct {
	sqlite3_vfs vfs;           /* ours, registered as the default */
	sqlite3_vfs *real;         /* "unix" */
	enum fault_kind kind;
	int countdown;             /* the call that fails: 1 = the next; 0 = none */
	int calls;                 /* of kind, since armed */
	int injected;
} F;

struct ffile {
	sqlite3_file base;         /* our methods */
	sqlite3_file *real;        /* the real VFS's file, after us */
};

static int fault_now(enum fault_kind k)
{
	if (k != F.kind || !F.countdown)
		return 0;
	F.calls++;
	if (F.calls == F.countdown) {
		F.injected++;
		return 1;
	}
	return 0;
}

#define REAL(f) (((struct ffile *)(f))->real)
static int f_close(sqlite3_file *f)
{
	int rc = REAL(f)->pMethods ? REAL(f)->pMethods->xClose(REAL(f)) : SQLITE_OK;
	free(REAL(f));
	return rc;
}
static int f_read(sqlite3_file *f, void *p, int n, sqlite3_int64 off)
{
	return REAL(f)->pMethods->xRead(REAL(f), p, n, off);
}
static int f_write(sqlite3_file *f, const void *p, int n, sqlite3_int64 off)
{
	if (fault_now(FAULT_WRITE))
		return SQLITE_IOERR_WRITE;
	return REAL(f)->pMethods->xWrite(REAL(f), p, n, off);
}
static int f_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	return REAL(f)->pMethods->xTruncate(REAL(f), size);
}
static int f_sync(sqlite3_file *f, int flags)
{
	if (fault_now(FAULT_SYNC))
		return SQLITE_IOERR_FSYNC;
	return REAL(f)->pMethods->xSync(REAL(f), flags);
}
static int f_size(sqlite3_file *f, sqlite3_int64 *out)
{
	return REAL(f)->pMethods->xFileSize(REAL(f), out);
}
static int f_lock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xLock(REAL(f), l); }
static int f_unlock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xUnlock(REAL(f), l); }
static int f_check(sqlite3_file *f, int *out)
{
	return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}
static int f_fcntl(sqlite3_file *f, int op, void *arg)
{
	return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}
static int f_sector(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int f_devchar(sqlite3_file *f)
{
	return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}
static int f_shmmap(sqlite3_file *f, int pg, int sz, int extend, void volatile **out)
{
	return REAL(f)->pMethods->xShmMap(REAL(f), pg, sz, extend, out);
}
static int f_shmlock(sqlite3_file *f, int off, int n, int flags)
{
	return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags);
}
static void f_shmbarrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int f_shmunmap(sqlite3_file *f, int del)
{
	return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}
static int f_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **out)
{
	return REAL(f)->pMethods->xFetch(REAL(f), off, n, out);
}
static int f_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	return REAL(f)->pMethods->xUnfetch(REAL(f), off, p);
}

static const sqlite3_io_methods f_methods = {
	3, f_close, f_read, f_write, f_truncate, f_sync, f_size, f_lock, f_unlock, f_check,
	f_fcntl, f_sector, f_devchar, f_shmmap, f_shmlock, f_shmbarrier, f_shmunmap,
	f_fetch, f_unfetch,
};

static int f_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out)
{
	struct ffile *ff = (struct ffile *)file;
	int rc;

	(void)vfs;
	ff->real = calloc(1, (size_t)F.real->szOsFile);
	ff->base.pMethods = NULL;
	rc = F.real->xOpen(F.real, name, ff->real, flags, out);
	if (rc != SQLITE_OK || !ff->real->pMethods) {
		free(ff->real);
		ff->real = NULL;
		return rc;
	}
	ff->base.pMethods = &f_methods;
	return SQLITE_OK;
}

static int fault_vfs_install(void)
{
	if (F.real)
		return 0;
	F.real = sqlite3_vfs_find("unix");
	if (!F.real)
		return -1;
	F.vfs = *F.real;
	F.vfs.zName = "kcfault";
	F.vfs.szOsFile = (int)sizeof(struct ffile);
	F.vfs.xOpen = f_open;
	F.vfs.pAppData = NULL;
	return sqlite3_vfs_register(&F.vfs, 1) == SQLITE_OK ? 0 : -1;
}

static void arm(enum fault_kind k, int nth)
{
	F.kind = k;
	F.countdown = nth;
	F.calls = 0;
	F.injected = 0;
}

/* ---- the test ---- */

/* Rows of PRAGMA integrity_check other than 'ok': 0 for a whole store. */
#define INTEGRITY_BAD \
	"SELECT count(*) FROM pragma_integrity_check WHERE integrity_check != 'ok'"

static int64_t q(struct db *db, const char *sql)
{
	int64_t v = -1;
	assert_int_equal(db_query_int64(db, &v, sql, NULL, NULL), 0);
	return v;
}

/* Store the stream text as one run of job 'faulty' (variant v<i>), as
 * kcanary ingest does. 0 or the first error, with err. */
static int store_stream(const char *path, const char *text, size_t len, int i, struct buf *err)
{
	struct db *db = NULL;
	struct ingest *in = NULL;
	struct db_ingest_start st;
	char variant[32], *me = proc_identity();
	struct db_ingest_target t = { .job = "faulty", .variant = variant, .cell = "fs=ext4",
				      .fs = "ext4", .writer = me };
	int r;

	snprintf(variant, sizeof(variant), "v%d", i);
	if ((r = db_open(&db, path, err)))
		goto out;
	if ((r = db_ingest_start(db, &t, &st, err)))
		goto out;
	if ((r = ingest_open(&in, db, st.run_id, err)))
		goto out;
	r = ingest_feed(in, text, len, NULL);
	/* a store error in feed is said again by close */
	r = ingest_close(in, NULL, err);
	if (r)   /* as cmd_ingest does: not left 'running' */
		db_run_set_status(db, st.run_id, "interrupted", buf_str(err), NULL);
out:
	db_close(db);
	free(me);
	return r;
}

static void run_faults(enum fault_kind kind, const char *what)
{
	struct tmpdir *td = NULL;
	char *path, *text = NULL;
	size_t len;
	int n, failed = 0, ok_runs = 0;

	assert_int_equal(fault_vfs_install(), 0);
	assert_int_equal(tmpdir_setup((void **)&td), 0);
	path = xasprintf("%s/kc.db", td->path);
	assert_int_equal(read_file(&text, &len, "tests/fixtures/streams/lag-85.3.jsonl", 0), 0);
	int64_t whole = 0;
	for (const char *p = text; (p = strstr(p, "\"type\":\"sample\"")); p++)
		whole++;
	{	/* the store exists, migrated, before the faults */
		struct db *db = NULL;
		assert_int_equal(db_open(&db, path, NULL), 0);
		db_close(db);
	}
	for (n = 1; n < 10000; n++) {
		struct buf err = BUF_INIT;
		struct db *db = NULL;
		int r;

		arm(kind, n);
		r = store_stream(path, text, len, n, &err);
		int injected = F.injected;
		arm(kind, 0);
		if (r) {
			if (!failed)
				print_message("%s %d: %s\n", what, n, buf_str(&err));
			failed++;
			if (!strstr(buf_str(&err), "I/O error on the store") &&
			    !strstr(buf_str(&err), "disk I/O error"))
				fail_msg("%s %d: error without the reason: %s", what, n, buf_str(&err));
		}
		/* opened again: whole, and each run all or nothing */
		assert_int_equal(db_open(&db, path, NULL), 0);
		if (q(db, INTEGRITY_BAD) != 0)
			fail_msg("%s %d: integrity_check is not ok", what, n);
		char sql[256];
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run_id"
			 " JOIN variants v ON v.id = r.variant_id WHERE v.name = 'v%d'", n);
		int64_t samples = q(db, sql);
		if (samples != 0 && samples != whole)
			fail_msg("%s %d: a half-stored run: %lld samples", what, n, (long long)samples);
		assert_int_equal(q(db, "SELECT count(*) FROM runs WHERE status = 'running'"), 0);
		if (!r)
			ok_runs++;
		db_close(db);
		buf_release(&err);
		if (!injected)
			break;   /* the Nth call never came: every call was covered */
	}
	print_message("%s faults: %d injected (N = 1..%d), %d stores failed with the reason, %d stored"
		      " whole; integrity_check ok after each\n", what, n - 1, n - 1, failed, ok_runs);
	assert_true(n > 2);
	{	/* every finished run has all its samples */
		struct db *db = NULL;
		assert_int_equal(db_open(&db, path, NULL), 0);
		assert_int_equal(q(db, INTEGRITY_BAD), 0);
		char sql[160];
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM runs WHERE status = 'ok' AND"
			 " (SELECT count(*) FROM samples s WHERE s.run_id = runs.id) != %lld", (long long)whole);
		assert_int_equal(q(db, sql), 0);
		db_close(db);
	}
	free(text);
	free(path);
	void *p = td;
	tmpdir_teardown(&p);
}

static void test_write_faults(void **state)
{
	(void)state;
	run_faults(FAULT_WRITE, "xWrite");
}

static void test_sync_faults(void **state)
{
	(void)state;
	run_faults(FAULT_SYNC, "xSync");
}


/* A compare job's storing transaction (job_store: the job, its variants
 * and every planned run) under the Nth failing write: the job is stored
 * whole (2 variants x 2 fs x 3 repeats = 12 runs) or not at all. */
static void test_job_store_faults(void **state)
{
	static const char ini[] = "[job]\nname = faulty-job\ntree = /src/linux\nbase = v6.12.117\n"
				  "repeat = 3\naa = 1\n[matrix]\nfs = ext4 xfs\n";
	struct tmpdir *td = NULL;
	char *path;
	int n, failed = 0;

	(void)state;
	assert_int_equal(fault_vfs_install(), 0);
	assert_int_equal(tmpdir_setup((void **)&td), 0);
	path = xasprintf("%s/kc.db", td->path);
	{
		struct db *db = NULL;
		assert_int_equal(db_open(&db, path, NULL), 0);
		db_close(db);
	}
	for (n = 1; n < 10000; n++) {
		struct job_spec *spec = job_spec_new();
		struct buf err = BUF_INIT;
		struct db *db = NULL;
		int64_t id = 0;
		int r;

		assert_int_equal(job_spec_parse_ini(spec, ini, "job", NULL), 0);
		arm(FAULT_WRITE, n);
		r = db_open(&db, path, &err);
		if (!r)
			r = job_store(db, spec, NULL, &id, &err);
		db_close(db);
		int injected = F.injected;
		arm(FAULT_WRITE, 0);
		if (r) {
			failed++;
			if (!strstr(buf_str(&err), "I/O error on the store"))
				fail_msg("job_store %d: error without the reason: %s", n, buf_str(&err));
		}
		assert_int_equal(db_open(&db, path, NULL), 0);
		if (q(db, INTEGRITY_BAD) != 0)
			fail_msg("job_store %d: integrity_check is not ok", n);
		/* every job of that name whole: 12 runs each */
		int64_t half = q(db, "SELECT count(*) FROM jobs j WHERE j.name = 'faulty-job' AND"
				 " (SELECT count(*) FROM runs r WHERE r.job_id = j.id) != 12");
		if (half)
			fail_msg("job_store %d: a half-stored job", n);
		db_close(db);
		buf_release(&err);
		job_spec_free(spec);
		if (!injected)
			break;
	}
	print_message("job_store faults: %d injected, %d stores failed with the reason; every"
		      " stored job whole\n", n - 1, failed);
	assert_true(n > 2);
	free(path);
	void *p = td;
	tmpdir_teardown(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_faults),
		cmocka_unit_test(test_sync_faults),
		cmocka_unit_test(test_job_store_faults),
	};

	return cmocka_run_group_tests_name("db_fault", tests, NULL, NULL);
}
