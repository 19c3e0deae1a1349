/* report_data.c - the helpers every part of the report uses
 * (report_data.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dec_round.h"
#include "judge/report_data.h"

/* Human labels for the metrics the workloads emit. */
static const struct {
	const char *metric, *title, *short_name;
} labels[] = {
	{ "worst_lag_s", "Worst lag behind schedule", "worst lag" },
	{ "mean_lag_s", "Mean lag behind schedule", "mean lag" },
	{ "lag_over_1s_s", "Seconds with lag over 1s", "seconds lagging" },
	{ "rate_mbps", "Achieved write rate", "rate" },
	{ "written_bytes", "Bytes written", "written" },
};

const char *rep_metric_title(const char *m)
{
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (!strcmp(labels[i].metric, m))
			return labels[i].title;
	return m;
}

const char *rep_metric_short(const char *m)
{
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (!strcmp(labels[i].metric, m))
			return labels[i].short_name;
	return m;
}

/* v scaled by the largest step of steps[] (descending, ending in 1) that
 * it reaches in magnitude, as "87.4MiB/s": one decimal below 100, none
 * from there. */
static void fmt_scaled(char *out, size_t size, double v, const double *steps,
		       const char *const *names)
{
	size_t i = 0;
	while (steps[i] > 1 && fabs(v) < steps[i])
		i++;
	double x = v / steps[i];
	int places = fabs(dec_round(x, 1)) >= 100 ? 0 : 1;
	snprintf(out, size, "%.*f%s", places, dec_round(x, places), names[i]);
}

/* "85.3s" for seconds; bytes/s (fio's bandwidth) in KiB/s to GiB/s, ns
 * (fio's latencies) in us to s, ops/s with k and M, so that a row fits the
 * 80 columns of a mail; otherwise 4 significant digits and the unit. */
void rep_fmt_value(char *out, size_t size, double v, const char *unit)
{
	static const double bin[] = { 1 << 30, 1 << 20, 1 << 10, 1 };
	static const double dec[] = { 1e9, 1e6, 1e3, 1 };
	static const char *const bps[] = { "GiB/s", "MiB/s", "KiB/s", "B/s" };
	static const char *const ns[] = { "s", "ms", "us", "ns" };
	static const char *const ops[] = { "G ops/s", "M ops/s", "k ops/s", " ops/s" };

	if (isnan(v))
		snprintf(out, size, "-");
	else if (unit && !strcmp(unit, "bytes/s"))
		fmt_scaled(out, size, v, bin, bps);
	else if (unit && !strcmp(unit, "ns"))
		fmt_scaled(out, size, v, dec, ns);
	else if (unit && !strcmp(unit, "ops/s"))
		fmt_scaled(out, size, v, dec, ops);
	else if (unit && !strcmp(unit, "s") && fabs(dec_round(v, 0)) >= 100000)
		snprintf(out, size, "%.2gs", dec_round_sig(v, 2));
	else if (unit && !strcmp(unit, "s") && fabs(dec_round(v, 1)) >= 1000)
		snprintf(out, size, "%.0fs", dec_round(v, 0));
	else if (unit && !strcmp(unit, "s"))
		snprintf(out, size, "%.1fs", dec_round(v, 1));
	else if (unit && *unit)
		snprintf(out, size, "%.4g %s", dec_round_sig(v, 4), unit);
	else
		snprintf(out, size, "%.4g", dec_round_sig(v, 4));
}

void rep_fmt_p(char *out, size_t size, double p)
{
	if (p < 0.001)
		snprintf(out, size, "p<0.001");
	else if (p < 0.01)
		snprintf(out, size, "p=%.3f", dec_round(p, 3));
	else
		snprintf(out, size, "p=%.2f", dec_round(p, 2));
}

/* A value as sentences say it: a variant by its short name ("base"), any
 * other by its label ("mode=removed", "sync_old=2": a bare "2" says nothing). */
const char *rep_axis_say(const struct report_axis *a, size_t i)
{
	return report_axis_is_variant(a->name) ? a->values[i] : a->labels[i];
}

const struct db_report_variant *rep_variant_of(const struct report *r,
						  const struct db_report_run *run)
{
	for (size_t j = 0; j < r->d.nvariants; j++)
		if (r->d.variants[j].id == run->variant_id)
			return &r->d.variants[j];
	return NULL;
}

/* failed, timed-out and interrupted runs carry no value; a fleet host's
 * passive run stays 'running' while the host streams, and its value (the
 * median of its samples so far, db_report.h) counts */
bool rep_run_usable(const struct db_report_run *run)
{
	return !strcmp(run->status, "ok") || !strcmp(run->status, "incomplete") ||
	       (run->passive && !strcmp(run->status, "running"));
}

/* Rows of a cell: every variant on the variant axis (a failed one says
 * why); on another axis the values the cell has runs of. */
bool rep_group_shown(const struct rep_group *g)
{
	return g->v || g->nruns;
}

/* The first of run_id's rows in d.run_probes (sorted by run id), or
 * nrun_probes when it has none. */
size_t rep_run_probes_first(const struct report *r, int64_t run_id)
{
	size_t lo = 0, hi = r->d.nrun_probes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->d.run_probes[mid].run_id < run_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

json_t *rep_num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}
