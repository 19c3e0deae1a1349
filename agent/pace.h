/* pace.h - the paced writer's schedule and the lag it is measured by.
 *
 * Pure arithmetic on times the caller passes in (seconds from any monotonic
 * clock, usually clock_mono_s() of util.h), so tests drive it with made-up
 * clocks. The writer is due to have written rate * (now - start) bytes;
 * lag is how far behind that schedule the bytes actually written are.
 */
#ifndef KC_PACE_H
#define KC_PACE_H

#include <stdint.h>

/* One MiB: rate_mbps is MiB/s, as the seed's "250MiB/s". */
#define PACE_MIB 1048576.0

struct pace {
	double start_s;          /* schedule origin (monotonic seconds) */
	double rate_bytes_s;     /* > 0 */
};

/* pace_init - schedule starting at start_s, rate_mbps MiB/s (> 0). */
void pace_init(struct pace *p, double start_s, double rate_mbps);

/* pace_due_s - the time at which byte number `bytes` is due:
 * start_s + bytes / rate. */
double pace_due_s(const struct pace *p, uint64_t bytes);

/*
 * pace_lag_s - lag at now_s of a writer that has written written_bytes:
 * now_s - pace_due_s(written_bytes), or 0 when it is on or ahead of
 * schedule (never negative). A writer blocked in write() sees its lag grow
 * by one second per second.
 */
double pace_lag_s(const struct pace *p, double now_s, uint64_t written_bytes);

/*
 * pace_wait_s - how long a writer that has written written_bytes should
 * sleep at now_s before writing more: pace_due_s(written_bytes) - now_s,
 * or 0 when it is behind (it then writes without sleeping until it has
 * caught up: a catch-up burst).
 */
double pace_wait_s(const struct pace *p, double now_s, uint64_t written_bytes);

/*
 * struct lag_stats - the lag samples of one run, one per sampling period
 * (one second). worst/mean are over the samples; over_1s counts samples
 * with lag > 1 s, so with 1 s periods it is seconds spent more than 1 s
 * behind.
 */
struct lag_stats {
	double worst_lag_s;
	double sum_lag_s;
	uint64_t n_samples;
	uint64_t n_over_1s;
};
#define LAG_STATS_INIT { 0.0, 0.0, 0, 0 }

void lag_stats_add(struct lag_stats *s, double lag_s);
/* Mean lag in seconds; 0 with no samples. */
double lag_stats_mean_s(const struct lag_stats *s);

/*
 * pace_max_bytes - the most a paced writer of block-byte writes at
 * rate_mbps (> 0) has written when it stops after duration_s: it writes a
 * block only when on or behind schedule (pace_wait_s() 0: written <=
 * rate * elapsed, elapsed < duration_s), so each block starts at or below
 * R = rate * duration_s bytes and there are at most floor(R / block) + 1
 * of them. block > 0; 0 when duration_s <= 0; UINT64_MAX (saturated) when
 * that does not fit in 64 bits.
 */
uint64_t pace_max_bytes(double rate_mbps, double duration_s, uint64_t block);

/* pace_rate_mbps - achieved rate, MiB/s, of written_bytes over elapsed_s
 * seconds; 0 when elapsed_s <= 0. */
double pace_rate_mbps(uint64_t written_bytes, double elapsed_s);

#endif
