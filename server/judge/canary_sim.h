/* canary_sim.h - simulated canary cohorts to measure the judge (canary.h):
 * how often an A/A split passes and how often a regression is caught. Every
 * trial goes through canary_judge(), the code `kcanary canary` runs.
 *
 * Values are per-host worst lag in seconds from the seed's good-kernel
 * distribution (the one bisect_sim.h calibrated on seed 000's runs):
 * U(1.0, 1.6) in 85% of runs, U(1.6, 2.4) in 15% ("1.0s, 2.2s, 1.1s,
 * 1.0s and 1.0s"); its median is 1.0 + 0.6 * 0.5 / 0.85 = 1.353 s.
 */
#ifndef KC_CANARY_SIM_H
#define KC_CANARY_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "judge/canary.h"

enum canary_sim_scenario {
	CANARY_SIM_AA,		/* 2n runs of one kernel, split at random into n and n */
	CANARY_SIM_SHIFT,	/* canary runs scaled by (1 + shift) */
	CANARY_SIM_SPREAD,	/* canary runs m + spread * (v - m), m the median */
	CANARY_SIM_STALLS,	/* a canary run stalls (U(19, 26) s) with p stall_rate */
};

/* The healthy distribution's median (seconds). */
#define CANARY_SIM_MEDIAN_S (1.0 + 0.6 * 0.5 / 0.85)

struct canary_sim_opts {
	unsigned trials;
	size_t runs;			/* per cohort */
	uint64_t seed;			/* trial t draws from (seed, scenario, t) */
	double shift;			/* relative, e.g. 0.25 */
	double spread;			/* factor, e.g. 2 */
	double stall_rate;		/* e.g. 0.2 */
	struct canary_opts judge;
	struct canary_metric_config metric;	/* name "worst_lag_s" */
};

/* Defaults: 200 trials, 20 runs, seed 1, shift 0.25, spread 2, stall rate
 * 0.2, canary_opts_default() without the bootstrap CI (it does not change a
 * classification), canary_metric_config_default("worst_lag_s"). */
void canary_sim_opts_default(struct canary_sim_opts *o);

struct canary_sim_stats {
	unsigned trials;
	unsigned result[4];		/* by enum canary_result */
	unsigned cls[5];		/* by enum canary_class of the one metric */
};

/* canary_sim_run - o->trials judged trials of scenario s. Deterministic for
 * the same options. Returns 0 or -EINVAL (runs < 2, trials 0). */
int canary_sim_run(struct canary_sim_stats *out, enum canary_sim_scenario s,
		   const struct canary_sim_opts *o);

#endif
