/* report_seq.h - repeat auto's looks as the report says them
 * (report_seq.c), for report_text.c and report_json.c. The looks are
 * replayed by report_build() (report.c); report.h says what they are.
 */
#ifndef KC_REPORT_SEQ_H
#define KC_REPORT_SEQ_H

#include <jansson.h>
#include <stdbool.h>

#include "util.h"

struct report;
struct rep_cell;

/* The text report's sequential lines of one cell: why each comparison
 * stopped ("stop: difference after 3 blocks (e=1.8e3 >= 20)"), and the
 * anytime-valid interval of its shift when bounded. */
void rep_seq_text(struct buf *b, const struct report *r, const struct rep_cell *cell,
		  bool markdown);

/* Whether every comparison of cell that has a sequential look was decided
 * (a difference or equivalence); false when none has a look. */
bool rep_seq_cell_decided(const struct report *r, const struct rep_cell *cell);

/* The report's "sequential" object (new reference): null for a job of
 * fixed repeats. */
json_t *rep_seq_json(const struct report *r);

#endif
