/* bisect_sim.c - simulated histories for benchmarking the bisection
 * strategies (bisect_sim.h), driving the real engine in bisect.c. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "judge/bisect_sim.h"

/* xoshiro256** with splitmix64 seeding (Blackman and Vigna 2018,
 * https://prng.di.unimi.it/): small, fast, and the same on every machine. */
static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void rng_seed(struct bisect_sim_rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream * 0xd1342543de82ef95ULL);

	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(struct bisect_sim_rng *r)
{
	uint64_t *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

/* Uniform in [0, 1). */
static double rng_unit(struct bisect_sim_rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

static double rng_uniform(struct bisect_sim_rng *r, double a, double b)
{
	return a + (b - a) * rng_unit(r);
}

void bisect_sim_rng_seed(struct bisect_sim_rng *r, uint64_t seed, uint64_t stream)
{
	rng_seed(r, seed, stream);
}

double bisect_sim_unit(struct bisect_sim_rng *r)
{
	return rng_unit(r);
}

const char *bisect_sim_history_name(enum bisect_sim_history h)
{
	return h == SIM_CLEAN ? "clean" : h == SIM_FLAKY ? "flaky" : "mixed";
}

int bisect_sim_history_parse(enum bisect_sim_history *out, const char *s)
{
	if (!strcmp(s, "clean"))
		*out = SIM_CLEAN;
	else if (!strcmp(s, "flaky"))
		*out = SIM_FLAKY;
	else if (!strcmp(s, "mixed"))
		*out = SIM_MIXED;
	else
		return -EINVAL;
	return 0;
}

struct trial {
	struct bisect_sim_rng rng;
	size_t culprit;		/* first commit in the new state */
	bool flaky, find_fix;
	const unsigned char *broken;	/* commits that never build */
};

static double draw_good(struct bisect_sim_rng *r)
{
	return rng_unit(r) < 0.85 ? rng_uniform(r, 1.0, 1.6) : rng_uniform(r, 1.6, 2.4);
}

static double draw_bad(struct bisect_sim_rng *r, bool flaky)
{
	if (flaky)
		return rng_unit(r) < 7.0 / 9.0 ? rng_uniform(r, 19, 26) : rng_uniform(r, 1.3, 1.7);
	return exp(rng_uniform(r, log(12), log(90)));
}

static int sim_measure(void *ctx, size_t idx, double *value_out)
{
	struct trial *t = ctx;
	bool is_new = idx >= t->culprit;

	if (t->broken && t->broken[idx])
		return -ENOEXEC;	/* "does not build" */
	/* regression: new = bad; find_fix: old = bad, new = good */
	*value_out = is_new != t->find_fix ? draw_bad(&t->rng, t->flaky) : draw_good(&t->rng);
	return 0;
}

double bisect_sim_draw_good(struct bisect_sim_rng *r)
{
	return draw_good(r);
}

double bisect_sim_draw_bad(struct bisect_sim_rng *r, bool flaky)
{
	return draw_bad(r, flaky);
}

int bisect_sim_run(struct bisect_sim_stats *out, const struct bisect_sim_opts *so,
		   const struct bisect_opts *bo)
{
	struct bisect_sim_stats st = { 0 };
	unsigned char *broken = NULL;

	if (so->commits < 3 || !so->trials || so->skip_rate < 0 || so->skip_rate >= 1)
		return -EINVAL;
	if (so->skip_rate > 0)
		broken = malloc(so->commits);
	for (unsigned i = 0; i < so->trials; i++) {
		struct trial t = { .find_fix = so->find_fix };
		struct bisect_result r;
		struct bisect_sim_rng hist;
		int rc;

		/* The history of trial i is the same for every strategy. */
		rng_seed(&hist, so->seed, 2 * (uint64_t)i);
		t.culprit = 1 + (size_t)(rng_unit(&hist) * (double)(so->commits - 1));
		t.flaky = so->history == SIM_FLAKY ||
			  (so->history == SIM_MIXED && rng_unit(&hist) < 0.5);
		if (broken) {
			for (size_t j = 0; j < so->commits; j++)
				broken[j] = j > 0 && j + 1 < so->commits &&
					    rng_unit(&hist) < so->skip_rate;
			t.broken = broken;
		}
		rng_seed(&t.rng, so->seed, 2 * (uint64_t)i + 1);
		if (so->log)
			buf_printf(so->log, "# trial %u: culprit %zu, %s\n", i, t.culprit,
				   t.flaky ? "flaky" : "clean");
		rc = bisect_run(&r, so->commits, bo, sim_measure, &t, so->log, NULL);
		if (rc) {
			free(broken);
			return rc;
		}
		st.trials++;
		st.runs_sum += r.runs_total - r.runs_check;
		st.check_runs_sum += r.runs_check;
		st.endpoint_runs_sum += r.endpoint_runs_old + r.endpoint_runs_new;
		st.search_runs_sum += r.runs_total - r.runs_check - r.endpoint_runs_old -
				      r.endpoint_runs_new;
		if (r.runs_total - r.runs_check > st.runs_max)
			st.runs_max = r.runs_total - r.runs_check;
		bool hit = r.culprit_first == t.culprit && r.culprit_last == t.culprit;
		bool stopped = r.outcome == BISECT_NO_DIFFERENCE ||
			       r.outcome == BISECT_WRONG_DIRECTION ||
			       r.outcome == BISECT_ENDPOINT_SKIP;

		if (stopped) {
			st.stopped++;
			continue;
		}
		st.correct += hit;
		/* confident: the posterior holds the named culprit at the
		 * confidence, whatever the strategy (a binary search's FOUND is
		 * only "converged", see bisect.h) */
		if ((r.outcome == BISECT_FOUND || r.outcome == BISECT_RANGE) &&
		    r.culprit_prob >= (bo ? bo->confidence : 0.95)) {
			st.confident++;
			st.confident_wrong += !hit && r.outcome == BISECT_FOUND;
		}
		st.in_range += r.outcome == BISECT_RANGE && r.culprit_first <= t.culprit &&
			       t.culprit <= r.culprit_last;
		/* a range holding the culprit is a right answer, said as a range */
		bool ok = hit || (r.outcome == BISECT_RANGE && r.culprit_first <= t.culprit &&
				  t.culprit <= r.culprit_last);

		if (r.check_done) {
			st.checked++;
			st.check_passed += r.check_passed;
			st.check_passed_wrong += r.check_passed && !ok;
			st.check_failed_right += !r.check_passed && ok;
		}
	}
	free(broken);
	*out = st;
	return 0;
}

size_t bisect_sim_strategies(struct bisect_sim_strategy *out, size_t max)
{
	static const struct {
		const char *name;
		enum bisect_strategy s;
		unsigned repeats, check;
		bool before;	/* without the endpoints' early stop (issue 19) */
		bool laplace;	/* without the good side's sharp share */
	} rows[] = {
		{ "git bisect run (1 run/step)", BISECT_BINARY, 1, 0, false, false },
		{ "fixed 3 repeats", BISECT_BINARY, 3, 0, false, false },
		{ "fixed 5 repeats", BISECT_BINARY, 5, 0, false, false },
		{ "fixed 10 repeats", BISECT_BINARY, 10, 0, false, false },
		{ "adaptive repeats (SPRT)", BISECT_BINARY, 0, 0, false, false },
		{ "probabilistic", BISECT_PROBABILISTIC, 0, 0, false, false },
		{ "probabilistic + check", BISECT_PROBABILISTIC, 0, 5, false, false },
		{ BISECT_SIM_BEFORE_EARLY, BISECT_PROBABILISTIC, 0, 0, true, false },
		{ BISECT_SIM_BEFORE_SHARP, BISECT_PROBABILISTIC, 0, 0, false, true },
	};
	size_t k = 0;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]) && k < max; i++, k++) {
		out[k].name = rows[i].name;
		bisect_opts_init(&out[k].opts);
		out[k].opts.strategy = rows[i].s;
		out[k].opts.fixed_repeats = rows[i].repeats;
		out[k].opts.check_runs = rows[i].check;
		out[k].opts.early_endpoints = !rows[i].before;
		out[k].opts.sharp_good = !rows[i].laplace;
	}
	return k;
}
