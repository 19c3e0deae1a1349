/* report_grid.c - a cell of a two-axis report (--by A,B) in text and
 * markdown (report_grid.h): the medians and the changes as grids, rows A's
 * values, columns B's, and the interaction lines. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dec_round.h"
#include "judge/report_data.h"
#include "judge/report_grid.h"
#include "judge/report_lines.h"

/* One row of a 2-D grid: the label, then one entry per column, padded
 * (text) or between pipes (markdown). */
static void grid_row(struct buf *b, bool markdown, size_t label_w, size_t col_w,
		     const char *label, char *const *cols, size_t ncols)
{
	if (markdown)
		buf_printf(b, "| %s |", label);
	else
		buf_printf(b, "  %-*s", (int)label_w, label);
	for (size_t j = 0; j < ncols; j++)
		if (markdown)
			buf_printf(b, " %s |", cols[j]);
		else
			buf_printf(b, "  %*s", (int)col_w, cols[j]);
	buf_puts(b, "\n");
}

static void grid_head(struct buf *b, const struct report *r, bool markdown, size_t label_w,
		      size_t col_w, const char *corner)
{
	grid_row(b, markdown, label_w, col_w, corner, r->axis2.labels, r->axis2.n);
	if (markdown) {
		buf_puts(b, "|---|");
		for (size_t j = 0; j < r->axis2.n; j++)
			buf_puts(b, "--:|");
		buf_puts(b, "\n");
	}
}

/* A 2-D value of the grid: "52.1s 3/3" (median, stalled k of n) or "-". */
static void fmt_grid_value(char *out, size_t size, const struct report *r,
			   const struct rep_group *g)
{
	char v[32];
	if (!g->nvalues) {
		snprintf(out, size, "-");
		return;
	}
	rep_fmt_value(v, sizeof(v), g->sum.median, r->unit);
	if (r->has_threshold)
		snprintf(out, size, "%s %zu/%zu", v, g->k_worse, g->nvalues);
	else
		snprintf(out, size, "%s n=%zu", v, g->nvalues);
}

/* The interaction lines of a 2-D cell, one per (a_i, b_j) with i, j > 0. */
static void interaction_lines(struct buf *b, const struct report *r, const struct rep_cell *cell,
			      bool markdown)
{
	size_t nb = r->axis2.n;
	int any = 0;
	for (size_t i = 1; i < r->axis.n; i++)
		for (size_t j = 1; j < nb; j++) {
			const struct rep_inter *x = &cell->inter[i * nb + j];
			char e0[32], e1[32], d[32], p[16];
			struct buf line = BUF_INIT;
			if (!x->has)
				continue;
			if (!any++)
				buf_puts(b, "\n");
			rep_fmt_value(e0, sizeof(e0), x->eff0, r->unit);
			rep_fmt_value(e1, sizeof(e1), x->eff1, r->unit);
			rep_fmt_value(d, sizeof(d), x->dod, r->unit);
			buf_printf(&line, "interaction: %s against %s is %s%s with %s, %s%s with %s;",
				   rep_axis_say(&r->axis, i), rep_axis_say(&r->axis, 0), x->eff0 > 0 ? "+" : "", e0,
				   r->axis2.labels[0], x->eff1 > 0 ? "+" : "", e1, r->axis2.labels[j]);
			rep_append_wrapped(b, buf_str(&line), markdown);
			if (x->tested) {
				rep_fmt_p(p, sizeof(p), x->p);
				buf_printf(b, "      difference of differences %s%s (%s, permutation,"
					   " Freedman-Lane)\n", x->dod > 0 ? "+" : "", d, p);
			} else {
				buf_printf(b, "      difference of differences %s%s (not tested: too few"
					   " runs)\n", x->dod > 0 ? "+" : "", d);
			}
			if (markdown)
				buf_puts(b, "\n");
			buf_release(&line);
		}
}

/* The 2-D grid is two tables (medians, changes) and the interaction,
 * each row from the same widths. --by A,B: rows are A's values, columns B's;
 * every entry is compared with the baseline entry (a_0, b_0). */
void rep_grid_cell(struct buf *b, const struct report *r, const struct rep_cell *cell,
			 bool markdown)
{
	size_t na = r->axis.n, nb = r->axis2.n, label_w = 8, col_w = 14;
	char **cols = xcalloc(nb ? nb : 1, sizeof(*cols));
	char corner[128];

	for (size_t i = 0; i < na; i++)
		if (strlen(r->axis.labels[i]) > label_w)
			label_w = strlen(r->axis.labels[i]);
	for (size_t j = 0; j < nb; j++)
		if (strlen(r->axis2.labels[j]) > col_w)
			col_w = strlen(r->axis2.labels[j]);
	for (size_t j = 0; j < nb; j++)
		cols[j] = xcalloc(1, 96);
	buf_printf(b, markdown ? "**%s**\n\n" : "%s:\n\n", cell->title);
	if (r->has_threshold)
		snprintf(corner, sizeof(corner), "median, %s > %g%s", r->better == BETTER_LOWER ?
			 "stalled" : "below", r->threshold, r->unit && !strcmp(r->unit, "s") ? "s" : "");
	else
		snprintf(corner, sizeof(corner), "median, runs");
	char corner2[128];
	snprintf(corner2, sizeof(corner2), "change vs %s", r->values2d[0]);
	if (strlen(corner) > label_w)
		label_w = strlen(corner);
	if (strlen(corner2) > label_w)
		label_w = strlen(corner2);
	grid_head(b, r, markdown, label_w, col_w, corner);
	for (size_t i = 0; i < na; i++) {
		for (size_t j = 0; j < nb; j++)
			fmt_grid_value(cols[j], 96, r, &cell->groups[i * nb + j]);
		grid_row(b, markdown, label_w, col_w, r->axis.labels[i], cols, nb);
	}
	buf_puts(b, "\n");
	grid_head(b, r, markdown, label_w, col_w, corner2);
	for (size_t i = 0; i < na; i++) {
		for (size_t j = 0; j < nb; j++) {
			const struct rep_group *g = &cell->groups[i * nb + j];
			char p[16];
			if (!i && !j) {
				snprintf(cols[j], 96, "baseline");
			} else if (!g->has_cmp) {
				snprintf(cols[j], 96, "-");
			} else {
				rep_fmt_p(p, sizeof(p), g->mwu.p);
				if (isnan(g->change_pct))
					snprintf(cols[j], 96, "%s", p);
				else
					snprintf(cols[j], 96, "%+.1f%% %s", dec_round(g->change_pct, 1), p);
			}
		}
		grid_row(b, markdown, label_w, col_w, r->axis.labels[i], cols, nb);
	}
	buf_puts(b, markdown ? "\n(two-sided Mann-Whitney U against the baseline)\n" :
		 "  (two-sided Mann-Whitney U against the baseline)\n");
	rep_strata_lines(b, cell, r->ngroups, markdown);
	interaction_lines(b, r, cell, markdown);
	for (size_t j = 0; j < nb; j++)
		free(cols[j]);
	free(cols);
	rep_probe_lines(b, r, cell, markdown);
}
