/* report_csv.h - the report as CSV (report_csv.c), for report_format(). */
#ifndef KC_REPORT_CSV_H
#define KC_REPORT_CSV_H

#include "util.h"

struct report;

/* Append a header line and one line per run: cell, variant, repeat,
 * run_id, status, metric, value, derived, and the axis values when the
 * axis is not the variant (both for two axes). */
void rep_csv_report(struct buf *b, const struct report *r);

#endif
