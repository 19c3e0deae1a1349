/* perf_bench.h - what the `perf-bench` workload (perf_bench.c) reads
 * from `perf bench --format=simple SUBSYS BENCH`: one number per line,
 * after a "# function 'NAME' (...)" line for the mem benchmarks. Tested
 * on output of the real perf 6.1 (tests/fixtures/perf-bench/).
 *
 * Metric names: perf-bench:SUBSYS-BENCH:total_s (s, lower: sched
 * messaging, sched pipe and the other timed ones) or
 * perf-bench:SUBSYS-BENCH:FUNCTION (bytes/s, higher: mem memcpy, memset).
 */
#ifndef KC_PERF_BENCH_H
#define KC_PERF_BENCH_H

/* One figure: name (borrowed for the call), value, unit, better. */
typedef void pb_metric_fn(void *ud, const char *name, double value, const char *unit,
			  const char *better);

/*
 * pb_parse - call emit for each figure in text, the output of perf bench
 * --format=simple for bench ("sched/messaging", "mem/memcpy"). Returns the
 * number of figures (0: perf printed none).
 */
int pb_parse(const char *text, const char *bench, pb_metric_fn *emit, void *ud);

#endif
