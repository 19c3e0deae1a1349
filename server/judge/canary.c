/* canary.c - the canary judge: per-metric Mann-Whitney, effect size and
 * dispersion check, weighted into a pass / marginal / fail verdict.
 * What it follows of Kayenta and where it differs: canary.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/canary.h"
#include "judge/stats.h"
#include "util.h"

/* Kayenta's WeightedSumScorer fails a canary when this share (percent) of
 * its metrics or more are NODATA. */
#define NODATA_FAIL_PCT 50.0
/* Enumerate every split for the spread test up to this many. */
#define SPREAD_EXACT_MAX 20000.0

void canary_metric_config_default(struct canary_metric_config *c, const char *name)
{
	memset(c, 0, sizeof(*c));
	c->name = name;
	c->direction = CANARY_DIR_INCREASE;
	c->tolerance = 0.10;
	c->spread_tolerance = 0.5;
	c->spread_check = true;
	c->critical = false;
	c->nodata = CANARY_NODATA_IGNORE;
	c->weight = 1;
	c->min_n = 0;
}

void canary_opts_default(struct canary_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->alpha = 0.02;
	o->pass_threshold = 95;
	o->marginal_threshold = 75;
	o->permutations = 1999;
	o->bootstrap = 1000;
	o->seed = STATS_SEED;
	o->min_n = 0;
}

static const char *const class_names[] = { "pass", "high", "low", "spread", "nodata" };
static const char *const result_names[] = { "pass", "marginal", "fail", "no verdict" };
static const char *const dir_names[] = { "increase", "decrease", "either" };
static const char *const nodata_names[] = { "ignore", "fail", "pass" };

const char *canary_class_name(enum canary_class c) { return class_names[c]; }
const char *canary_result_name(enum canary_result r) { return result_names[r]; }
const char *canary_direction_name(enum canary_direction d) { return dir_names[d]; }
const char *canary_nodata_name(enum canary_nodata r) { return nodata_names[r]; }

int canary_direction_parse(enum canary_direction *out, const char *s)
{
	for (size_t i = 0; i < sizeof(dir_names) / sizeof(dir_names[0]); i++) {
		if (!strcmp(s, dir_names[i])) {
			*out = (enum canary_direction)i;
			return 0;
		}
	}
	return -EINVAL;
}

int canary_nodata_parse(enum canary_nodata *out, const char *s)
{
	for (size_t i = 0; i < sizeof(nodata_names) / sizeof(nodata_names[0]); i++) {
		if (!strcmp(s, nodata_names[i])) {
			*out = (enum canary_nodata)i;
			return 0;
		}
	}
	return -EINVAL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Brown-Forsythe spread of v[0..n): mean |v - median|. Sorts scratch. */
static double bf_spread(const double *v, size_t n, double *scratch)
{
	memcpy(scratch, v, n * sizeof(*v));
	qsort(scratch, n, sizeof(*scratch), cmp_double);
	double med = n % 2 ? scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2;
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += fabs(v[i] - med);
	return s / (double)n;
}

/* The permutation statistic for a split: spread(y) - spread(x), with the
 * pooled values z gathered through idx (first nx are x, the rest y). */
static double split_stat(const double *z, const size_t *idx, size_t nx, size_t ny,
			 double *gx, double *gy, double *scratch)
{
	for (size_t i = 0; i < nx; i++)
		gx[i] = z[idx[i]];
	for (size_t i = 0; i < ny; i++)
		gy[i] = z[idx[nx + i]];
	return bf_spread(gy, ny, scratch) - bf_spread(gx, nx, scratch);
}

int canary_spread_test(double *p, double *ratio, double *spread_x, double *spread_y,
		       bool *log_scale, const double *x, size_t nx, const double *y,
		       size_t ny, unsigned permutations, uint64_t seed)
{
	if (nx < 2 || ny < 2)
		return -EINVAL;
	size_t n = nx + ny;
	double *z = xmalloc(n * sizeof(*z)), *gx = xmalloc(n * sizeof(*gx));
	double *gy = xmalloc(n * sizeof(*gy)), *scratch = xmalloc(n * sizeof(*scratch));
	size_t *idx = xmalloc(n * sizeof(*idx));
	bool lg = true;

	for (size_t i = 0; i < nx; i++)
		lg = lg && x[i] > 0;
	for (size_t i = 0; i < ny; i++)
		lg = lg && y[i] > 0;
	for (size_t i = 0; i < nx; i++)
		z[i] = lg ? log(x[i]) : x[i];
	for (size_t i = 0; i < ny; i++)
		z[nx + i] = lg ? log(y[i]) : y[i];
	for (size_t i = 0; i < n; i++)
		idx[i] = i;

	double sx = bf_spread(z, nx, scratch), sy = bf_spread(z + nx, ny, scratch);
	double t_obs = sy - sx;
	/* splits whose statistic equals the observed one up to rounding count
	 * as "at least as extreme" */
	double eps = 1e-9 * (fabs(sx) + fabs(sy) + 1e-300);
	double count = 0, total = 0;

	if (stats_binom(n, ny) <= SPREAD_EXACT_MAX) {
		/* every choice of the ny indices that form y, in lexicographic
		 * order; x is the complement */
		size_t *c = xmalloc(ny * sizeof(*c));
		bool *in_y = xmalloc(n * sizeof(*in_y));
		for (size_t i = 0; i < ny; i++)
			c[i] = i;
		for (;;) {
			memset(in_y, 0, n * sizeof(*in_y));
			for (size_t i = 0; i < ny; i++)
				in_y[c[i]] = true;
			size_t a = 0, b = nx;
			for (size_t i = 0; i < n; i++)
				idx[in_y[i] ? b++ : a++] = i;
			if (split_stat(z, idx, nx, ny, gx, gy, scratch) >= t_obs - eps)
				count++;
			total++;
			/* next combination */
			size_t i = ny;
			while (i > 0 && c[i - 1] == n - ny + i - 1)
				i--;
			if (i == 0)
				break;
			c[i - 1]++;
			for (size_t j = i; j < ny; j++)
				c[j] = c[j - 1] + 1;
		}
		free(c);
		free(in_y);
		*p = count / total;
	} else {
		uint64_t st = seed;
		for (unsigned b = 0; b < permutations; b++) {
			for (size_t i = n - 1; i > 0; i--) {	/* Fisher-Yates */
				size_t j = (size_t)(stats_rand64(&st) % (i + 1));
				size_t t = idx[i];
				idx[i] = idx[j];
				idx[j] = t;
			}
			if (split_stat(z, idx, nx, ny, gx, gy, scratch) >= t_obs - eps)
				count++;
		}
		*p = (1 + count) / ((double)permutations + 1);
	}
	*spread_x = sx;
	*spread_y = sy;
	*ratio = sx > 0 ? sy / sx : sy > 0 ? INFINITY : 1;
	*log_scale = lg;
	free(z);
	free(gx);
	free(gy);
	free(scratch);
	free(idx);
	return 0;
}

/* The values that are numbers, in a new array (*n of them). */
static double *finite_copy(const double *v, size_t nv, size_t *n)
{
	double *o = xmalloc((nv ? nv : 1) * sizeof(*o));
	*n = 0;
	for (size_t i = 0; i < nv; i++)
		if (!isnan(v[i]))
			o[(*n)++] = v[i];
	return o;
}

/* The shift in words: "+12.5% of the control median", or the absolute
 * shift when the control median is 0. */
static void fmt_shift(char *buf, size_t size, double effect, double shift)
{
	if (isinf(effect))
		snprintf(buf, size, "%+.4g from a control median of 0", shift);
	else
		snprintf(buf, size, "%+.1f%% of the control median", 100 * effect);
}

static void judge_metric(struct canary_metric_result *r, const struct canary_metric_input *in,
			 const struct canary_opts *o, size_t index)
{
	const struct canary_metric_config *cfg = &in->cfg;
	size_t nc, nk;
	double *c = finite_copy(in->control, in->ncontrol, &nc);
	double *k = finite_copy(in->canary, in->ncanary, &nk);
	char eff[64], spr[96] = "";

	memset(r, 0, sizeof(*r));
	r->name = cfg->name;
	r->direction = cfg->direction;
	r->critical = cfg->critical;
	r->n_control = nc;
	r->n_canary = nk;
	r->median_control = stats_median(c, nc);
	r->median_canary = stats_median(k, nk);
	r->shift = r->effect = r->shift_lo = r->shift_hi = NAN;
	r->p_location = r->p_spread = NAN;
	r->spread_control = r->spread_canary = r->spread_ratio = NAN;
	r->min_n = cfg->min_n ? cfg->min_n : o->min_n ? o->min_n : stats_runs_needed(o->alpha);
	if (r->min_n < 2)
		r->min_n = 2;
	r->p_floor = stats_mwu_min_p(nc, nk);
	r->runs_needed = stats_runs_needed(o->alpha);

	if (nc < r->min_n || nk < r->min_n) {
		r->cls = CANARY_CLASS_NODATA;
		r->counted = cfg->nodata != CANARY_NODATA_IGNORE;
		r->passed = cfg->nodata == CANARY_NODATA_PASS;
		snprintf(r->reason, sizeof(r->reason),
			 "%s has %zu value%s, fewer than %zu (min_n); nodata rule '%s'",
			 nc < r->min_n ? "control" : "canary", nc < r->min_n ? nc : nk,
			 (nc < r->min_n ? nc : nk) == 1 ? "" : "s", r->min_n,
			 canary_nodata_name(cfg->nodata));
		goto out;
	}

	struct mwu_result mw;
	stats_mwu(&mw, c, nc, k, nk);
	r->p_location = mw.p;
	r->shift = stats_hodges_lehmann(c, nc, k, nk);
	double base = fabs(r->median_control);
	r->effect = base > 0 ? r->shift / base :
		    r->shift > 0 ? INFINITY : r->shift < 0 ? -INFINITY : 0;
	if (o->bootstrap)
		stats_hl_bootstrap_ci(&r->shift_lo, &r->shift_hi, c, nc, k, nk, o->bootstrap,
				      o->alpha, o->seed + index);
	bool sig = r->p_location < o->alpha;
	bool high = sig && r->effect > cfg->tolerance &&
		    cfg->direction != CANARY_DIR_DECREASE;
	bool low = sig && r->effect < -cfg->tolerance &&
		   cfg->direction != CANARY_DIR_INCREASE;

	bool wider = false;
	if (cfg->spread_check) {
		canary_spread_test(&r->p_spread, &r->spread_ratio, &r->spread_control,
				   &r->spread_canary, &r->spread_log, c, nc, k, nk,
				   o->permutations, o->seed ^ (0x9e37ULL * (index + 1)));
		r->spread_tested = true;
		wider = r->p_spread < o->alpha && r->spread_ratio > 1 + cfg->spread_tolerance;
	}

	fmt_shift(eff, sizeof(eff), r->effect, r->shift);
	if (r->spread_tested && isinf(r->spread_ratio))
		snprintf(spr, sizeof(spr), "; spread from none in the control (p=%.3g)",
			 r->p_spread);
	else if (r->spread_tested)
		snprintf(spr, sizeof(spr), "; spread %.2fx%s (p=%.3g)", r->spread_ratio,
			 r->spread_log ? " on log scale" : "", r->p_spread);
	if (high || low) {
		r->cls = high ? CANARY_CLASS_HIGH : CANARY_CLASS_LOW;
		snprintf(r->reason, sizeof(r->reason),
			 "canary %s: shift %s, p=%.3g < %.3g, beyond tolerance %.0f%%",
			 high ? "higher" : "lower", eff, r->p_location, o->alpha,
			 100 * cfg->tolerance);
	} else if (wider) {
		r->cls = CANARY_CLASS_SPREAD;
		snprintf(r->reason, sizeof(r->reason),
			 "canary more spread out: %.3gx the control's spread%s, p=%.3g < %.3g, "
			 "beyond tolerance %.2fx; medians %.4g -> %.4g", r->spread_ratio,
			 r->spread_log ? " on log scale" : "", r->p_spread, o->alpha,
			 1 + cfg->spread_tolerance, r->median_control, r->median_canary);
	} else if (r->p_floor >= o->alpha) {
		/* no pass without power (canary.h, 8): this test could not have
		 * found a shift with these cohorts */
		r->cls = CANARY_CLASS_NODATA;
		r->underpowered = true;
		snprintf(r->reason, sizeof(r->reason),
			 "cohorts too small for alpha %.3g: %zu against %zu values cannot reach "
			 "p < %.3g (smallest Mann-Whitney p 2/C(%zu,%zu) = %.3g); %zu runs a side "
			 "would do; nodata rule '%s'", o->alpha, nc, nk, o->alpha, nc + nk, nc,
			 r->p_floor, r->runs_needed, canary_nodata_name(cfg->nodata));
		r->counted = cfg->nodata == CANARY_NODATA_FAIL;
		r->passed = false;
		goto out;
	} else {
		r->cls = CANARY_CLASS_PASS;
		if (!sig)
			snprintf(r->reason, sizeof(r->reason),
				 "no significant shift (p=%.3g >= %.3g)%s", r->p_location, o->alpha,
				 spr);
		else if (fabs(r->effect) <= cfg->tolerance)
			snprintf(r->reason, sizeof(r->reason),
				 "significant shift %s, within tolerance %.0f%%%s", eff,
				 100 * cfg->tolerance, spr);
		else
			snprintf(r->reason, sizeof(r->reason),
				 "significant shift %s in the good direction (bad is %s)%s", eff,
				 canary_direction_name(cfg->direction), spr);
	}
	r->counted = true;
	r->passed = r->cls == CANARY_CLASS_PASS;
out:
	free(c);
	free(k);
}

static int check_opts(const struct canary_opts *o)
{
	if (!(o->alpha > 0 && o->alpha < 1))
		return -EINVAL;
	if (!(o->marginal_threshold >= 0 && o->pass_threshold <= 100 &&
	      o->marginal_threshold <= o->pass_threshold))
		return -EINVAL;
	return 0;
}

int canary_judge(struct canary_verdict *out, const struct canary_metric_input *in,
		 size_t n, const struct canary_opts *opts)
{
	struct canary_verdict v = { 0 };
	double w_counted = 0, w_passed = 0;
	size_t nodata_ignored = 0;
	const struct canary_metric_result *weak = NULL;	/* the first underpowered */
	const struct canary_metric_result *crit_weak = NULL;
	const char *crit = NULL;
	enum canary_class crit_cls = CANARY_CLASS_PASS;

	if (!n || check_opts(opts))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		const struct canary_metric_config *c = &in[i].cfg;
		if (!(c->weight > 0) || !(c->tolerance >= 0) || !(c->spread_tolerance >= 0))
			return -EINVAL;
	}
	v.metrics = xcalloc(n, sizeof(*v.metrics));
	v.n = n;
	v.alpha = opts->alpha;
	v.pass_threshold = opts->pass_threshold;
	v.marginal_threshold = opts->marginal_threshold;
	for (size_t i = 0; i < n; i++) {
		struct canary_metric_result *r = &v.metrics[i];
		judge_metric(r, &in[i], opts, i);
		if (r->underpowered && !weak)
			weak = r;
		if (r->counted) {
			w_counted += in[i].cfg.weight;
			if (r->passed)
				w_passed += in[i].cfg.weight;
		} else {
			nodata_ignored++;
		}
		/* a critical metric fails the verdict unless it passed; with no
		 * data it has not shown that it is fine (Kayenta does the same) */
		if (r->critical && !r->passed && !crit) {
			crit = r->name;
			crit_cls = r->cls;
			crit_weak = r->underpowered ? r : NULL;
		}
	}
	v.score = w_counted > 0 ? 100 * w_passed / w_counted : NAN;
	if (crit) {
		v.critical_failure = true;
		v.result = CANARY_RESULT_FAIL;
		int len = snprintf(v.reason, sizeof(v.reason), "critical metric '%s' is %s", crit,
				   canary_class_name(crit_cls));
		if (crit_weak && len > 0 && (size_t)len < sizeof(v.reason)) {
			v.underpowered = true;
			snprintf(v.reason + len, sizeof(v.reason) - (size_t)len,
				 ": %zu against %zu runs cannot reach p < %.3g; %zu runs a side "
				 "would do", crit_weak->n_control, crit_weak->n_canary, opts->alpha,
				 crit_weak->runs_needed);
		}
	} else if (weak && !(w_counted > 0 && v.score < opts->marginal_threshold)) {
		/* would have been pass, marginal or no verdict: say why not */
		v.underpowered = true;
		v.result = CANARY_RESULT_NO_VERDICT;
		snprintf(v.reason, sizeof(v.reason),
			 "cohorts too small for alpha %.3g: %zu against %zu runs cannot reach "
			 "p < %.3g (smallest Mann-Whitney p %.3g); %zu runs a side would do",
			 opts->alpha, weak->n_control, weak->n_canary, opts->alpha, weak->p_floor,
			 weak->runs_needed);
	} else if (100.0 * (double)nodata_ignored / (double)n >= NODATA_FAIL_PCT) {
		v.result = CANARY_RESULT_NO_VERDICT;
		snprintf(v.reason, sizeof(v.reason),
			 "%zu of %zu metrics have no data (>= %.0f%%): too few values to judge",
			 nodata_ignored, n, NODATA_FAIL_PCT);
	} else if (v.score >= opts->pass_threshold) {
		v.result = CANARY_RESULT_PASS;
		snprintf(v.reason, sizeof(v.reason), "score %.1f >= pass threshold %.0f",
			 v.score, opts->pass_threshold);
	} else if (v.score >= opts->marginal_threshold) {
		v.result = CANARY_RESULT_MARGINAL;
		snprintf(v.reason, sizeof(v.reason),
			 "score %.1f >= marginal threshold %.0f, < pass threshold %.0f",
			 v.score, opts->marginal_threshold, opts->pass_threshold);
	} else {
		v.result = CANARY_RESULT_FAIL;
		snprintf(v.reason, sizeof(v.reason), "score %.1f < marginal threshold %.0f",
			 v.score, opts->marginal_threshold);
	}
	*out = v;
	return 0;
}

void canary_verdict_release(struct canary_verdict *v)
{
	free(v->metrics);
	memset(v, 0, sizeof(*v));
}
