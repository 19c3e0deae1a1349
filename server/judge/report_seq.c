/* report_seq.c - repeat auto's looks as the report says them
 * (report_seq.h): the stop line of each comparison in the text, and the
 * "sequential" object of the JSON. report.c replays the looks. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dec_round.h"
#include "judge/report.h"
#include "judge/report_data.h"
#include "judge/report_seq.h"

/* An e-value as the stop line says it: 3 digits below 1000, else "1.8e3". */
static void fmt_evalue(char *out, size_t size, double e)
{
	int x;

	if (!isfinite(e) || e < 1000) {
		snprintf(out, size, "%.3g", e);
		return;
	}
	x = (int)floor(log10(e));
	if (round(e / pow(10, x) * 10) >= 100)   /* 9.96e3 rounds to 10.0e3 */
		x++;
	snprintf(out, size, "%.1fe%d", e / pow(10, x), x);
}

/* "stop: difference after 3 blocks (e=1.8e3 >= 20)" and the others. */
static void fmt_seq_stop(char *out, size_t size, const struct report *r, const struct rep_group *g)
{
	const struct stats_seq_look *l = &g->seq;
	int k = g->seq_blocks;
	const char *bl = k == 1 ? "block" : "blocks";

	char e[32];

	fmt_evalue(e, sizeof(e), l->evalue);
	if (l->decision == STATS_SEQ_DIFFERENT)
		snprintf(out, size, "stop: difference after %d %s (e=%s >= %g)", k, bl, e, l->threshold);
	else if (l->decision == STATS_SEQ_EQUIVALENT)
		snprintf(out, size, "stop: no difference within ±%g%% after %d %s", r->seq.margin_pct,
			 k, bl);
	else if (r->seq.blocks >= r->seq.max_blocks)
		snprintf(out, size, "stop: cap of %d blocks reached, undecided", r->seq.max_blocks);
	else
		snprintf(out, size, "undecided after %d of at most %d blocks", k, r->seq.max_blocks);
}

/* The text report's sequential lines of one cell: why each comparison
 * stopped, and the anytime-valid interval of its shift when bounded. */
void rep_seq_text(struct buf *b, const struct report *r, const struct rep_cell *cell,
		     bool markdown)
{
	char stop[160];

	for (size_t j = 1; j < r->ngroups; j++) {
		const struct rep_group *g = &cell->groups[j];
		if (!g->has_seq)
			continue;
		fmt_seq_stop(stop, sizeof(stop), r, g);
		/* 80 columns when it fits, as the shift lines */
		if (markdown || strlen(g->say) + strlen(cell->groups[0].say) + strlen(stop) + 6 <= 80)
			buf_printf(b, "%s vs %s: %s\n", g->say, cell->groups[0].say, stop);
		else
			buf_printf(b, "%s vs %s:\n      %s\n", g->say, cell->groups[0].say, stop);
		if (isfinite(g->seq.lo_pct) && isfinite(g->seq.hi_pct))
			buf_printf(b, "  anytime-valid 95%% CI of the median shift: %+.1f%% to %+.1f%%\n",
				   dec_round(g->seq.lo_pct, 1), dec_round(g->seq.hi_pct, 1));
		if (markdown)
			buf_puts(b, "\n");
	}
}

/* Whether every comparison of cell that has a sequential look was decided
 * (a difference or equivalence): its answer is the stop line, not the
 * fixed-sample p. False when none has a look. */
bool rep_seq_cell_decided(const struct report *r, const struct rep_cell *cell)
{
	size_t nseq = 0;

	for (size_t j = 1; j < r->ngroups; j++) {
		const struct rep_group *g = &cell->groups[j];
		if (!g->has_seq)
			continue;
		if (g->seq.decision == STATS_SEQ_UNDECIDED)
			return false;
		nseq++;
	}
	return nseq > 0;
}

/* The report's "sequential" object: null for a job of fixed repeats. */
json_t *rep_seq_json(const struct report *r)
{
	json_t *cmp = json_array(), *o;
	char stop[160];

	if (!r->seq.on) {
		json_decref(cmp);
		return json_null();
	}
	for (size_t c = 0; c < r->ncells; c++)
		for (size_t j = 1; j < r->ngroups; j++) {
			const struct rep_group *g = &r->cells[c].groups[j];
			const struct stats_seq_look *l = &g->seq;
			if (!g->has_seq)
				continue;
			fmt_seq_stop(stop, sizeof(stop), r, g);
			json_array_append_new(cmp, json_pack("{s:s,s:s,s:s,s:s,s:i,s:f,s:f,s:[o,o],s:s}",
				"cell", r->cells[c].cell, "value", g->value,
				"baseline", r->cells[c].groups[0].value,
				"decision", l->decision == STATS_SEQ_DIFFERENT ? "difference" :
					    l->decision == STATS_SEQ_EQUIVALENT ? "equivalent" :
					    r->seq.blocks >= r->seq.max_blocks ? "cap" : "undecided",
				"blocks", g->seq_blocks, "evalue", l->evalue, "threshold", l->threshold,
				"ci_pct", rep_num_or_null(l->lo_pct), rep_num_or_null(l->hi_pct), "text", stop));
		}
	o = json_pack("{s:i,s:f,s:f,s:i,s:b,s:o}", "max_blocks", r->seq.max_blocks,
		      "margin_pct", r->seq.margin_pct, "alpha", REPORT_SEQ_ALPHA,
		      "blocks", r->seq.blocks, "own_metric_and_axis", r->seq.own, "comparisons", cmp);
	return o;
}
