/* report_overhead.c - a job's overhead, summed up (see report_overhead.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dec_round.h"
#include "judge/report_overhead.h"
#include "judge/stats.h"

void overhead_summarize(struct overhead_summary *out, const struct db_overhead *v, size_t n)
{
	double *x = xcalloc(n ? n : 1, sizeof(*x));

	memset(out, 0, sizeof(*out));
	out->nruns = n;
	if (!n)
		goto out;
	for (size_t i = 0; i < n; i++)
		x[i] = v[i].wall_ms / 1000.0;
	out->wall_s = stats_median(x, n);
	for (size_t i = 0; i < n; i++)
		x[i] = db_overhead_ms(&v[i]) / 1000.0;
	out->overhead_s = stats_median(x, n);
	for (int p = 0; p < DB_OV_NPHASES; p++) {
		for (size_t i = 0; i < n; i++)
			x[i] = v[i].phase_ms[p] / 1000.0;
		out->phase_s[p] = stats_median(x, n);
	}
	out->ratio = out->wall_s > 0 ? out->overhead_s / out->wall_s : 0;
out:
	free(x);
}

void overhead_text(struct buf *b, const struct overhead_summary *s)
{
	size_t line0 = b->len;

	if (!s->nruns)
		return;
	buf_printf(b, "overhead: median %.1f s of %.1f s wall per run (%.0f%%, %zu run%s):",
		   dec_round(s->overhead_s, 1), dec_round(s->wall_s, 1), dec_round(100 * s->ratio, 0),
		   s->nruns, s->nruns == 1 ? "" : "s");
	/* the phases outside the workload, then the workload's own time */
	for (int k = 0; k < DB_OV_NPHASES; k++) {
		int p = k == DB_OV_NPHASES - 1 ? DB_OV_WORKLOAD : k < DB_OV_WORKLOAD ? k : k + 1;
		const char *sep = k == DB_OV_NPHASES - 1 ? "\n" : k == DB_OV_NPHASES - 2 ? ";" : ",";
		char part[64];

		snprintf(part, sizeof(part), " %s %.1f s%s", db_ov_phase_names[p],
			 dec_round(s->phase_s[p], 1), sep);
		if (b->len - line0 + strlen(part) - (*sep == '\n') > 79) {
			buf_puts(b, "\n ");
			line0 = b->len - 1;
		}
		buf_puts(b, part);
	}
}

json_t *overhead_json(const struct overhead_summary *s)
{
	json_t *ph;

	if (!s->nruns)
		return json_null();
	ph = json_object();
	for (int p = 0; p < DB_OV_NPHASES; p++)
		json_object_set_new(ph, db_ov_phase_names[p], json_real(s->phase_s[p]));
	return json_pack("{s:I, s:f, s:f, s:f, s:o}", "runs", (json_int_t)s->nruns,
			 "wall_s", s->wall_s, "overhead_s", s->overhead_s, "ratio", s->ratio,
			 "phases_s", ph);
}

json_t *overhead_run_json(const struct db_overhead *o)
{
	json_t *ph = json_object();

	for (int p = 0; p < DB_OV_NPHASES; p++)
		json_object_set_new(ph, db_ov_phase_names[p], json_integer(o->phase_ms[p]));
	return json_pack("{s:I, s:I, s:o}", "wall_ms", (json_int_t)o->wall_ms,
			 "overhead_ms", (json_int_t)db_overhead_ms(o), "phases_ms", ph);
}
