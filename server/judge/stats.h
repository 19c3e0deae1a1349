/* stats.h - the statistics behind kcanary's reports and verdicts.
 *
 * Inputs are arrays of doubles (one value per run); none are modified and
 * none are kept. Each function cites where its formula comes from.
 * "better" says which direction is good for a metric: lower (lag) or
 * higher (throughput).
 */
#ifndef KC_STATS_H
#define KC_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum stats_better { BETTER_LOWER, BETTER_HIGHER };

struct stats_summary {
	size_t n;
	double min, max, mean, median;
};

/* stats_summarize - n, min, max, arithmetic mean and median (the mean of the
 * two middle values for even n). n == 0 gives NANs. */
void stats_summarize(struct stats_summary *out, const double *v, size_t n);

/* stats_median - median of v (NAN for n == 0). */
double stats_median(const double *v, size_t n);

/* stats_max / stats_mean - per-run worst value and mean of a sample series. */
double stats_max(const double *v, size_t n);
double stats_mean(const double *v, size_t n);

/*
 * stats_count_worse - "stalled in k of n runs": how many values are worse
 * than threshold (strictly above it when lower is better, strictly below
 * when higher is better).
 */
size_t stats_count_worse(const double *v, size_t n, double threshold,
			 enum stats_better better);

enum mwu_method { MWU_EXACT, MWU_NORMAL };

struct mwu_result {
	double u;          /* U of x: pairs (x_i, y_j) with x_i > y_j, ties 1/2 */
	double p;          /* two-sided p-value */
	enum mwu_method method;
};

/*
 * stats_mwu - two-sided Mann-Whitney U test (Wilcoxon rank-sum) of x
 * against y (Mann & Whitney 1947, Ann. Math. Statist. 18(1):50-60).
 *
 * With nx <= 20 and ny <= 20 the p-value is exact: the permutation
 * distribution of the rank sum of x over all C(nx+ny, nx) splits, computed
 * by dynamic programming on mid-ranks, so ties are handled exactly
 * (Hollander, Wolfe & Chicken, Nonparametric Statistical Methods, 3rd ed.,
 * §4.1). p = P(|W - E[W]| >= |w - E[W]|).
 * Above that the normal approximation with tie correction and continuity
 * correction is used: sigma^2 = nx ny / 12 * ((N + 1) - sum(t^3 - t) /
 * (N (N - 1))) (same source, eq. 4.17). Returns 0, or -EINVAL when a side
 * is empty.
 */
int stats_mwu(struct mwu_result *out, const double *x, size_t nx,
	      const double *y, size_t ny);

/* A van Elteren test's result (stats_van_elteren). */
struct ve_result {
	double w;          /* sum over the used strata of W_h / (N_h + 1), W_h the
			    * mid-rank sum of x within stratum h */
	double expected;   /* E[w] under no difference: sum n_h / 2 */
	double p;          /* two-sided p-value */
	enum mwu_method method;   /* MWU_EXACT or MWU_NORMAL */
	size_t nstrata;    /* strata with runs on both sides: the ones used */
};

/* Largest stratum (both sides together) for which the p is exact. */
#define STATS_VE_EXACT_MAX 20

/*
 * stats_van_elteren - two-sided van Elteren test: the Wilcoxon rank-sum
 * test of x against y stratified by a blocking factor (here the lab host),
 * ranks taken only within each stratum (van Elteren 1960, "On the
 * combination of independent two-sample tests of Wilcoxon", Bull. Inst.
 * Internat. Statist. 37:351-361; Lehmann, Nonparametrics, 1975, ch. 3).
 *
 * x[i] is in stratum sx[i], y[j] in stratum sy[j], strata 0 .. nstrata-1.
 * With n_h values of x and m_h of y in stratum h (N_h = n_h + m_h), the
 * statistic is w = sum_h W_h / (N_h + 1), W_h the sum of x's mid-ranks in
 * h: van Elteren's locally most powerful weights, 1 / (N_h + 1). A stratum
 * with no x or no y carries no information and is left out (nstrata
 * counts the others). Units: whatever x and y share; only order matters.
 *
 * When every used stratum has N_h <= STATS_VE_EXACT_MAX the p is exact:
 * the permutation distribution of w under all within-stratum splits, the
 * convolution of each stratum's exact rank-sum distribution (as
 * stats_mwu, on mid-ranks, so ties are exact), on an integer scale
 * (doubled ranks times lcm(N_h + 1) / (N_h + 1)), so that equal values of
 * w compare equal; p = P(|w* - E| >= |w - E|). Otherwise (or when the
 * convolution would exceed 4e6 terms) the normal approximation with tie
 * correction, no continuity correction: Var = sum_h n_h m_h / (12
 * (N_h + 1)^2) * ((N_h + 1) - T_h / (N_h (N_h - 1))), T_h = sum(t^3 - t)
 * over h's tie groups: the sum of the strata's variances of W_h (the
 * tie-corrected rank-sum variance of stats_mwu) times the weights
 * squared. With one stratum the exact p equals stats_mwu()'s.
 *
 * Returns 0, or -EINVAL when no stratum has values on both sides or a
 * stratum index is out of range; out is then untouched.
 */
int stats_van_elteren(struct ve_result *out, const double *x, const size_t *sx, size_t nx,
		      const double *y, const size_t *sy, size_t ny, size_t nstrata);

/*
 * stats_binom - the binomial coefficient n choose k (k <= n) as a double,
 * by the multiplicative formula over min(k, n - k) factors: exact up to
 * 2^53, relative error of a few ulp beyond (the callers compare it with
 * a bound or divide by it).
 */
double stats_binom(size_t n, size_t k);

/*
 * stats_mwu_min_p - the smallest two-sided p any outcome can give with nx
 * against ny runs (complete separation): 2 / C(nx+ny, nx), capped at 1.
 * 3 against 3 gives 0.10, so such a comparison can never reach p < 0.05.
 */
double stats_mwu_min_p(size_t nx, size_t ny);

/*
 * stats_runs_needed - the smallest n such that n runs against n can reach
 * p < alpha two-sided (2 / C(2n, n) < alpha); for alpha 0.05 this is 4.
 */
size_t stats_runs_needed(double alpha);

/*
 * stats_hodges_lehmann - the Hodges-Lehmann shift estimate of y relative
 * to x: the median of all nx*ny differences y_j - x_i (Hodges & Lehmann
 * 1963, Ann. Math. Statist. 34(2):598-611). NAN when a side is empty.
 */
double stats_hodges_lehmann(const double *x, size_t nx, const double *y, size_t ny);

/*
 * stats_hl_bootstrap_ci - percentile bootstrap 95% (1 - alpha) CI of the
 * Hodges-Lehmann shift: resample x and y with replacement b times, take the
 * alpha/2 and 1 - alpha/2 quantiles of the shifts (Efron & Tibshirani 1993,
 * An Introduction to the Bootstrap, ch. 13). The generator is splitmix64
 * seeded with seed, so the same data give the same interval. Large samples
 * draw fewer resamples, see stats_bootstrap_resamples().
 */
void stats_hl_bootstrap_ci(double *lo, double *hi, const double *x, size_t nx,
			   const double *y, size_t ny, unsigned b, double alpha,
			   uint64_t seed);

/*
 * stats_bootstrap_resamples - how many of the b requested resamples the
 * bootstrap draws: b, unless b resamples of nx*ny pairwise differences
 * would exceed STATS_BOOTSTRAP_WORK differences; then as many as fit, but
 * never fewer than 200 (a 95% percentile interval from 200 resamples is
 * coarse but usable: Efron & Tibshirani 1993, §13.3 recommend >= 1000 and
 * show 250 already stabilises the interval's ends to a few percent).
 * Keeps a 1,000-run report interactive.
 */
unsigned stats_bootstrap_resamples(unsigned b, size_t nx, size_t ny);
#define STATS_BOOTSTRAP_WORK 2e7

/*
 * stats_interaction_perm - the interaction of two two-level factors A and
 * B (does A's effect depend on B?) with a permutation test. x[0..3] are
 * the cells a0b0, a1b0, a0b1, a1b1 with n[0..3] values. The statistic is
 * the interaction contrast of cell means, T = (m3 - m2) - (m1 - m0).
 * Under "no interaction" the additive model fits; its residuals (each
 * value less R_i + C_j - G, the unweighted row, column and grand means of
 * the cell means) are permuted across the four cells keeping their sizes,
 * and T is recomputed each time: permutation of residuals under the
 * reduced model (Freedman & Lane 1983, J. Bus. Econ. Stat. 1(4):292-298),
 * which Anderson & ter Braak (2003, J. Stat. Comput. Simul. 73(2):85-113)
 * found the most accurate of the approximate permutation tests for
 * interactions. Two-sided p = (1 + #{|T*| >= |T|}) / (1 + nperm), so
 * never 0 (Phipson & Smyth 2010, Stat. Appl. Genet. Mol. Biol. 9(1):39).
 * The generator is splitmix64 from seed. *t gets T. Returns 0, or -EINVAL
 * when a cell is empty or all four hold one value together.
 */
int stats_interaction_perm(double *p, double *t, const double *const x[4], const size_t n[4],
			   unsigned nperm, uint64_t seed);

/* The fixed seed reports use, so that reports are reproducible. */
#define STATS_SEED 0x6b63616e61727931ULL

/* splitmix64 (Steele, Lea & Flood 2014): next 64-bit value of *state. */
uint64_t stats_rand64(uint64_t *state);
/* Uniform double in [0, 1). */
double stats_rand01(uint64_t *state);

/* Standard normal upper tail P(Z > z). */
double stats_norm_sf(double z);

/* ---- sequential (anytime-valid) two-sample tests: bisect's endpoints and
 * compare --repeat auto share them ---- */

/* The prior variance g of the standardized shift in stats_seq_evalue():
 * large effects (several standard deviations), what a regression worth a
 * bisection or a cover letter looks like (1 s against 12-90 s worst lag is
 * d ~ 7 on the log1p scale). */
#define STATS_SEQ_G 50.0

/* stats_seq_tf - the scale the sequential tests work on: sign(x) log1p(|x|)
 * (worst lag 1-90 s, probe counts 0-1e4 become roughly normal), and its
 * inverse. */
double stats_seq_tf(double x);
double stats_seq_tf_inv(double t);

/*
 * stats_seq_evalue - the two-sample Bayes factor of Gonen, Johnson, Lu and
 * Westfall (2005, "The Bayesian two-sample t test", The American
 * Statistician 59(3):252-257, eq. 3) for "t(y) - shift has the mean of
 * t(x)" (t = stats_seq_tf) against a shift of the standardized mean: a
 * normal prior of variance g on the standardized difference delta, the
 * right-Haar prior 1/sigma on the common scale and a flat one on the
 * common mean,
 *
 *   BF = (1 + nd g)^-1/2 ((1 + T^2/nu) / (1 + T^2/(nu (1 + nd g))))^((nu+1)/2)
 *
 * with T the pooled two-sample t statistic, nu = n + m - 2, nd = nm/(n+m).
 * Its nuisance priors are the right-Haar measure of the group the null is
 * invariant under (location and scale), so it is an e-process: a test
 * martingale on the invariant reduction of the data, and by Ville's
 * inequality P(BF_k >= 1/alpha for some look k) <= alpha under the null
 * however often it is looked at (Perez-Ortiz, Lardy, de Heide and Grunwald
 * 2024, "E-statistics, group invariance and anytime-valid testing", Ann.
 * Statist. 52(4):1410-1432; the "safe t-test" of Grunwald, de Heide and
 * Koolen 2024, JRSS B 86(5)). It assumes normal t(x) values with one
 * variance. 1 (no evidence) when a side has fewer than 2 values; both
 * sides constant give 1 when equal, else the ceiling (1 + nd g)^(nu/2).
 * bisect.c's endpoints use shift 0 and g STATS_SEQ_G.
 */
double stats_seq_evalue(const double *x, size_t n, const double *y, size_t m,
			double shift, double g);

/* stats_seq_evalue_max - the largest e-value n against m values can give
 * (T -> infinity above): (1 + nd g)^(nu/2); 1 below 2 a side. */
double stats_seq_evalue_max(size_t n, size_t m, double g);

/*
 * stats_seq_cs - the anytime-valid (1 - alpha) confidence sequence for the
 * shift of t(y) against t(x) (t = stats_seq_tf), by inverting the e-value:
 * {shift : stats_seq_evalue(x, y, shift) < 1/alpha}, the duality of
 * Howard, Ramdas, McAuliffe and Sekhon (2021, "Time-uniform, nonparametric,
 * nonasymptotic confidence sequences", Ann. Statist. 49(2):1055-1080, §2:
 * a family of level-alpha sequential tests gives a confidence sequence that
 * holds at every look at once, P(exists k: true shift outside CS_k) <=
 * alpha). The shift enters only through T, and BF grows with T^2, so the
 * set is the interval d +- t* se: d the difference of means, se the pooled
 * standard error, t*^2 = nu u with u = (K - 1) / (1 - K / A), A = 1 + nd g,
 * K = (A^(1/2) / alpha)^(2 / (nu + 1)). *lo = -INFINITY, *hi = INFINITY
 * when no shift can be excluded (fewer than 2 a side, or K >= A: the
 * ceiling is below 1/alpha).
 */
void stats_seq_cs(double *lo, double *hi, const double *x, size_t n, const double *y,
		  size_t m, double g, double alpha);

enum stats_seq_decision {
	STATS_SEQ_UNDECIDED = 0,
	STATS_SEQ_DIFFERENT,     /* e-value of shift 0 >= 1/alpha */
	STATS_SEQ_EQUIVALENT,    /* the CS lies within +-margin of x's median */
};

struct stats_seq_look {
	enum stats_seq_decision decision;
	double evalue;           /* stats_seq_evalue(x, y, 0) */
	double threshold;        /* 1 / alpha */
	/* the CS as y's median shift against x's median M, in % of |M|:
	 * (t^-1(t(M) + lo) - M) / |M| * 100; +-INFINITY when unbounded, NAN
	 * when M is 0 and the CS is not {0} */
	double lo_pct, hi_pct;
};

/*
 * stats_seq_decide - one look at x (the baseline) against y: DIFFERENT when
 * the e-value of no shift reaches 1/alpha, else EQUIVALENT when the whole
 * confidence sequence (stats_seq_cs) maps into [-margin, +margin] of the
 * baseline median M on the raw scale (t^-1(t(M) + lo) >= M - margin |M|
 * and t^-1(t(M) + hi) <= M + margin |M|), else UNDECIDED. Both come from
 * one CS (DIFFERENT is 0 outside it), so stopping on either is wrong with
 * probability <= alpha at any look. margin is a fraction (0.05 for 5%).
 */
void stats_seq_decide(struct stats_seq_look *out, const double *x, size_t n,
		      const double *y, size_t m, double g, double alpha, double margin);

#endif
