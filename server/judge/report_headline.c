/* report_headline.c - a job's one-line result for the jobs lists
 * (kcanary jobs, GET /api/v1/jobs): the comparison with the smallest p of
 * its report (see report.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "judge/report.h"
#include "judge/report_data.h"

/* Whether comparison g beats the best so far: a smaller p, or the same p
 * and a larger change (an unknown change never beats a known one). */
static bool better_than(const struct rep_group *g, const struct rep_group *best)
{
	if (!best)
		return true;
	if (g->mwu.p != best->mwu.p)
		return g->mwu.p < best->mwu.p;
	if (isnan(best->change_pct))
		return !isnan(g->change_pct);
	return !isnan(g->change_pct) && fabs(g->change_pct) > fabs(best->change_pct);
}

void report_headline(const struct report *r, struct report_headline *out)
{
	const struct rep_group *best = NULL, *best_base = NULL;
	const struct rep_cell *best_cell = NULL;

	memset(out, 0, sizeof(*out));
	out->change_pct = out->p = NAN;
	for (size_t c = 0; c < r->ncells; c++)
		for (size_t j = 1; j < r->ngroups; j++) {
			const struct rep_group *g = &r->cells[c].groups[j];

			if (!g->has_cmp || isnan(g->mwu.p))
				continue;
			out->ncomparisons++;
			if (better_than(g, best)) {
				best = g;
				best_cell = &r->cells[c];
				best_base = &r->cells[c].groups[0];
			}
		}
	if (!best)
		return;
	out->has = true;
	out->change_pct = best->change_pct;
	out->p = best->mwu.p;
	snprintf(out->label, sizeof(out->label), "%s vs %s", best->say ? best->say : "?",
		 best_base->say ? best_base->say : "?");
	snprintf(out->cell, sizeof(out->cell), "%s", best_cell->cell ? best_cell->cell : "");
}

int report_job_headline(struct report_headline *out, struct db *db, int64_t job_id,
			struct buf *err)
{
	struct report *r = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	out->change_pct = out->p = NAN;
	if ((ret = report_build(&r, db, job_id, NULL, err)))
		return ret;
	report_headline(r, out);
	report_free(r);
	return 0;
}
