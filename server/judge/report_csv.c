/* report_csv.c - the report as CSV, one row per run (report_csv.h). */
#include <string.h>

#include "json_num.h"
#include "judge/report_csv.h"
#include "judge/report_data.h"

static void csv_field(struct buf *b, const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		buf_puts(b, s);
		return;
	}
	buf_puts(b, "\"");
	for (; *s; s++)
		buf_printf(b, *s == '"' ? "\"\"" : "%c", *s);
	buf_puts(b, "\"");
}

void rep_csv_report(struct buf *b, const struct report *r)
{
	bool variant_axis = report_axis_is_variant(r->axis.name);

	buf_puts(b, "cell,variant,repeat,run_id,status,metric,value,derived");
	if (!variant_axis || r->two_d) {
		buf_puts(b, ",");
		csv_field(b, r->axis.name);
	}
	if (r->two_d) {
		buf_puts(b, ",");
		csv_field(b, r->axis2.name);
	}
	buf_puts(b, "\n");
	for (size_t c = 0; c < r->ncells; c++)
		for (size_t j = 0; j < r->ngroups; j++) {
			const struct rep_group *rv = &r->cells[c].groups[j];
			for (size_t i = 0; i < rv->nruns; i++) {
				const struct db_report_run *run = rv->runs[i].run;
				const struct db_report_variant *v = rep_variant_of(r, run);
				csv_field(b, r->cells[c].cell);
				buf_puts(b, ",");
				csv_field(b, v ? v->name : "");
				buf_printf(b, ",%d,%lld,%s,%s,", run->repeat_idx, (long long)run->id,
					   run->status, r->metric);
				if (run->has_value)
					buf_printf(b, "%.*g", json_num_digits(run->value), run->value);
				buf_printf(b, ",%d", run->derived);
				if (r->two_d) {   /* both axes' values, bare */
					buf_puts(b, ",");
					csv_field(b, r->axis.values[j / r->axis2.n]);
					buf_puts(b, ",");
					csv_field(b, r->axis2.values[j % r->axis2.n]);
				} else if (!variant_axis) {
					buf_puts(b, ",");
					csv_field(b, rv->value);
				}
				buf_puts(b, "\n");
			}
		}
}
