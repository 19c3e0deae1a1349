/* metric_check.c - a run metric checked against its workload and the
 * store's metrics table (metric_check.h). */
#include <errno.h>
#include <string.h>

#include "judge/metric_check.h"
#include "store/db_api.h"
#include "util.h"

int metric_check(struct db *db, const char *metric, const char *workload, struct buf *err)
{
	struct db_metric_row *all = NULL;
	size_t wl = strlen(workload), n = 0, i;
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
	for (i = 0; i < n; i++)
		if (!strcmp(all[i].name, metric))
			break;
	r = i < n ? 0 : -EINVAL;
	if (r) {
		buf_printf(err, "unknown metric '%s' for workload '%s': expected one of", metric,
			   workload);
		for (i = 0; i < n; i++)
			buf_printf(err, "%s %s", i ? "," : "", all[i].name);
		buf_puts(err, " (the store's metrics table), or probe:NAME:KEY");
	}
	db_metric_rows_free(all, n);
	return r;
}
