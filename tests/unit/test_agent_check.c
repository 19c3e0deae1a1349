/* test_agent_check.c - agent_check.c and run_params.c: the reply of a real
 * `kcanary-agent check --json` (the agent built beside these tests, in
 * $B, default build/) read back: validity, the knob at fault, expected_s
 * and the disk use per workload; a job spec's cells checked with the place each knob was
 * set; and a run's stored params read back as guest settings. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "exec/job_check.h"
#include "guest/agent_check.h"
#include "exec/job.h"
#include "guest/run_params.h"
#include "util.h"

static char *agent_path(void)
{
	const char *b = getenv("B");

	return xasprintf("%s/kcanary-agent", b && *b ? b : "build");
}

/* agent_check() of workload with the n knobs kn; err NULL. */
static int check(struct agent_check *c, const char *agent, const char *workload,
		 const struct knob *kn, size_t n)
{
	struct run_params rp = { .workload = workload, .knobs = kn, .nknobs = n };

	return agent_check(c, agent, &rp, NULL);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int agent_setup(void **state)
{
	char *path = agent_path();

	if (access(path, X_OK)) {
		fprintf(stderr, "no agent at %s: build it first (make)\n", path);
		free(path);
		return -1;
	}
	*state = path;
	return 0;
}

static int agent_teardown(void **state)
{
	free(*state);
	return 0;
}

static void test_wb_handover_expected_s(void **state)
{
	const char *agent = *state;
	const struct knob short_run[] = { { "rate_mbps", "8" }, { "old_s", "4" }, { "settle_s", "1" },
					  { "measure_s", "8" }, { "pod_hop", "2.5" } };
	struct agent_check c;

	/* the agent's defaults: old_s 30 + settle_s 3 + pod_hop 0 + measure_s 120 */
	assert_int_equal(check(&c, agent, "wb-handover", NULL, 0), 0);
	assert_true(c.ok);
	assert_true(c.expected_s == 153);
	assert_null(c.knob);
	assert_null(c.error);
	agent_check_release(&c);
	/* NULL workload: wb-handover; durations in any of the agent's forms */
	assert_int_equal(check(&c, agent, NULL, short_run, N(short_run)), 0);
	assert_true(c.ok);
	assert_true(c.expected_s == 4 + 1 + 2.5 + 8);
	agent_check_release(&c);
	{
		const struct knob minutes[] = { { "measure_s", "2m" }, { "old_s", "0" } };
		assert_int_equal(check(&c, agent, "wb-handover", minutes, N(minutes)), 0);
		assert_true(c.expected_s == 0 + 3 + 0 + 120);
		agent_check_release(&c);
	}
}

static void test_command_expected_s(void **state)
{
	const char *agent = *state;
	const struct knob unbounded[] = { { "cmd", "true" } };
	const struct knob bounded[] = { { "cmd", "true" }, { "timeout_s", "90" } };
	struct agent_check c;

	/* nothing says how long a command runs: unknown, and the service's
	 * documented default stands in */
	assert_int_equal(check(&c, agent, "command", unbounded, N(unbounded)), 0);
	assert_true(c.ok);
	assert_true(c.expected_s < 0);
	agent_check_release(&c);
	assert_int_equal(check(&c, agent, "command", bounded, N(bounded)), 0);
	assert_true(c.ok);
	assert_true(c.expected_s == 90);
	agent_check_release(&c);
}

/*
 * What the agent says a run writes (the scratch disk's size), worked by
 * hand from its knobs: a paced writer writes at most
 * floor(rate * duration / block) + 1 blocks (agent/pace.h).
 */
static void test_disk_use(void **state)
{
	const char *agent = *state;
	const struct knob seed10[] = { { "measure_s", "10" } };
	const struct knob fresh[] = { { "rate_mbps", "8" }, { "old_s", "4" }, { "measure_s", "8" },
				      { "nfiles", "10" }, { "mode", "fresh" }, { "dirty_after", "1" },
				      { "shutdown_file", "offset_rename" }, { "io_toggle", "1" } };
	const struct knob fio2[] = { { "size", "64M" }, { "numjobs", "2" } };
	const struct knob fio_job[] = { { "job", "x.fio" } };
	const struct knob fio_huge[] = { { "size", "4096T" }, { "numjobs", "8192" } };
	const struct knob wb_huge[] = { { "rate_mbps", "1e12" }, { "measure_s", "1e9" } };
	const struct knob wb_files[] = { { "nfiles", "9223372036854775808" }, { "mode", "fresh" } };
	const struct knob cmd[] = { { "cmd", "true" } };
	struct agent_check c;

	/* the newcomer's first boot (issue 35, item 8): 250 MiB/s for old_s 30
	 * and measure_s 10 in 1 MiB blocks: 7501 + 2501 = 10002 MiB =
	 * 10487857152 bytes, in the 1000 files both writers append to */
	assert_int_equal(check(&c, agent, "wb-handover", seed10, N(seed10)), 0);
	assert_true(c.ok);
	assert_true(c.disk_bytes == 10487857152LL);
	assert_true(c.disk_files == 1000);
	assert_string_equal(c.disk_knobs, "rate_mbps, old_s, measure_s");
	agent_check_release(&c);
	/* 8 MiB/s: old 32 MiB -> 33 blocks, new 64 MiB -> 65: 98 MiB =
	 * 102760448, + the 4 KiB append + two 14-byte files = 102764572; the
	 * new writer's 10 files beside the old 10, the shutdown file and the
	 * takeover: 22 files */
	assert_int_equal(check(&c, agent, "wb-handover", fresh, N(fresh)), 0);
	assert_true(c.disk_bytes == 102764572LL);
	assert_true(c.disk_files == 22);
	agent_check_release(&c);
	/* fio from knobs: numjobs files of size: 2 x 64 MiB = 134217728 */
	assert_int_equal(check(&c, agent, "fio", fio2, N(fio2)), 0);
	assert_true(c.disk_bytes == 134217728LL);
	assert_true(c.disk_files == 2);
	assert_string_equal(c.disk_knobs, "size, numjobs");
	agent_check_release(&c);
	/* 4096 TiB x 8192 jobs is 2^65 bytes: it wrapped to 0 (a disk of
	 * the smallest size); said as INT64_MAX, which the scratch disk's
	 * sizing refuses */
	assert_int_equal(check(&c, agent, "fio", fio_huge, N(fio_huge)), 0);
	assert_true(c.disk_bytes == INT64_MAX);
	agent_check_release(&c);
	/* 2^63 files, twice with mode=fresh: saturated, not wrapped to 1 */
	assert_int_equal(check(&c, agent, "wb-handover", wb_files, N(wb_files)), 0);
	assert_true(c.disk_files == INT64_MAX);
	agent_check_release(&c);
	/* wb-handover at 1e12 MiB/s for 1e9 s: saturated, not wrapped */
	assert_int_equal(check(&c, agent, "wb-handover", wb_huge, N(wb_huge)), 0);
	assert_true(c.disk_bytes == INT64_MAX);
	agent_check_release(&c);
	/* a job file and a command say nothing */
	assert_int_equal(check(&c, agent, "fio", fio_job, N(fio_job)), 0);
	assert_true(c.ok && c.disk_bytes < 0 && c.disk_files < 0 && !c.disk_knobs);
	agent_check_release(&c);
	assert_int_equal(check(&c, agent, "command", cmd, N(cmd)), 0);
	assert_true(c.ok && c.disk_bytes < 0 && c.disk_files < 0 && !c.disk_knobs);
	agent_check_release(&c);
}

static void test_refused_knobs_are_a_result(void **state)
{
	const char *agent = *state;
	const struct knob unknown[] = { { "rate", "3" } };
	const struct knob bad[] = { { "nfiles", "10" }, { "pod_max", "4Q" } };
	struct agent_check c;

	assert_int_equal(check(&c, agent, "wb-handover", unknown, N(unknown)), 0);
	assert_false(c.ok);
	assert_string_equal(c.knob, "rate");
	assert_string_equal(c.error, "unknown knob 'rate' for workload 'wb-handover' "
			    "(see 'kcanary-agent list')");
	agent_check_release(&c);
	assert_int_equal(check(&c, agent, "wb-handover", bad, N(bad)), 0);
	assert_false(c.ok);
	assert_string_equal(c.knob, "pod_max");
	assert_non_null(strstr(c.error, "knob 'pod_max': '4Q' is not a size"));
	agent_check_release(&c);
	assert_int_equal(check(&c, agent, "command", NULL, 0), 0);
	assert_false(c.ok);
	assert_string_equal(c.knob, "cmd");
	agent_check_release(&c);
	/* a workload the agent does not have names no knob */
	assert_int_equal(check(&c, agent, "sysbench", NULL, 0), 0);
	assert_false(c.ok);
	assert_null(c.knob);
	assert_non_null(strstr(c.error, "unknown workload 'sysbench'"));
	agent_check_release(&c);
}

static void test_no_agent_or_no_reply(void **state)
{
	struct buf err = BUF_INIT;
	struct agent_check c;

	(void)state;
	assert_int_equal(agent_check(&c, "/nonexistent/kcanary-agent", NULL, &err), -ENOENT);
	assert_non_null(strstr(buf_str(&err), "cannot run the agent '/nonexistent/kcanary-agent'"));
	buf_reset(&err);
	/* a program that answers, but not the check's JSON */
	assert_int_equal(agent_check(&c, "/bin/echo", NULL, &err), -EIO);
	assert_non_null(strstr(buf_str(&err), "the agent '/bin/echo' gave no check reply "
			       "(exit status 0, stdout: check wb-handover --json)"));
	/* each knob is one "key=value" word of the agent's argv, in order */
	{
		const struct knob kn[] = { { "cmd", "a b=c" }, { "timeout_s", "9" } };
		struct run_params rp = { .workload = "command", .knobs = kn, .nknobs = 2 };

		buf_reset(&err);
		assert_int_equal(agent_check(&c, "/bin/echo", &rp, &err), -EIO);
		assert_non_null(strstr(buf_str(&err), "stdout: check command cmd=a b=c timeout_s=9 "
				       "--json)"));
	}
	buf_release(&err);
}

/* job_check_cells() with its lengths dropped: the check's verdict alone. */
static int check_spec(const struct job_spec *spec, const char *agent, struct buf *err)
{
	struct job_check c;
	int r = job_check_cells(&c, spec, agent, err);

	job_check_release(&c);
	return r;
}

static void test_spec_names_where_a_knob_was_set(void **state)
{
	const char *agent = *state;
	struct job_spec *spec = job_spec_new();
	struct buf err = BUF_INIT;

	assert_int_equal(job_spec_parse_ini(spec, "[job]\nkernels = /boot/k\n[workload]\n"
					    "nfiles = lots\n", "job.ini", &err), 0);
	assert_int_equal(check_spec(spec, agent, &err), -EINVAL);
	assert_string_equal(buf_str(&err), "job.ini:4: [workload] nfiles: knob 'nfiles': 'lots' "
			    "is not a whole number (expected 0, 1, 2, ...)");
	job_spec_free(spec);

	/* set by --set: named so; a matrix dimension's bad value too */
	spec = job_spec_new();
	buf_reset(&err);
	assert_int_equal(job_spec_parse_ini(spec, "[job]\nkernels = /boot/k\n", "job.ini", &err), 0);
	assert_int_equal(job_spec_set(spec, "matrix", "mode", "removed alive dead", &err), 0);
	assert_int_equal(check_spec(spec, agent, &err), -EINVAL);
	assert_string_equal(buf_str(&err), "--set mode: knob 'mode': 'dead' is not a choice "
			    "(expected one of: removed, alive, fresh)");
	job_spec_free(spec);

	/* every cell fine: 0 */
	spec = job_spec_new();
	buf_reset(&err);
	assert_int_equal(job_spec_parse_ini(spec, "[job]\nkernels = /boot/k\n[matrix]\n"
					    "mode = removed alive\nfs = ext4 xfs\n", "job.ini",
					    &err), 0);
	assert_int_equal(check_spec(spec, agent, &err), 0);
	job_spec_free(spec);
	buf_release(&err);
}

/*
 * A cell whose scratch disk would be above the 64 GiB cap refuses the
 * whole job when it is checked, before anything is stored, naming the
 * cell, what it writes, the size needed and the knobs to lower, with where
 * the job file set them (issue 35 item 8, the review: such a compare
 * failed every run of that cell at run time, each ending with a `boot
 * --disk` hint compare does not have). By hand (agent/pace.h):
 * rate_mbps 250 for old_s 30 and measure_s 300 in 1 MiB blocks writes
 * 7501 + 75001 = 82502 MiB = 80.6 GiB into 1000 files; d = 86509518848 +
 * 1000 x 4096 = 86513614848 bytes, d + d/8 + 1 GiB = 91.7 GiB -> 92 GiB.
 * A job of cells under the cap gets the largest one's disk: measure_s 10
 * writes 10002 MiB = 10487857152 bytes (12 GiB: test_scratch.c).
 */
static void test_spec_disk_above_the_cap_is_refused(void **state)
{
	const char *agent = *state;
	struct job_spec *spec = job_spec_new();
	struct job_check c;
	struct buf err = BUF_INIT;

	assert_int_equal(job_spec_parse_ini(spec, "[job]\nkernels = /boot/k\n[matrix]\n"
					    "measure_s = 10 300\nfs = ext4 xfs\n", "job.ini", &err), 0);
	assert_int_equal(check_spec(spec, agent, &err), -EFBIG);
	assert_string_equal(buf_str(&err), "matrix cell 'measure_s=300 fs=ext4': scratch disk: the"
			    " workload writes up to 80.6 GiB in 1000 files, so its ext4 disk needs 92"
			    " GiB, above the 64 GiB a job's disk is sized to by itself: lower rate_mbps,"
			    " old_s, measure_s (job.ini:4: [matrix] measure_s), or give the size by"
			    " name (--disk 92G)");
	job_spec_free(spec);

	/* under the cap: the largest cell's disk, named */
	spec = job_spec_new();
	buf_reset(&err);
	assert_int_equal(job_spec_parse_ini(spec, "[job]\nkernels = /boot/k\n[matrix]\n"
					    "measure_s = 1 10 2\n", "job.ini", &err), 0);
	assert_int_equal(job_check_cells(&c, spec, agent, &err), 0);
	assert_true(c.disk_bytes == 12884901888ULL);
	assert_string_equal(c.disk_cell, "measure_s=10");
	assert_true(c.disk_data == 10487857152LL);
	job_check_release(&c);
	job_spec_free(spec);

	/* a disk given by name (--disk, [job] disk) holds the files of the
	 * 92 GiB cell above the cap, and is every run's; it reads back from
	 * the stored spec. One under a cell's files (9.8 GiB + 1000 x 4 KiB
	 * for measure_s 10) refuses the job, with the size it needs. */
	spec = job_spec_new();
	buf_reset(&err);
	assert_int_equal(job_spec_parse_ini(spec, "[job]\nkernels = /boot/k\ndisk = 100G\n"
					    "[matrix]\nmeasure_s = 10 300\n", "job.ini", &err), 0);
	assert_int_equal(job_check_cells(&c, spec, agent, &err), 0);
	assert_true(c.disk_bytes == 107374182400ULL && c.disk_asked);
	assert_string_equal(c.disk_cell, "measure_s=300");
	job_check_release(&c);
	{
		struct job_spec *back = job_spec_new();
		char *json = job_spec_to_json(spec);
		assert_int_equal(job_spec_from_json(back, json, &err), 0);
		assert_true(back->disk_bytes == 107374182400ULL);
		job_spec_free(back);
		free(json);
	}
	job_spec_free(spec);
	spec = job_spec_new();
	buf_reset(&err);
	assert_int_equal(job_spec_parse_ini(spec, "[job]\nkernels = /boot/k\n[matrix]\n"
					    "measure_s = 1 10\n", "job.ini", &err), 0);
	assert_int_equal(job_spec_set(spec, "job", "disk", "8G", &err), 0);
	assert_int_equal(check_spec(spec, agent, &err), -EFBIG);
	assert_string_equal(buf_str(&err), "matrix cell 'measure_s=10': scratch disk: disk (--disk)"
			    " 8.0 GiB cannot hold the 9.8 GiB the workload writes in 1000 files (its"
			    " ext4 disk needs 12 GiB with the filesystem's headroom): give --disk 12G"
			    " or lower rate_mbps, old_s, measure_s (job.ini:4: [matrix] measure_s)");
	buf_reset(&err);
	assert_int_equal(job_spec_set(spec, "job", "disk", "1k", &err), -EINVAL);
	assert_string_equal(buf_str(&err), "'disk' must be a size from 64M to 16T (the largest file ext4 holds, a pool's volume being one) such as 100G, not '1k'");
	job_spec_free(spec);

	/* a command the agent cannot size: the floor, no cell named */
	spec = job_spec_new();
	buf_reset(&err);
	assert_int_equal(job_spec_parse_ini(spec, "[job]\nkernels = /boot/k\n[workload]\n"
					    "type = command\ncmd = true\n", "job.ini", &err), 0);
	assert_int_equal(job_check_cells(&c, spec, agent, &err), 0);
	assert_true(c.disk_bytes == 4294967296ULL);
	assert_null(c.disk_cell);
	job_check_release(&c);
	job_spec_free(spec);
	buf_release(&err);
}

static void test_run_params(void **state)
{
	struct run_params p;
	struct buf err = BUF_INIT;

	(void)state;
	assert_int_equal(run_params_parse(&p, "{\"workload\":\"command\",\"fs\":\"xfs\","
					  "\"cmd\":\"true\",\"timeout_s\":\"5\",\"config\":\"debug\","
					  "\"sysctl\":{\"vm.dirty_ratio\":\"5\"},\"mkfs_opts\":\"-b 1k\"}",
					  &err), 0);
	assert_string_equal(p.workload, "command");
	assert_int_equal(p.nknobs, 2);
	assert_string_equal(p.knobs[0].key, "cmd");
	assert_string_equal(p.knobs[0].value, "true");
	assert_string_equal(p.knobs[1].key, "timeout_s");
	assert_string_equal(p.knobs[1].value, "5");
	assert_int_equal(p.nsysctls, 1);
	assert_string_equal(p.sysctls[0].key, "vm.dirty_ratio");
	assert_string_equal(p.sysctls[0].value, "5");
	assert_string_equal(p.mkfs_opts, "-b 1k");
	assert_null(p.mount_opts);
	run_params_release(&p);

	/* none stored: the default workload, nothing else */
	assert_int_equal(run_params_parse(&p, NULL, &err), 0);
	assert_string_equal(p.workload, RUN_PARAMS_DEFAULT_WORKLOAD);
	assert_int_equal(p.nknobs, 0);
	assert_int_equal(p.nsysctls, 0);
	run_params_release(&p);

	assert_int_equal(run_params_parse(&p, "[1, 2]", &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "run params '[1, 2]' are not a JSON object"));
	run_params_release(&p);
	buf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_wb_handover_expected_s, agent_setup, agent_teardown),
		cmocka_unit_test_setup_teardown(test_command_expected_s, agent_setup, agent_teardown),
		cmocka_unit_test_setup_teardown(test_disk_use, agent_setup, agent_teardown),
		cmocka_unit_test_setup_teardown(test_refused_knobs_are_a_result, agent_setup,
						agent_teardown),
		cmocka_unit_test(test_no_agent_or_no_reply),
		cmocka_unit_test_setup_teardown(test_spec_names_where_a_knob_was_set, agent_setup,
						agent_teardown),
		cmocka_unit_test_setup_teardown(test_spec_disk_above_the_cap_is_refused, agent_setup,
						agent_teardown),
		cmocka_unit_test(test_run_params),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
