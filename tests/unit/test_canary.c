/* test_canary.c - the canary judge: regressions in location, spread and
 * shape fail; A/A passes; NODATA rules, critical metrics, weights and the
 * score thresholds; the spread test's exact and resampled p-values. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "judge/canary.h"
#include "judge/canary_sim.h"
#include "judge/stats.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* n values of the seed's good-kernel worst lag (canary_sim.h), from seed. */
static void good_runs(double *v, size_t n, uint64_t seed)
{
	uint64_t st = seed;
	for (size_t i = 0; i < n; i++) {
		double u = stats_rand01(&st), w = stats_rand01(&st);
		v[i] = u < 0.85 ? 1.0 + 0.6 * w : 1.6 + 0.8 * w;
	}
}

static struct canary_metric_input metric(const char *name, const double *c, size_t nc,
					 const double *k, size_t nk)
{
	struct canary_metric_input in = {
		.control = c, .ncontrol = nc, .canary = k, .ncanary = nk,
	};
	canary_metric_config_default(&in.cfg, name);
	return in;
}

static void judge1(struct canary_verdict *v, const struct canary_metric_input *in)
{
	struct canary_opts o;
	canary_opts_default(&o);
	assert_int_equal(canary_judge(v, in, 1, &o), 0);
	assert_int_equal(v->n, 1);
}

/* A regression that moves the median: +50% worst lag on every host. */
static void test_median_shift_fails(void **state)
{
	(void)state;
	double c[12], k[12];
	struct canary_verdict v;

	good_runs(c, N(c), 11);
	good_runs(k, N(k), 12);
	for (size_t i = 0; i < N(k); i++)
		k[i] *= 1.5;
	struct canary_metric_input in = metric("worst_lag_s", c, N(c), k, N(k));
	judge1(&v, &in);
	const struct canary_metric_result *m = &v.metrics[0];
	assert_int_equal(m->cls, CANARY_CLASS_HIGH);
	assert_true(m->p_location < 0.02);
	assert_true(m->effect > 0.3 && m->effect < 0.8);
	assert_int_equal(m->n_control, 12);
	assert_int_equal(m->n_canary, 12);
	assert_true(m->shift_lo > 0 && m->shift_hi >= m->shift_lo);
	assert_int_equal(v.result, CANARY_RESULT_FAIL);
	assert_float_equal(v.score, 0, 1e-12);
	assert_non_null(strstr(m->reason, "canary higher"));
	canary_verdict_release(&v);
}

/* Doubled spread at the same median: 20 evenly spaced values on 9.5..10.5
 * against 20 on 9..11. A location test sees nothing. */
static void test_doubled_spread_fails(void **state)
{
	(void)state;
	double c[20], k[20];
	struct canary_verdict v;

	for (size_t i = 0; i < 20; i++) {
		c[i] = 9.5 + (double)i / 19;
		k[i] = 9.0 + 2 * (double)i / 19;
	}
	struct canary_metric_input in = metric("worst_lag_s", c, 20, k, 20);
	judge1(&v, &in);
	const struct canary_metric_result *m = &v.metrics[0];
	assert_float_equal(m->median_control, m->median_canary, 1e-12);
	assert_true(m->p_location > 0.5);
	assert_true(m->spread_tested && m->spread_log);
	assert_true(m->spread_ratio > 1.9 && m->spread_ratio < 2.1);
	assert_true(m->p_spread < 0.02);
	assert_int_equal(m->cls, CANARY_CLASS_SPREAD);
	assert_int_equal(v.result, CANARY_RESULT_FAIL);
	canary_verdict_release(&v);

	/* without the dispersion check it would pass, as in Kayenta */
	in.cfg.spread_check = false;
	judge1(&v, &in);
	assert_int_equal(v.metrics[0].cls, CANARY_CLASS_PASS);
	assert_int_equal(v.result, CANARY_RESULT_PASS);
	canary_verdict_release(&v);
}

/* A bimodal canary at the same median: half its hosts 2 s faster, half 2 s
 * slower than a control tight around 10 s. */
static void test_bimodal_fails(void **state)
{
	(void)state;
	double c[20], k[20];
	struct canary_verdict v;

	for (size_t i = 0; i < 20; i++) {
		c[i] = 9.8 + 0.4 * (double)i / 19;
		k[i] = (i < 10 ? 8.0 : 11.6) + 0.4 * (double)(i % 10) / 9;
	}
	struct canary_metric_input in = metric("worst_lag_s", c, 20, k, 20);
	judge1(&v, &in);
	const struct canary_metric_result *m = &v.metrics[0];
	assert_true(fabs(m->median_canary - m->median_control) < 0.1);
	assert_true(m->p_location >= 0.02);
	assert_int_equal(m->cls, CANARY_CLASS_SPREAD);
	assert_int_equal(v.result, CANARY_RESULT_FAIL);
	assert_non_null(strstr(m->reason, "spread"));
	canary_verdict_release(&v);
}

/* spinnaker/spinnaker#6278: 7 of 10 canary values at 100 against ten 1s,
 * which Kayenta's MannWhitneyClassifier passes. */
static void test_kayenta_6278_fails(void **state)
{
	(void)state;
	double c[10], k[10];
	struct canary_verdict v;

	for (size_t i = 0; i < 10; i++) {
		c[i] = 1;
		k[i] = i < 7 ? 100 : 1;
	}
	struct canary_metric_input in = metric("errors", c, 10, k, 10);
	judge1(&v, &in);
	assert_int_equal(v.metrics[0].cls, CANARY_CLASS_HIGH);
	assert_true(v.metrics[0].p_location < 0.02);
	assert_int_equal(v.result, CANARY_RESULT_FAIL);
	canary_verdict_release(&v);
}

/* spinnaker/kayenta#780 case 1, "Increase in Metric Variability": its
 * data with the widely spread series (1..106) as the canary and the tight
 * one (10..17.7) as control, same median 17; Kayenta passes it. */
static void test_kayenta_780_fails(void **state)
{
	(void)state;
	double tight[] = { 10.0, 10.1, 10.2, 10.3, 10.4, 10.5, 10.6, 17.0, 17.1, 17.2, 17.3,
			   17.4, 17.5, 17.6, 17.7 };
	double wide[] = { 1.0, 100.0, 4.0, 101.0, 5.0, 102.0, 6.0, 103.0, 7.0, 104.0, 8.0,
			  105.0, 9.0, 106.0, 17.0 };
	struct canary_verdict v;

	struct canary_metric_input in = metric("latency", tight, 15, wide, 15);
	in.cfg.direction = CANARY_DIR_EITHER;
	judge1(&v, &in);
	assert_float_equal(v.metrics[0].median_control, 17, 1e-12);
	assert_float_equal(v.metrics[0].median_canary, 17, 1e-12);
	assert_int_equal(v.metrics[0].cls, CANARY_CLASS_SPREAD);
	assert_true(v.metrics[0].spread_ratio > 5);
	assert_int_equal(v.result, CANARY_RESULT_FAIL);
	canary_verdict_release(&v);
}

/* A/A: identical data passes; random splits of one kernel's runs pass in
 * >= 95% of 200 trials (the goal), at 10 and 20 runs a cohort. */
static void test_aa_passes(void **state)
{
	(void)state;
	double c[10];
	struct canary_verdict v;

	good_runs(c, N(c), 5);
	struct canary_metric_input in = metric("worst_lag_s", c, N(c), c, N(c));
	judge1(&v, &in);
	assert_int_equal(v.metrics[0].cls, CANARY_CLASS_PASS);
	assert_float_equal(v.metrics[0].p_location, 1, 1e-12);
	assert_int_equal(v.result, CANARY_RESULT_PASS);
	assert_float_equal(v.score, 100, 1e-12);
	canary_verdict_release(&v);

	struct canary_sim_opts so;
	struct canary_sim_stats st;
	canary_sim_opts_default(&so);
	so.judge.permutations = 499;
	for (size_t runs = 10; runs <= 20; runs += 10) {
		so.runs = runs;
		assert_int_equal(canary_sim_run(&st, CANARY_SIM_AA, &so), 0);
		assert_int_equal(st.trials, 200);
		assert_true(st.result[CANARY_RESULT_PASS] >= 190);
		/* and the same judge catches most +50% shifts */
		so.shift = 0.5;
		assert_int_equal(canary_sim_run(&st, CANARY_SIM_SHIFT, &so), 0);
		assert_true(st.result[CANARY_RESULT_FAIL] >= 150);
	}
}

/* Improvements pass; direction says which change is bad. */
static void test_direction(void **state)
{
	(void)state;
	double c[10], k[10];
	struct canary_verdict v;

	for (size_t i = 0; i < 10; i++) {
		c[i] = 100 + i;
		k[i] = 50 + i;
	}
	struct canary_metric_input in = metric("worst_lag_s", c, 10, k, 10);
	judge1(&v, &in);	/* lag halved: good */
	assert_int_equal(v.metrics[0].cls, CANARY_CLASS_PASS);
	assert_non_null(strstr(v.metrics[0].reason, "good direction"));
	canary_verdict_release(&v);
	in.cfg.direction = CANARY_DIR_DECREASE;	/* throughput halved: bad */
	judge1(&v, &in);
	assert_int_equal(v.metrics[0].cls, CANARY_CLASS_LOW);
	assert_int_equal(v.result, CANARY_RESULT_FAIL);
	canary_verdict_release(&v);
	in.cfg.direction = CANARY_DIR_EITHER;
	judge1(&v, &in);
	assert_int_equal(v.metrics[0].cls, CANARY_CLASS_LOW);
	canary_verdict_release(&v);
	/* a throughput gain with the same relative noise is no spread failure:
	 * spread is measured on log values */
	for (size_t i = 0; i < 10; i++)
		k[i] = 2 * c[i];
	in.cfg.direction = CANARY_DIR_DECREASE;
	judge1(&v, &in);
	assert_true(v.metrics[0].spread_log);
	assert_float_equal(v.metrics[0].spread_ratio, 1, 1e-9);
	assert_int_equal(v.metrics[0].cls, CANARY_CLASS_PASS);
	canary_verdict_release(&v);
}

/* The effect-size tolerance: a significant 3% shift passes at 10%, not at 1%. */
static void test_tolerance(void **state)
{
	(void)state;
	double c[10], k[10];
	struct canary_verdict v;

	for (size_t i = 0; i < 10; i++) {
		c[i] = 100 + 0.1 * (double)i;
		k[i] = 103 + 0.1 * (double)i;
	}
	struct canary_metric_input in = metric("worst_lag_s", c, 10, k, 10);
	judge1(&v, &in);
	assert_true(v.metrics[0].p_location < 0.001);
	assert_float_equal(v.metrics[0].effect, 3.0 / 100.45, 1e-9);
	assert_int_equal(v.metrics[0].cls, CANARY_CLASS_PASS);
	assert_non_null(strstr(v.metrics[0].reason, "within tolerance"));
	canary_verdict_release(&v);
	in.cfg.tolerance = 0.01;
	judge1(&v, &in);
	assert_int_equal(v.metrics[0].cls, CANARY_CLASS_HIGH);
	canary_verdict_release(&v);
	/* a control median of 0: any significant increase counts (0 misses of
	 * a dying wb against some) */
	double z[6] = { 0, 0, 0, 0, 0, 0 }, m[6] = { 3, 4, 5, 6, 7, 8 };
	struct canary_metric_input pz = metric("probe:cgroup_writeback_by_id:-2", z, 6, m, 6);
	judge1(&v, &pz);
	assert_true(isinf(v.metrics[0].effect) && v.metrics[0].effect > 0);
	assert_int_equal(v.metrics[0].cls, CANARY_CLASS_HIGH);
	canary_verdict_release(&v);
}

/* NODATA: too few values, and what each rule does to the score. */
static void test_nodata_rules(void **state)
{
	(void)state;
	double c[8], k[8], few[3] = { 1, 2, NAN }, nan8[8];
	struct canary_opts o;
	struct canary_verdict v;

	canary_opts_default(&o);
	good_runs(c, 8, 21);
	good_runs(k, 8, 22);
	for (size_t i = 0; i < 8; i++)
		nan8[i] = i < 4 ? 1.0 : NAN;	/* 4 numbers: below min_n 5 */
	struct canary_metric_input in[3] = {
		metric("a", c, 8, k, 8), metric("b", c, 8, k, 8), metric("c", few, 3, k, 8),
	};
	assert_int_equal(canary_judge(&v, in, 3, &o), 0);
	assert_int_equal(v.metrics[0].cls, CANARY_CLASS_PASS);
	const struct canary_metric_result *m = &v.metrics[2];
	assert_int_equal(m->cls, CANARY_CLASS_NODATA);
	assert_int_equal(m->n_control, 2);	/* the NAN is dropped */
	assert_int_equal(m->min_n, 5);		/* stats_runs_needed(0.02) */
	assert_false(m->counted);
	assert_non_null(strstr(m->reason, "control has 2 values, fewer than 5"));
	assert_float_equal(v.score, 100, 1e-12);	/* ignored: 2 of 2 pass */
	assert_int_equal(v.result, CANARY_RESULT_PASS);
	canary_verdict_release(&v);

	in[2].cfg.nodata = CANARY_NODATA_FAIL;	/* counts as failing: 2 of 3 */
	assert_int_equal(canary_judge(&v, in, 3, &o), 0);
	assert_true(v.metrics[2].counted && !v.metrics[2].passed);
	assert_float_equal(v.score, 200.0 / 3, 1e-9);
	assert_int_equal(v.result, CANARY_RESULT_FAIL);
	canary_verdict_release(&v);

	in[2].cfg.nodata = CANARY_NODATA_PASS;
	assert_int_equal(canary_judge(&v, in, 3, &o), 0);
	assert_true(v.metrics[2].counted && v.metrics[2].passed);
	assert_float_equal(v.score, 100, 1e-12);
	assert_int_equal(v.result, CANARY_RESULT_PASS);
	canary_verdict_release(&v);

	/* half or more of the metrics ignored as NODATA: no verdict (too few
	 * values is not evidence that the canary is bad) */
	in[1] = metric("b", c, 8, nan8, 8);
	in[2].cfg.nodata = CANARY_NODATA_IGNORE;
	assert_int_equal(canary_judge(&v, in, 3, &o), 0);
	assert_int_equal(v.metrics[1].cls, CANARY_CLASS_NODATA);
	assert_int_equal(v.metrics[1].n_canary, 4);
	assert_int_equal(v.result, CANARY_RESULT_NO_VERDICT);
	assert_string_equal(canary_result_name(v.result), "no verdict");
	assert_non_null(strstr(v.reason, "2 of 3 metrics have no data"));
	canary_verdict_release(&v);

	/* min_n can be lowered per metric (or for the judge), but not below
	 * what the test needs: 2 against 8 and 8 against 4 cannot reach
	 * p < 0.02 (2/C(10,2) = 0.044, 2/C(12,4) = 0.0040 can), so the first
	 * is underpowered, never pass, and the verdict says so */
	in[2].cfg.min_n = 2;
	in[1].cfg.min_n = 2;
	assert_int_equal(canary_judge(&v, in, 3, &o), 0);
	assert_int_equal(v.metrics[2].cls, CANARY_CLASS_NODATA);
	assert_true(v.metrics[2].underpowered);
	assert_false(v.metrics[2].passed);
	assert_float_equal(v.metrics[2].p_floor, 2.0 / 45, 1e-12);
	assert_int_equal(v.metrics[1].cls, CANARY_CLASS_PASS);
	assert_int_equal(v.result, CANARY_RESULT_NO_VERDICT);
	assert_true(v.underpowered);
	assert_non_null(strstr(v.reason, "cohorts too small for alpha 0.02: 2 against 8 runs"));
	assert_non_null(strstr(v.reason, "5 runs a side would do"));
	canary_verdict_release(&v);
	/* the nodata rule 'pass' does not make an underpowered metric pass */
	in[2].cfg.nodata = CANARY_NODATA_PASS;
	assert_int_equal(canary_judge(&v, in, 3, &o), 0);
	assert_false(v.metrics[2].passed);
	assert_int_equal(v.result, CANARY_RESULT_NO_VERDICT);
	canary_verdict_release(&v);
}

/* Ten metrics, one of them failing: marginal at score 90, unless that one
 * is critical; a critical metric without data fails as well. */
static void test_critical_fails_verdict(void **state)
{
	(void)state;
	double c[10], k[10], bad[10];
	struct canary_metric_input in[10];
	struct canary_opts o;
	struct canary_verdict v;

	canary_opts_default(&o);
	good_runs(c, 10, 31);
	good_runs(k, 10, 32);
	for (size_t i = 0; i < 10; i++)
		bad[i] = 20 + k[i];
	for (size_t i = 0; i < 9; i++)
		in[i] = metric("ok", c, 10, k, 10);
	in[9] = metric("worst_lag_s", c, 10, bad, 10);
	assert_int_equal(canary_judge(&v, in, 10, &o), 0);
	assert_float_equal(v.score, 90, 1e-9);
	assert_int_equal(v.result, CANARY_RESULT_MARGINAL);
	assert_false(v.critical_failure);
	canary_verdict_release(&v);

	in[9].cfg.critical = true;
	assert_int_equal(canary_judge(&v, in, 10, &o), 0);
	assert_float_equal(v.score, 90, 1e-9);	/* kept for information */
	assert_int_equal(v.result, CANARY_RESULT_FAIL);
	assert_true(v.critical_failure);
	assert_string_equal(v.reason, "critical metric 'worst_lag_s' is high");
	canary_verdict_release(&v);

	in[9] = metric("worst_lag_s", c, 10, k, 3);	/* critical, NODATA ignored */
	in[9].cfg.critical = true;
	assert_int_equal(canary_judge(&v, in, 10, &o), 0);
	assert_float_equal(v.score, 100, 1e-9);
	assert_int_equal(v.result, CANARY_RESULT_FAIL);
	assert_string_equal(v.reason, "critical metric 'worst_lag_s' is nodata");
	canary_verdict_release(&v);
}

/* score = 100 * weight passing / weight counted, and the thresholds. */
static void test_weights_and_thresholds(void **state)
{
	(void)state;
	double c[10], k[10], bad[10];
	struct canary_metric_input in[20];
	struct canary_opts o;
	struct canary_verdict v;

	canary_opts_default(&o);
	good_runs(c, 10, 41);
	good_runs(k, 10, 42);
	for (size_t i = 0; i < 10; i++)
		bad[i] = 2 * k[i];
	in[0] = metric("pass", c, 10, k, 10);
	in[1] = metric("high", c, 10, bad, 10);
	in[0].cfg.weight = 3;
	assert_int_equal(canary_judge(&v, in, 2, &o), 0);
	assert_int_equal(v.metrics[1].cls, CANARY_CLASS_HIGH);
	assert_float_equal(v.score, 75, 1e-9);	/* 3 / (3 + 1) */
	assert_int_equal(v.result, CANARY_RESULT_MARGINAL);	/* >= 75 */
	canary_verdict_release(&v);

	in[0].cfg.weight = 2.9;
	assert_int_equal(canary_judge(&v, in, 2, &o), 0);
	assert_float_equal(v.score, 100 * 2.9 / 3.9, 1e-9);
	assert_int_equal(v.result, CANARY_RESULT_FAIL);
	canary_verdict_release(&v);

	in[0].cfg.weight = 1;
	in[1].cfg.weight = 0.5;
	o.marginal_threshold = 60;
	assert_int_equal(canary_judge(&v, in, 2, &o), 0);
	assert_float_equal(v.score, 100 / 1.5, 1e-9);
	assert_int_equal(v.result, CANARY_RESULT_MARGINAL);
	canary_verdict_release(&v);

	/* 19 of 20 equal weights pass: exactly 95, the pass threshold */
	canary_opts_default(&o);
	for (size_t i = 0; i < 19; i++)
		in[i] = metric("pass", c, 10, k, 10);
	in[19] = metric("high", c, 10, bad, 10);
	assert_int_equal(canary_judge(&v, in, 20, &o), 0);
	assert_float_equal(v.score, 95, 1e-9);
	assert_int_equal(v.result, CANARY_RESULT_PASS);
	canary_verdict_release(&v);
}

static void test_invalid(void **state)
{
	(void)state;
	double c[5] = { 1, 2, 3, 4, 5 };
	struct canary_metric_input in = metric("m", c, 5, c, 5);
	struct canary_opts o;
	struct canary_verdict v;

	canary_opts_default(&o);
	assert_int_equal(canary_judge(&v, &in, 0, &o), -EINVAL);
	in.cfg.weight = 0;
	assert_int_equal(canary_judge(&v, &in, 1, &o), -EINVAL);
	in.cfg.weight = 1;
	in.cfg.tolerance = -0.1;
	assert_int_equal(canary_judge(&v, &in, 1, &o), -EINVAL);
	in.cfg.tolerance = 0.1;
	o.marginal_threshold = 96;
	assert_int_equal(canary_judge(&v, &in, 1, &o), -EINVAL);
	canary_opts_default(&o);
	o.alpha = 1;
	assert_int_equal(canary_judge(&v, &in, 1, &o), -EINVAL);

	enum canary_direction d;
	enum canary_nodata r;
	assert_int_equal(canary_direction_parse(&d, "decrease"), 0);
	assert_int_equal(d, CANARY_DIR_DECREASE);
	assert_int_equal(canary_direction_parse(&d, "up"), -EINVAL);
	assert_int_equal(canary_nodata_parse(&r, "fail"), 0);
	assert_int_equal(r, CANARY_NODATA_FAIL);
	assert_int_equal(canary_nodata_parse(&r, "skip"), -EINVAL);
}

/* The spread test's p-value: exact over all splits for small cohorts. */
static void test_spread_test_exact(void **state)
{
	(void)state;
	double x[] = { -1, 0, 1 }, y[] = { -10, 0, 10 };
	double p, ratio, sx, sy;
	bool lg;

	/* 20 splits of {-10, -1, 0, 0, 1, 10}; as spread out as y = {-10, 0,
	 * 10} (6.67 - 0.67 = 6) are y itself, y with the other 0, and
	 * {-10, -1, 10} and {-10, 1, 10} (6.67 - 0.33): p = 4/20 */
	assert_int_equal(canary_spread_test(&p, &ratio, &sx, &sy, &lg, x, 3, y, 3, 999, 1), 0);
	assert_false(lg);
	assert_float_equal(sx, 2.0 / 3, 1e-12);
	assert_float_equal(sy, 20.0 / 3, 1e-12);
	assert_float_equal(ratio, 10, 1e-12);
	assert_float_equal(p, 0.2, 1e-12);
	/* the other way round only {-1, 0, 0} and {0, 0, 1} are tighter
	 * (0.33 - 6.67): p = 18/20 */
	assert_int_equal(canary_spread_test(&p, &ratio, &sx, &sy, &lg, y, 3, x, 3, 999, 1), 0);
	assert_float_equal(p, 0.9, 1e-12);
	assert_float_equal(ratio, 0.1, 1e-12);
	/* constant cohorts */
	double one[] = { 5, 5, 5 };
	assert_int_equal(canary_spread_test(&p, &ratio, &sx, &sy, &lg, one, 3, one, 3, 999, 1), 0);
	assert_true(lg);
	assert_float_equal(ratio, 1, 1e-12);
	assert_float_equal(p, 1, 1e-12);
	assert_int_equal(canary_spread_test(&p, &ratio, &sx, &sy, &lg, one, 1, one, 3, 999, 1),
			 -EINVAL);
}

/* Above 20,000 splits: random permutations, p >= 1/(B+1), reproducible. */
static void test_spread_test_resampled(void **state)
{
	(void)state;
	double x[30], y[30], p1, p2, p3, ratio, sx, sy;
	bool lg;

	for (size_t i = 0; i < 30; i++) {
		x[i] = 10 + 0.1 * (double)i;
		y[i] = 10 + 0.5 * (double)i;
	}
	assert_int_equal(canary_spread_test(&p1, &ratio, &sx, &sy, &lg, x, 30, y, 30, 999, 7), 0);
	assert_int_equal(canary_spread_test(&p2, &ratio, &sx, &sy, &lg, x, 30, y, 30, 999, 7), 0);
	assert_float_equal(p1, p2, 0);
	assert_float_equal(p1, 1.0 / 1000, 1e-12);	/* nothing beats it */
	assert_int_equal(canary_spread_test(&p3, &ratio, &sx, &sy, &lg, y, 30, x, 30, 999, 7), 0);
	assert_true(p3 > 0.9);	/* y is the tighter one */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median_shift_fails),
		cmocka_unit_test(test_doubled_spread_fails),
		cmocka_unit_test(test_bimodal_fails),
		cmocka_unit_test(test_kayenta_6278_fails),
		cmocka_unit_test(test_kayenta_780_fails),
		cmocka_unit_test(test_aa_passes),
		cmocka_unit_test(test_direction),
		cmocka_unit_test(test_tolerance),
		cmocka_unit_test(test_nodata_rules),
		cmocka_unit_test(test_critical_fails_verdict),
		cmocka_unit_test(test_weights_and_thresholds),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_spread_test_exact),
		cmocka_unit_test(test_spread_test_resampled),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
