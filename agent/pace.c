/* pace.c - see pace.h: the paced writer's schedule, lag and its statistics. */
#include <assert.h>
#include <math.h>

#include "pace.h"

void pace_init(struct pace *p, double start_s, double rate_mbps)
{
	assert(rate_mbps > 0);
	p->start_s = start_s;
	p->rate_bytes_s = rate_mbps * PACE_MIB;
}

double pace_due_s(const struct pace *p, uint64_t bytes)
{
	return p->start_s + (double)bytes / p->rate_bytes_s;
}

double pace_lag_s(const struct pace *p, double now_s, uint64_t written_bytes)
{
	double lag = now_s - pace_due_s(p, written_bytes);

	return lag > 0 ? lag : 0.0;
}

double pace_wait_s(const struct pace *p, double now_s, uint64_t written_bytes)
{
	double wait = pace_due_s(p, written_bytes) - now_s;

	return wait > 0 ? wait : 0.0;
}

void lag_stats_add(struct lag_stats *s, double lag_s)
{
	if (lag_s > s->worst_lag_s)
		s->worst_lag_s = lag_s;
	s->sum_lag_s += lag_s;
	s->n_samples++;
	if (lag_s > 1.0)
		s->n_over_1s++;
}

double lag_stats_mean_s(const struct lag_stats *s)
{
	return s->n_samples ? s->sum_lag_s / (double)s->n_samples : 0.0;
}

double pace_rate_mbps(uint64_t written_bytes, double elapsed_s)
{
	return elapsed_s > 0 ? (double)written_bytes / PACE_MIB / elapsed_s : 0.0;
}

uint64_t pace_max_bytes(double rate_mbps, double duration_s, uint64_t block)
{
	assert(rate_mbps > 0 && block > 0);
	double blocks;
	uint64_t bytes;

	if (duration_s <= 0)
		return 0;
	/* a converted double above 2^64 is undefined: saturate first */
	blocks = floor(rate_mbps * PACE_MIB * duration_s / (double)block) + 1;
	if (!(blocks < 0x1p64) || __builtin_mul_overflow((uint64_t)blocks, block, &bytes))
		return UINT64_MAX;
	return bytes;
}
