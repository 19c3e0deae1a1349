/* canary_sim.c - simulated cohorts through the canary judge (canary_sim.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "judge/canary_sim.h"
#include "judge/stats.h"
#include "util.h"

void canary_sim_opts_default(struct canary_sim_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->trials = 200;
	o->runs = 20;
	o->seed = 1;
	o->shift = 0.25;
	o->spread = 2;
	o->stall_rate = 0.2;
	canary_opts_default(&o->judge);
	o->judge.bootstrap = 0;
	canary_metric_config_default(&o->metric, "worst_lag_s");
}

static double uniform(uint64_t *st, double a, double b)
{
	return a + (b - a) * stats_rand01(st);
}

/* One run of a good kernel: worst lag in seconds (canary_sim.h). */
static double good_run(uint64_t *st)
{
	return stats_rand01(st) < 0.85 ? uniform(st, 1.0, 1.6) : uniform(st, 1.6, 2.4);
}

int canary_sim_run(struct canary_sim_stats *out, enum canary_sim_scenario s,
		   const struct canary_sim_opts *o)
{
	if (o->runs < 2 || !o->trials)
		return -EINVAL;
	size_t n = o->runs;
	double *ctl = xmalloc(n * sizeof(*ctl)), *can = xmalloc(n * sizeof(*can));
	double *pool = xmalloc(2 * n * sizeof(*pool));
	struct canary_sim_stats st = { .trials = o->trials };
	int r = 0;

	for (unsigned t = 0; t < o->trials; t++) {
		/* trial t's own generator: a splitmix64 output of (seed,
		 * scenario, t), not the key itself. The key steps by splitmix's
		 * own increment per trial, so as a state it made trial t + 1 the
		 * stream of trial t shifted by one draw (shared values); mixed,
		 * the trials' states are unrelated (Steele, Lea & Flood 2014). */
		uint64_t key = o->seed * 0x2545f4914f6cdd1dULL + (uint64_t)s * 0x100000001b3ULL +
			       (uint64_t)t * 0x9e3779b97f4a7c15ULL;
		uint64_t rs = stats_rand64(&key);
		if (s == CANARY_SIM_AA) {
			/* one cohort of 2n hosts on the same kernel, split at random */
			for (size_t i = 0; i < 2 * n; i++)
				pool[i] = good_run(&rs);
			for (size_t i = 2 * n - 1; i > 0; i--) {
				size_t j = (size_t)(stats_rand64(&rs) % (i + 1));
				double x = pool[i];
				pool[i] = pool[j];
				pool[j] = x;
			}
			memcpy(ctl, pool, n * sizeof(*ctl));
			memcpy(can, pool + n, n * sizeof(*can));
		} else {
			for (size_t i = 0; i < n; i++)
				ctl[i] = good_run(&rs);
			for (size_t i = 0; i < n; i++) {
				double v = good_run(&rs), m = CANARY_SIM_MEDIAN_S;
				if (s == CANARY_SIM_SHIFT)
					v *= 1 + o->shift;
				else if (s == CANARY_SIM_SPREAD)
					v = m + o->spread * (v - m);
				else if (stats_rand01(&rs) < o->stall_rate)
					v = uniform(&rs, 19, 26);
				can[i] = v;
			}
		}
		struct canary_metric_input in = {
			.cfg = o->metric, .control = ctl, .ncontrol = n, .canary = can, .ncanary = n,
		};
		struct canary_opts jo = o->judge;
		struct canary_verdict v;
		jo.seed = o->judge.seed + t;
		if ((r = canary_judge(&v, &in, 1, &jo)))
			goto out;
		st.result[v.result]++;
		st.cls[v.metrics[0].cls]++;
		canary_verdict_release(&v);
	}
	*out = st;
out:
	free(ctl);
	free(can);
	free(pool);
	return r;
}
