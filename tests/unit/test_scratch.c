/* test_scratch.c - the scratch disk's size (server/guest/scratch.c) from
 * what the agent says a workload writes. Every expected size is worked by
 * hand below from scratch.h's formula
 *   d = data + files * 4 KiB;  size = max(4 GiB, roundup(d + d/8 + 1 GiB, 1 GiB))
 * (integer bytes; 1 MiB = 1048576, 1 GiB = 1073741824), and the data each
 * case writes from wb-handover's knobs: a paced writer writes at most
 * floor(rate * duration / block) + 1 blocks (agent/pace.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "guest/scratch.h"
#include "util.h"

#define MIB 1048576ULL
#define GIB 1073741824ULL

/*
 * The seed's knobs with measure_s=10 (issue 35, item 8: the newcomer's
 * first boot, which ran out of the old 4 GiB): rate_mbps 250, block 1 MiB,
 * nfiles 1000, old_s 30: old writer 250*30 = 7500 MiB -> 7501 blocks, new
 * writer 250*10 = 2500 MiB -> 2501 blocks: 10002 MiB = 10487857152 bytes.
 *   d = 10487857152 + 1000*4096 = 10491953152
 *   d/8 = 1311494144; d + d/8 + 1 GiB = 12877189120 = 11.993 GiB -> 12 GiB
 */
static void test_seed_knobs_measure_10(void **state)
{
	(void)state;
	assert_true(scratch_disk_bytes(10002 * MIB, 1000) == 12 * GIB);
	assert_true(12 * GIB == 12884901888ULL);
}

/*
 * The seed's defaults (measure_s=120): 7501 + 30001 = 37502 MiB =
 * 39323697152 bytes in 1000 files.
 *   d = 39323697152 + 4096000 = 39327793152; d/8 = 4915974144
 *   d + d/8 + 1 GiB = 45317509120 = 42.205 GiB -> 43 GiB
 */
static void test_seed_defaults(void **state)
{
	(void)state;
	assert_true(scratch_disk_bytes(37502 * MIB, 1000) == 43 * GIB);
}

/*
 * The TCG scaling the agent's notes give (rate_mbps=16 nfiles=64 old_s=30
 * measure_s=60): 481 + 961 = 1442 MiB = 1512046592 bytes in 64 files.
 *   d = 1512046592 + 262144 = 1512308736; d/8 = 189038592
 *   d + d/8 + 1 GiB = 2775089152 = 2.58 GiB -> 3 GiB, below the floor: 4 GiB
 * Nothing written at all: 0 + 0 + 1 GiB -> the floor too.
 */
static void test_floor(void **state)
{
	(void)state;
	assert_true(scratch_disk_bytes(1442 * MIB, 64) == 4 * GIB);
	assert_true(scratch_disk_bytes(0, 0) == 4 * GIB);
	/* d = 1.75 GiB = 1879048192: + 234881024 + 1073741824 = 3187671040
	 * = 2.97 GiB -> 3 GiB -> the floor, 4 GiB;
	 * d = 3.5 GiB = 3758096384: + 469762048 + 1073741824 = 5301600256
	 * = 4.9375 GiB -> 5 GiB */
	assert_true(scratch_disk_bytes(1879048192ULL, 0) == 4 * GIB);
	assert_true(scratch_disk_bytes(3758096384ULL, 0) == 5 * GIB);
	/* the 4 KiB a file: 3758096384 - 1024*4096 data in 1024 files is the same d */
	assert_true(scratch_disk_bytes(3758096384ULL - 1024 * 4096, 1024) == 5 * GIB);
}

static void test_saturates(void **state)
{
	(void)state;
	assert_true(scratch_disk_bytes(UINT64_MAX, 1) == UINT64_MAX);
	assert_true(scratch_disk_bytes(1, UINT64_MAX) == UINT64_MAX);
}

static struct agent_check said(int64_t bytes, int64_t files)
{
	return (struct agent_check){ .ok = true, .disk_bytes = bytes, .disk_files = files,
				     .disk_knobs = (char *)"rate_mbps, old_s, measure_s" };
}

/* What a run gets: the sized disk; the floor when the agent cannot say;
 * the size asked for when it is enough. */
static void test_size_for_a_run(void **state)
{
	struct agent_check c = said((int64_t)(10002 * MIB), 1000), quiet = { .ok = true,
		.disk_bytes = -1, .disk_files = -1 };
	struct buf why = BUF_INIT;
	uint64_t out = 0;

	(void)state;
	assert_int_equal(scratch_disk_size(&out, 0, "ext4", &c, &why), 0);
	assert_true(out == 12 * GIB);
	assert_int_equal(scratch_disk_size(&out, 0, "xfs", &quiet, &why), 0);
	assert_true(out == 4 * GIB);
	assert_int_equal(scratch_disk_size(&out, 3 * GIB, "btrfs", &quiet, &why), 0);
	assert_true(out == 3 * GIB);
	assert_int_equal(scratch_disk_size(&out, 20 * GIB, NULL, &c, &why), 0);
	assert_true(out == 20 * GIB);
	buf_release(&why);
}

/*
 * Refused with the size needed and what to change: --disk 4G, which
 * cannot hold the 9.8 GiB the measure_s=10 run writes; and measure_s=300 without --disk:
 * 7501 + 75001 = 82502 MiB = 86509617152 bytes, d = 86513713152,
 * d/8 = 10814214144, + 1 GiB = 98401669120 = 91.64 GiB -> 92 GiB, above 64.
 */
static void test_refused(void **state)
{
	struct agent_check c = said((int64_t)(10002 * MIB), 1000), big = said((int64_t)(82502 * MIB), 1000);
	struct buf why = BUF_INIT;
	uint64_t out = 7;

	(void)state;
	assert_int_equal(scratch_disk_size(&out, 4 * GIB, "ext4", &c, &why), -EFBIG);
	assert_true(out == 7);
	assert_string_equal(buf_str(&why), "scratch disk: --disk 4.0 GiB cannot hold the 9.8 GiB"
			    " the workload writes in 1000 files (its ext4 disk needs 12 GiB with the"
			    " filesystem's headroom): give --disk 12G or lower rate_mbps, old_s,"
			    " measure_s (--set KNOB=VALUE)");
	/* asked by name, it need only hold the files, d = 10491953152 bytes =
	 * 9.77 GiB: 10 GiB is the user's choice, 9.75 GiB (10468982784) is not */
	assert_int_equal(scratch_disk_size(&out, 10 * GIB, "ext4", &c, &why), 0);
	assert_true(out == 10 * GIB);
	assert_int_equal(scratch_disk_size(&out, 10468982784ULL, "ext4", &c, &why), -EFBIG);
	buf_reset(&why);
	assert_int_equal(scratch_disk_size(&out, 0, "btrfs", &big, &why), -EFBIG);
	assert_string_equal(buf_str(&why), "scratch disk: the workload writes up to 80.6 GiB in 1000"
			    " files, so its btrfs disk needs 92 GiB, above the 64 GiB a disk is sized"
			    " to by itself: lower rate_mbps, old_s, measure_s (--set KNOB=VALUE), or"
			    " give the size by name (kcanary boot --disk 92G)");
	/* asked for by name, it is the user's: beyond the cap */
	assert_int_equal(scratch_disk_size(&out, 92 * GIB, "btrfs", &big, &why), 0);
	assert_true(out == 92 * GIB);
	buf_release(&why);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seed_knobs_measure_10),
		cmocka_unit_test(test_seed_defaults),
		cmocka_unit_test(test_floor),
		cmocka_unit_test(test_saturates),
		cmocka_unit_test(test_size_for_a_run),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
