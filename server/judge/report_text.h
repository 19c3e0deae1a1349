/* report_text.h - the report as text or markdown (report_text.c), for
 * report_format() and the JSON's "text".
 */
#ifndef KC_REPORT_TEXT_H
#define KC_REPORT_TEXT_H

#include <stdbool.h>

#include "util.h"

struct report;

/* Append the whole report to b: the unfinished note, each cell's table
 * (report_grid.h for two axes), failed variants, lab hosts, overhead and
 * the TCG and host-rootfs marks. */
void rep_text_report(struct buf *b, const struct report *r, bool markdown);

#endif
