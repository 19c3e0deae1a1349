/* compare_sim.c - compare --repeat auto on simulated jobs (compare_sim.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "judge/bisect_sim.h"
#include "judge/compare_sim.h"
#include "judge/report.h"
#include "judge/stats.h"

enum side { GOOD, BAD_CLEAN, BAD_FLAKY };

static double draw(struct bisect_sim_rng *r, enum side s)
{
	return s == GOOD ? bisect_sim_draw_good(r) : bisect_sim_draw_bad(r, s == BAD_FLAKY);
}

/* One repeat-auto job: a block is one run a side (one variant, one cell),
 * a look after each that may decide from REPORT_SEQ_MIN_BLOCKS on, as
 * report.c's seq_looks() does. Returns the decision
 * and *blocks the blocks it ran. */
static enum stats_seq_decision auto_job(struct bisect_sim_rng *r, enum side a, enum side b,
					const struct compare_sim_opts *o, int *blocks)
{
	double x[1000], y[1000];
	struct stats_seq_look l = { 0 };

	for (int k = 1; k <= o->max_blocks; k++) {
		x[k - 1] = draw(r, a);
		y[k - 1] = draw(r, b);
		stats_seq_decide(&l, x, (size_t)k, y, (size_t)k, STATS_SEQ_G, REPORT_SEQ_ALPHA,
				 o->margin_pct / 100);
		*blocks = k;
		if (l.decision != STATS_SEQ_UNDECIDED && k >= REPORT_SEQ_MIN_BLOCKS)
			break;
	}
	return l.decision;
}

/* A job of n fixed repeats judged as the table is: MWU p < 0.05. */
static bool fixed_job(struct bisect_sim_rng *r, enum side a, enum side b, size_t n)
{
	double x[COMPARE_SIM_MAX_FIXED], y[COMPARE_SIM_MAX_FIXED];
	struct mwu_result m;

	for (size_t i = 0; i < n; i++) {
		x[i] = draw(r, a);
		y[i] = draw(r, b);
	}
	return stats_mwu(&m, x, n, y, n) == 0 && m.p < 0.05;
}

int compare_sim_run(struct compare_sim_stats *out, const struct compare_sim_opts *o)
{
	struct compare_sim_stats st;

	if (!o->trials || o->max_blocks < REPORT_SEQ_MIN_BLOCKS || o->max_blocks > 1000)
		return -EINVAL;
	memset(&st, 0, sizeof(st));
	for (unsigned t = 0; t < o->trials; t++) {
		struct bisect_sim_rng r;
		enum side aa = (enum side)(t % 3), bad;
		enum stats_seq_decision d;
		int blocks = 0;

		/* each trial its own stream: independent, not shifted copies */
		bisect_sim_rng_seed(&r, o->seed, 4 * (uint64_t)t);
		d = auto_job(&r, aa, aa, o, &blocks);
		st.aa_trials++;
		st.aa_different += d == STATS_SEQ_DIFFERENT;
		st.aa_different_kind[aa] += d == STATS_SEQ_DIFFERENT;
		st.aa_equivalent += d == STATS_SEQ_EQUIVALENT;
		st.aa_capped += d == STATS_SEQ_UNDECIDED;
		st.aa_runs_sum += 2.0 * blocks;

		bisect_sim_rng_seed(&r, o->seed, 4 * (uint64_t)t + 1);
		bad = bisect_sim_unit(&r) < 0.5 ? BAD_FLAKY : BAD_CLEAN;
		d = auto_job(&r, GOOD, bad, o, &blocks);
		st.ab_trials++;
		st.ab_different += d == STATS_SEQ_DIFFERENT;
		st.ab_equivalent += d == STATS_SEQ_EQUIVALENT;
		st.ab_runs_sum += 2.0 * blocks;

		bisect_sim_rng_seed(&r, o->seed, 4 * (uint64_t)t + 2);
		for (size_t n = 2; n <= COMPARE_SIM_MAX_FIXED; n++) {
			st.fixed_power[n] += fixed_job(&r, GOOD, bad, n);
			st.fixed_aa[n] += fixed_job(&r, aa, aa, n);
		}
	}
	*out = st;
	return 0;
}
