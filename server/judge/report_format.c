/* report_format.c - report_format() and report_format_parse() (report.h):
 * a built report in the format asked for, each format in its own file. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "judge/report.h"
#include "judge/report_csv.h"
#include "judge/report_json.h"
#include "judge/report_text.h"

int report_format_parse(enum report_format *out, const char *name)
{
	static const char *const names[] = { "text", "markdown", "csv", "json" };
	for (int i = 0; i < 4; i++) {
		if (!strcmp(name, names[i])) {
			*out = (enum report_format)i;
			return 0;
		}
	}
	return -EINVAL;
}

int report_format(struct buf *out, const struct report *r, enum report_format fmt)
{
	switch (fmt) {
	case REPORT_TEXT:
		rep_text_report(out, r, false);
		break;
	case REPORT_MARKDOWN:
		rep_text_report(out, r, true);
		break;
	case REPORT_CSV:
		rep_csv_report(out, r);
		break;
	case REPORT_JSON: {
		json_t *root = rep_json_report(r);
		char *s = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
		json_decref(root);
		int ret = buf_puts(out, s);
		buf_puts(out, "\n");
		free(s);
		return ret;
	}
	}
	return out->max_bytes && out->len >= out->max_bytes ? -E2BIG : 0;
}
