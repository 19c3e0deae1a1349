/* bisect.c - the bisection decision engine (see bisect.h for the model and
 * its sources): endpoints, the old/new densities, the culprit posterior,
 * binary and probabilistic strategies, the culprit check, the event log. */
#define LOG_MODULE "bisect"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/bisect.h"
#include "log.h"
#include "judge/stats.h"
#include "util.h"

/* Pinpoint's LowThreshold(): p <= this is "different" (compare.py). */
#define ALPHA_DIFFERENT 0.01
/* The culprit check is one pre-registered comparison, at the usual 5%. */
#define ALPHA_CHECK 0.05
/* Endpoints must also differ in size: P(new worse) >= 0.7 or <= 0.3. */
#define MIN_EFFECT 0.2

void bisect_opts_init(struct bisect_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->strategy = BISECT_PROBABILISTIC;
	o->higher_is_worse = true;
	/* 0.999, not 0.95 (issue 19): on the simulator's flaky histories the
	 * posterior is overconfident (95% right at a claimed 0.95+); 0.999,
	 * with refits at the same level, buys 99% for about 6 more runs, and
	 * costs clean histories about 4 (bench/b_bisect.sh) */
	o->confidence = 0.999;
	o->max_runs = 200;
	o->endpoint_min_runs = 5;
	o->endpoint_max_runs = 16;
	o->step_max_runs = 8;
	o->check_runs = 5;
	o->early_endpoints = true;
	o->sharp_good = true;
}

const char *bisect_outcome_name(enum bisect_outcome o)
{
	switch (o) {
	case BISECT_FOUND: return "found";
	case BISECT_RANGE: return "range";
	case BISECT_UNDECIDED: return "undecided";
	case BISECT_NO_DIFFERENCE: return "no-difference";
	case BISECT_WRONG_DIRECTION: return "wrong-direction";
	case BISECT_ENDPOINT_SKIP: return "endpoint-skip";
	}
	return "?";
}

const char *bisect_verdict_name(enum bisect_verdict v)
{
	switch (v) {
	case BISECT_UNTESTED: return "untested";
	case BISECT_GOOD: return "good";
	case BISECT_BAD: return "bad";
	case BISECT_SKIP: return "skip";
	case BISECT_UNSURE: return "unsure";
	}
	return "?";
}

/* ---- small statistics (static; see the note at mwu_p) ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Quantile q of sorted v[0..n-1], linear interpolation (R type 7). */
static double quantile_sorted(const double *v, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t i = (size_t)pos;

	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (pos - (double)i) * (v[i + 1] - v[i]);
}

/*
 * mwu_p - two-sided Mann-Whitney U p-value of x (n) against y (m), from
 * stats_mwu() (exact up to 20 against 20, ties included), and
 * *effect = P(y worse than x) with ties counted 1/2 (the probability of
 * superiority, U / nm). "Worse" is higher when higher_is_worse.
 */
static double mwu_p(const double *x, size_t n, const double *y, size_t m,
		    bool higher_is_worse, double *effect)
{
	struct mwu_result res;
	double x_above;

	if (stats_mwu(&res, x, n, y, m)) {
		*effect = 0.5;
		return 1;
	}
	x_above = res.u / ((double)n * (double)m);	/* P(x > y) */
	*effect = higher_is_worse ? 1 - x_above : x_above;
	return res.p;
}

enum cmp3 { CMP_UNKNOWN = 0, CMP_SAME, CMP_DIFFERENT };

/*
 * Pinpoint-style three-way comparison (compare.py): DIFFERENT when p <= low
 * and the effect is large enough, SAME when p > high(n), else UNKNOWN.
 * high(n) = 2^-(n - n_min)/2 shrinks with the smaller sample size n until it
 * crosses low, which bounds the number of runs (thresholds.py's idea, our
 * closed form).
 */
static enum cmp3 compare3(double p, double effect, size_t n, unsigned n_min, double low)
{
	double high = pow(0.5, (double)(n > n_min ? n - n_min : 0) / 2);

	if (p <= low && fabs(effect - 0.5) >= MIN_EFFECT)
		return CMP_DIFFERENT;
	if (p > high)
		return CMP_SAME;
	return CMP_UNKNOWN;
}

/* ---- the old/new densities ---- */

/* The scale kernel densities live on: worst lag 1-90 s, counts 0-1e4. */
static double tf(double x)
{
	return x < 0 ? -log1p(-x) : log1p(x);
}

/*
 * Endpoints that stop early (issue 19): an anytime-valid test of "the ends
 * differ", looked at after every pair of endpoint runs from EARLY_RUNS a
 * side on: the two-sample Bayes factor of Gonen, Johnson, Lu and Westfall
 * used as an e-process, stats_seq_evalue() (stats.h has the formula and its
 * sources; compare --repeat auto uses the same one). It assumes normal t(x)
 * values with one variance; the Mann-Whitney rule below (from
 * endpoint_min_runs on) stays as it was for ends this test does not
 * separate, so the early exit adds at most ALPHA_DIFFERENT to that rule's
 * false "different". g = STATS_SEQ_G = 50 puts the prior's mass on large
 * effects, several standard deviations, which is what ends worth bisecting
 * look like (1 s against 12-90 s: d ~ 7 on the t scale); on the simulator's
 * histories (bisect_sim.h) it stops clean ends at 3.5 runs a side on
 * average and flaky ones at about 6, and A/A ends in 0.1% of 10-run trials.
 */
#define EARLY_RUNS 3
#define EVALUE_G STATS_SEQ_G

static double endpoint_evalue(const double *x, size_t n, const double *y, size_t m)
{
	return stats_seq_evalue(x, n, y, m, 0, EVALUE_G);
}

/*
 * Whether n against n endpoint runs can show a difference at all (no pass
 * without power, issue 19): the Mann-Whitney floor 2 / C(2n, n)
 * (stats_mwu_min_p) at or below ALPHA_DIFFERENT, or, from EARLY_RUNS on,
 * the e-value's ceiling (1 + nd g)^(nu/2) (stats_seq_evalue_max) at or
 * above 1 / ALPHA_DIFFERENT. 3 a side can (ceiling 5776), 2 cannot (51,
 * and the floor 0.33).
 */
static bool endpoints_can_differ(size_t n)
{
	if (n < 2)
		return false;
	return stats_mwu_min_p(n, n) <= ALPHA_DIFFERENT ||
	       (n >= EARLY_RUNS && stats_seq_evalue_max(n, n, EVALUE_G) >= 1 / ALPHA_DIFFERENT);
}

struct kde {
	double *t;	/* transformed samples */
	size_t n;
	double h;	/* bandwidth in t units */
};

static void kde_init(struct kde *k, const double *v, size_t n)
{
	k->t = xmalloc(n * sizeof(*k->t));
	k->n = n;
	for (size_t i = 0; i < n; i++)
		k->t[i] = tf(v[i]);
	qsort(k->t, n, sizeof(*k->t), cmp_double);
	k->h = 0;
}

/* Silverman's rule 0.9 min(sd, IQR/1.34, MAD/0.6745) n^-1/5, at least h_floor. */
static void kde_bandwidth(struct kde *k, double h_floor)
{
	double mean = 0, ss = 0, s, iqr;

	for (size_t i = 0; i < k->n; i++)
		mean += k->t[i];
	mean /= (double)k->n;
	for (size_t i = 0; i < k->n; i++)
		ss += (k->t[i] - mean) * (k->t[i] - mean);
	s = k->n > 1 ? sqrt(ss / (double)(k->n - 1)) : 0;
	iqr = quantile_sorted(k->t, k->n, 0.75) - quantile_sorted(k->t, k->n, 0.25);
	if (iqr > 0 && iqr / 1.34 < s)
		s = iqr / 1.34;
	/* A flaky side is bimodal (7 stalls, 2 fast runs): sd and even the IQR
	 * span both modes and would smear one into the other; the median
	 * absolute deviation stays inside the larger mode. */
	double *dev = xmalloc(k->n * sizeof(*dev)), med = quantile_sorted(k->t, k->n, 0.5), mad;

	for (size_t i = 0; i < k->n; i++)
		dev[i] = fabs(k->t[i] - med);
	qsort(dev, k->n, sizeof(*dev), cmp_double);
	mad = quantile_sorted(dev, k->n, 0.5);
	free(dev);
	if (mad > 0 && mad / 0.6745 < s)
		s = mad / 0.6745;
	k->h = 0.9 * s * pow((double)k->n, -0.2);
	if (k->h < h_floor)
		k->h = h_floor;
}

static double logsumexp2(double a, double b)
{
	double m = a > b ? a : b;

	if (m == -INFINITY)
		return -INFINITY;
	return m + log(exp(a - m) + exp(b - m));
}

/* log of the kernel density at transformed value t (up to the constant
 * -log sqrt(2 pi), which cancels in every ratio we take). */
static double kde_logpdf(const struct kde *k, double t)
{
	double m = -INFINITY, s = 0;

	for (size_t i = 0; i < k->n; i++) {
		double z = (t - k->t[i]) / k->h, e = -0.5 * z * z;

		if (e > m)
			m = e;
	}
	for (size_t i = 0; i < k->n; i++) {
		double z = (t - k->t[i]) / k->h;

		s += exp(-0.5 * z * z - m);
	}
	return m + log(s) - log((double)k->n * k->h);
}

struct model {
	struct kde old, new_;
	double w_old, w_new;	/* weight of the other side's density */
	bool sharp_good, find_fix;	/* set before model_init(): the good side's
					 * w from share_sharp() */
};

static void model_release(struct model *md)
{
	free(md->old.t);
	free(md->new_.t);
}

/*
 * The good side's share of bad-looking runs (issue 19 item 2,
 * opts.sharp_good). Laplace's share 1/(n + 2) treats "the good kernel
 * never shows the fault" like any rate not yet seen, so one 30 s stall
 * against good runs of 1-2 s moves the posterior by at most n + 1 (about
 * 5 after 3 + 3 endpoint runs) and a clean history needs 4-5 runs at each
 * commit next to the culprit. Jeffreys' answer to that problem of
 * induction (Wrinch and Jeffreys 1919, "On some aspects of the theory of
 * probability", Phil. Mag. 38:715-731; Jeffreys, Theory of Probability,
 * 1939; reviewed in Zabell 1989, "The rule of succession", Erkenntnis
 * 31:283-321) is a point mass pi on the general law, the share being 0,
 * and the uniform prior of Laplace's rule on the rest. After n good runs
 * none of which looked bad, the law holds with probability
 * pi / (pi + (1 - pi) / (n + 1)), and the chance that the next good run
 * looks bad is
 *
 *   w = (1 / (n + 2)) (1 - pi) / (1 - pi + pi (n + 1)),
 *
 * 1 / (n + 2)^2 at Jeffreys' pi = 1/2 (1/25 after 3 runs, not 1/5).
 * Only the good side gets the point mass: the bad side's good-looking
 * runs are what a flaky fault does ("stalled in 7 of 9 runs", seed 000),
 * so "the bad kernel always shows it" is no general law and keeps
 * Laplace's share. A good kernel that does stall now and then is still
 * allowed for (w > 0), and its bad-looking runs, as the good side's
 * sample grows through refit(), are in its own density anyway.
 */
#define SHARP_GOOD_PI 0.5

static double share_sharp(size_t n)
{
	double pi = SHARP_GOOD_PI;

	return 1.0 / ((double)n + 2) * (1 - pi) / (1 - pi + pi * ((double)n + 1));
}

static void model_init(struct model *md, const double *o, size_t no, const double *nw, size_t nn)
{
	double sep, h_floor;

	kde_init(&md->old, o, no);
	kde_init(&md->new_, nw, nn);
	sep = fabs(quantile_sorted(md->new_.t, nn, 0.5) - quantile_sorted(md->old.t, no, 0.5));
	h_floor = 0.02 * sep;
	if (h_floor < 0.1)
		h_floor = 0.1;
	kde_bandwidth(&md->old, h_floor);
	kde_bandwidth(&md->new_, h_floor);
	/* Laplace's rule of succession: an event not seen in n runs, 1/(n + 2). */
	md->w_old = 1.0 / ((double)no + 2);
	md->w_new = 1.0 / ((double)nn + 2);
	if (md->sharp_good && !md->find_fix)
		md->w_old = share_sharp(no);
	else if (md->sharp_good)
		md->w_new = share_sharp(nn);
}

/* log f_new(x) - log f_old(x): one run's evidence that its commit is new. */
static double model_llr(const struct model *md, double x)
{
	double t = tf(x);
	double lo = kde_logpdf(&md->old, t), ln = kde_logpdf(&md->new_, t);
	double f_new = logsumexp2(log1p(-md->w_new) + ln, log(md->w_new) + lo);
	double f_old = logsumexp2(log1p(-md->w_old) + lo, log(md->w_old) + ln);

	return f_new - f_old;
}

/* ---- the engine ---- */

struct commit_state {
	unsigned runs;
	double llr;		/* summed over this commit's runs */
	bool skipped;
	enum bisect_verdict verdict;
};

struct engine {
	size_t n;
	struct bisect_opts o;
	bisect_measure_fn measure;
	bisect_plan_fn plan;	/* NULL: no look ahead */
	void *ctx;
	struct buf *log;
	struct commit_state *c;
	double *post;		/* post[j]: P(culprit = j), j in 1..n-1 */
	struct model md;
	struct bisect_result *r;
	bool *touched;		/* commit measured at least once (or skipped) */
	/* Every search run, for refitting the model (see refit()). */
	struct obs { size_t idx; double value; } *obs;
	size_t nobs, obs_cap;
	double *ov, *nv;	/* endpoint runs of commit 0 and n-1 */
	size_t no, nn;
	signed char *side;	/* -1/+1: commit's runs are in the old/new sample */
};

/* A commit whose state is this sure lends its runs to the model. */
#define REFIT_LEVEL 0.999

static void elog(struct engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void elog(struct engine *e, const char *fmt, ...)
{
	va_list ap;

	if (!e->log)
		return;
	va_start(ap, fmt);
	buf_vprintf(e->log, fmt, ap);
	va_end(ap);
}

/* Verdict names for the old and new states under this bisection's terms. */
static enum bisect_verdict v_old(const struct engine *e)
{
	return e->o.find_fix ? BISECT_BAD : BISECT_GOOD;
}

static enum bisect_verdict v_new(const struct engine *e)
{
	return e->o.find_fix ? BISECT_GOOD : BISECT_BAD;
}

/*
 * One oracle call, logged. Returns 0 with *value, 1 for a skip (logged,
 * counted), or the oracle's abort code (bisect_aborts()).
 */
static bool bisect_aborts(int rc)
{
	return rc == -EINTR || rc == -ECANCELED;
}

static int measure(struct engine *e, size_t idx, const char *phase, double *value)
{
	int rc = e->measure(e->ctx, idx, value);

	if (bisect_aborts(rc))
		return rc;
	if (!e->touched[idx]) {
		e->touched[idx] = true;
		e->r->commits_tested++;
	}
	if (rc < 0) {
		e->r->skips++;
		elog(e, "skip idx=%zu phase=%s code=%d\n", idx, phase, rc);
		return 1;
	}
	e->r->runs_total++;
	elog(e, "run idx=%zu phase=%s value=%.17g\n", idx, phase, *value);
	return 0;
}

/*
 * Tell the oracle the next calls of an alternating round (a then b, the
 * side with fewer runs first, ties to a, until both have want, at most
 * max_calls calls): 0, or its abort code.
 */
static int plan_round(struct engine *e, size_t a, size_t b, size_t na, size_t nb,
		      size_t want, size_t max_calls)
{
	size_t *idx, k = 0;
	int rc;

	if (!e->plan)
		return 0;
	idx = xmalloc((2 * want + 1) * sizeof(*idx));
	while ((na < want || nb < want) && k < max_calls && k < 2 * want) {
		if (na <= nb) {
			idx[k++] = a;
			na++;
		} else {
			idx[k++] = b;
			nb++;
		}
	}
	rc = k ? e->plan(e->ctx, idx, k) : 0;
	free(idx);
	return bisect_aborts(rc) ? rc : 0;
}

static void post_update(struct engine *e, size_t idx, double llr)
{
	double lr = exp(llr), sum = 0;

	for (size_t j = 1; j <= idx; j++)
		e->post[j] *= lr;
	for (size_t j = 1; j < e->n; j++)
		sum += e->post[j];
	for (size_t j = 1; j < e->n; j++)
		e->post[j] /= sum;
}

/* P(commit idx is in the new state) = P(culprit <= idx). */
static double post_cdf(const struct engine *e, size_t idx)
{
	double s = 0;

	for (size_t j = 1; j <= idx && j < e->n; j++)
		s += e->post[j];
	return s;
}

/*
 * The culprit classes: positions j and j+1 cannot be told apart when
 * commit j (new iff culprit <= j) is skipped. Fills the top classes (best
 * first) and returns the best.
 */
static struct bisect_candidate classes_top(const struct engine *e,
					   struct bisect_candidate *top, size_t *ntop)
{
	size_t k = 0;

	for (size_t j = 1; j < e->n;) {
		struct bisect_candidate c = { j, j, e->post[j] };

		while (c.last + 1 < e->n && e->c[c.last].skipped) {
			c.last++;
			c.prob += e->post[c.last];
		}
		j = c.last + 1;
		/* insert into top (stable: earlier classes win ties) */
		size_t pos = k;

		while (pos > 0 && top[pos - 1].prob < c.prob)
			pos--;
		if (pos < BISECT_TOP) {
			size_t end = k < BISECT_TOP ? k : BISECT_TOP - 1;

			memmove(top + pos + 1, top + pos, (end - pos) * sizeof(*top));
			top[pos] = c;
			if (k < BISECT_TOP)
				k++;
		}
	}
	*ntop = k;
	return top[0];
}

static void log_posterior(struct engine *e)
{
	struct bisect_candidate top[BISECT_TOP];
	size_t ntop;

	if (!e->log)
		return;
	classes_top(e, top, &ntop);
	elog(e, "posterior");
	for (size_t i = 0; i < ntop; i++) {
		if (top[i].first == top[i].last)
			elog(e, " %zu:%.4f", top[i].first, top[i].prob);
		else
			elog(e, " %zu-%zu:%.4f", top[i].first, top[i].last, top[i].prob);
	}
	elog(e, "\n");
}

/*
 * Refit the old/new densities on the endpoint runs plus the runs of every
 * commit whose state the posterior is sure of (P >= REFIT_LEVEL), then
 * recompute every commit's likelihood ratio and the posterior from scratch
 * under the new model. This is hard-assignment EM (Dempster, Laird and
 * Rubin 1977): a flaky bad side ("7 of 9") seen 6 times at the endpoints
 * may show no fast run at all; the bad commits found along the way show
 * how often it really is fast, and earlier runs are re-weighed with that.
 * Only called when the assignment changed.
 */
static void refit(struct engine *e)
{
	size_t no = e->no, nn = e->nn;
	double *ov = xmalloc((e->no + e->nobs) * sizeof(*ov));
	double *nv = xmalloc((e->nn + e->nobs) * sizeof(*nv));
	double mx = -INFINITY, suffix = 0, sum = 0;

	memcpy(ov, e->ov, e->no * sizeof(*ov));
	memcpy(nv, e->nv, e->nn * sizeof(*nv));
	for (size_t k = 0; k < e->nobs; k++) {
		signed char sd = e->side[e->obs[k].idx];

		if (sd < 0)
			ov[no++] = e->obs[k].value;
		else if (sd > 0)
			nv[nn++] = e->obs[k].value;
	}
	model_release(&e->md);
	model_init(&e->md, ov, no, nv, nn);
	free(ov);
	free(nv);
	for (size_t i = 0; i < e->n; i++)
		e->c[i].llr = 0;
	for (size_t k = 0; k < e->nobs; k++)
		e->c[e->obs[k].idx].llr += model_llr(&e->md, e->obs[k].value);
	/* log post(j) = sum of llr over commits i >= j (new iff j <= i) */
	for (size_t j = e->n - 1; j >= 1; j--) {
		suffix += e->c[j].llr;
		e->post[j] = suffix;
		if (suffix > mx)
			mx = suffix;
	}
	for (size_t j = 1; j < e->n; j++) {
		e->post[j] = exp(e->post[j] - mx);
		sum += e->post[j];
	}
	for (size_t j = 1; j < e->n; j++)
		e->post[j] /= sum;
}

/* Update which commits lend their runs to the model; refit on a change. */
static void maybe_refit(struct engine *e)
{
	double cdf = 0;
	bool changed = false;

	for (size_t i = 1; i + 1 < e->n; i++) {
		signed char sd = 0;

		cdf += e->post[i];
		if (e->c[i].runs)
			sd = cdf >= REFIT_LEVEL ? 1 : cdf <= 1 - REFIT_LEVEL ? -1 : 0;
		if (sd != e->side[i]) {
			e->side[i] = sd;
			changed = true;
		}
	}
	if (changed) {
		refit(e);
		elog(e, "model h_old=%.4g h_new=%.4g w_old=%.4g w_new=%.4g\n", e->md.old.h,
		     e->md.new_.h, e->md.w_old, e->md.w_new);
	}
}

/* Record one search run at idx: likelihood, posterior, commit state. */
static void observe(struct engine *e, size_t idx, double value)
{
	double llr = model_llr(&e->md, value);

	if (e->nobs == e->obs_cap) {
		e->obs_cap = e->obs_cap ? 2 * e->obs_cap : 64;
		e->obs = xrealloc(e->obs, e->obs_cap * sizeof(*e->obs));
	}
	e->obs[e->nobs].idx = idx;
	e->obs[e->nobs++].value = value;
	e->c[idx].runs++;
	e->c[idx].llr += llr;
	post_update(e, idx, llr);
	maybe_refit(e);
}

static void mark_skip(struct engine *e, size_t idx)
{
	e->c[idx].skipped = true;
	e->c[idx].verdict = BISECT_SKIP;
}

/* ---- endpoints ---- */

static int endpoints(struct engine *e, double **old_out, size_t *no_out,
		     double **new_out, size_t *nn_out)
{
	const struct bisect_opts *o = &e->o;
	unsigned want = o->fixed_repeats ? o->fixed_repeats :
			o->early_endpoints && o->endpoint_min_runs > EARLY_RUNS ? EARLY_RUNS :
			o->endpoint_min_runs;
	unsigned cap = o->fixed_repeats ? o->fixed_repeats : o->endpoint_max_runs;
	double *ov = xmalloc(cap * sizeof(*ov)), *nv = xmalloc(cap * sizeof(*nv));
	size_t no = 0, nn = 0;
	struct bisect_result *r = e->r;
	int rc;

	for (;;) {
		if ((rc = plan_round(e, 0, e->n - 1, no, nn, want, SIZE_MAX)))
			goto fail;
		while (no < want || nn < want) {
			double v;

			if (no <= nn) {
				rc = measure(e, 0, "endpoint", &v);
				if (rc < 0)
					goto fail;
				if (rc) {
					snprintf(r->message, sizeof(r->message),
						 "%s endpoint (commit 0) cannot be measured: skip",
						 e->o.find_fix ? "bad" : "good");
					r->outcome = BISECT_ENDPOINT_SKIP;
					goto stop;
				}
				ov[no++] = v;
			} else {
				rc = measure(e, e->n - 1, "endpoint", &v);
				if (rc < 0)
					goto fail;
				if (rc) {
					snprintf(r->message, sizeof(r->message),
						 "%s endpoint (commit %zu) cannot be measured: skip",
						 e->o.find_fix ? "good" : "bad", e->n - 1);
					r->outcome = BISECT_ENDPOINT_SKIP;
					goto stop;
				}
				nv[nn++] = v;
			}
		}
		if (o->fixed_repeats) {
			/* git bisect run trusts the endpoints it is given */
			r->endpoint_p = mwu_p(ov, no, nv, nn, o->higher_is_worse, &r->endpoint_effect);
			break;
		}
		r->endpoint_p = mwu_p(ov, no, nv, nn, o->higher_is_worse, &r->endpoint_effect);
		r->endpoint_evalue = endpoint_evalue(ov, no, nv, nn);
		enum cmp3 c = CMP_UNKNOWN;
		if (o->early_endpoints && r->endpoint_evalue >= 1 / ALPHA_DIFFERENT &&
		    fabs(r->endpoint_effect - 0.5) >= MIN_EFFECT)
			c = CMP_DIFFERENT;	/* the early, anytime-valid exit */
		else if (no >= o->endpoint_min_runs)
			c = compare3(r->endpoint_p, r->endpoint_effect, no,
				     o->endpoint_min_runs, ALPHA_DIFFERENT);
		elog(e, "endpoints n_old=%zu n_new=%zu p=%.6g effect=%.4f evalue=%.6g compare=%s\n",
		     no, nn, r->endpoint_p, r->endpoint_effect, r->endpoint_evalue,
		     c == CMP_DIFFERENT ? "different" : c == CMP_SAME ? "same" : "unknown");
		if (c == CMP_DIFFERENT)
			break;
		if (c == CMP_SAME || want >= cap) {
			snprintf(r->message, sizeof(r->message),
				 "endpoints do not differ: %zu runs of the old end (commit 0) vs %zu "
				 "of the new end (commit %zu), medians %.4g and %.4g, Mann-Whitney "
				 "p = %.3g, P(a new-end run worse than an old-end run) = %.2f",
				 no, nn, e->n - 1, stats_median(ov, no), stats_median(nv, nn),
				 r->endpoint_p, r->endpoint_effect);
			r->outcome = BISECT_NO_DIFFERENCE;
			goto stop;
		}
		want++;
	}
	r->endpoint_runs_old = (unsigned)no;
	r->endpoint_runs_new = (unsigned)nn;
	/* The new side must be worse for a regression, better for a fix. */
	if (!o->fixed_repeats && ((r->endpoint_effect < 0.5) != o->find_fix)) {
		snprintf(r->message, sizeof(r->message),
			 "endpoints differ the other way: the %s side (commit %zu, median %.4g) "
			 "is %s than commit 0 (median %.4g)%s",
			 o->find_fix ? "new" : "bad", e->n - 1, stats_median(nv, nn),
			 o->find_fix ? "worse" : "better", stats_median(ov, no),
			 o->find_fix ? "; drop --find-fix?" : "; use --find-fix?");
		r->outcome = BISECT_WRONG_DIRECTION;
		goto stop;
	}
	e->c[0].verdict = v_old(e);
	e->c[e->n - 1].verdict = v_new(e);
	e->c[0].runs = (unsigned)no;
	e->c[e->n - 1].runs = (unsigned)nn;
	*old_out = ov;
	*no_out = no;
	*new_out = nv;
	*nn_out = nn;
	return 0;
stop:
	r->endpoint_runs_old = (unsigned)no;
	r->endpoint_runs_new = (unsigned)nn;
	free(ov);
	free(nv);
	return 1;
fail:
	free(ov);
	free(nv);
	return rc;
}

/* ---- strategies ---- */

static bool budget_left(const struct engine *e)
{
	return e->r->runs_total < e->o.max_runs;
}

/* Probabilistic bisection. Returns 0 or an abort code. */
static int search_probabilistic(struct engine *e)
{
	struct bisect_candidate top[BISECT_TOP];
	size_t ntop;
	double conf = e->o.confidence;

	for (;;) {
		struct bisect_candidate best = classes_top(e, top, &ntop);
		size_t pick = 0;
		double cdf = 0, dist = 2, v;

		if (best.prob >= conf || !budget_left(e))
			return 0;
		for (size_t i = 1; i + 1 < e->n; i++) {
			cdf += e->post[i];
			if (e->c[i].skipped)
				continue;
			if (fabs(cdf - 0.5) < dist) {
				dist = fabs(cdf - 0.5);
				pick = i;
			}
		}
		if (!pick)
			return 0;	/* every inner commit is skipped */
		int rc = measure(e, pick, "search", &v);

		if (rc < 0)
			return rc;
		if (rc) {
			mark_skip(e, pick);
			elog(e, "verdict idx=%zu verdict=skip\n", pick);
			continue;
		}
		observe(e, pick, v);
		double pn = post_cdf(e, pick);
		enum bisect_verdict vd = pn >= conf ? v_new(e) :
					 pn <= 1 - conf ? v_old(e) : BISECT_UNSURE;

		e->c[pick].verdict = vd;
		elog(e, "verdict idx=%zu runs=%u llr=%.4f p_new=%.4f verdict=%s\n", pick,
		     e->c[pick].runs, e->c[pick].llr, pn, bisect_verdict_name(vd));
		log_posterior(e);
	}
}

/* Nearest untested-or-testable commit to the middle of (lo, hi), or 0. */
static size_t binary_pick(const struct engine *e, size_t lo, size_t hi)
{
	size_t mid = lo + (hi - lo) / 2;

	for (size_t d = 0; d < hi - lo; d++) {
		if (mid + d < hi && mid + d > lo && !e->c[mid + d].skipped)
			return mid + d;
		if (d && mid >= d && mid - d > lo && !e->c[mid - d].skipped)
			return mid - d;
	}
	return 0;
}

/* Binary search with fixed or adaptive (SPRT) repeats. */
static int search_binary(struct engine *e, size_t *lo_out, size_t *hi_out)
{
	size_t lo = 0, hi = e->n - 1;
	double a = log(e->o.confidence / (1 - e->o.confidence));
	unsigned k = e->o.fixed_repeats, cap = k ? k : e->o.step_max_runs;

	while (hi - lo > 1 && budget_left(e)) {
		size_t pick = binary_pick(e, lo, hi);
		bool skipped = false;
		enum bisect_verdict vd = BISECT_UNSURE;
		bool lean_new = false;
		double v;

		if (!pick)
			break;	/* (lo, hi) is all skips: a range */
		while (e->c[pick].runs < cap && budget_left(e)) {
			int rc = measure(e, pick, "search", &v);

			if (rc < 0)
				return rc;
			if (rc) {
				skipped = true;
				break;
			}
			observe(e, pick, v);
			if (!k && fabs(e->c[pick].llr) >= a)
				break;
		}
		if (skipped) {
			mark_skip(e, pick);
			elog(e, "verdict idx=%zu verdict=skip\n", pick);
			continue;
		}
		lean_new = e->c[pick].llr > 0;
		bool sure = !k && fabs(e->c[pick].llr) >= a;

		if (!sure && e->c[pick].runs < cap)
			break;	/* budget spent mid-commit */
		if (k || sure)
			vd = lean_new ? v_new(e) : v_old(e);
		e->c[pick].verdict = vd;
		elog(e, "verdict idx=%zu runs=%u llr=%.4f verdict=%s lean=%s\n", pick,
		     e->c[pick].runs, e->c[pick].llr, bisect_verdict_name(vd),
		     bisect_verdict_name(lean_new ? v_new(e) : v_old(e)));
		log_posterior(e);
		if (lean_new)
			hi = pick;
		else
			lo = pick;
	}
	*lo_out = lo;
	*hi_out = hi;
	return 0;
}

/* ---- culprit check ---- */

static int culprit_check(struct engine *e, size_t parent, size_t culprit)
{
	struct bisect_result *r = e->r;
	unsigned want = e->o.check_runs, cap = 2 * e->o.check_runs;
	double *pv = xmalloc(cap * sizeof(*pv)), *cv = xmalloc(cap * sizeof(*cv));
	size_t np = 0, nc = 0;
	unsigned tries = 0;
	double effect = 0.5;
	int rc = 0;

	r->check_parent = parent;
	r->check_culprit = culprit;
	/* Interleaved, parent first, so drift over time hits both sides. */
	for (;;) {
		if ((rc = plan_round(e, parent, culprit, np, nc, want, 4 * cap - tries)))
			goto out;
		while ((np < want || nc < want) && tries < 4 * cap) {
			double v;
			bool par = np <= nc;

			tries++;
			rc = measure(e, par ? parent : culprit, "check", &v);
			if (rc < 0)
				goto out;
			if (rc)
				continue;
			r->runs_check++;
			if (par)
				pv[np++] = v;
			else
				cv[nc++] = v;
		}
		rc = 0;
		if (np < 2 || nc < 2) {
			r->check_abandoned = true;
			r->check_attempts = tries;
			r->check_skips = tries - (unsigned)(np + nc);
			elog(e, "check parent=%zu culprit=%zu not-run=too-many-skips skips=%u "
			     "attempts=%u\n", parent, culprit, r->check_skips, r->check_attempts);
			goto out;
		}
		r->check_p = mwu_p(pv, np, cv, nc, e->o.higher_is_worse, &effect);
		enum cmp3 c = compare3(r->check_p, effect, np < nc ? np : nc, e->o.check_runs,
				       ALPHA_CHECK);
		if (c != CMP_UNKNOWN || want >= cap || np < want || nc < want)
			break;
		want++;
	}
	r->check_done = true;
	r->check_n_parent = (unsigned)np;
	r->check_n_culprit = (unsigned)nc;
	r->check_median_parent = stats_median(pv, np);
	r->check_median_culprit = stats_median(cv, nc);
	r->check_shift = stats_hodges_lehmann(pv, np, cv, nc);
	/* effect = P(culprit worse than parent): > 1/2 for a regression. */
	r->check_passed = r->check_p <= ALPHA_CHECK && ((effect > 0.5) != e->o.find_fix);
	elog(e, "check parent=%zu culprit=%zu n_parent=%zu n_culprit=%zu median_parent=%.6g "
	     "median_culprit=%.6g shift=%.6g p=%.6g effect=%.4f passed=%d\n", parent, culprit,
	     np, nc, r->check_median_parent, r->check_median_culprit, r->check_shift, r->check_p,
	     effect,
	     r->check_passed);
out:
	free(pv);
	free(cv);
	return rc;
}

/* ---- the driver ---- */

void bisect_result_line(struct buf *b, const struct bisect_result *r)
{
	buf_printf(b, "result outcome=%s first=%zu last=%zu prob=%.6f runs=%u check_runs=%u "
		   "skips=%u endpoint_p=%.6g", bisect_outcome_name(r->outcome),
		   r->culprit_first, r->culprit_last, r->culprit_prob, r->runs_total,
		   r->runs_check, r->skips, r->endpoint_p);
	if (r->check_done)
		buf_printf(b, " check=%s check_p=%.6g", r->check_passed ? "passed" : "failed",
			   r->check_p);
	else if (r->check_abandoned)
		buf_printf(b, " check=not-run check_skips=%u check_attempts=%u", r->check_skips,
			   r->check_attempts);
}

/* Whether the check with k runs a side can ever pass: complete separation,
 * grown through the grey zone exactly as culprit_check() grows it. */
static bool check_can_pass(unsigned k)
{
	for (unsigned n = k; n <= 2 * k; n++) {
		enum cmp3 c;

		if (n < 2)
			continue;
		c = compare3(stats_mwu_min_p(n, n), 1.0, n, k, ALPHA_CHECK);
		if (c == CMP_DIFFERENT)
			return true;
		if (c == CMP_SAME)
			return false;
	}
	return false;
}

unsigned bisect_check_runs_min(void)
{
	unsigned k = 1;

	while (!check_can_pass(k))
		k++;
	return k;
}

static void log_config(struct engine *e)
{
	const struct bisect_opts *o = &e->o;

	elog(e, "kcanary-bisect-log 1\n");
	elog(e, "config n=%zu strategy=%s find_fix=%d higher_is_worse=%d confidence=%.17g "
	     "max_runs=%u endpoint_min_runs=%u endpoint_max_runs=%u fixed_repeats=%u "
	     "step_max_runs=%u check_runs=%u early_endpoints=%d sharp_good=%d\n", e->n,
	     o->strategy == BISECT_BINARY ? "binary" : "probabilistic", o->find_fix,
	     o->higher_is_worse, o->confidence, o->max_runs, o->endpoint_min_runs,
	     o->endpoint_max_runs, o->fixed_repeats, o->step_max_runs, o->check_runs,
	     o->early_endpoints, o->sharp_good);
}

static int check_opts(const struct bisect_opts *o, size_t n)
{
	if (n < 2 || !(o->confidence > 0.5 && o->confidence < 1))
		return -EINVAL;
	if (!o->fixed_repeats && (o->endpoint_min_runs < 2 ||
				  o->endpoint_max_runs < o->endpoint_min_runs ||
				  o->step_max_runs < 1))
		return -EINVAL;
	if (o->endpoint_max_runs > 1000 || o->fixed_repeats > 1000 || o->check_runs > 1000)
		return -EINVAL;
	/* no "no difference" from ends that could not have shown one */
	if (!o->fixed_repeats && !(o->early_endpoints ? endpoints_can_differ(o->endpoint_max_runs)
				   : stats_mwu_min_p(o->endpoint_max_runs, o->endpoint_max_runs) <=
				     ALPHA_DIFFERENT))
		return -EINVAL;
	if (o->check_runs && o->check_runs < bisect_check_runs_min())
		return -EINVAL;
	return 0;
}

int bisect_run(struct bisect_result *out, size_t n, const struct bisect_opts *opts,
	       bisect_measure_fn measure_fn, void *ctx, struct buf *log,
	       enum bisect_verdict *verdicts)
{
	return bisect_run_planned(out, n, opts, measure_fn, NULL, ctx, log, verdicts);
}

/* Probabilistic search: a commit's verdict is what the final posterior
 * says of it. */
static void posterior_verdicts(struct engine *e)
{
	double cdf = 0;

	for (size_t i = 1; i + 1 < e->n; i++) {
		cdf += e->post[i];
		if (!e->c[i].runs || e->c[i].skipped)
			continue;
		e->c[i].verdict = cdf >= e->o.confidence ? v_new(e) :
				  cdf <= 1 - e->o.confidence ? v_old(e) : BISECT_UNSURE;
	}
}

/* The culprit range, its probability and the outcome: binary search's
 * own answer when it converged (lo, hi: its last old and first new
 * commit), else the posterior's best class. */
static void pick_culprit(struct engine *e, const struct bisect_candidate *best, size_t lo,
			 size_t hi)
{
	struct bisect_result *r = e->r;

	if (e->o.strategy == BISECT_BINARY && hi - lo <= 1) {
		/* binary search's own answer: the first new commit */
		r->culprit_first = r->culprit_last = hi;
	} else if (e->o.strategy == BISECT_BINARY && !binary_pick(e, lo, hi)) {
		r->culprit_first = lo + 1;
		r->culprit_last = hi;
	} else {
		r->culprit_first = best->first;
		r->culprit_last = best->last;
	}
	r->culprit_prob = 0;
	for (size_t j = r->culprit_first; j <= r->culprit_last; j++)
		r->culprit_prob += e->post[j];
	if (e->o.strategy == BISECT_PROBABILISTIC)
		r->outcome = best->prob >= e->o.confidence ?
			     (best->first == best->last ? BISECT_FOUND : BISECT_RANGE) :
			     BISECT_UNDECIDED;
	else
		r->outcome = hi - lo > 1 && binary_pick(e, lo, hi) ? BISECT_UNDECIDED :
			     r->culprit_first == r->culprit_last ? BISECT_FOUND : BISECT_RANGE;
}

/* The result's sentence, by outcome. */
static void result_message(struct engine *e, size_t lo, size_t hi)
{
	struct bisect_result *r = e->r;

	if (r->outcome == BISECT_RANGE)
		snprintf(r->message, sizeof(r->message),
			 "the culprit is in a range: one of commits %zu..%zu (p = %.3f); "
			 "commits %zu..%zu could not be tested (skip)", r->culprit_first,
			 r->culprit_last, r->culprit_prob, r->culprit_first, r->culprit_last - 1);
	else if (r->outcome == BISECT_FOUND && e->o.strategy == BISECT_BINARY)
		snprintf(r->message, sizeof(r->message),
			 "%s commit: %zu (binary search converged: %zu %s, %zu %s; posterior "
			 "p = %.3f%s)", e->o.find_fix ? "first fixed" : "first bad", r->culprit_first,
			 lo, bisect_verdict_name(v_old(e)), hi, bisect_verdict_name(v_new(e)),
			 r->culprit_prob, r->culprit_prob < e->o.confidence ? ", below the confidence" :
			 "");
	else if (r->outcome == BISECT_FOUND)
		snprintf(r->message, sizeof(r->message), "%s commit: %zu (p = %.3f)",
			 e->o.find_fix ? "first fixed" : "first bad", r->culprit_first,
			 r->culprit_prob);
	else if (r->culprit_prob >= BISECT_LIKELY)
		snprintf(r->message, sizeof(r->message),
			 "run budget (%u) spent below confidence %.2f: best guess %zu..%zu "
			 "(p = %.3f)", e->o.max_runs, e->o.confidence, r->culprit_first,
			 r->culprit_last, r->culprit_prob);
	else {
		int len = snprintf(r->message, sizeof(r->message),
				   "run budget (%u) spent below confidence %.2f: no commit is likely "
				   "(none above p = %.2f); top candidates", e->o.max_runs,
				   e->o.confidence, BISECT_LIKELY);

		for (size_t i = 0; i < r->ntop && len > 0 && (size_t)len < sizeof(r->message); i++)
			len += r->top[i].first == r->top[i].last ?
			       snprintf(r->message + len, sizeof(r->message) - (size_t)len,
					"%s %zu (p = %.3f)", i ? "," : "", r->top[i].first,
					r->top[i].prob) :
			       snprintf(r->message + len, sizeof(r->message) - (size_t)len,
					"%s %zu..%zu (p = %.3f)", i ? "," : "", r->top[i].first,
					r->top[i].last, r->top[i].prob);
	}
}

/* The culprit check (opts.check_runs) of a found culprit or range, its
 * failure or abandonment added to the message. Returns 0 or the
 * oracle's abort code. */
static int check_result(struct engine *e)
{
	struct bisect_result *r = e->r;
	int rc;

	if (!e->o.check_runs || (r->outcome != BISECT_FOUND && r->outcome != BISECT_RANGE))
		return 0;
	rc = culprit_check(e, r->culprit_first - 1, r->culprit_last);
	if (rc < 0)
		return rc;
	if (r->check_done && !r->check_passed) {
		size_t len = strlen(r->message);

		snprintf(r->message + len, sizeof(r->message) - len,
			 "; culprit check FAILED (p = %.3g): not a result", r->check_p);
	}
	if (r->check_abandoned) {
		size_t len = strlen(r->message);

		snprintf(r->message + len, sizeof(r->message) - len,
			 "; culprit check not run: %u of %u runs skipped", r->check_skips,
			 r->check_attempts);
	}
	return 0;
}

/* The steps (endpoints, search_binary/search_probabilistic, the culprit
 * check) are functions; what is left fills struct bisect_result from them
 * in one place. */
int bisect_run_planned(struct bisect_result *out, size_t n, const struct bisect_opts *opts,
		       bisect_measure_fn measure_fn, bisect_plan_fn plan_fn, void *ctx,
		       struct buf *log, enum bisect_verdict *verdicts)
{
	struct bisect_opts defaults;
	struct bisect_result r;
	struct engine e;
	double *ov = NULL, *nv = NULL;
	size_t no = 0, nn = 0, lo = 0, hi = 0;
	int rc;

	if (!opts) {
		bisect_opts_init(&defaults);
		opts = &defaults;
	}
	rc = check_opts(opts, n);
	if (rc)
		return rc;
	memset(&r, 0, sizeof(r));
	memset(&e, 0, sizeof(e));
	e.n = n;
	e.o = *opts;
	e.measure = measure_fn;
	e.plan = plan_fn;
	e.ctx = ctx;
	e.log = log;
	e.r = &r;
	e.c = xcalloc(n, sizeof(*e.c));
	e.post = xcalloc(n, sizeof(*e.post));
	e.touched = xcalloc(n, sizeof(*e.touched));
	e.side = xcalloc(n, sizeof(*e.side));
	for (size_t j = 1; j < n; j++)
		e.post[j] = 1.0 / (double)(n - 1);
	r.culprit_first = r.culprit_last = 0;
	log_config(&e);

	rc = endpoints(&e, &ov, &no, &nv, &nn);
	if (rc < 0)
		goto out;
	if (rc > 0) {
		rc = 0;
		goto done;
	}
	e.md.sharp_good = e.o.sharp_good;
	e.md.find_fix = e.o.find_fix;
	model_init(&e.md, ov, no, nv, nn);
	e.ov = ov;
	e.nv = nv;
	e.no = no;
	e.nn = nn;
	elog(&e, "model h_old=%.4g h_new=%.4g w_old=%.4g w_new=%.4g\n", e.md.old.h,
	     e.md.new_.h, e.md.w_old, e.md.w_new);

	if (e.o.strategy == BISECT_PROBABILISTIC)
		rc = search_probabilistic(&e);
	else
		rc = search_binary(&e, &lo, &hi);
	if (rc < 0)
		goto out_model;

	struct bisect_candidate best = classes_top(&e, r.top, &r.ntop);

	if (e.o.strategy == BISECT_PROBABILISTIC)
		posterior_verdicts(&e);
	pick_culprit(&e, &best, lo, hi);
	result_message(&e, lo, hi);
	rc = check_result(&e);
	if (rc < 0)
		goto out_model;
done:
	/* Each tested commit's final verdict, for the table of `bisect replay`. */
	for (size_t i = 0; i < n; i++)
		if (e.c[i].verdict != BISECT_UNTESTED)
			elog(&e, "verdict idx=%zu final=1 runs=%u verdict=%s\n", i, e.c[i].runs,
			     bisect_verdict_name(e.c[i].verdict));
	if (verdicts)
		for (size_t i = 0; i < n; i++)
			verdicts[i] = e.c[i].verdict;
	if (log) {
		bisect_result_line(log, &r);
		buf_puts(log, "\n");
	}
	*out = r;
	rc = 0;
out_model:
	if (ov)
		model_release(&e.md);
out:
	free(ov);
	free(nv);
	free(e.c);
	free(e.post);
	free(e.touched);
	free(e.obs);
	free(e.side);
	return rc;
}
