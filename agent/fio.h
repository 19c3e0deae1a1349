/* fio.h - what the `fio` workload (fio.c) reads from fio: its JSON output
 * (--output-format=json) and its per-second bandwidth and IOPS logs
 * (--write_bw_log/--write_iops_log with --log_avg_msec=1000). Parsers
 * only; tests/agent/test_fio.c runs them on output of the real fio
 * (tests/fixtures/fio/).
 *
 * Metric names: fio:JOB:DIR:FIGURE, DIR read, write or trim (only the
 * directions that did I/O), FIGURE and its unit and direction:
 *   bw          bytes/s   higher   (fio's bw_bytes)
 *   iops        ops/s     higher
 *   clat_p50    ns        lower    (completion latency percentiles, clat_ns)
 *   clat_p99    ns        lower
 *   clat_p99.9  ns        lower
 * The per-second series use the same names for bw and iops.
 */
#ifndef KC_FIO_H
#define KC_FIO_H

#include <stddef.h>

#include "util.h"

/* One summary figure: name (borrowed for the call), value, unit, better. */
typedef void fio_metric_fn(void *ud, const char *name, double value, const char *unit,
			   const char *better);
/* One per-second sample: t_s since fio started, name, value. */
typedef void fio_sample_fn(void *ud, double t_s, const char *name, double value);

/*
 * fio_parse_json - call emit for every figure of every job in fio's JSON
 * output text (anything before the first '{', such as fio's notes, is
 * skipped). *njobs (may be NULL) gets the number of jobs. Returns the
 * number of figures, or -EINVAL with a message in err (error.h) when the
 * text is not fio's JSON.
 */
int fio_parse_json(const char *text, fio_metric_fn *emit, void *ud, size_t *njobs,
		   struct buf *err);

/*
 * fio_job_name - the name of job index i (0-based, the order of fio's
 * "jobs" array, which is also the N-1 of its log files name.N.log) as a
 * new string; NULL when there is no such job or text does not parse.
 */
char *fio_job_name(const char *text, size_t i);

/*
 * fio_parse_log - one of fio's logs ("msec, value, direction, bs, offset"
 * per line; direction 0 read, 1 write, 2 trim) for job: kind "bw" (values
 * in KiB/s, emitted as bytes/s) or "iops". Returns the number of samples
 * emitted; lines that do not parse are skipped.
 */
int fio_parse_log(const char *text, const char *job, const char *kind, fio_sample_fn *emit,
		  void *ud);

#endif
