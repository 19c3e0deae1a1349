/* compare_sim.h - compare --repeat auto on simulated jobs: one variant
 * against the baseline in one cell, each run's worst lag drawn from the
 * seed's calibrated good and bad distributions (bisect_sim.h), decided
 * look by look with the same stats_seq_decide() call report.c's looks
 * make, against fixed repeats judged by Mann-Whitney p < 0.05 as the
 * cover-letter table does. bench/b_compare_auto.sh prints it.
 */
#ifndef KC_COMPARE_SIM_H
#define KC_COMPARE_SIM_H

#include <stddef.h>
#include <stdint.h>

#define COMPARE_SIM_MAX_FIXED 20

struct compare_sim_opts {
	unsigned trials;        /* jobs per kind (A/A, A/B) */
	uint64_t seed;          /* trial t's runs come from (seed, t) */
	int max_blocks;         /* repeat auto's cap, >= REPORT_SEQ_MIN_BLOCKS */
	double margin_pct;      /* its equivalence margin */
};

struct compare_sim_stats {
	/* A/A: good/good, clean-bad/clean-bad and flaky-bad/flaky-bad in turn */
	unsigned aa_trials, aa_different, aa_equivalent, aa_capped;
	unsigned aa_different_kind[3];	/* of those: good, clean-bad, flaky-bad pairs */
	double aa_runs_sum;
	/* A/B: good against bad, clean or flaky with probability 1/2 */
	unsigned ab_trials, ab_different, ab_equivalent;
	double ab_runs_sum;
	/* fixed n repeats a side (n = 2..COMPARE_SIM_MAX_FIXED), A/B trials
	 * with p < 0.05, and A/A trials with p < 0.05 */
	unsigned fixed_power[COMPARE_SIM_MAX_FIXED + 1];
	unsigned fixed_aa[COMPARE_SIM_MAX_FIXED + 1];
};

/* compare_sim_run - simulate; deterministic for given opts. Returns 0, or
 * -EINVAL for no trials or a cap below REPORT_SEQ_MIN_BLOCKS. */
int compare_sim_run(struct compare_sim_stats *out, const struct compare_sim_opts *o);

#endif
