/* report_lines.h - the lines under a cell's table that the one-axis
 * (report_text.c) and two-axis (report_grid.c) text share
 * (report_lines.c). Each appends to b; markdown adds the blank line a
 * paragraph needs and does not wrap.
 */
#ifndef KC_REPORT_LINES_H
#define KC_REPORT_LINES_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

struct report;
struct rep_cell;

/* Append line and a newline, wrapped at 80 columns after ", " with a
 * six-space indent (no wrapping in markdown, where the viewer wraps). */
void rep_append_wrapped(struct buf *b, const char *line, bool markdown);

/* "p: van Elteren, stratified by lab host (kvm1: 4+4 runs, local: 4+4)":
 * one line per stratified (or host-confounded) comparison of the cell's
 * ngroups groups. */
void rep_strata_lines(struct buf *b, const struct rep_cell *cell, size_t ngroups,
		      bool markdown);

/* The probe evidence of a cell: per shown probe key, its totals per
 * value, every run's count and in how many runs of each value it was
 * seen. Nothing when the cell's runs counted no shown probe. */
void rep_probe_lines(struct buf *b, const struct report *r, const struct rep_cell *cell,
		     bool markdown);

#endif
