/* test_job.c - job files, expansion, run order, storing. */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "store/db.h"
#include "store/db_compare.h"
#include "store/db_internal.h"
#include "exec/compare.h"
#include "exec/job.h"
#include "util.h"
#include "testutil.h"

/* The sketch of docs/job-file.md. */
static const char design_ini[] =
	"[job]\n"
	"name = dying-cgwb-foreign-flush\n"
	"tree = /src/linux            ; a git repository\n"
	"base = v6.12.117             ; any commit-ish\n"
	"series = v5.mbox v6.mbox     ; each is one variant: base + that revision\n"
	"repeat = 3\n"
	"\n"
	"[workload]\n"
	"type = wb-handover           ; agent workload\n"
	"rate_mbps = 250\n"
	"nfiles = 1000\n"
	"pod_max = 4G\n"
	"measure_s = 120\n"
	"\n"
	"[matrix]\n"
	"fs = ext4 xfs\n"
	"mode = removed alive\n";

static void test_design_sketch(void **state)
{
	(void)state;
	struct job_spec *s = job_spec_new();
	struct buf err = BUF_INIT;
	struct variant *v = NULL;

	assert_int_equal(job_spec_parse_ini(s, design_ini, "job.ini", &err), 0);
	assert_string_equal(s->name, "dying-cgwb-foreign-flush");
	assert_string_equal(s->base, "v6.12.117");
	assert_int_equal(s->nseries, 2);
	assert_int_equal(s->repeat, 3);
	assert_int_equal(s->nknobs, 4);
	assert_int_equal(job_ncells(s), 4);
	char *c = job_cell_text(s, 0);
	assert_string_equal(c, "fs=ext4 mode=removed");
	free(c);
	c = job_cell_text(s, 3);
	assert_string_equal(c, "fs=xfs mode=alive");
	free(c);
	char *p = job_cell_params(s, 1);
	assert_string_equal(p, "{\"fs\":\"ext4\",\"measure_s\":\"120\",\"mode\":\"alive\","
			    "\"nfiles\":\"1000\",\"pod_max\":\"4G\",\"rate_mbps\":\"250\","
			    "\"workload\":\"wb-handover\"}");
	assert_non_null(strstr(p, "\"mode\":\"alive\""));
	assert_non_null(strstr(p, "\"workload\":\"wb-handover\""));
	free(p);
	size_t nv = job_variants(s, &v);
	assert_int_equal(nv, 3);
	assert_string_equal(v[0].name, "base (v6.12.117)");
	assert_string_equal(v[1].name, "+ v5");
	assert_int_equal(v[2].kind, VARIANT_SERIES);
	job_variants_free(v, nv);
	assert_int_equal(job_spec_check(s, &err), 0);
	job_spec_free(s);
	buf_release(&err);
}

static void expect_error(const char *ini, const char *want)
{
	struct job_spec *s = job_spec_new();
	struct buf err = BUF_INIT;
	int r = job_spec_parse_ini(s, ini, "job.ini", &err);
	if (!r)
		r = job_spec_check(s, &err);
	assert_int_equal(r, -EINVAL);
	if (!strstr(buf_str(&err), want))
		fprintf(stderr, "error was: %s\n", buf_str(&err));
	assert_non_null(strstr(buf_str(&err), want));
	job_spec_free(s);
	buf_release(&err);
}

static void test_errors_name_key_and_line(void **state)
{
	(void)state;
	expect_error("[job]\nbase = v1\nrate = 3\n", "job.ini:3: unknown key 'rate' in [job]");
	expect_error("[job]\nbase = v1\n[matrix]\nfs = ext4\nmode =\n",
		     "job.ini:5: empty list for 'mode' in [matrix]");
	expect_error("[job]\nbase = v1\n[matrix]\nfs = , ,\n",
		     "job.ini:4: empty list for 'fs' in [matrix]");
	expect_error("[jobs]\nbase = v1\n", "job.ini:2: unknown section [jobs]");
	/* found by fuzz_job: "57121." with prefixes made 57,120 variants */
	expect_error("[job]\ntree = /x\nbase = v1\npatches = 57121.\n",
		     "job.ini:4: 'patches' must be like 2, 1-2, 1,3 or 2-");
	expect_error("[job]\nrepeat = three\n", "job.ini:2: 'repeat' must be a whole number >= 1");
	expect_error("[job]\nbase = v1\nthis line is not ini\n", "job.ini:3: expected 'key = value'");
	expect_error("[job]\nseries = a.mbox\n", "a series needs a kernel tree and a base");
	/* found by fuzz_job: a value that is not UTF-8 cannot be stored as JSON */
	expect_error("[job]\nbase = v1\n[matrix]\nfs = ext4\xef\x02\n",
		     "job.ini:4: key or value in [matrix] is not valid UTF-8");
	expect_error("[job]\nrepeat = 2\n", "nothing to compare");
	/* 2 variants x 101 x 10 cells x 5 repeats = 10,100 runs */
	expect_error("[job]\nbase = v1\ntree = /t\nseries = a.mbox\nrepeat = 5\n[matrix]\n"
		     "a = 1 2 3 4 5 6 7 8 9 10\n"
		     "b = 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26"
		     " 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51"
		     " 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76"
		     " 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99 100\n",
		     "over 10000 runs");
}

/* Knob values are checked by the agent after parsing: the spec remembers
 * the file line of each knob, matrix key and sysctl (CRLF, comments and
 * continuation-free long lines counted like any other), and forgets it
 * when the CLI sets the key again. */
static void test_where_keys_were_set(void **state)
{
	(void)state;
	struct job_spec *s = job_spec_new();
	struct buf err = BUF_INIT;
	char *long_ini = NULL;

	assert_int_equal(job_spec_parse_ini(s, design_ini, "job.ini", &err), 0);
	assert_string_equal(job_spec_where(s, "nfiles"), "job.ini:11: [workload] nfiles");
	assert_string_equal(job_spec_where(s, "mode"), "job.ini:17: [matrix] mode");
	assert_null(job_spec_where(s, "name"));		/* [job] keys are not knobs */
	assert_null(job_spec_where(s, "old_s"));	/* a default */
	assert_int_equal(job_spec_set(s, "workload", "nfiles", "8", &err), 0);
	assert_null(job_spec_where(s, "nfiles"));
	assert_string_equal(job_spec_where(s, "pod_max"), "job.ini:12: [workload] pod_max");
	job_spec_free(s);

	s = job_spec_new();
	assert_int_equal(job_spec_parse_ini(s, "; c\r\n[sysctl]\r\n\r\nvm.x = 1\r\n", "j", &err), 0);
	assert_string_equal(job_spec_where(s, "vm.x"), "j:4: [sysctl] vm.x");
	job_spec_free(s);

	/* a line longer than libinih's read buffer is still one line */
	s = job_spec_new();
	long_ini = xasprintf("[matrix]\nfs = ext4%*s\nmode = removed", 3000, "");
	assert_int_equal(job_spec_parse_ini(s, long_ini, "j", &err), 0);
	assert_string_equal(job_spec_where(s, "mode"), "j:3: [matrix] mode");
	free(long_ini);
	job_spec_free(s);
	buf_release(&err);
}

static void test_prefixes_aa_and_prebuilt(void **state)
{
	(void)state;
	struct job_spec *s = job_spec_new();
	struct buf err = BUF_INIT;
	struct variant *v = NULL;

	assert_int_equal(job_spec_parse_ini(s,
		"[job]\ntree=/t\nbase=v6.12.117\nseries=x/wb-v6.mbox\npatches=1-3\nprefixes=yes\naa=yes\n",
		"j", &err), 0);
	size_t nv = job_variants(s, &v);
	assert_int_equal(nv, 5);
	assert_string_equal(v[0].name, "base (v6.12.117)");
	assert_string_equal(v[1].name, "base (v6.12.117) A/A");
	assert_string_equal(v[2].name, "+ wb-v6 1");
	assert_string_equal(v[3].name, "+ wb-v6 1-2");
	assert_string_equal(v[4].name, "+ wb-v6 1-3");
	assert_string_equal(v[3].patches, "1-2");
	job_variants_free(v, nv);
	job_spec_free(s);

	s = job_spec_new();
	assert_int_equal(job_spec_parse_ini(s,
		"[job]\nkernels = /boot/vmlinuz-6.12.107 /boot/vmlinuz-6.12.117\n", "j", &err), 0);
	nv = job_variants(s, &v);
	assert_int_equal(nv, 2);
	assert_string_equal(v[0].name, "6.12.107");
	assert_string_equal(v[1].kernel, "/boot/vmlinuz-6.12.117");
	job_variants_free(v, nv);
	job_spec_free(s);
	buf_release(&err);
}

/* A series variant is named by its revision, as in cover letters. */
static void test_series_variant_names(void **state)
{
	(void)state;
	struct job_spec *s = job_spec_new();
	struct buf err = BUF_INIT;
	struct variant *v = NULL;

	assert_int_equal(job_spec_parse_ini(s,
		"[job]\ntree=/t\nbase=v6.12.117\nseries=examples/wb-dying-cgwb-flush-v6.mbox\n"
		"patches=2-3\nprefixes=yes\n", "j", &err), 0);
	size_t nv = job_variants(s, &v);
	assert_int_equal(nv, 3);
	assert_string_equal(v[1].name, "+ v6 2");
	assert_string_equal(v[2].name, "+ v6 2-3");
	job_variants_free(v, nv);
	job_spec_free(s);
	buf_release(&err);
}

static void assert_strv_equal(char **a, size_t na, char **b, size_t nb)
{
	assert_int_equal(na, nb);
	for (size_t i = 0; i < na; i++)
		assert_string_equal(a[i], b[i]);
}

static void assert_kv_equal(const struct job_kv *a, size_t na, const struct job_kv *b, size_t nb)
{
	assert_int_equal(na, nb);
	for (size_t i = 0; i < na; i++) {
		assert_string_equal(a[i].key, b[i].key);
		assert_string_equal(a[i].value, b[i].value);
	}
}

static void assert_str_or_null(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

/* Every stored field of struct job_spec, one by one (a comparison of the
 * two JSON texts cannot see a field that job_spec_to_json drops). */
static void assert_spec_equal(const struct job_spec *a, const struct job_spec *b)
{
	assert_str_or_null(a->name, b->name);
	assert_str_or_null(a->tree, b->tree);
	assert_str_or_null(a->base, b->base);
	assert_strv_equal(a->series, a->nseries, b->series, b->nseries);
	assert_str_or_null(a->patches, b->patches);
	assert_int_equal(a->prefixes, b->prefixes);
	assert_int_equal(a->aa, b->aa);
	assert_strv_equal(a->kernels, a->nkernels, b->kernels, b->nkernels);
	assert_strv_equal(a->config, a->nconfig, b->config, b->nconfig);
	assert_int_equal(a->repeat, b->repeat);
	assert_int_equal(a->jobs, b->jobs);
	assert_int_equal(a->seed, b->seed);
	assert_str_or_null(a->metric, b->metric);
	assert_int_equal(a->vcpus, b->vcpus);
	assert_int_equal(a->memory_mb, b->memory_mb);
	assert_float_equal(a->watchdog_s, b->watchdog_s, 0);
	assert_str_or_null(a->workload, b->workload);
	assert_str_or_null(a->by, b->by);
	assert_str_or_null(a->baseline, b->baseline);
	assert_kv_equal(a->knobs, a->nknobs, b->knobs, b->nknobs);
	assert_kv_equal(a->sysctls, a->nsysctls, b->sysctls, b->nsysctls);
	assert_int_equal(a->ndims, b->ndims);
	for (size_t i = 0; i < a->ndims; i++) {
		assert_string_equal(a->dims[i].key, b->dims[i].key);
		assert_strv_equal(a->dims[i].values, a->dims[i].nvalues, b->dims[i].values, b->dims[i].nvalues);
	}
}

/* `by` and `baseline` in [job]: the report's axis, stored with the spec so
 * that `kcanary report JOB` uses it; one axis or two, nothing else. */
static void test_by_and_baseline(void **state)
{
	(void)state;
	struct job_spec *s = job_spec_new(), *t = job_spec_new();
	struct buf err = BUF_INIT;

	assert_int_equal(job_spec_parse_ini(s, "[job]\nkernels = /boot/a\nby = variant mode\n"
					    "baseline = alive\n[matrix]\nmode = removed alive\n",
					    "job.ini", &err), 0);
	assert_string_equal(s->by, "variant,mode");
	assert_string_equal(s->baseline, "alive");
	char *a = job_spec_to_json(s);
	assert_non_null(strstr(a, "\"by\":\"variant,mode\",\"baseline\":\"alive\""));
	assert_int_equal(job_spec_from_json(t, a, &err), 0);
	assert_string_equal(t->by, "variant,mode");
	free(a);
	job_spec_free(s);
	job_spec_free(t);
	buf_release(&err);
	expect_error("[job]\nkernels = /boot/a\nby = a,b,c\n", "job.ini:3: 'by' must name one axis or two");
}

/* A spec with every stored field away from its default survives the JSON
 * the store keeps, field by field. */
static void test_json_round_trip(void **state)
{
	(void)state;
	struct job_spec *s = job_spec_new(), *t = job_spec_new(), *d = job_spec_new();
	struct buf err = BUF_INIT;

	assert_int_equal(job_spec_parse_ini(s, design_ini, "job.ini", &err), 0);
	assert_int_equal(job_spec_parse_ini(s,
		"[job]\npatches = 2-3\nprefixes = yes\naa = yes\nconfig = guest debug-lockdep\n"
		"jobs = 2\nmetric = stall_s\nvcpus = 4\nmemory_mb = 3072\nwatchdog_s = 99.5\n"
		"by = variant fs\nbaseline = ext4\n"
		"[sysctl]\nvm.dirty_ratio = 7\n", "more.ini", &err), 0);
	assert_int_equal(job_spec_set(s, "sysctl", "vm.dirty_expire_centisecs", "500", &err), 0);
	s->seed = 42;
	/* prebuilt kernels exclude series in a job file; the store keeps both
	 * fields all the same */
	s->kernels = xcalloc(2, sizeof(*s->kernels));
	s->kernels[0] = xstrdup("/boot/a");
	s->kernels[1] = xstrdup("/boot/b");
	s->nkernels = 2;
	/* every field differs from the defaults (or this test checks nothing) */
	assert_string_not_equal(s->patches ? s->patches : "", "");
	assert_true(s->prefixes && s->aa && s->nconfig == 2 && s->jobs != d->jobs &&
		    s->repeat != 0 && s->vcpus != d->vcpus && s->memory_mb != d->memory_mb &&
		    s->watchdog_s != d->watchdog_s && s->nsysctls == 2 && s->nknobs > 0 && s->ndims == 2);
	assert_string_not_equal(s->metric, d->metric);
	assert_true(s->by && s->baseline && !d->by && !d->baseline);
	char *a = job_spec_to_json(s);
	assert_int_equal(job_spec_from_json(t, a, &err), 0);
	assert_spec_equal(s, t);
	char *b = job_spec_to_json(t);
	assert_string_equal(a, b);
	free(a);
	free(b);
	/* --rootfs survives the store (resume, rerun) */
	assert_int_equal(job_spec_set(s, "job", "rootfs", "debian:fio,bpftrace", &err), 0);
	a = job_spec_to_json(s);
	job_spec_free(t);
	t = job_spec_new();
	assert_int_equal(job_spec_from_json(t, a, &err), 0);
	assert_string_equal(t->rootfs, "debian:fio,bpftrace");
	free(a);
	/* and [job] distcc (--distcc): the kernels of a resumed job build there too */
	assert_int_equal(job_spec_set(s, "job", "distcc", "10.0.0.2/8 10.0.0.3:3632", &err), 0);
	assert_int_equal(job_spec_set(s, "job", "distcc", " ", &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "'distcc' must name hosts"));
	a = job_spec_to_json(s);
	job_spec_free(t);
	t = job_spec_new();
	assert_int_equal(job_spec_from_json(t, a, &err), 0);
	assert_string_equal(t->distcc, "10.0.0.2/8 10.0.0.3:3632");
	free(a);
	/* and [job] overlap_builds (--overlap-builds, "overlap_builds" in a
	 * POST /api/v1/jobs spec): a resumed job overlaps the same way */
	assert_int_equal(job_spec_set(s, "job", "overlap_builds", "yes", &err), 0);
	assert_int_equal(job_spec_set(s, "job", "overlap_builds", "maybe", &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "'overlap_builds' must be yes, no or auto, not 'maybe'"));
	a = job_spec_to_json(s);
	job_spec_free(t);
	t = job_spec_new();
	assert_int_equal(job_spec_from_json(t, a, &err), 0);
	assert_string_equal(t->overlap_builds, "yes");
	free(a);
	job_spec_free(s);
	job_spec_free(t);
	job_spec_free(d);
	buf_release(&err);
}

/* --files survives the store: resume and rerun (job_spec_from_json of the
 * stored spec_json) hand the same files, PATH made absolute, NULL-ended as
 * guest_job.files takes them; [job] files = sets the list; files need a
 * rootfs and a readable PATH. */
static void test_files_round_trip(void **state)
{
	struct tmpdir *td = *state;
	struct job_spec *s = job_spec_new(), *t = job_spec_new();
	struct buf err = BUF_INIT;
	char cwd[4096], *rel = xasprintf("%s/recipe.sh", td->path);

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	FILE *fp = fopen(rel, "w");
	assert_non_null(fp);
	fputs("echo hi\n", fp);
	fclose(fp);
	assert_int_equal(chdir(td->path), 0);
	assert_int_equal(job_spec_set(s, "job", "kernels", rel, &err), 0);   /* a regular file */
	assert_int_equal(job_spec_set(s, "job", "rootfs", "debian:fio", &err), 0);
	assert_int_equal(job_spec_add_file(s, "recipe.sh", &err), 0);
	assert_int_equal(job_spec_add_file(s, "/dev/null:/etc/kc.conf", &err), 0);
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(s->nfiles, 2);
	assert_string_equal(s->files[0], rel);
	assert_null(s->files[2]);
	assert_int_equal(job_spec_check(s, &err), 0);
	char *a = job_spec_to_json(s);
	assert_non_null(strstr(a, "\"files\":["));
	assert_int_equal(job_spec_from_json(t, a, &err), 0);
	assert_int_equal(t->nfiles, 2);
	assert_string_equal(t->files[0], rel);
	assert_string_equal(t->files[1], "/dev/null:/etc/kc.conf");
	assert_null(t->files[2]);
	char *b = job_spec_to_json(t);
	assert_string_equal(a, b);
	free(a);
	free(b);
	/* the store's round trip through a real job: the stored spec_json */
	struct db *db = NULL;
	int64_t job;
	char *path = xasprintf("%s/kc.db", td->path), *stored = NULL;
	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(job_store(db, s, NULL, &job, &err), 0);
	assert_int_equal(db_job_spec(db, job, &stored, &err), 0);
	job_spec_free(t);
	t = job_spec_new();
	assert_int_equal(job_spec_from_json(t, stored, &err), 0);
	assert_int_equal(t->nfiles, 2);
	assert_string_equal(t->files[0], rel);
	free(stored);
	db_close(db);
	free(path);
	/* [job] files = replaces the list */
	assert_int_equal(job_spec_set(t, "job", "files", "/dev/null", &err), 0);
	assert_int_equal(t->nfiles, 1);
	assert_null(t->files[1]);
	/* no rootfs, or a missing file: refused before anything is stored */
	free(t->rootfs);
	t->rootfs = NULL;
	assert_int_equal(job_spec_check(t, &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "'files' needs 'rootfs'"));
	buf_reset(&err);
	assert_int_equal(job_spec_set(t, "job", "rootfs", "debian", &err), 0);
	assert_int_equal(job_spec_add_file(t, "/nonexistent/x.sh:y.sh", &err), 0);
	assert_int_equal(job_spec_check(t, &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "file '/nonexistent/x.sh' (files, --files): No such file"));
	free(rel);
	job_spec_free(s);
	job_spec_free(t);
	buf_release(&err);
}

/* Stored before anything runs, in interleaved order: for each repeat, for
 * each (shuffled) cell, every variant. */
static void test_store_interleaved(void **state)
{
	struct tmpdir *td = *state;
	struct job_spec *s = job_spec_new();
	struct buf err = BUF_INIT;
	struct db *db = NULL;
	int64_t job, n;
	char *path = xasprintf("%s/kc.db", td->path);

	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(job_spec_parse_ini(s, design_ini, "job.ini", &err), 0);
	s->seed = 7;
	assert_int_equal(job_store(db, s, NULL, &job, &err), 0);
	assert_int_equal(db_query_int64(db, &n, "SELECT count(*) FROM runs", NULL, NULL), 0);
	assert_int_equal(n, 3 * 4 * 3);
	assert_int_equal(db_query_int64(db, &n, "SELECT count(*) FROM variants", NULL, NULL), 0);
	assert_int_equal(n, 3);
	/* each consecutive triple of runs is one cell and repeat, variants 0,1,2 */
	assert_int_equal(db_query_int64(db, &n,
		"SELECT count(*) FROM runs r JOIN variants v ON v.id = r.variant_id"
		" WHERE v.idx != (r.seq - 1) % 3", NULL, NULL), 0);
	assert_int_equal(n, 0);
	assert_int_equal(db_query_int64(db, &n,
		"SELECT count(DISTINCT (r.seq - 1) / 3 || r.cell || r.repeat_idx) FROM runs r", NULL, NULL), 0);
	assert_int_equal(n, 12);
	/* repeats in order: every repeat-1 run comes before any repeat-2 run */
	assert_int_equal(db_query_int64(db, &n,
		"SELECT max(seq) < (SELECT min(seq) FROM runs WHERE repeat_idx = 2) FROM runs"
		" WHERE repeat_idx = 1", NULL, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(db_query_int64(db, &n,
		"SELECT count(*) FROM runs WHERE status = 'pending' AND fs IN ('ext4','xfs')"
		" AND params_json LIKE '%\"workload\":\"wb-handover\"%'", NULL, NULL), 0);
	assert_int_equal(n, 36);
	assert_int_equal(db_query_int64(db, &n, "SELECT seed FROM jobs", NULL, NULL), 0);
	assert_int_equal(n, 7);
	/* the same seed gives the same order */
	int64_t job2, same;
	assert_int_equal(job_store(db, s, NULL, &job2, &err), 0);
	assert_int_equal(db_query_int64(db, &same,
		"SELECT count(*) FROM runs a JOIN runs b ON a.seq = b.seq AND a.cell = b.cell"
		" AND a.job_id = 1 AND b.job_id = 2", NULL, NULL), 0);
	assert_int_equal(same, 36);
	/* every repeat holds each of the 4 cells once, for every variant */
	assert_int_equal(db_query_int64(db, &n,
		"SELECT count(*) FROM (SELECT job_id, repeat_idx, cell FROM runs"
		" GROUP BY job_id, repeat_idx, cell HAVING count(*) = 3)", NULL, NULL), 0);
	assert_int_equal(n, 2 * 3 * 4);
	/* and the cells are shuffled, afresh for each repeat: over seeds 1-10
	 * (30 repeats, 24 possible orders of 4 cells) a Fisher-Yates shuffle
	 * gives many orders (17 expected) and puts each cell first some time;
	 * no shuffle gives one order, a shuffle once per job at most 10 */
	for (uint64_t seed = 1; seed <= 10; seed++) {
		s->seed = seed;
		assert_int_equal(job_store(db, s, NULL, &job2, &err), 0);
	}
	const char *orders =
		"(SELECT job_id, repeat_idx, group_concat(cell, '|') AS o FROM"
		" (SELECT r.job_id, r.repeat_idx, r.cell FROM runs r JOIN variants v ON v.id = r.variant_id"
		"  WHERE v.idx = 0 AND r.job_id > 2 ORDER BY r.job_id, r.seq)"
		" GROUP BY job_id, repeat_idx)";
	char *sql = xasprintf("SELECT count(DISTINCT o) FROM %s", orders);
	assert_int_equal(db_query_int64(db, &n, sql, NULL, NULL), 0);
	if (n <= 10)
		fprintf(stderr, "cell orders over 30 repeats: %lld distinct\n", (long long)n);
	assert_true(n > 10);
	free(sql);
	sql = xasprintf("SELECT count(DISTINCT substr(o, 1, instr(o, '|') - 1)) FROM %s", orders);
	assert_int_equal(db_query_int64(db, &n, sql, NULL, NULL), 0);
	assert_int_equal(n, 4);
	free(sql);
	db_close(db);
	free(path);
	job_spec_free(s);
	buf_release(&err);
}


/* repeat = auto[:MAX] and margin (compare --repeat auto): parsed, said
 * plainly when wrong, and kept through the stored JSON. */
static void test_repeat_auto_and_margin(void **state)
{
	(void)state;
	struct job_spec *s = job_spec_new(), *back = job_spec_new();
	struct buf err = BUF_INIT;
	char *json;

	assert_false(s->repeat_auto);
	assert_true(s->margin_pct == 5.0);
	assert_int_equal(job_spec_parse_ini(s, "[job]\nrepeat = auto:8\nmargin = 3%\n", "j.ini",
					    &err), 0);
	assert_true(s->repeat_auto);
	assert_int_equal(s->repeat, 8);
	assert_true(s->margin_pct == 3.0);
	json = job_spec_to_json(s);
	assert_non_null(strstr(json, "\"repeat\":\"auto:8\""));
	assert_int_equal(job_spec_from_json(back, json, &err), 0);
	assert_true(back->repeat_auto);
	assert_int_equal(back->repeat, 8);
	assert_true(back->margin_pct == 3.0);
	free(json);
	/* auto alone: the cap of JOB_REPEAT_AUTO_MAX blocks; margin without % */
	assert_int_equal(job_spec_set(s, "job", "repeat", "auto", &err), 0);
	assert_int_equal(s->repeat, JOB_REPEAT_AUTO_MAX);
	assert_int_equal(s->repeat, 10);
	assert_int_equal(job_spec_set(s, "job", "margin", "2.5", &err), 0);
	assert_true(s->margin_pct == 2.5);
	/* a number again is fixed repeats */
	assert_int_equal(job_spec_set(s, "job", "repeat", "4", &err), 0);
	assert_false(s->repeat_auto);
	assert_int_equal(s->repeat, 4);
	json = job_spec_to_json(s);
	assert_non_null(strstr(json, "\"repeat\":4"));
	free(json);

	static const char *const bad_repeat[] = { "auto:0", "auto:1", "auto:2", "auto:x", "auto:", "auto8",
						  "auto:8x", "automatic", "auto:1001" };
	for (size_t i = 0; i < sizeof(bad_repeat) / sizeof(bad_repeat[0]); i++) {
		char *ini = xasprintf("[job]\nrepeat = %s\n", bad_repeat[i]);
		buf_reset(&err);
		assert_int_equal(job_spec_parse_ini(s, ini, "j.ini", &err), -EINVAL);
		char *want = xasprintf("j.ini:2: 'repeat' must be a whole number >= 1, auto or"
				       " auto:MAX with a cap MAX of 3 to 1000 blocks, not '%s'",
				       bad_repeat[i]);
		assert_string_equal(buf_str(&err), want);
		free(want);
		free(ini);
	}
	static const char *const bad_margin[] = { "-3%", "0", "0%", "100%", "x", "5%%", "" , "5 %" };
	for (size_t i = 0; i < sizeof(bad_margin) / sizeof(bad_margin[0]); i++) {
		buf_reset(&err);
		assert_int_equal(job_spec_set(s, "job", "margin", bad_margin[i], &err), -EINVAL);
		char *want = xasprintf("'margin' must be a percentage above 0 and below 100, such as"
				       " 5%%, not '%s'", bad_margin[i]);
		assert_string_equal(buf_str(&err), want);
		free(want);
	}
	/* the failed sets changed nothing */
	assert_true(s->margin_pct == 2.5);
	job_spec_free(s);
	job_spec_free(back);
	buf_release(&err);
}

/* repeat auto stores one block, and job_store_block() appends each next
 * one in the order job_store() gives that repeat with fixed repeats. */
static void test_store_blocks(void **state)
{
	struct tmpdir *td = *state;
	struct job_spec *s = job_spec_new();
	struct buf err = BUF_INIT;
	struct db *db = NULL;
	int64_t fixed, aut, n;
	size_t stored = 0;
	char *path = xasprintf("%s/kc.db", td->path);

	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(job_spec_parse_ini(s, design_ini, "job.ini", &err), 0);
	s->seed = 11;
	assert_int_equal(job_store(db, s, NULL, &fixed, &err), 0);
	assert_int_equal(job_spec_set(s, "job", "repeat", "auto:5", &err), 0);
	assert_int_equal(job_spec_check(s, &err), 0);
	assert_int_equal(job_store(db, s, NULL, &aut, &err), 0);
	assert_int_equal(db_query_int64(db, &n, "SELECT count(*) FROM runs WHERE job_id = 2",
					NULL, NULL), 0);
	assert_int_equal(n, 3 * 4);
	/* variants without a kernel get no runs in later blocks */
	assert_int_equal(db_exec(db, "UPDATE variants SET status = 'ok' WHERE job_id = 2", NULL), 0);
	for (int b = 2; b <= 3; b++) {
		assert_int_equal(job_store_block(db, s, aut, b, &stored, &err), 0);
		assert_int_equal(stored, 3 * 4);
	}
	assert_int_equal(db_query_int64(db, &n, "SELECT count(*) FROM runs WHERE job_id = 2",
					NULL, NULL), 0);
	assert_int_equal(n, 3 * 3 * 4);
	/* the same run order as the fixed job's three repeats */
	assert_int_equal(db_query_int64(db, &n,
		"SELECT count(*) FROM runs a JOIN runs b ON a.job_id = 1 AND b.job_id = 2"
		" AND a.seq - (SELECT min(seq) FROM runs WHERE job_id = 1)"
		"   = b.seq - (SELECT min(seq) FROM runs WHERE job_id = 2)"
		" AND a.cell = b.cell AND a.repeat_idx = b.repeat_idx", NULL, NULL), 0);
	assert_int_equal(n, 36);
	assert_int_equal(db_exec(db, "UPDATE variants SET status = 'build-failed'"
				 " WHERE job_id = 2 AND idx = 2", NULL), 0);
	/* a fresh repeat (as for an interrupted run) took repeat 4 of one
	 * variant and cell: block 4 is still one repeat index, 5 */
	assert_int_equal(db_exec(db, "INSERT INTO runs (job_id, variant_id, cell, repeat_idx, seq,"
				 " status) SELECT job_id, variant_id, cell, 4, (SELECT max(seq) + 1"
				 " FROM runs), 'pending' FROM runs WHERE job_id = 2 AND repeat_idx = 3"
				 " LIMIT 1", NULL), 0);
	assert_int_equal(job_store_block(db, s, aut, 4, &stored, &err), 0);
	assert_int_equal(stored, 2 * 4);
	assert_int_equal(db_query_int64(db, &n, "SELECT count(*) FROM runs WHERE job_id = 2"
					" AND repeat_idx = 5", NULL, NULL), 0);
	assert_int_equal(n, 2 * 4);
	/* repeat auto needs something to compare */
	struct job_spec *one = job_spec_new();
	assert_int_equal(job_spec_parse_ini(one, "[job]\nbase = v1\ntree = /nonexistent\nrepeat = auto\n",
					    "one.ini", &err), 0);
	buf_reset(&err);
	assert_int_equal(job_spec_check(one, &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "repeat auto stops when every comparison is decided"));
	job_spec_free(one);
	db_close(db);
	free(path);
	job_spec_free(s);
	buf_release(&err);
}

/* A job stored with its coordinator is never taken by serve's queue, and
 * a claim is a compare-and-set: the race that made a `kcanary compare`
 * beside `kcanary serve` on one store find its own job "being carried out
 * by" serve (CI, f_writers: compare cmp2 exited 1). */
static void test_owner_and_queue(void **state)
{
	struct tmpdir *td = *state;
	struct job_spec *s = job_spec_new();
	struct buf err = BUF_INIT;
	struct db *db = NULL;
	struct compare_worker *w = NULL;
	struct guest_opts o = { .home = td->path, .uri = "test:///default", .quiet = true };
	int64_t mine, queued, *ids = NULL;
	size_t n = 0;
	char *path = xasprintf("%s/kcanary.db", td->path), *me = compare_owner_self();
	char *owner = NULL, *status = NULL;

	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(job_spec_parse_ini(s, design_ini, "job.ini", &err), 0);
	assert_int_equal(job_store(db, s, me, &mine, &err), 0);
	assert_int_equal(job_store(db, s, NULL, &queued, &err), 0);
	assert_int_equal(db_jobs_queued(db, &ids, &n, 10, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], queued);
	free(ids);
	/* the claim: only from the coordinator seen */
	assert_int_equal(db_job_claim(db, queued, "1@elsewhere", NULL, &err), 0);
	buf_reset(&err);
	assert_int_equal(db_job_claim(db, queued, me, NULL, &err), -EBUSY);
	assert_non_null(strstr(buf_str(&err), "taken by another coordinator (1@elsewhere)"));
	assert_int_equal(db_job_claim(db, queued, NULL, "1@elsewhere", &err), 0);
	assert_int_equal(db_job_owner(db, queued, &owner, &status, &err), 0);
	assert_null(owner);
	free(status);
	/* serve's queue, in this process (so "me" is its own pid@host too:
	 * the old queue took any pending job and ran it as its own), leaves
	 * the owned job pending; the queued one it takes */
	assert_int_equal(compare_worker_start(&w, path, &o), 0);
	for (int i = 0; i < 100; i++) {
		assert_int_equal(db_job_owner(db, queued, &owner, &status, &err), 0);
		bool taken = strcmp(status, "pending");
		free(owner);
		free(status);
		if (taken)
			break;
		usleep(100000);
	}
	sleep(1);	/* a poll more, with the owned job still pending */
	compare_worker_stop(w);
	assert_int_equal(db_job_owner(db, queued, &owner, &status, &err), 0);
	assert_string_not_equal(status, "pending");	/* the queue ran */
	free(owner);
	free(status);
	assert_int_equal(db_job_owner(db, mine, &owner, &status, &err), 0);
	assert_string_equal(status, "pending");
	assert_string_equal(owner, me);
	free(owner);
	free(status);
	db_close(db);
	free(path);
	free(me);
	job_spec_free(s);
	buf_release(&err);
}

/* A pid that no process has: a child that has exited and been reaped. */
static pid_t dead_pid(void)
{
	pid_t p = fork();

	if (p == 0)
		_exit(0);
	waitpid(p, NULL, 0);
	return p;
}

static void job_state(struct db *db, int64_t id, char *status_out, size_t size, bool *owned)
{
	char *owner = NULL, *status = NULL;

	assert_int_equal(db_job_owner(db, id, &owner, &status, NULL), 0);
	snprintf(status_out, size, "%s", status);
	*owned = owner != NULL;
	free(owner);
	free(status);
}

/* The queue's edges (review of the claim): a pending job whose coordinator
 * died before starting it is queued again when serve starts (it stayed
 * pending for ever); a queued job that fails before its claim (its spec
 * does not read back) is stored failed, not taken again in a loop; a
 * cancelled job cannot be claimed; [job] disk is at most 16T. */
static void test_queue_edges(void **state)
{
	struct tmpdir *td = *state;
	struct job_spec *s = job_spec_new();
	struct buf err = BUF_INIT;
	struct db *db = NULL;
	struct compare_worker *w = NULL;
	struct guest_opts o = { .home = td->path, .uri = "test:///default", .quiet = true };
	char host[256] = "", *dead = NULL, *path = xasprintf("%s/kcanary.db", td->path);
	char st[32] = "";
	int64_t orphan, broken, cancelled, has_why = 0;
	bool owned = true;

	gethostname(host, sizeof(host) - 1);
	dead = xasprintf("%d@%s", (int)dead_pid(), host);
	assert_int_equal(db_open(&db, path, NULL), 0);
	assert_int_equal(job_spec_parse_ini(s, design_ini, "job.ini", &err), 0);
	assert_int_equal(job_store(db, s, NULL, &broken, &err), 0);
	assert_int_equal(job_store(db, s, dead, &orphan, &err), 0);
	assert_int_equal(job_store(db, s, NULL, &cancelled, &err), 0);
	assert_int_equal(db_exec(db, "UPDATE jobs SET spec_json = '{' WHERE id = 1", NULL), 0);
	assert_int_equal(db_exec(db, "UPDATE jobs SET status = 'cancelled' WHERE id = 3", NULL), 0);
	buf_reset(&err);
	assert_int_equal(db_job_claim(db, cancelled, "1@x", NULL, &err), -ECANCELED);
	assert_non_null(strstr(buf_str(&err), "cancelled"));
	assert_int_equal(compare_worker_start(&w, path, &o), 0);
	for (int i = 0; i < 100; i++) {
		job_state(db, orphan, st, sizeof(st), &owned);
		if (strcmp(st, "pending"))
			break;
		usleep(100000);
	}
	compare_worker_stop(w);
	/* the orphan was released and taken (the design spec's tree does
	 * not exist: its kernels fail, the job ends), not left pending */
	assert_string_not_equal(st, "pending");
	job_state(db, broken, st, sizeof(st), &owned);
	assert_string_equal(st, "failed");
	assert_false(owned);
	assert_int_equal(db_query_int64(db, &has_why, "SELECT length(error) > 0 FROM jobs WHERE id = 1",
					NULL, NULL), 0);
	assert_int_equal(has_why, 1);
	job_state(db, cancelled, st, sizeof(st), &owned);
	assert_string_equal(st, "cancelled");
	/* a disk asked for by name: 64M to 16T */
	buf_reset(&err);
	assert_int_equal(job_spec_set(s, "job", "disk", "17T", &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "from 64M to 16T"));
	assert_int_equal(job_spec_set(s, "job", "disk", "16T", &err), 0);
	db_close(db);
	free(path);
	free(dead);
	job_spec_free(s);
	buf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_design_sketch),
		cmocka_unit_test(test_errors_name_key_and_line),
		cmocka_unit_test(test_where_keys_were_set),
		cmocka_unit_test(test_prefixes_aa_and_prebuilt),
		cmocka_unit_test(test_series_variant_names),
		cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test(test_by_and_baseline),
		cmocka_unit_test_setup_teardown(test_files_round_trip, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_store_interleaved, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test(test_repeat_auto_and_margin),
		cmocka_unit_test_setup_teardown(test_store_blocks, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_owner_and_queue, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_queue_edges, tmpdir_setup, tmpdir_teardown),
	};
	return cmocka_run_group_tests_name("job", tests, NULL, NULL);
}
