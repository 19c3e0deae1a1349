/* stress_ng.h - what the `stress-ng` workload (stress_ng.c) reads from
 * stress-ng: the metrics section of its --yaml file (libyaml's document
 * loader; stress_ng.c is the agent's only file including <yaml.h>).
 * Tested on output of the real stress-ng 0.15 (tests/fixtures/stress-ng/).
 *
 * Metric names: stress-ng:STRESSOR:bogo_ops_s (bogo-ops-per-second-real-time,
 * ops/s, higher) and stress-ng:STRESSOR:bogo_ops (ops, higher).
 */
#ifndef KC_STRESS_NG_H
#define KC_STRESS_NG_H

#include <stddef.h>

#include "util.h"

/* One figure: name (borrowed for the call), value, unit, better. */
typedef void sng_metric_fn(void *ud, const char *name, double value, const char *unit,
			   const char *better);

/*
 * sng_parse_yaml - call emit for each stressor's figures in the YAML text
 * of len bytes. Returns the number of stressors, or -EINVAL with a message
 * in err (error.h) when it is not YAML or has no metrics sequence (-ENOMEM
 * when libyaml cannot start).
 */
int sng_parse_yaml(const char *text, size_t len, sng_metric_fn *emit, void *ud,
		   struct buf *err);

#endif
