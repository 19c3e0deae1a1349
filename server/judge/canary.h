/* canary.h - the canary judge: is a canary kernel's cohort worse than the
 * control's, metric by metric, and overall (pass / marginal / fail)?
 *
 * Modelled on Spinnaker Kayenta's default judge, NetflixACAJudge, and its
 * MannWhitneyClassifier (spinnaker/kayenta, kayenta-judge/src/main/scala/
 * com/netflix/kayenta/judge/; described at spinnaker.io, "How canary
 * judgment works", and in kayenta's docs/canary-config.md):
 *
 *  - every metric is classified Pass, High, Low or NoData by a two-sided
 *    Mann-Whitney U test of canary against control, gated by a direction
 *    (which change is bad: increase, decrease, either) and an effect size;
 *  - a metric marked critical that does not pass fails the whole verdict;
 *  - metrics are weighted into a score 0..100 = weight of passing metrics /
 *    weight of all counted metrics; score >= pass threshold is "pass",
 *    >= marginal threshold "marginal", below that "fail". Kayenta takes
 *    both thresholds from each request (CanaryClassifierThresholdsConfig:
 *    pass and marginal, both required, no default in its docs); we default
 *    to marginal 75, pass 95, the pair in Spinnaker deck's canary score
 *    tests and the usual published Kayenta stage configs;
 *  - NODATA metrics are left out of the score, and when they are half or
 *    more of the metrics the verdict fails (Kayenta's WeightedSumScorer,
 *    NODATA_THRESHOLD = 50);
 *  - alpha defaults to 0.02: Kayenta runs its classifier at confLevel 0.98.
 *
 * Where kcanary differs, and why:
 *
 *  1. A dispersion check. A test of location passes a canary whose spread
 *     grew or that went bimodal at the same median (a kernel that stalls in
 *     some runs): Kayenta users hit exactly this (spinnaker/kayenta#780,
 *     "How to Overcome MannWhitney Judge Shortcomings", case 1 "Increase in
 *     Metric Variability"; spinnaker/spinnaker#6278, 7 of 10 canary values
 *     at 100 against a control of 1s passes). Each metric also gets a
 *     one-sided permutation test of the Brown-Forsythe spread statistic,
 *     the mean absolute deviation from the cohort's own median (Brown &
 *     Forsythe 1974, JASA 69(346):364-367), canary against control; a
 *     metric whose canary spread is larger by more than spread_tolerance
 *     with p < alpha is classified Spread (a fifth class: a failure like
 *     High and Low). Why this test: Conover, Johnson & Johnson (1981,
 *     Technometrics 23(4):351-361) compared 56 tests of equal spread and
 *     found the median-centred Levene (Brown-Forsythe) among the few that
 *     keep their level on skewed, heavy-tailed data, which lag is; the F
 *     test on variances does not. Ansari-Bradley assumes equal medians,
 *     which a canary need not have. A two-sample Kolmogorov-Smirnov test
 *     also fires on improvements and on pure shifts, and has little power
 *     when a few runs of many stall (its statistic moves by 1/n per run);
 *     the mean absolute deviation grows with every stalled run. The
 *     p-value comes from permutations of the pooled cohorts, so it is exact
 *     under the null of one distribution (the A/A case) without assuming
 *     a shape: all splits when there are at most 20,000 of them, else
 *     random ones with p = (1 + #{T* >= T}) / (B + 1) (Phipson & Smyth
 *     2010, Stat. Appl. Genet. Mol. Biol. 9(1):39; Boos & Brownie 1989,
 *     Technometrics 31(1):69-82 for resampling tests of Levene-type
 *     statistics). For metrics whose values are all > 0 the statistic is
 *     computed on log values, so spread is relative: a throughput gain with
 *     the same relative noise is not a spread failure.
 *  2. The effect size is the Hodges-Lehmann shift relative to the control
 *     median (stats_hodges_lehmann), not Kayenta's ratio of means: a mean
 *     moves with one outlier, and the test is on ranks. A shift counts when
 *     p < alpha and |shift| > tolerance * |control median| (a zero control
 *     median makes any significant shift count: 0 foreign-flush misses
 *     against some is the regression). Kayenta instead asks that the
 *     confidence interval of the shift clear 25% of the estimate; we report
 *     the percentile bootstrap CI of the shift but do not classify on it.
 *  3. No outlier removal. Kayenta drops values beyond 3 IQR before judging;
 *     for kernels the outlier is the stall we look for.
 *  4. Too few values is NODATA, not just none: a cohort smaller than min_n
 *     (default: the fewest runs with which Mann-Whitney can reach p < alpha,
 *     stats_runs_needed(); 5 for 0.02) cannot show a regression, and
 *     calling it Pass would be a verdict without evidence. What NODATA then
 *     does is the metric's rule: ignore (Kayenta's default), fail (Kayenta's
 *     mustHaveData) or pass.
 *  5. Ties need no noise: stats_mwu is exact with ties for up to 20 per
 *     cohort, where Kayenta adds Gaussian noise to constant data.
 *  6. On a critical failure Kayenta reports score 0; we keep the weighted
 *     score for information and give result "fail" with the reason.
 *  7. Weights are per metric. Kayenta weights groups of metrics (each
 *     group's score is its share of passing metrics); a group is a set of
 *     metrics with weights summing to the group's, so nothing is lost.
 *  8. No pass without power. A metric whose cohorts are so small that its
 *     location test could not reach p < alpha whatever the values were is
 *     never Pass, whatever min_n said: the smallest two-sided p-value the
 *     exact Mann-Whitney test can give with nx against ny values is
 *     2 / C(nx + ny, nx), reached only when the cohorts do not overlap
 *     (stats_mwu_min_p; Mann & Whitney 1947, Ann. Math. Stat. 18(1):50-60:
 *     under the null every one of the C(nx + ny, nx) rankings is equally
 *     likely, and complete separation either way is 2 of them). When that
 *     floor is >= alpha the metric is NODATA with underpowered set and a
 *     reason that names the floor and how many runs a side would do
 *     (stats_runs_needed); its nodata rule may ignore it or fail it, never
 *     pass it. A verdict with an underpowered metric is never pass or
 *     marginal: it is "no verdict" ("cohorts too small for alpha"), or fail
 *     when a metric failed (the spread test, a permutation test with its
 *     own floor 1 / C(nx + ny, ny), can still find a wider canary).
 *
 * Pure computation: no I/O, no store. Deterministic for the same inputs
 * and seed. Any thread may call it (no global state).
 */
#ifndef KC_CANARY_H
#define KC_CANARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Which change of the canary against the control is bad (Kayenta's
 * "direction"). */
enum canary_direction {
	CANARY_DIR_INCREASE,	/* higher is worse: lag, pauses, misses */
	CANARY_DIR_DECREASE,	/* lower is worse: throughput */
	CANARY_DIR_EITHER,
};

/* What a metric with too few values (NODATA) does to the verdict. */
enum canary_nodata {
	CANARY_NODATA_IGNORE,	/* left out of the score (Kayenta's default) */
	CANARY_NODATA_FAIL,	/* counts as a failing metric (mustHaveData) */
	CANARY_NODATA_PASS,	/* counts as a passing metric */
};

enum canary_class {
	CANARY_CLASS_PASS,
	CANARY_CLASS_HIGH,	/* canary significantly higher, beyond tolerance */
	CANARY_CLASS_LOW,	/* canary significantly lower, beyond tolerance */
	CANARY_CLASS_SPREAD,	/* canary significantly more spread out */
	CANARY_CLASS_NODATA,	/* fewer than min_n values in a cohort, or too
				 * few for the test to reach p < alpha */
};

/* NO_VERDICT: half the metrics or more have too few values to judge (ignored
 * NODATA): the canary has not shown it is fine, nor that it is not. */
enum canary_result {
	CANARY_RESULT_PASS, CANARY_RESULT_MARGINAL, CANARY_RESULT_FAIL, CANARY_RESULT_NO_VERDICT
};

struct canary_metric_config {
	const char *name;		/* borrowed; shown in results */
	enum canary_direction direction;
	double tolerance;		/* allowed |HL shift| / |control median|, >= 0 */
	double spread_tolerance;	/* allowed spread ratio - 1, >= 0 */
	bool spread_check;		/* run the dispersion check */
	bool critical;			/* failing fails the whole verdict */
	enum canary_nodata nodata;
	double weight;			/* > 0 */
	size_t min_n;			/* per cohort; 0: the judge's default */
};

/*
 * canary_metric_config_default - direction increase, tolerance 0.10,
 * spread_tolerance 0.5 (up to 1.5x the control's spread passes), spread
 * check on, not critical, NODATA ignored, weight 1, min_n from the judge.
 */
void canary_metric_config_default(struct canary_metric_config *c, const char *name);

struct canary_opts {
	double alpha;			/* per test; default 0.02 */
	double pass_threshold;		/* score >= this: pass (default 95) */
	double marginal_threshold;	/* score >= this: marginal (default 75) */
	unsigned permutations;		/* random splits for the spread test (1999) */
	unsigned bootstrap;		/* resamples for the HL CI; 0: no CI (1000) */
	uint64_t seed;			/* for permutations and bootstrap */
	size_t min_n;			/* 0: stats_runs_needed(alpha) */
};

void canary_opts_default(struct canary_opts *o);

/* One metric's values: one per run (or per host), NANs dropped. Borrowed. */
struct canary_metric_input {
	struct canary_metric_config cfg;
	const double *control;
	size_t ncontrol;
	const double *canary;
	size_t ncanary;
};

struct canary_metric_result {
	const char *name;		/* borrowed from the input's cfg */
	enum canary_class cls;
	enum canary_direction direction;
	bool critical;
	bool counted;			/* in the score (not an ignored NODATA) */
	bool passed;			/* counted as passing */
	size_t n_control, n_canary;	/* values used (NANs dropped) */
	size_t min_n;
	double median_control, median_canary;
	double shift;			/* Hodges-Lehmann, canary - control */
	double effect;			/* shift / |median_control| (+-INF if 0) */
	double shift_lo, shift_hi;	/* bootstrap 1 - alpha CI of shift (NAN: none) */
	double p_location;		/* two-sided Mann-Whitney U */
	bool spread_tested;
	bool spread_log;		/* spread measured on log values */
	double spread_control, spread_canary;	/* mean |v - median| */
	double spread_ratio;		/* canary / control (INF if control 0) */
	double p_spread;		/* one-sided: canary more spread */
	bool underpowered;		/* p_floor >= alpha: could not find a shift */
	double p_floor;			/* smallest p the location test can give */
	size_t runs_needed;		/* per cohort, for p_floor < alpha (n against n) */
	char reason[256];		/* why, in words */
};

struct canary_verdict {
	struct canary_metric_result *metrics;	/* n, in input order */
	size_t n;
	double score;			/* 0..100; NAN when nothing was counted */
	enum canary_result result;
	bool critical_failure;
	bool underpowered;		/* a metric's cohorts were too small for alpha */
	double alpha, pass_threshold, marginal_threshold;
	char reason[256];
};

/*
 * canary_judge - classify each of the n metrics and score them into a
 * verdict. *out is filled on success (release with canary_verdict_release;
 * it borrows the metric names from in). Returns 0, or -EINVAL for n == 0,
 * a weight <= 0, a negative tolerance, alpha outside (0, 1) or thresholds
 * outside 0..100 with marginal > pass.
 */
int canary_judge(struct canary_verdict *out, const struct canary_metric_input *in,
		 size_t n, const struct canary_opts *opts);
void canary_verdict_release(struct canary_verdict *v);

/*
 * canary_spread_test - the dispersion check alone: Brown-Forsythe spread
 * (mean absolute deviation from the cohort median) of y against x, on log
 * values when every value is > 0 (*log_scale says which), and the
 * one-sided permutation p-value of "y is more spread out". *ratio is
 * spread(y) / spread(x) (INF when x has none and y some, 1 when neither
 * has). Exact enumeration up to 20,000 splits, else `permutations` random
 * ones from seed. Returns 0 or -EINVAL when a side has < 2 values.
 */
int canary_spread_test(double *p, double *ratio, double *spread_x, double *spread_y,
		       bool *log_scale, const double *x, size_t nx, const double *y,
		       size_t ny, unsigned permutations, uint64_t seed);

/* Names: "pass", "high", ... as shown and as JSON values; parsers take the
 * same words and return 0 or -EINVAL. */
const char *canary_class_name(enum canary_class c);
const char *canary_result_name(enum canary_result r);
const char *canary_direction_name(enum canary_direction d);
const char *canary_nodata_name(enum canary_nodata r);
int canary_direction_parse(enum canary_direction *out, const char *s);
int canary_nodata_parse(enum canary_nodata *out, const char *s);

/* ---- output (canary_format.c) ---- */

struct buf;

/* What a verdict was computed over, for its header: the selectors as the
 * user gave them and how many runs each cohort has. */
struct canary_cohorts {
	const char *control, *canary;
	size_t control_runs, canary_runs;
	size_t control_hosts, canary_hosts;	/* values per host; 0: per run */
	const char *unit;			/* what runs counts: NULL "runs", or
						 * "samples" (Prometheus) */
};

/*
 * canary_format_text - the verdict as a table for people: a header with
 * the result, why, the cohorts and the score, one row per metric (class,
 * n per cohort, medians, shift, p-values, spread ratio) and a "why" line
 * under each. weights[i] is metric i's weight (may be NULL: all 1).
 * Appends to out.
 */
void canary_format_text(struct buf *out, const struct canary_verdict *v,
			const struct canary_cohorts *c, const double *weights);

/*
 * canary_format_json - the same as one JSON object (jansson, compact keys
 * documented in docs/canary-and-fleet.md); NAN and INF become null.
 * Appends to out, with a trailing newline.
 */
void canary_format_json(struct buf *out, const struct canary_verdict *v,
			const struct canary_cohorts *c, const double *weights);

#endif
