/* bisect.h - the bisection decision engine: which commit to measure next,
 * what each commit's runs say (good/bad/skip/unsure), and when to stop.
 *
 * Pure: it never builds or boots anything. It asks an oracle for one run's
 * metric value at a commit index and decides from the answers. The real
 * `kcanary bisect` (tree -> build -> vm -> agent), the simulator
 * (bisect_sim.h) and `kcanary bisect replay` (oracle = a log) all drive this
 * same code.
 *
 * Model. Candidates are indexed 0..n-1 in history order. Index 0 is in the
 * "old" state and n-1 in the "new" state; the culprit is the first commit in
 * the new state (git bisect's old/new terms). For a regression old = good,
 * new = bad; with find_fix old = bad, new = good and the culprit is the fix.
 *
 *  1. Endpoints first: runs alternate between 0 and n-1. From 3 runs a side
 *     on, after every pair, an anytime-valid e-value (a Bayes factor with
 *     right-Haar priors, bisect.c's endpoint_evalue() cites it) stops them
 *     as different once it reaches 1/0.01, so clearly separated ends take 3
 *     + 3 runs; from endpoint_min_runs on, also until a two-sided
 *     Mann-Whitney U test says they differ (p <= 0.01, and the probability
 *     of superiority is at least 0.7 one way), or says they are the same
 *     (p above a threshold that shrinks as runs accumulate), or the
 *     endpoint cap is reached. The three-way same/different/unknown outcome
 *     and the shrinking "high threshold" follow Chromium Pinpoint's
 *     compare module (catapult dashboard/pinpoint/models/compare/compare.py
 *     and thresholds.py: DIFFERENT if p <= 0.01, SAME if p > a
 *     sample-size-dependent high threshold, else UNKNOWN and more attempts,
 *     job_state.py). Our high threshold is the closed form
 *     2^-(n - min_runs)/2 rather than Pinpoint's simulated tables, and we add
 *     one run per side at a time, not 10, since a guest run costs minutes.
 *  2. The endpoint runs estimate the old and new distributions of the
 *     metric: a Gaussian kernel density on t(x) = sign(x) log(1 + |x|)
 *     (worst lag spans 1 s to 90 s; probe counts 0 to thousands), Silverman's
 *     bandwidth 0.9 min(sd, IQR/1.34, MAD/0.6745) n^-1/5 (Silverman 1986,
 *     eq. 3.31; the MAD keeps a bimodal flaky side from being smeared),
 *     at least max(0.1, 2% of the distance between the two medians) in t
 *     units (0.1 is about 10% of the value: a few endpoint runs do not
 *     show a side's spread). Each side is then mixed with the other
 *     side's density, weight w = 1 / (n + 2): Laplace's rule of succession
 *     for the chance of an event not yet seen in n runs. It bounds one
 *     run's likelihood ratio to about n + 1, so
 *     one outlying run (a good kernel's 2.2 s, a bad kernel's rare fast run
 *     not seen among the endpoint runs) shifts the search but cannot lock it.
 *     The good side's share of bad-looking runs is smaller,
 *     1 / (n + 2)^2 (sharp_good: Jeffreys' point mass on "a good kernel
 *     never shows the fault", bisect.c share_sharp()), so one stall is
 *     worth about (n + 2)^2 and a fast run still only about n + 1: a bad
 *     kernel's fast run is what a flaky fault does.
 *     A flaky new side ("stalled in 7 of 9 runs") is represented as
 *     observed: its fast runs are in its own density. As the search goes,
 *     the runs of every commit whose state the posterior holds at >= 0.999
 *     join that side's sample, the densities are refitted and all runs are
 *     re-weighed (hard-assignment EM), so the flaky side's fast-run rate is
 *     learned from more than the endpoint runs.
 *  3. Every run at commit i updates a posterior over the culprit position
 *     j in 1..n-1 by the likelihood ratio f_new(x) / f_old(x) for j <= i
 *     (Bayes; the probabilistic bisection algorithm of Horstein 1963,
 *     "Sequential transmission using noiseless feedback", IEEE Trans. Inf.
 *     Theory 9(3), and Waeber, Frazier and Henderson 2013, "Bisection search
 *     with noisy responses", SIAM J. Control Optim. 51(3):2261-2279).
 *     A skip (the oracle returns < 0: patch, build or boot failure, paused
 *     guest, infrastructure error) is never evidence: the commit is marked
 *     untestable and culprit positions that only it separates are merged
 *     into one class; a class wider than one commit is reported as a range.
 *  4. Strategies choose the next commit:
 *     BISECT_PROBABILISTIC measures the commit whose posterior CDF
 *     P(culprit <= i) is closest to 1/2 (the posterior median; on a
 *     discrete set, whichever of the two commits straddling it has its CDF
 *     nearer 1/2, so a posterior piled on one commit still tests its
 *     parent), one run at a time, and stops when one class holds
 *     >= confidence of the posterior or the run budget is spent.
 *     BISECT_BINARY is git bisect with repeats: each tested commit gets a
 *     verdict from the summed log likelihood ratio of its runs. With
 *     fixed_repeats = k it takes exactly k runs and the sign decides (k = 1
 *     is `git bisect run` with a one-shot script). With fixed_repeats = 0
 *     (adaptive) it is Wald's sequential probability ratio test (Wald 1945):
 *     good or bad once the ratio passes confidence/(1 - confidence) either
 *     way, else "unsure" and one more run, up to step_max_runs; an unsure
 *     commit at the cap is followed in the direction it leans and logged as
 *     unsure. (Pinpoint's rank tests need >= 3 runs per commit before they
 *     can say anything against 10 endpoint runs; the likelihood ratio can
 *     decide from one 20 s stall.) Binary search ends, as git bisect does,
 *     when it has converged on an adjacent old/new pair: that is its
 *     FOUND, whatever the posterior says of it; the posterior is still
 *     computed from every run and culprit_prob reports it, so a FOUND whose
 *     culprit_prob is below the confidence is a converged search, not a
 *     confident one.
 *  5. Culprit check: the culprit (for a range: the first testable commit
 *     after it) and its parent are run again, interleaved, check_runs
 *     times each (more, up to twice that, while the comparison is in the
 *     grey zone); the medians, the Hodges-Lehmann shift and the
 *     Mann-Whitney p-value (stats.h) are reported. The check passes when
 *     p <= 0.05 in the expected direction; a culprit that fails it is
 *     reported as failing, not as a result (outcome stays FOUND/RANGE,
 *     check_passed = false). A check whose runs are mostly skips (fewer
 *     than 2 values a side after 8 x check_runs attempts) is abandoned:
 *     check_abandoned, with the attempts and skips counted.
 *
 * Every step is appended to an event log (format: bisect_log.c), a
 * line-based text that bisect_replay() feeds back through this engine.
 * The engine has no randomness and no clock: the same answers give the same
 * steps and result.
 */
#ifndef KC_BISECT_H
#define KC_BISECT_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

/*
 * The oracle: measure one run of commit idx (0..n-1). Returns 0 and the
 * metric value in *value_out, or a negative code meaning skip (build or
 * boot failure, infrastructure error): never evidence either way; the
 * commit is not asked again. Two codes abort the bisection instead, and
 * bisect_run() returns them as they are: -EINTR (interrupted: SIGINT or
 * SIGTERM) and -ECANCELED (the oracle stops it: cancelled, a replay log
 * that diverged, the oracle's own store failed; the oracle's owner keeps
 * the real reason, as bisect_execute() and bisect_replay() do).
 */
typedef int (*bisect_measure_fn)(void *ctx, size_t idx, double *value_out);

/*
 * The oracle's look ahead (optional): the next n oracle calls will be for
 * idx[0..n-1], in that order, and none of them depends on another's
 * answer (the endpoint rounds, the culprit check's rounds). An oracle
 * that can measure in parallel measures them now and answers the calls
 * from what it measured; the calls, their order and the log are the same
 * as without it. A skip among them may make the engine ask fewer (an
 * endpoint skip ends the bisection) or more (a check run skipped is asked
 * again). Returns 0, or -EINTR / -ECANCELED to abort as the oracle does.
 */
typedef int (*bisect_plan_fn)(void *ctx, const size_t *idx, size_t n);

enum bisect_strategy {
	BISECT_BINARY = 0,	/* binary search, fixed or adaptive repeats */
	BISECT_PROBABILISTIC,	/* posterior median, one run at a time */
};

struct bisect_opts {
	enum bisect_strategy strategy;
	bool find_fix;		/* old side is bad, look for the fix */
	bool higher_is_worse;	/* metric direction (worst_lag_s: true) */
	double confidence;	/* stop/verdict level, default 0.999 */
	/* The search starts no run once max_runs runs with a value, endpoint
	 * runs included, were measured (default 200). The endpoint phase always
	 * completes (up to 2 x endpoint_max_runs, or 2 x fixed_repeats) and the
	 * culprit check's runs (up to 4 x check_runs) come on top; skips are
	 * not counted. */
	unsigned max_runs;
	/* Endpoints: adaptive between min and max runs per side, with the
	 * do-they-differ test; when fixed_repeats > 0, exactly that many per
	 * side and no test (what a user of git bisect run does). */
	unsigned endpoint_min_runs;	/* default 5 */
	unsigned endpoint_max_runs;	/* default 16 */
	unsigned fixed_repeats;	/* BISECT_BINARY: 0 = adaptive (SPRT) */
	unsigned step_max_runs;	/* adaptive cap per commit, default 8 */
	unsigned check_runs;	/* culprit check runs per side; 0 = none, else
				 * >= bisect_check_runs_min() */
	bool early_endpoints;	/* the e-value's early stop of the endpoints
				 * (default on; off in logs written before it) */
	bool sharp_good;	/* the good side's share of bad-looking runs
				 * under Jeffreys' point mass (bisect.c,
				 * share_sharp(); default on; off in logs
				 * written before it) */
};

/*
 * bisect_check_runs_min - the smallest check_runs with which the culprit
 * check can pass at all: its two-sided Mann-Whitney test at alpha 0.05,
 * extended up to 2 x check_runs a side in the grey zone, must be able to
 * reach p <= 0.05 with complete separation (stats_mwu_min_p). It is 2
 * (4 against 4 runs gives p = 0.029; 2 against 2 at best 0.33).
 */
unsigned bisect_check_runs_min(void);

/* Fill opts with the defaults above (probabilistic, regression,
 * higher is worse, confidence 0.999, check_runs 5). */
void bisect_opts_init(struct bisect_opts *opts);

enum bisect_outcome {
	/* probabilistic: one commit holds >= confidence of the posterior;
	 * binary (adaptive, fixed): the search converged on an adjacent
	 * old/new pair, as git bisect's "first bad commit" (culprit_prob says
	 * how sure the posterior is of it) */
	BISECT_FOUND = 0,
	BISECT_RANGE,		/* a class of commits split only by skips */
	BISECT_UNDECIDED,	/* budget spent below confidence */
	BISECT_NO_DIFFERENCE,	/* endpoints do not differ */
	BISECT_WRONG_DIRECTION,	/* endpoints differ, the other way round */
	BISECT_ENDPOINT_SKIP,	/* an endpoint cannot be measured */
};

/* "found", "range", ... as written in logs. */
const char *bisect_outcome_name(enum bisect_outcome o);

enum bisect_verdict {
	BISECT_UNTESTED = 0,
	BISECT_GOOD,
	BISECT_BAD,
	BISECT_SKIP,
	BISECT_UNSURE,
};
const char *bisect_verdict_name(enum bisect_verdict v);

/* A culprit class: positions first..last (first == last: one commit). */
struct bisect_candidate {
	size_t first, last;
	double prob;
};

#define BISECT_TOP 5
/* An undecided bisection names a best guess only at or above this
 * posterior probability (more likely than not); below it, no commit is
 * likely and the top candidates are listed instead. */
#define BISECT_LIKELY 0.5

struct bisect_result {
	enum bisect_outcome outcome;
	/* The named culprit: the top class (for UNDECIDED, the best guess). */
	size_t culprit_first, culprit_last;
	double culprit_prob;
	struct bisect_candidate top[BISECT_TOP];	/* best first */
	size_t ntop;
	/* Endpoint comparison. */
	unsigned endpoint_runs_old, endpoint_runs_new;
	double endpoint_p;	/* two-sided Mann-Whitney U */
	double endpoint_evalue;	/* the early exit's e-value (bisect.c), 1/0.01 stops */
	double endpoint_effect;	/* P(new run worse than old run), ties 1/2 */
	/* Counts. */
	unsigned runs_total;	/* every measured run incl. check */
	unsigned runs_check;
	unsigned skips;		/* oracle calls that returned skip */
	unsigned commits_tested;	/* distinct commits measured, endpoints incl. */
	/* Culprit check (check_done false when not run or impossible). */
	bool check_done, check_passed;
	/* Requested but abandoned: check_skips of check_attempts oracle calls
	 * were skips, leaving fewer than 2 values a side. */
	bool check_abandoned;
	unsigned check_attempts, check_skips;
	size_t check_parent, check_culprit;
	unsigned check_n_parent, check_n_culprit;
	double check_median_parent, check_median_culprit, check_p;
	double check_shift;	/* Hodges-Lehmann shift, culprit minus parent */
	char message[256];	/* one line for humans */
};

/*
 * bisect_run - bisect n >= 2 candidates with the oracle.
 * @out:    the result (written on success)
 * @n:      number of candidates (index 0 old side, n-1 new side)
 * @opts:   options (NULL for defaults)
 * @measure, @ctx: the oracle
 * @log:    if not NULL, every step is appended (the replayable event log)
 * @verdicts: if not NULL, an array of n filled with each commit's verdict
 *
 * Returns 0 when the engine ran to an outcome (which may be NO_DIFFERENCE,
 * ENDPOINT_SKIP, UNDECIDED, ...), -EINVAL for bad options (n < 2,
 * confidence outside (0.5, 1), endpoint_min_runs < 2 when adaptive, an
 * endpoint_max_runs with which no test can show a difference (< 3),
 * check_runs between 1 and bisect_check_runs_min() - 1), or
 * the oracle's -EINTR or -ECANCELED when it aborted; *out is written
 * only on 0.
 * Run time and memory are O(n) per run.
 */
int bisect_run(struct bisect_result *out, size_t n, const struct bisect_opts *opts,
	       bisect_measure_fn measure, void *ctx, struct buf *log,
	       enum bisect_verdict *verdicts);

/*
 * bisect_run_planned - bisect_run() with the oracle's look ahead plan
 * (NULL: none; bisect_run() is this with NULL). Same steps, log and
 * result for the same answers.
 */
int bisect_run_planned(struct bisect_result *out, size_t n, const struct bisect_opts *opts,
		       bisect_measure_fn measure, bisect_plan_fn plan, void *ctx,
		       struct buf *log, enum bisect_verdict *verdicts);

/*
 * bisect_result_line - the canonical one-line summary of a result, as the
 * log's "result" line holds it (no newline). Appended to *b.
 */
void bisect_result_line(struct buf *b, const struct bisect_result *r);

/*
 * bisect_replay - run the engine again on the answers recorded in a log.
 * @out:    the replayed result
 * @text:   the whole log (NUL-terminated)
 * @relog:  if not NULL, the replay's own log
 * @err:    on failure, a message for humans (caller frees); may be NULL
 *
 * The oracle is the log's run/skip lines, consumed in order: the engine
 * must ask for the same commit as the log at each step. Returns 0 when the
 * replay reached a result line and final verdict lines ("verdict ...
 * final=1") equal to the log's; -EINVAL when the log does not parse (bad
 * header or line), -EPROTO when the replay asks for a different commit
 * than the log recorded or ends on a different result or final verdicts,
 * -ENODATA when the log ends before the engine does.
 */
int bisect_replay(struct bisect_result *out, const char *text, struct buf *relog,
		  struct buf *err);

/*
 * bisect_log_table - the table of every tested commit from a log: one line
 * per commit in history order, "commit  runs  verdict  values...", then
 * the candidate's sha and subject (or image) when the log has '# candidate
 * I SHA NAME' lines. The verdict is the commit's final verdict line, else
 * its last verdict line; a commit without one is "skip" when it had skips
 * (as `kcanary bisect` prints it), an endpoint "old"/"new" (the engine
 * stopped before giving it a verdict: endpoints that do not differ are
 * neither good nor bad). Appended to *b. Returns 0 or -EINVAL when text is
 * not a bisect log.
 */
int bisect_log_table(struct buf *b, const char *text);

#endif
