/* canary_format.c - a canary verdict as a text table and as JSON
 * (canary.h). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/canary.h"
#include "util.h"

/* A number in at most 10 columns, "-" for none. */
static const char *num(char *b, size_t size, double v)
{
	if (isnan(v))
		snprintf(b, size, "-");
	else if (isinf(v))
		snprintf(b, size, "%sinf", v > 0 ? "" : "-");
	else
		snprintf(b, size, "%.4g", v);
	return b;
}

static const char *pct(char *b, size_t size, double v)
{
	if (isnan(v))
		snprintf(b, size, "-");
	else if (isinf(v))
		snprintf(b, size, "%sinf", v > 0 ? "+" : "-");
	else
		snprintf(b, size, "%+.1f%%", 100 * v);
	return b;
}

static void upper(char *dst, const char *s, size_t size)
{
	size_t i = 0;
	for (; s[i] && i + 1 < size; i++)
		dst[i] = (char)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i]);
	dst[i] = '\0';
}

void canary_format_text(struct buf *out, const struct canary_verdict *v,
			const struct canary_cohorts *c, const double *weights)
{
	char res[16], a[32], b[32], d[32], e[32], f[32], g[32];

	upper(res, canary_result_name(v->result), sizeof(res));
	buf_printf(out, "canary verdict: %s (%s)\n", res, v->reason);
	const char *unit = c->unit ? c->unit : "runs";
	buf_printf(out, "  control: %s (%zu %s", c->control, c->control_runs, unit);
	if (c->control_hosts)
		buf_printf(out, " on %zu %s", c->control_hosts, c->unit ? "series" : "hosts");
	buf_printf(out, ")\n  canary:  %s (%zu %s", c->canary, c->canary_runs, unit);
	if (c->canary_hosts)
		buf_printf(out, " on %zu %s", c->canary_hosts, c->unit ? "series" : "hosts");
	buf_puts(out, ")\n");
	buf_printf(out, "  score %s of 100 (pass >= %.0f, marginal >= %.0f); alpha %.3g per test\n\n",
		   num(a, sizeof(a), isnan(v->score) ? NAN : round(v->score * 10) / 10),
		   v->pass_threshold, v->marginal_threshold, v->alpha);
	int mw = 12;	/* the metric column fits the longest name */
	for (size_t i = 0; i < v->n; i++) {
		int len = (int)strlen(v->metrics[i].name) + (v->metrics[i].critical ? 7 : 0);
		if (len > mw)
			mw = len;
	}
	buf_printf(out, "%-*s %-7s %7s %10s %10s %9s %8s %7s %8s\n", mw, "metric", "class",
		   "n", "control", "canary", "shift", "p", "spread", "p(sprd)");
	for (size_t i = 0; i < v->n; i++) {
		const struct canary_metric_result *m = &v->metrics[i];
		char name[300], n[48];
		double w = weights ? weights[i] : 1;
		snprintf(name, sizeof(name), "%s%s", m->name, m->critical ? " (crit)" : "");
		snprintf(n, sizeof(n), "%zu/%zu", m->n_control, m->n_canary);
		char sp[32];
		if (m->spread_tested && !isnan(m->spread_ratio)) {
			if (isinf(m->spread_ratio))
				snprintf(sp, sizeof(sp), "inf");
			else
				snprintf(sp, sizeof(sp), "%.2fx", m->spread_ratio);
		} else {
			snprintf(sp, sizeof(sp), "-");
		}
		buf_printf(out, "%-*s %-7s %7s %10s %10s %9s %8s %7s %8s\n", mw, name,
			   canary_class_name(m->cls), n, num(a, sizeof(a), m->median_control),
			   num(b, sizeof(b), m->median_canary), pct(d, sizeof(d), m->effect),
			   num(e, sizeof(e), m->p_location), sp, num(f, sizeof(f), m->p_spread));
		buf_printf(out, "    %s; bad: %s, weight %s%s\n", m->reason,
			   canary_direction_name(m->direction), num(g, sizeof(g), w),
			   m->counted ? "" : ", not scored");
	}
}

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

void canary_format_json(struct buf *out, const struct canary_verdict *v,
			const struct canary_cohorts *c, const double *weights)
{
	json_t *ms = json_array();
	for (size_t i = 0; i < v->n; i++) {
		const struct canary_metric_result *m = &v->metrics[i];
		json_t *spread = json_pack("{s:b,s:b,s:o,s:o,s:o,s:o}",
					   "tested", m->spread_tested, "log_scale", m->spread_log,
					   "control", jnum(m->spread_control),
					   "canary", jnum(m->spread_canary),
					   "ratio", jnum(m->spread_ratio), "p", jnum(m->p_spread));
		json_t *jm = json_pack("{s:s,s:s,s:s,s:b,s:o,s:b,s:b,s:I,s:I,s:I,s:o,s:o,s:o,s:o,"
				       "s:[o,o],s:o,s:o,s:b,s:o,s:I,s:s}",
				       "name", m->name, "class", canary_class_name(m->cls),
				       "direction", canary_direction_name(m->direction),
				       "critical", m->critical,
				       "weight", jnum(weights ? weights[i] : 1),
				       "counted", m->counted, "passed", m->passed,
				       "n_control", (json_int_t)m->n_control,
				       "n_canary", (json_int_t)m->n_canary,
				       "min_n", (json_int_t)m->min_n,
				       "median_control", jnum(m->median_control),
				       "median_canary", jnum(m->median_canary),
				       "shift", jnum(m->shift), "effect", jnum(m->effect),
				       "shift_ci", jnum(m->shift_lo), jnum(m->shift_hi),
				       "p_location", jnum(m->p_location), "spread", spread,
				       "underpowered", m->underpowered, "p_floor", jnum(m->p_floor),
				       "runs_needed", (json_int_t)m->runs_needed,
				       "reason", m->reason);
		json_array_append_new(ms, jm);
	}
	json_t *j = json_pack("{s:s,s:o,s:s,s:b,s:b,s:f,s:{s:f,s:f},s:{s:s,s:I},s:{s:s,s:I},s:o}",
			      "result", canary_result_name(v->result), "score", jnum(v->score),
			      "reason", v->reason, "critical_failure", v->critical_failure,
			      "underpowered", v->underpowered, "alpha", v->alpha,
			      "thresholds", "pass", v->pass_threshold, "marginal",
			      v->marginal_threshold,
			      "control", "selector", c->control, "runs", (json_int_t)c->control_runs,
			      "canary", "selector", c->canary, "runs", (json_int_t)c->canary_runs,
			      "metrics", ms);
	if (c->control_hosts || c->canary_hosts) {
		json_object_set_new(json_object_get(j, "control"), "hosts",
				    json_integer((json_int_t)c->control_hosts));
		json_object_set_new(json_object_get(j, "canary"), "hosts",
				    json_integer((json_int_t)c->canary_hosts));
	}
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	buf_puts(out, s);
	buf_puts(out, "\n");
	free(s);
	json_decref(j);
}
