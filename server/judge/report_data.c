/* report_data.c - the helpers every part of the report uses
 * (report_data.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_num.h"
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

/* v's shortest decimal form as its digits (no point, no sign, up to 17)
 * and the power of ten of the first: 30.25 -> "3025", 1. */
static void shortest_digits(char dig[24], int *exp10, double v)
{
	char s[40], *e;
	size_t n = 0;

	snprintf(s, sizeof(s), "%.*e", json_num_digits(v) - 1, fabs(v));
	for (const char *c = s; *c && *c != 'e'; c++)
		if (*c >= '0' && *c <= '9' && n < 23)
			dig[n++] = *c;
	dig[n] = '\0';
	e = strchr(s, 'e');
	*exp10 = e ? atoi(e + 1) : 0;
}

double rep_round(double v, int decimals)
{
	char dig[24], s[48];
	int exp10, keep;
	unsigned long long n = 0;

	if (!isfinite(v) || v == 0)
		return v;
	shortest_digits(dig, &exp10, v);
	keep = exp10 + 1 + decimals;	/* digits before the first dropped one */
	if (keep >= (int)strlen(dig))
		return v;		/* nothing to drop */
	if (keep < 0)
		return copysign(0, v);	/* below half of the last place */
	for (int i = 0; i < keep; i++)
		n = n * 10 + (unsigned long long)(dig[i] - '0');
	if (dig[keep] >= '5')
		n++;
	snprintf(s, sizeof(s), "%s%llue%d", v < 0 ? "-" : "", n, -decimals);
	return strtod(s, NULL);
}

double rep_round_sig(double v, int digits)
{
	char dig[24];
	int exp10;

	if (!isfinite(v) || v == 0)
		return v;
	shortest_digits(dig, &exp10, v);
	return rep_round(v, digits - 1 - exp10);
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
	int places = fabs(rep_round(x, 1)) >= 100 ? 0 : 1;
	snprintf(out, size, "%.*f%s", places, rep_round(x, places), names[i]);
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
	else if (unit && !strcmp(unit, "s") && fabs(rep_round(v, 0)) >= 100000)
		snprintf(out, size, "%.2gs", rep_round_sig(v, 2));
	else if (unit && !strcmp(unit, "s") && fabs(rep_round(v, 1)) >= 1000)
		snprintf(out, size, "%.0fs", rep_round(v, 0));
	else if (unit && !strcmp(unit, "s"))
		snprintf(out, size, "%.1fs", rep_round(v, 1));
	else if (unit && *unit)
		snprintf(out, size, "%.4g %s", rep_round_sig(v, 4), unit);
	else
		snprintf(out, size, "%.4g", rep_round_sig(v, 4));
}

void rep_fmt_p(char *out, size_t size, double p)
{
	if (p < 0.001)
		snprintf(out, size, "p<0.001");
	else if (p < 0.01)
		snprintf(out, size, "p=%.3f", rep_round(p, 3));
	else
		snprintf(out, size, "p=%.2f", rep_round(p, 2));
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

/* failed, timed-out and interrupted runs carry no value */
bool rep_run_usable(const struct db_report_run *run)
{
	return !strcmp(run->status, "ok") || !strcmp(run->status, "incomplete");
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
