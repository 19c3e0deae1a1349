/* metric_check.c - a run metric checked against its workload and the
 * store's metrics table (metric_check.h). */
#include <errno.h>
#include <string.h>

#include "judge/metric_check.h"
#include "store/db_api.h"
#include "util.h"

/* The names the tool adapters give their metrics, from the tool's output
 * (agent/fio.c, stress_ng.c, perf_bench.c: each workload's notes). */
static const struct {
	const char *workload, *names;
} tool_names[] = {
	{ "fio", "fio:JOB:DIR:bw, :iops, :clat_p50, :clat_p99, :clat_p99.9 (DIR read, write"
		 " or trim; JOB 'kc' without a job file)" },
	{ "stress-ng", "stress-ng:STRESSOR:bogo_ops_s, :bogo_ops" },
	{ "perf-bench", "perf-bench:SUBSYS-BENCH:total_s, or :FUNCTION" },
};

const char *metric_names(const char *workload)
{
	for (size_t i = 0; i < sizeof(tool_names) / sizeof(tool_names[0]); i++)
		if (!strcmp(tool_names[i].workload, workload))
			return tool_names[i].names;
	return NULL;
}

const char *metric_headline(const char *workload)
{
	return workload && !strcmp(workload, "wb-handover") ? "worst_lag_s" : NULL;
}

/* Whether a name of the store's metrics table is one of workload's: the
 * tool's own prefix for a tool adapter, else no tool's name (no ':'). */
static bool of_workload(const char *name, const char *workload, bool tool)
{
	size_t wl = strlen(workload);

	if (tool)
		return !strncmp(name, workload, wl) && name[wl] == ':';
	return !strchr(name, ':');
}

int metric_check(struct db *db, const char *metric, const char *workload, struct buf *err)
{
	struct db_metric_row *all = NULL;
	const char *pattern = metric_names(workload);
	size_t wl = strlen(workload), n = 0, i, k = 0;
	int r;

	/* the tool adapters name their metrics from the tool's output,
	 * "WORKLOAD:...": fio:JOB:DIR:bw, stress-ng:cpu:bogo_ops_s,
	 * perf-bench:sched/messaging:total_s (agent/fio.c, stress_ng.c,
	 * perf_bench.c); a fresh store has none of them yet */
	if (!strncmp(metric, "probe:", 6) || !strcmp(workload, "command") ||
	    (!strncmp(metric, workload, wl) && metric[wl] == ':' && metric[wl + 1]))
		return 0;
	if ((r = db_metrics_list(db, &all, &n, err)))
		return r;
	for (i = 0; !pattern && i < n; i++)
		if (!strcmp(all[i].name, metric) && of_workload(metric, workload, false))
			break;
	r = !pattern && i < n ? 0 : -EINVAL;
	if (r) {
		buf_printf(err, "unknown metric '%s' for workload '%s': expected ", metric, workload);
		if (pattern)
			buf_printf(err, "%s", pattern);
		else
			buf_puts(err, "one of");
		for (i = 0; i < n; i++)
			if (of_workload(all[i].name, workload, pattern != NULL))
				buf_printf(err, "%s %s", k++ ? "," : pattern ? " (the store has:" : "",
					   all[i].name);
		if (pattern)
			buf_puts(err, k ? "), or probe:NAME:KEY" : ", or probe:NAME:KEY");
		else
			buf_puts(err, " (the store's metrics table), or probe:NAME:KEY");
	}
	db_metric_rows_free(all, n);
	return r;
}
