/* test_stats.c - statistics against published tables and hand-computed values. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "judge/stats.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_summary(void **state)
{
	(void)state;
	double v[] = { 85.3, 46.9, 52.1 };
	struct stats_summary s;

	stats_summarize(&s, v, N(v));
	assert_int_equal(s.n, 3);
	assert_float_equal(s.median, 52.1, 1e-12);
	assert_float_equal(s.min, 46.9, 1e-12);
	assert_float_equal(s.max, 85.3, 1e-12);
	assert_float_equal(s.mean, (85.3 + 46.9 + 52.1) / 3, 1e-12);
	double e[] = { 4, 1, 3, 2 };
	assert_float_equal(stats_median(e, 4), 2.5, 1e-12);
	assert_true(isnan(stats_median(e, 0)));
	double lag[] = { 0, 0.5, 12.9, 3 };
	assert_float_equal(stats_max(lag, 4), 12.9, 1e-12);
	assert_float_equal(stats_mean(lag, 4), 16.4 / 4, 1e-12);
}

static void test_k_of_n(void **state)
{
	(void)state;
	/* the seed: "stalled in 7 of 9 runs (19-26s worst lag)" */
	double v[] = { 19, 26, 1.2, 22, 24, 1.4, 20, 25, 21 };
	assert_int_equal(stats_count_worse(v, N(v), 5, BETTER_LOWER), 7);
	/* exactly at the threshold is not worse */
	double t[] = { 5, 5.01 };
	assert_int_equal(stats_count_worse(t, 2, 5, BETTER_LOWER), 1);
	double mbps[] = { 250, 120, 249 };
	assert_int_equal(stats_count_worse(mbps, 3, 200, BETTER_HIGHER), 1);
}

/* Exact p-values: complete separation of m against n gives two-sided
 * p = 2 / C(m+n, m) (Mann & Whitney 1947, Table I). */
static void test_mwu_exact_separation(void **state)
{
	(void)state;
	struct mwu_result r;
	double base[] = { 85.3, 46.9, 52.1 }, patched[] = { 1.0, 1.2, 1.2 };

	assert_int_equal(stats_mwu(&r, base, 3, patched, 3), 0);
	assert_int_equal(r.method, MWU_EXACT);
	assert_float_equal(r.u, 9, 1e-12);
	assert_float_equal(r.p, 0.1, 1e-12);          /* 2/20 */

	double x[] = { 1, 2, 3, 4, 5 }, y[] = { 6, 7, 8, 9, 10 };
	assert_int_equal(stats_mwu(&r, x, 5, y, 5), 0);
	assert_float_equal(r.u, 0, 1e-12);
	assert_float_equal(r.p, 2.0 / 252, 1e-12);    /* 0.0079 */

	double a4[] = { 1, 2, 3, 4 }, b4[] = { 5, 6, 7, 8 };
	assert_int_equal(stats_mwu(&r, a4, 4, b4, 4), 0);
	assert_float_equal(r.p, 2.0 / 70, 1e-12);     /* 0.0286 */
}

/* Mann & Whitney 1947, Table I, n = m = 5: P(U <= 2) = 0.016 (4/252);
 * two-sided 8/252. And P(U <= 4) = 0.048 (12/252). */
static void test_mwu_exact_table(void **state)
{
	(void)state;
	struct mwu_result r;
	double x[] = { 1, 2, 3, 4, 7 }, y[] = { 5, 6, 8, 9, 10 };

	assert_int_equal(stats_mwu(&r, x, 5, y, 5), 0);
	assert_float_equal(r.u, 2, 1e-12);
	assert_float_equal(r.p, 8.0 / 252, 1e-12);
	/* U = 4: x = {1,2,3,6,7} against {4,5,8,9,10}: 6>4,6>5,7>4,7>5 */
	double x4[] = { 1, 2, 3, 6, 7 }, y4[] = { 4, 5, 8, 9, 10 };
	assert_int_equal(stats_mwu(&r, x4, 5, y4, 5), 0);
	assert_float_equal(r.u, 4, 1e-12);
	assert_float_equal(r.p, 24.0 / 252, 1e-12);
	/* symmetric in the order of the samples */
	struct mwu_result r2;
	assert_int_equal(stats_mwu(&r2, y4, 5, x4, 5), 0);
	assert_float_equal(r2.p, r.p, 1e-12);
	assert_float_equal(r2.u, 25 - 4, 1e-12);
}

/* Ties: identical samples cannot differ (p = 1); by hand, {1,1} vs {1,2}:
 * doubled ranks 4,4,4,8 (ranks 2,2,2,4); the 6 splits give x-sums
 * {8,8,12,8,12,12}; E = 10, observed 8: all |dev| >= 2, p = 1. */
static void test_mwu_ties(void **state)
{
	(void)state;
	struct mwu_result r;
	double a[] = { 3, 3, 3 }, b[] = { 3, 3, 3 };

	assert_int_equal(stats_mwu(&r, a, 3, b, 3), 0);
	assert_float_equal(r.p, 1, 1e-12);
	double x[] = { 1, 1 }, y[] = { 1, 2 };
	assert_int_equal(stats_mwu(&r, x, 2, y, 2), 0);
	assert_float_equal(r.u, 1.0, 1e-12);   /* two ties, 1/2 each */
	assert_float_equal(r.p, 1, 1e-12);
	/* {1,2,2} vs {2,3,3}: doubled ranks 2 | 6 6 6 | 11 11; x sum 14, E 21.
	 * Subsets of size 3 with |s - 21| >= 7: {2,6,6} x3 (=14) and
	 * {6,11,11} x3 (=28), {2,...}: 2+6+11=19 no; so 6 of 20: p = 0.3.
	 * (scipy 1.10's method='exact' says 0.2 here: it ignores ties, as its
	 * documentation states; the permutation distribution gives 0.3.) */
	double x2[] = { 1, 2, 2 }, y2[] = { 2, 3, 3 };
	assert_int_equal(stats_mwu(&r, x2, 3, y2, 3), 0);
	assert_float_equal(r.p, 6.0 / 20, 1e-12);
	assert_int_equal(stats_mwu(&r, x2, 0, y2, 3), -EINVAL);
}

/* Above 20 per side the normal approximation (tie- and continuity-
 * corrected) is used. Reference values were computed with SciPy 1.10.1,
 * scipy.stats.mannwhitneyu(x, y, method='asymptotic') (and 'exact' for the
 * 20-against-20 case without ties), and by hand for the separated case. */
static void test_mwu_normal(void **state)
{
	(void)state;
	double x[21], y[21];
	struct mwu_result r;

	for (int i = 0; i < 21; i++) {
		x[i] = i;
		y[i] = i + 3.5;
	}
	assert_int_equal(stats_mwu(&r, x, 21, y, 21), 0);
	assert_int_equal(r.method, MWU_NORMAL);
	assert_float_equal(r.u, 153, 1e-12);
	assert_float_equal(r.p, 0.09190475432879934, 1e-9);
	assert_int_equal(stats_mwu(&r, x, 20, y, 20), 0);
	assert_int_equal(r.method, MWU_EXACT);
	assert_float_equal(r.p, 0.0859140199856938, 1e-12);

	/* with ties, 23 against 25 */
	double tx[] = { 1, 1, 2, 3, 3, 3, 4, 5, 5, 6, 7, 8, 8, 9, 9, 9, 10, 11, 12, 12, 13, 14, 15 };
	double ty[] = { 3, 4, 5, 5, 6, 7, 7, 8, 9, 10, 10, 11, 12, 13, 13, 14, 15, 15, 16, 17,
			18, 19, 20, 21, 22 };
	assert_int_equal(stats_mwu(&r, tx, N(tx), ty, N(ty)), 0);
	assert_float_equal(r.u, 153, 1e-12);
	assert_float_equal(r.p, 0.005607804582124697, 1e-9);

	/* by hand for n = m = 21, separation: U = 0, mu = 220.5,
	 * sigma^2 = 21*21*43/12 = 1580.25, z = 220/39.7524 = 5.5343,
	 * p = erfc(5.5343/sqrt 2) = 3.12e-8 */
	for (int i = 0; i < 21; i++)
		y[i] = 100 + i;
	assert_int_equal(stats_mwu(&r, x, 21, y, 21), 0);
	assert_float_equal(r.p, 3.12e-8, 0.02e-8);
}

static void test_min_p_and_runs_needed(void **state)
{
	(void)state;
	assert_float_equal(stats_mwu_min_p(3, 3), 0.1, 1e-12);
	assert_float_equal(stats_mwu_min_p(4, 4), 2.0 / 70, 1e-12);
	assert_float_equal(stats_mwu_min_p(3, 4), 2.0 / 35, 1e-12);
	assert_int_equal(stats_runs_needed(0.05), 4);
	assert_int_equal(stats_runs_needed(0.01), 5);   /* 2/252 = 0.0079 */
}

/* The exact bootstrap distribution of the Hodges-Lehmann shift of two
 * samples of 3: each of the 27 x 27 equally likely resamples (with
 * replacement) enumerated, its shift by stats_hodges_lehmann. Returns the
 * fraction of resamples whose shift is below v (strict) or at most v. */
static double exact_boot_cdf(const double x[3], const double y[3], double v, bool strict)
{
	int below = 0;

	for (int a = 0; a < 27; a++)
		for (int b = 0; b < 27; b++) {
			double bx[3] = { x[a % 3], x[a / 3 % 3], x[a / 9] };
			double by[3] = { y[b % 3], y[b / 3 % 3], y[b / 9] };
			double sh = stats_hodges_lehmann(bx, 3, by, 3);
			below += strict ? sh < v - 1e-9 : sh <= v + 1e-9;
		}
	return below / 729.0;
}

/* q's point of the exact distribution, from 2000 drawn resamples, is v:
 * at most q of it (plus 4 sd of a proportion from 2000 draws, at least 1
 * point) lies strictly below v, at least q (minus as much) at or below. */
static void assert_at_quantile(const double x[3], const double y[3], double q, double v)
{
	double tol = fmax(4 * sqrt(q * (1 - q) / 2000), 0.01);
	double below = exact_boot_cdf(x, y, v, true), upto = exact_boot_cdf(x, y, v, false);

	if (below > q + tol || upto < q - tol)
		fprintf(stderr, "bootstrap %g point %g: exact cdf below %.4f, at %.4f (tolerance %.4f)\n",
			q, v, below, upto, tol);
	assert_true(below <= q + tol);
	assert_true(upto >= q - tol);
}

/* stats_hl_bootstrap_ci's ends for alpha 0.05, 0.2, 0.5 and 0.9 (so its
 * 2.5, 5, 10, 25, 45, 55, 75, 90, 95 and 97.5% points) sit where the exact
 * distribution puts them. A resampler that does not resample, draws one
 * side only or never draws some index puts some of them elsewhere. */
static void assert_bootstrap_ends(const double x[3], const double y[3], uint64_t seed)
{
	const double alphas[] = { 0.05, 0.1, 0.2, 0.5, 0.9 };
	double lo, hi;

	for (size_t i = 0; i < sizeof(alphas) / sizeof(alphas[0]); i++) {
		stats_hl_bootstrap_ci(&lo, &hi, x, 3, y, 3, 2000, alphas[i], seed);
		assert_at_quantile(x, y, alphas[i] / 2, lo);
		assert_at_quantile(x, y, 1 - alphas[i] / 2, hi);
	}
}

static void test_hodges_lehmann(void **state)
{
	(void)state;
	double base[] = { 85.3, 46.9, 52.1 }, patched[] = { 1.0, 1.2, 1.2 };
	/* the nine differences patched - base, sorted:
	 * -84.3 -84.1 -84.1 -51.1 -50.9 -50.9 -45.9 -45.7 -45.7; median -50.9 */
	assert_float_equal(stats_hodges_lehmann(base, 3, patched, 3), -50.9, 1e-9);
	double x[] = { 1, 2, 3 }, y[] = { 11, 12, 13 };
	assert_float_equal(stats_hodges_lehmann(x, 3, y, 3), 10, 1e-12);

	double lo, hi, lo2, hi2;
	stats_hl_bootstrap_ci(&lo, &hi, base, 3, patched, 3, 2000, 0.05, STATS_SEED);
	stats_hl_bootstrap_ci(&lo2, &hi2, base, 3, patched, 3, 2000, 0.05, STATS_SEED);
	/* reproducible with the fixed seed */
	assert_float_equal(lo, lo2, 0);
	assert_float_equal(hi, hi2, 0);
	/* the ends are the exact bootstrap distribution's quantiles (all 27 x
	 * 27 resamples, enumerated), with the reports' seed and another */
	assert_bootstrap_ends(base, patched, STATS_SEED);
	assert_bootstrap_ends(base, patched, 7);
	assert_bootstrap_ends(x, y, 1);
}

/* The O(n) median agrees with sorting for odd and even counts, ties and
 * negative values; the bootstrap budget caps big samples. */
static void test_hl_select_and_budget(void **state)
{
	(void)state;
	double x[] = { 3, -1, 4, 1, -5, 9, 2, 6 }, y[] = { 5, 3, 5, -8, 9, 7 };
	/* 48 differences y - x; median by hand: sorted, the 24th and 25th are
	 * 1 and 1 (computed with a sort below) */
	double d[48];
	size_t k = 0;
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 6; j++)
			d[k++] = y[j] - x[i];
	assert_float_equal(stats_hodges_lehmann(x, 8, y, 6), stats_median(d, 48), 1e-12);
	assert_float_equal(stats_hodges_lehmann(x, 7, y, 6), stats_median(d, 42), 1e-12);
	double same[] = { 2, 2, 2, 2 };
	assert_float_equal(stats_hodges_lehmann(same, 4, same, 3), 0, 0);
	assert_int_equal(stats_bootstrap_resamples(2000, 3, 3), 2000);
	assert_int_equal(stats_bootstrap_resamples(2000, 250, 250), 320);
	assert_int_equal(stats_bootstrap_resamples(2000, 1000, 1000), 200);
}

static void test_rng(void **state)
{
	(void)state;
	/* splitmix64 reference output for seed 0 (Vigna's splitmix64.c):
	 * first value 0xe220a8397b1dcdaf */
	uint64_t s = 0;
	assert_true(stats_rand64(&s) == 0xe220a8397b1dcdafULL);
	double u = stats_rand01(&s);
	assert_true(u >= 0 && u < 1);
}

/* The interaction test against its exact permutation distribution: the
 * same residuals, every one of the 12!/(3!^4) = 369,600 assignments to the
 * four cells enumerated in Python (itertools.combinations): 800 have
 * |T*| >= |T| = 8.5, p = 0.002165. 20,000 random permutations land within
 * about 3 standard errors (0.00033) of it. */
static void test_interaction_perm(void **state)
{
	(void)state;
	static const double a0b0[] = { 10, 12, 11 }, a1b0[] = { 1, 2, 1.5 },
			    a0b1[] = { 3, 4, 3.5 }, a1b1[] = { 2, 3, 2.5 };
	const double *const x[4] = { a0b0, a1b0, a0b1, a1b1 };
	const size_t n[4] = { 3, 3, 3, 3 };
	double p, t;

	assert_int_equal(stats_interaction_perm(&p, &t, x, n, 20000, STATS_SEED), 0);
	assert_true(fabs(t - 8.5) < 1e-9);
	assert_true(fabs(p - 0.002165) < 0.0011);
	/* no interaction: parallel effects give a large p */
	static const double c1[] = { 1, 2, 3 }, c2[] = { 11, 12, 13 }, c3[] = { 2, 3, 4 },
			    c4[] = { 12, 13, 14 };
	const double *const y[4] = { c1, c2, c3, c4 };
	assert_int_equal(stats_interaction_perm(&p, &t, y, n, 2000, STATS_SEED), 0);
	assert_true(fabs(t) < 1e-9);
	assert_true(p > 0.5);
	const size_t empty[4] = { 3, 0, 3, 3 };
	assert_int_equal(stats_interaction_perm(&p, &t, x, empty, 100, STATS_SEED), -EINVAL);
}

/* Brute force for the van Elteren tests, independent of stats.c: every
 * within-stratum split of the pooled values (bit masks), mid-ranks from
 * counting, w summed in doubles. */
struct bstrat {
	double v[16];   /* x's values first, then y's */
	size_t n, m;
};

static double brute_rank(const struct bstrat *b, size_t i)
{
	double less = 0, eq = 0;
	for (size_t j = 0; j < b->n + b->m; j++) {
		less += b->v[j] < b->v[i];
		eq += b->v[j] == b->v[i];
	}
	return less + (eq + 1) / 2;
}

static void brute_walk(const struct bstrat *b, size_t k, size_t h, double w, double e,
		       double dev, double *hit, double *all)
{
	if (h == k) {
		*all += 1;
		*hit += fabs(w - e) >= dev - 1e-9;
		return;
	}
	size_t N = b[h].n + b[h].m;
	for (unsigned mask = 0; mask < 1u << N; mask++) {
		if ((size_t)__builtin_popcount(mask) != b[h].n)
			continue;
		double ws = 0;
		for (size_t i = 0; i < N; i++)
			if (mask & 1u << i)
				ws += brute_rank(&b[h], i);
		brute_walk(b, k, h + 1, w + ws / (double)(N + 1), e, dev, hit, all);
	}
}

static double brute_ve(const struct bstrat *b, size_t k)
{
	double w = 0, e = 0, hit = 0, all = 0;
	for (size_t h = 0; h < k; h++) {
		double ws = 0;
		for (size_t i = 0; i < b[h].n; i++)
			ws += brute_rank(&b[h], i);
		w += ws / (double)(b[h].n + b[h].m + 1);
		e += (double)b[h].n / 2;
	}
	brute_walk(b, k, 0, 0, e, fabs(w - e), &hit, &all);
	return hit / all;
}

/* Flatten strata into stats_van_elteren()'s arrays and run it. */
static int run_ve(struct ve_result *r, const struct bstrat *b, size_t k)
{
	double x[64], y[64];
	size_t sx[64], sy[64], nx = 0, ny = 0;
	for (size_t h = 0; h < k; h++) {
		for (size_t i = 0; i < b[h].n; i++) {
			x[nx] = b[h].v[i];
			sx[nx++] = h;
		}
		for (size_t j = 0; j < b[h].m; j++) {
			y[ny] = b[h].v[b[h].n + j];
			sy[ny++] = h;
		}
	}
	return stats_van_elteren(r, x, sx, nx, y, sy, ny, k);
}

/* By hand: two hosts, 2 against 2 on each, x lowest on both. Each host's
 * rank sum of x is 3, 4, 5, 5, 6 or 7 (1/6 each), w = (s1 + s2) / 5, E =
 * 2; only (3, 3) and (7, 7) are as far from E: p = 2/36. */
static void test_van_elteren_hand(void **state)
{
	(void)state;
	const struct bstrat b[] = { { { 1, 2, 3, 4 }, 2, 2 }, { { 10, 20, 30, 40 }, 2, 2 } };
	struct ve_result r;

	assert_int_equal(run_ve(&r, b, 2), 0);
	assert_int_equal(r.method, MWU_EXACT);
	assert_int_equal(r.nstrata, 2);
	assert_float_equal(r.w, 6.0 / 5, 1e-12);
	assert_float_equal(r.expected, 2, 1e-12);
	assert_float_equal(r.p, 2.0 / 36, 1e-12);
	/* a host effect hiding a variant effect: the patched runs are lower
	 * on each host, but kvm1 is ten times slower than local. Within each
	 * host 4 against 4 separate completely (1/70 each way), so p = 2 *
	 * (1/70)^2; pooled, the plain test sees little. */
	const struct bstrat h[] = { { { 101, 102, 103, 104, 97, 98, 99, 100 }, 4, 4 },
				    { { 11, 12, 13, 14, 7, 8, 9, 10 }, 4, 4 } };
	assert_int_equal(run_ve(&r, h, 2), 0);
	assert_float_equal(r.p, 2.0 / 4900, 1e-12);
	double px[] = { 101, 102, 103, 104, 11, 12, 13, 14 }, py[] = { 97, 98, 99, 100, 7, 8, 9, 10 };
	struct mwu_result m;
	assert_int_equal(stats_mwu(&m, px, 8, py, 8), 0);
	assert_true(m.p > 0.1);
}

/* Ties within and across sides, unbalanced hosts, a third host with
 * another N (so another weight): the exact p against brute force. */
static void test_van_elteren_brute(void **state)
{
	(void)state;
	const struct bstrat b[] = {
		{ { 3, 5, 5, 8, 5, 9, 10, 12 }, 4, 4 },   /* kvm1: 4 + 4, a tie of three */
		{ { 1, 2, 2, 4, 6 }, 2, 3 },              /* local: 2 + 3, a tie across sides */
		{ { 7, 7, 7, 7, 9, 1 }, 3, 3 },           /* kvm2: 3 + 3, four tied */
	};
	struct ve_result r;

	for (size_t k = 1; k <= 3; k++) {
		assert_int_equal(run_ve(&r, b, k), 0);
		assert_int_equal(r.method, MWU_EXACT);
		assert_int_equal(r.nstrata, k);
		assert_float_equal(r.p, brute_ve(b, k), 1e-12);
	}
	/* one host: the plain exact Mann-Whitney p */
	struct mwu_result m;
	assert_int_equal(stats_mwu(&m, b[0].v, 4, b[0].v + 4, 4), 0);
	assert_int_equal(run_ve(&r, b, 1), 0);
	assert_float_equal(r.p, m.p, 1e-12);
	/* a host with runs on one side only carries nothing */
	const struct bstrat c[] = { b[0], { { 50, 60, 70 }, 3, 0 }, b[1] };
	struct ve_result r2;
	assert_int_equal(run_ve(&r2, c, 3), 0);
	assert_int_equal(r2.nstrata, 2);
	assert_int_equal(run_ve(&r, b, 2), 0);
	assert_float_equal(r2.p, r.p, 1e-12);
	/* nothing on both sides, or a stratum out of range */
	const struct bstrat d[] = { { { 1, 2 }, 2, 0 }, { { 3, 4 }, 0, 2 } };
	assert_int_equal(run_ve(&r, d, 2), -EINVAL);
	double x[] = { 1 }, y[] = { 2 };
	size_t s0[] = { 0 }, s5[] = { 5 };
	assert_int_equal(stats_van_elteren(&r, x, s0, 1, y, s5, 1, 2), -EINVAL);
}

/* Above 20 runs on a host: the normal approximation, by hand. Host A: 11
 * against 11, x = 1..11 below y = 12..22: W = 66, E[W] = 11 * 23 / 2 =
 * 126.5, Var W = 11 * 11 * 23 / 12. Host B: 11 against 11 on two values,
 * x six 1s and five 2s, y five 1s and six 2s: mid-ranks 6 and 17, W = 36
 * + 85 = 121, ties 2 * (11^3 - 11) = 2640, Var W = 121 / 12 * (23 - 2640 /
 * (22 * 21)). w = W_A / 23 + W_B / 23, so the deviation is (66 + 121 -
 * 253) / 23 and the variance (Var W_A + Var W_B) / 23^2. */
static void test_van_elteren_normal(void **state)
{
	(void)state;
	struct ve_result r;
	double x[22], y[22];
	size_t sx[22], sy[22];
	for (size_t i = 0; i < 11; i++) {
		x[i] = (double)i + 1;
		y[i] = (double)i + 12;
		x[11 + i] = i < 6 ? 1 : 2;
		y[11 + i] = i < 5 ? 1 : 2;
		sx[i] = sy[i] = 0;
		sx[11 + i] = sy[11 + i] = 1;
	}
	assert_int_equal(stats_van_elteren(&r, x, sx, 22, y, sy, 22, 2), 0);
	assert_int_equal(r.method, MWU_NORMAL);
	double dev = (66.0 + 121 - 253) / 23;
	double var = (121.0 * 23 / 12 + 121.0 / 12 * (23 - 2640.0 / (22 * 21))) / (23.0 * 23);
	assert_float_equal(r.w, (66.0 + 121) / 23, 1e-12);
	assert_float_equal(r.expected, 11, 1e-12);
	assert_float_equal(r.p, erfc(fabs(dev) / sqrt(var) / sqrt(2)), 1e-12);
	assert_true(r.p > 1e-4 && r.p < 0.01);   /* z = 3.27 */
}

/* bisect.c's endpoint_evalue() as it was before it moved to stats.c
 * (commit b99d813), the reference the shared one must equal exactly. */
static double old_tf(double x)
{
	return x < 0 ? -log1p(-x) : log1p(x);
}

static double old_endpoint_evalue(const double *x, size_t n, const double *y, size_t m)
{
	double mx = 0, my = 0, ss = 0, nu = (double)(n + m) - 2;
	double nd = (double)n * (double)m / (double)(n + m), t2;

	if (n < 2 || m < 2)
		return 1;
	for (size_t i = 0; i < n; i++)
		mx += old_tf(x[i]) / (double)n;
	for (size_t i = 0; i < m; i++)
		my += old_tf(y[i]) / (double)m;
	for (size_t i = 0; i < n; i++)
		ss += (old_tf(x[i]) - mx) * (old_tf(x[i]) - mx);
	for (size_t i = 0; i < m; i++)
		ss += (old_tf(y[i]) - my) * (old_tf(y[i]) - my);
	if (ss <= 0)
		return mx == my ? 1 : pow(1 + nd * 50.0, nu / 2);
	t2 = (my - mx) * (my - mx) / (ss / nu * (1 / (double)n + 1 / (double)m));
	return pow(1 + nd * 50.0, -0.5) *
	       pow((1 + t2 / nu) / (1 + t2 / (nu * (1 + nd * 50.0))), (nu + 1) / 2);
}

static void test_seq_evalue_is_bisects(void **state)
{
	(void)state;
	/* the seed's good and bad endpoints, a flaky bad, A/A, constants */
	double good[] = { 1.0, 2.2, 1.1, 1.0, 1.0, 1.3 };
	double bad[] = { 12.9, 85.3, 46.9, 52.1, 15, 28 };
	double flaky[] = { 19, 26, 1.2, 22, 24, 1.4 };
	double good2[] = { 1.2, 1.1, 2.0, 1.0, 1.4, 1.05 };
	double c1[] = { 0, 0, 0 }, c2[] = { 3, 3, 3 };
	const double *sides[] = { good, bad, flaky, good2 };

	for (size_t a = 0; a < 4; a++)
		for (size_t b = 0; b < 4; b++)
			for (size_t n = 0; n <= 6; n++)
				for (size_t m = 0; m <= 6; m++)
					assert_true(stats_seq_evalue(sides[a], n, sides[b], m, 0,
								     STATS_SEQ_G) ==
						    old_endpoint_evalue(sides[a], n, sides[b], m));
	assert_true(stats_seq_evalue(c1, 3, c2, 3, 0, STATS_SEQ_G) == old_endpoint_evalue(c1, 3, c2, 3));
	assert_true(stats_seq_evalue(c1, 3, c1, 3, 0, STATS_SEQ_G) == 1);
	/* known values: the ceiling (1 + nd g)^(nu/2) is 5776 at 3 a side, 51 at 2 */
	assert_float_equal(stats_seq_evalue_max(3, 3, STATS_SEQ_G), 5776, 1e-9);
	assert_float_equal(stats_seq_evalue_max(2, 2, STATS_SEQ_G), 51, 1e-9);
	assert_float_equal(stats_seq_evalue_max(1, 5, STATS_SEQ_G), 1, 0);
	/* x = {0, 2}, y = {4, 6} on the t scale: T^2 = 8, nu = 2, nd = 1:
	 * 51^-1/2 (5 / (1 + 4/51))^(3/2), about 1.4000 */
	double tx[] = { stats_seq_tf_inv(0), stats_seq_tf_inv(2) };
	double ty[] = { stats_seq_tf_inv(4), stats_seq_tf_inv(6) };
	assert_float_equal(stats_seq_evalue(tx, 2, ty, 2, 0, 50),
			   pow(51, -0.5) * pow(5 / (1 + 4.0 / 51), 1.5), 1e-9);
	/* a shift of 4 makes them equal in mean: no evidence beyond the prior's */
	assert_float_equal(stats_seq_evalue(tx, 2, ty, 2, 4, 50), pow(51, -0.5), 1e-9);
	assert_float_equal(stats_seq_tf_inv(stats_seq_tf(-7.5)), -7.5, 1e-12);
}

/* The confidence sequence is the set the e-value does not reject: at its
 * ends the e-value is 1/alpha, inside below, outside above. */
static void test_seq_cs_inverts_evalue(void **state)
{
	(void)state;
	double x[] = { 1.0, 1.3, 1.1, 1.6, 1.2, 1.4, 1.05, 1.5 };
	double y[] = { 1.4, 1.9, 1.5, 2.2, 1.7, 1.6, 1.8, 2.0 };
	double lo, hi;

	stats_seq_cs(&lo, &hi, x, 8, y, 8, STATS_SEQ_G, 0.05);
	assert_true(lo < hi);
	assert_float_equal(stats_seq_evalue(x, 8, y, 8, lo, STATS_SEQ_G), 20, 1e-6);
	assert_float_equal(stats_seq_evalue(x, 8, y, 8, hi, STATS_SEQ_G), 20, 1e-6);
	assert_true(stats_seq_evalue(x, 8, y, 8, (lo + hi) / 2, STATS_SEQ_G) < 20);
	assert_true(stats_seq_evalue(x, 8, y, 8, hi + 0.01, STATS_SEQ_G) > 20);
	/* 2 a side: the ceiling 51 >= 20, so the interval is finite; with
	 * g = 10 the ceiling 11 < 20 and no shift can be excluded */
	stats_seq_cs(&lo, &hi, x, 2, y, 2, STATS_SEQ_G, 0.05);
	assert_true(isfinite(lo) && isfinite(hi));
	stats_seq_cs(&lo, &hi, x, 2, y, 2, 10, 0.05);
	assert_true(isinf(lo) && lo < 0 && isinf(hi) && hi > 0);
	stats_seq_cs(&lo, &hi, x, 1, y, 8, STATS_SEQ_G, 0.05);
	assert_true(isinf(lo) && isinf(hi));
}

/* Decisions: identical samples never show a difference; tight equal ones
 * are equivalent within 5%; the seed's good against bad is a difference. */
static void test_seq_decide(void **state)
{
	(void)state;
	struct stats_seq_look l;
	double good[] = { 1.0, 2.2, 1.1, 1.0, 1.0, 1.3, 1.2, 1.6, 1.1, 1.4 };
	double bad[] = { 12.9, 85.3, 46.9, 52.1, 15, 28, 16, 29, 19, 24 };
	double tight_a[] = { 100.0, 100.2, 99.9, 100.1, 99.8, 100.0, 100.3, 99.7 };
	double tight_b[] = { 100.1, 99.9, 100.0, 100.2, 99.8, 100.1, 99.9, 100.0 };

	for (size_t n = 0; n <= 10; n++) {
		stats_seq_decide(&l, good, n, good, n, STATS_SEQ_G, 0.05, 0.05);
		assert_int_not_equal(l.decision, STATS_SEQ_DIFFERENT);
		/* identical: T = 0, BF = (1 + nd g)^-1/2; 1 below 2 a side */
		assert_true(n < 2 ? l.evalue == 1 : l.evalue < 1);
		stats_seq_decide(&l, bad, n, bad, n, STATS_SEQ_G, 0.05, 0.05);
		assert_int_not_equal(l.decision, STATS_SEQ_DIFFERENT);
	}
	stats_seq_decide(&l, tight_a, 8, tight_b, 8, STATS_SEQ_G, 0.05, 0.05);
	assert_int_equal(l.decision, STATS_SEQ_EQUIVALENT);
	assert_true(l.lo_pct > -5 && l.hi_pct < 5 && l.lo_pct < 0 && l.hi_pct > 0);
	assert_float_equal(l.threshold, 20, 0);
	/* but not within 0.01% */
	stats_seq_decide(&l, tight_a, 8, tight_b, 8, STATS_SEQ_G, 0.05, 0.0001);
	assert_int_equal(l.decision, STATS_SEQ_UNDECIDED);
	/* the seed's endpoints: 3 a side is not yet enough (T^2 = 25, e = 13),
	 * 4 is */
	stats_seq_decide(&l, good, 3, bad, 3, STATS_SEQ_G, 0.05, 0.05);
	assert_int_equal(l.decision, STATS_SEQ_UNDECIDED);
	assert_true(l.evalue > 10 && l.evalue < 20);
	stats_seq_decide(&l, good, 4, bad, 4, STATS_SEQ_G, 0.05, 0.05);
	assert_int_equal(l.decision, STATS_SEQ_DIFFERENT);
	assert_true(l.evalue >= 20);
	assert_true(l.lo_pct > 100);   /* the bad side's median is many times the good's */
	/* one run a side says nothing */
	stats_seq_decide(&l, good, 1, bad, 1, STATS_SEQ_G, 0.05, 0.05);
	assert_int_equal(l.decision, STATS_SEQ_UNDECIDED);
	assert_float_equal(l.evalue, 1, 0);
	/* equal constant sides: the CS is {0}, equivalent at any margin */
	double z[] = { 0, 0, 0 };
	stats_seq_decide(&l, z, 3, z, 3, STATS_SEQ_G, 0.05, 0.05);
	assert_int_equal(l.decision, STATS_SEQ_EQUIVALENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_k_of_n),
		cmocka_unit_test(test_mwu_exact_separation),
		cmocka_unit_test(test_mwu_exact_table),
		cmocka_unit_test(test_mwu_ties),
		cmocka_unit_test(test_mwu_normal),
		cmocka_unit_test(test_min_p_and_runs_needed),
		cmocka_unit_test(test_hodges_lehmann),
		cmocka_unit_test(test_hl_select_and_budget),
		cmocka_unit_test(test_rng),
		cmocka_unit_test(test_interaction_perm),
		cmocka_unit_test(test_van_elteren_hand),
		cmocka_unit_test(test_van_elteren_brute),
		cmocka_unit_test(test_van_elteren_normal),
		cmocka_unit_test(test_seq_evalue_is_bisects),
		cmocka_unit_test(test_seq_cs_inverts_evalue),
		cmocka_unit_test(test_seq_decide),
	};
	return cmocka_run_group_tests_name("stats", tests, NULL, NULL);
}
