/* report_json.h - the report as JSON (report_json.c), for report_format(). */
#ifndef KC_REPORT_JSON_H
#define KC_REPORT_JSON_H

#include <jansson.h>

struct report;

/* The report as a JSON object (new reference): "by" names the axis; each
 * cell lists its groups under "variants" on the variant axis and under
 * "groups" on any other; the text report is its "text". */
json_t *rep_json_report(const struct report *r);

#endif
