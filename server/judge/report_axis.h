/* report_axis.h - the compared axis of a report: which value of it each
 * stored run has, in which order the values come (the baseline first), and
 * what is left of a run's cell when the axis is taken out of it.
 *
 * An axis is any dimension a run varies in (docs/compare.md): "variant" (the kernel: the default), "fs", "host" (the
 * agent's hello host), "sysctl" (every sysctl of the cell together), one
 * sysctl ("vm.dirty_expire_centisecs" or "sysctl.vm.dirty_expire_centisecs")
 * or a workload knob ("mode", "sync_old", "shutdown_file"), or a part of
 * the variant ("revision", "patches"). A run's value
 * comes from its matrix cell ("fs=ext4 mode=removed") and, for a setting
 * that is not a matrix dimension, from its stored params; so a report can
 * pivot after the fact without rerunning anything.
 */
#ifndef KC_REPORT_AXIS_H
#define KC_REPORT_AXIS_H

#include <stddef.h>
#include <jansson.h>

#include "store/db.h"
#include "store/db_report.h"
#include "util.h"

struct report_axis {
	char *name;              /* as asked: "variant", "mode", "sysctl", ... */
	char **labels;           /* per value: the table's row label
				  * ("base (v6.12.117)", "mode=removed") */
	char **values;           /* per value: as a sentence says it ("base",
				  * "removed") */
	size_t n;
	size_t *of_run;          /* per run (index into d->runs): its value */
};

/*
 * report_axis_resolve - fill *out for axis name over d's runs. Values are
 * ordered as the job's spec lists them (its [matrix] dimension), else by
 * the first run stored with each; "variant" keeps the variants' order,
 * every variant included. baseline (NULL: the first value) is moved to
 * the front; it may be a value or a label. Runs without a value on the
 * axis get the value "-". Returns 0, or -EINVAL when no run of the job
 * varies in or has a setting named name, or baseline is not one of the
 * values, with err naming the axis and what the job has.
 * Release with report_axis_release().
 */
int report_axis_resolve(struct report_axis *out, const struct db_report_data *d,
			const char *name, const char *baseline, struct buf *err);
void report_axis_release(struct report_axis *a);

/*
 * report_axis_rest - run's cell text without the tokens of the given axes
 * ("fs=ext4 mode=removed" without mode -> "fs=ext4"). A new string.
 */
char *report_axis_rest(const struct db_report_run *run, const char *const *axes,
		       size_t naxes);

/* Whether axis name is the variant axis ("variant", "kernel"). */
int report_axis_is_variant(const char *name);

/* report_axis_param - the value of setting axis in a run's params (a
 * knob, or a sysctl under "sysctl": axis "sysctl.NAME" or a bare NAME),
 * strings as they are, numbers as %g: what the report's axis takes. A new
 * string the caller frees; NULL when params (may be NULL) has none. */
char *report_axis_param(json_t *params, const char *axis);

/* Whether axis name is a part of the variant: "revision" (v5, v6; "base"
 * for a variant that is no series revision) or "patches" (the patch
 * prefix: 1, 1-2, "all"; "none" for the base). --by revision,patches is
 * the revision x patch-prefix matrix of a --prefixes job. */
int report_axis_is_of_variant(const char *name);

/* The part ("revision" or "patches") of a variant named name, as above.
 * A new string. */
char *report_axis_variant_part(const char *name, const char *axis);

#endif
