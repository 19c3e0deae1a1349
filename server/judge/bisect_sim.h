/* bisect_sim.h - a simulated history to benchmark bisection strategies:
 * n commits, the culprit at a random position, each run's value drawn from
 * good and bad worst-lag distributions calibrated on the seed's runs. The
 * bisections run through bisect_run(), the engine the real command uses.
 */
#ifndef KC_BISECT_SIM_H
#define KC_BISECT_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "judge/bisect.h"

/*
 * Histories (worst lag in seconds; seed 000: cover letter and changelogs):
 *  clean: good U(1.0, 1.6) in 85% of runs, U(1.6, 2.4) in 15% (a good
 *         kernel gave "1.0s, 2.2s, 1.1s, 1.0s and 1.0s"); bad log-uniform
 *         12-90 s in every run (12.9 s, 85.3 s 46.9 s 52.1 s, 15-28 s, 16-29 s).
 *  flaky: good as above; bad stalls in 7 of 9 runs at U(19, 26) s ("stalled
 *         in 7 of 9 runs (19-26s worst lag)"), else U(1.3, 1.7) s.
 *  mixed: each trial is clean or flaky with probability 1/2.
 */
enum bisect_sim_history { SIM_CLEAN = 0, SIM_FLAKY, SIM_MIXED };

/* The generator and the calibrated draws above, for other simulators
 * (compare_sim.h): xoshiro256** seeded by splitmix64 from (seed, stream);
 * a good run's worst lag; a bad one's, clean or flaky. */
struct bisect_sim_rng {
	uint64_t s[4];
};
void bisect_sim_rng_seed(struct bisect_sim_rng *r, uint64_t seed, uint64_t stream);
double bisect_sim_unit(struct bisect_sim_rng *r);	/* uniform in [0, 1) */
double bisect_sim_draw_good(struct bisect_sim_rng *r);
double bisect_sim_draw_bad(struct bisect_sim_rng *r, bool flaky);

/* "clean", "flaky", "mixed"; parse returns 0 or -EINVAL. */
const char *bisect_sim_history_name(enum bisect_sim_history h);
int bisect_sim_history_parse(enum bisect_sim_history *out, const char *s);

struct bisect_sim_opts {
	size_t commits;		/* candidates incl. both endpoints, >= 3 */
	unsigned trials;
	uint64_t seed;		/* trial t's culprit and runs come from (seed, t) */
	enum bisect_sim_history history;
	bool find_fix;		/* the history goes bad -> good; look for the fix */
	double skip_rate;	/* chance a commit does not build (a skip), 0..1 */
	struct buf *log;	/* if not NULL, every trial's event log is appended */
};

struct bisect_sim_stats {
	unsigned trials;
	unsigned correct;	/* named culprit == the true one */
	/* FOUND or RANGE whose named culprit holds >= bo->confidence of the
	 * posterior, for every strategy (a binary FOUND alone only says the
	 * search converged) */
	unsigned confident;
	unsigned confident_wrong;	/* confident, FOUND and not the true culprit */
	unsigned stopped;	/* NO_DIFFERENCE / WRONG_DIRECTION / ENDPOINT_SKIP */
	unsigned in_range;	/* RANGE containing the true culprit */
	/* culprit check; "right" is the true culprit or a range holding it */
	unsigned checked, check_passed, check_passed_wrong, check_failed_right;
	double runs_sum;	/* guest runs excluding the culprit check */
	/* where runs_sum goes (issue 19): the endpoints' runs, both ends, and
	 * the search's; runs_sum = endpoint_runs_sum + search_runs_sum */
	double endpoint_runs_sum, search_runs_sum;
	double check_runs_sum;
	unsigned runs_max;	/* most guest runs of one trial, excluding the check too */
};

/*
 * bisect_sim_run - run so->trials simulated bisections with bo.
 * Deterministic for a given (so, bo). Returns 0 or -EINVAL.
 */
int bisect_sim_run(struct bisect_sim_stats *out, const struct bisect_sim_opts *so,
		   const struct bisect_opts *bo);

/* The row that is "probabilistic" without the endpoints' early stop, for
 * the before/after line of issue 19. */
#define BISECT_SIM_BEFORE_EARLY "probabilistic, no early ends"
/* ... and without the good side's sharp share (issue 19 item 2). */
#define BISECT_SIM_BEFORE_SHARP "probabilistic, Laplace shares"

/* The benchmark's strategies, in table order; name is the table label. */
struct bisect_sim_strategy {
	const char *name;
	struct bisect_opts opts;
};
/* Fills up to max entries, returns how many. */
size_t bisect_sim_strategies(struct bisect_sim_strategy *out, size_t max);

#endif
