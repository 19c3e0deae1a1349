/* report_scratch.c - a job's scratch disk in its report (see
 * report_scratch.h). */
#include "judge/report_scratch.h"

static double gib(int64_t b)
{
	return (double)b / (double)(1LL << 30);
}

void scratch_text(struct buf *b, const struct db_job_scratch *s)
{
	if (s->bytes <= 0)
		return;
	buf_printf(b, "scratch disk: %.0f GiB, every run (", gib(s->bytes));
	if (s->asked) {
		buf_puts(b, "given by name: disk, --disk");
		if (s->cell)
			buf_printf(b, "; the most a cell writes: %s%s%.1f GiB", s->cell,
				   *s->cell ? "'s " : "", gib(s->data_bytes));
	} else if (!s->cell)
		buf_puts(b, "the floor: the agent cannot tell what the workload writes");
	else if (!*s->cell)
		buf_printf(b, "sized from the %.1f GiB the workload writes", gib(s->data_bytes));
	else
		buf_printf(b, "sized from %s's %.1f GiB written", s->cell, gib(s->data_bytes));
	buf_puts(b, ")\n");
}

json_t *scratch_json(const struct db_job_scratch *s)
{
	if (s->bytes <= 0)
		return json_null();
	return json_pack("{s:I,s:b,s:o,s:o}", "bytes", (json_int_t)s->bytes, "asked", s->asked,
			 "cell", s->cell ? json_string(s->cell) : json_null(),
			 "data_bytes", s->cell ? json_integer(s->data_bytes) : json_null());
}
