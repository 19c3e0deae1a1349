/* test_pace.c - the paced writer's schedule and lag (agent/pace.c), driven
 * by a simulated writer on a made-up clock: steady pace, a stall, recovery
 * and the catch-up burst after it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "pace.h"

#define MIB 1048576ULL

/*
 * A writer that writes block_bytes per write(), each taking cost_s, sleeps
 * as pace_wait_s() says, and blocks in any write started inside
 * [stall_from_s, stall_to_s) until stall_to_s. lag[T] is sampled at whole
 * seconds T = 1..n like the agent's sampler: from the bytes whose write()
 * has returned by T.
 */
struct sim {
	double rate_mbps, cost_s, stall_from_s, stall_to_s;
	uint64_t block_bytes;
	int n;
	double lag[64];
	uint64_t written_at[64];
};

static void sim_run(struct sim *s)
{
	struct pace p;
	double t = 0.0;
	uint64_t written = 0;
	int next_sample = 1;

	pace_init(&p, 0.0, s->rate_mbps);
	while (next_sample <= s->n) {
		double done;

		t += pace_wait_s(&p, t, written);
		if (t >= s->stall_from_s && t < s->stall_to_s)
			t = s->stall_to_s;
		done = t + s->cost_s;
		/* samples that fall before this write returns see the old count */
		while (next_sample <= s->n && next_sample < done) {
			s->lag[next_sample] = pace_lag_s(&p, next_sample, written);
			s->written_at[next_sample] = written;
			next_sample++;
		}
		written += s->block_bytes;
		t = done;
	}
}

static void test_due_and_wait(void **state)
{
	struct pace p;

	(void)state;
	pace_init(&p, 100.0, 4.0);                  /* 4 MiB/s from t=100 */
	assert_float_equal(pace_due_s(&p, 0), 100.0, 1e-9);
	assert_float_equal(pace_due_s(&p, 2 * MIB), 100.5, 1e-9);
	assert_float_equal(pace_wait_s(&p, 100.25, 2 * MIB), 0.25, 1e-9);
	assert_float_equal(pace_wait_s(&p, 101.0, 2 * MIB), 0.0, 0);
}

static void test_lag_never_negative(void **state)
{
	struct pace p;

	(void)state;
	pace_init(&p, 0.0, 1.0);
	/* 8 MiB written by t=1: 7 s ahead of schedule, lag is 0 not -7 */
	assert_float_equal(pace_lag_s(&p, 1.0, 8 * MIB), 0.0, 0);
	assert_float_equal(pace_lag_s(&p, 8.0, 8 * MIB), 0.0, 0);
	assert_float_equal(pace_lag_s(&p, 10.5, 8 * MIB), 2.5, 1e-9);
}

static void test_steady_pace(void **state)
{
	struct sim s = { .rate_mbps = 10, .cost_s = 0.01, .block_bytes = MIB,
			 .stall_from_s = 1e9, .stall_to_s = 1e9, .n = 30 };
	struct lag_stats st = LAG_STATS_INIT;

	(void)state;
	sim_run(&s);
	for (int t = 1; t <= s.n; t++) {
		/* never behind by more than one write's duration */
		assert_true(s.lag[t] <= s.cost_s + 1e-9);
		lag_stats_add(&st, s.lag[t]);
	}
	assert_true(st.worst_lag_s <= 0.0101);
	assert_int_equal(st.n_over_1s, 0);
	/* 10 MiB/s: at T=30, 300 MiB done, +-1 block */
	assert_true(s.written_at[30] >= 299 * MIB && s.written_at[30] <= 301 * MIB);
	assert_float_equal(pace_rate_mbps(s.written_at[30], 30.0), 10.0, 0.05);
}

static void test_stall_and_recovery(void **state)
{
	/* on pace until a write started at 5.1 s blocks until 15.05 s */
	struct sim s = { .rate_mbps = 10, .cost_s = 0.01, .block_bytes = MIB,
			 .stall_from_s = 5.05, .stall_to_s = 15.05, .n = 30 };
	struct lag_stats st = LAG_STATS_INIT;

	(void)state;
	sim_run(&s);
	assert_true(s.lag[5] <= 0.0101);
	/* the stall: lag grows one second per second, from the due time 5.1 s */
	for (int t = 6; t <= 15; t++)
		assert_float_equal(s.lag[t], t - 5.1, 1e-6);
	assert_int_equal(s.written_at[15], s.written_at[6]);
	/* recovery: writing back to back at 100 MiB/s against 10 MiB/s due,
	 * 0.09 s of lag made up per write: still behind at 16 s, caught up
	 * (within one write) from 17 s on */
	assert_true(s.lag[16] > 1.0 && s.lag[16] < 2.0);
	for (int t = 17; t <= 30; t++)
		assert_true(s.lag[t] <= 0.0101);
	for (int t = 1; t <= s.n; t++)
		lag_stats_add(&st, s.lag[t]);
	assert_float_equal(st.worst_lag_s, 9.9, 1e-6);
	/* lag > 1 s at 7..16 s */
	assert_int_equal(st.n_over_1s, 10);
}

static void test_catch_up_burst(void **state)
{
	struct sim s = { .rate_mbps = 10, .cost_s = 0.01, .block_bytes = MIB,
			 .stall_from_s = 5.05, .stall_to_s = 15.05, .n = 30 };

	(void)state;
	sim_run(&s);
	/* between 15 and 17 s the writer makes up the 10 s it lost: about
	 * 100 MiB of backlog plus 20 MiB due, far above the 10 MiB/s pace */
	assert_true(s.written_at[17] - s.written_at[15] >= 110 * MIB);
	/* and then it goes back to the pace, never ahead of schedule by
	 * more than a block */
	assert_true(s.written_at[30] - s.written_at[20] >= 99 * MIB);
	assert_true(s.written_at[30] - s.written_at[20] <= 101 * MIB);
	assert_true(s.written_at[30] <= 301 * MIB);
}

static void test_lag_stats(void **state)
{
	struct lag_stats st = LAG_STATS_INIT;

	(void)state;
	assert_float_equal(lag_stats_mean_s(&st), 0.0, 0);
	lag_stats_add(&st, 0.0);
	lag_stats_add(&st, 0.5);
	lag_stats_add(&st, 2.5);
	lag_stats_add(&st, 1.0);                    /* exactly 1 s is not over */
	assert_float_equal(st.worst_lag_s, 2.5, 0);
	assert_float_equal(lag_stats_mean_s(&st), 1.0, 1e-12);
	assert_int_equal(st.n_samples, 4);
	assert_int_equal(st.n_over_1s, 1);
	assert_float_equal(pace_rate_mbps(0, 0.0), 0.0, 0);
}

/*
 * The most a writer writes in duration_s (what the scratch disk is sized
 * by), worked by hand: floor(rate * duration / block) + 1 blocks.
 *   250 MiB/s, 30 s, 1 MiB: 7500 MiB of schedule -> 7501 blocks
 *   16 MiB/s, 60 s, 1 MiB: 960 -> 961 blocks
 *   1 MiB/s, 2.5 s, 1 MiB: writes at t = 0, 1, 2 (each when on schedule),
 *     none at 3 (past the end): 3 blocks
 *   1 MiB/s, 1 s, 3000 bytes: 1048576 / 3000 = 349.5 -> 350 blocks = 1050000
 * and the writer of sim_run() that never stalls, stopped at 2.5 s, agrees.
 */
static void test_max_bytes(void **state)
{
	struct pace p;
	double t = 0.0;
	uint64_t written = 0;

	(void)state;
	assert_true(pace_max_bytes(250, 30, MIB) == 7501 * MIB);
	assert_true(pace_max_bytes(16, 60, MIB) == 961 * MIB);
	assert_true(pace_max_bytes(1, 2.5, MIB) == 3 * MIB);
	assert_true(pace_max_bytes(1, 1, 3000) == 1050000);
	assert_true(pace_max_bytes(250, 0, MIB) == 0);
	/* more than 64 bits hold saturates (the double's conversion was
	 * undefined): 1e12 MiB/s for 1e9 s */
	assert_true(pace_max_bytes(1e12, 1e9, MIB) == UINT64_MAX);
	assert_true(pace_max_bytes(1, 1e300, 1) == UINT64_MAX);
	/* the agent's writer loop: write when pace_wait_s() is 0, stop at the end */
	pace_init(&p, 0.0, 1.0);
	for (;;) {
		t += pace_wait_s(&p, t, written);
		if (t >= 2.5)
			break;
		written += MIB;
	}
	assert_true(written == 3 * MIB);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_due_and_wait),
		cmocka_unit_test(test_lag_never_negative),
		cmocka_unit_test(test_steady_pace),
		cmocka_unit_test(test_stall_and_recovery),
		cmocka_unit_test(test_catch_up_burst),
		cmocka_unit_test(test_lag_stats),
		cmocka_unit_test(test_max_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
