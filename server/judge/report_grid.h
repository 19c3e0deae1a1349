/* report_grid.h - one cell of a two-axis report (--by A,B) in text or
 * markdown (report_grid.c), for report_text.c.
 */
#ifndef KC_REPORT_GRID_H
#define KC_REPORT_GRID_H

#include <stdbool.h>

#include "util.h"

struct report;
struct rep_cell;

/* Append the cell: its title, the grid of medians (and stalled k of n),
 * the grid of changes against (a_0, b_0), the strata, the interaction
 * lines and the probe evidence. */
void rep_grid_cell(struct buf *b, const struct report *r, const struct rep_cell *cell,
		   bool markdown);

#endif
