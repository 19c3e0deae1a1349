/* metric_check.h - which metric names a run of a workload can have: the
 * rule bisect --metric and compare's headline metric both obey, checked
 * before anything is stored or built. */
#ifndef KC_METRIC_CHECK_H
#define KC_METRIC_CHECK_H

#include "util.h"

struct db;

/*
 * metric_check - a run metric must be one the runs will have:
 * probe:NAME:KEY, any name for the `command` workload (its script prints
 * its own), "WORKLOAD:..." for the tool adapters fio, stress-ng and
 * perf-bench (fio:JOB:DIR:bw: named from the tool's output, never
 * worst_lag_s), else (wb-handover) a name without ':' in the store's
 * metrics table (the built-in summary metrics and every name a run has
 * reported). metric and workload are borrowed. Returns 0, -EINVAL with err
 * listing what the workload has (its names' pattern and those the store
 * knows), or the store's error (-EIO) when it cannot be read (err says so).
 */
int metric_check(struct db *db, const char *metric, const char *workload, struct buf *err);

/* metric_names - how a tool adapter (fio, stress-ng, perf-bench) names its
 * metrics ("fio:JOB:DIR:bw, :iops, ..."), for messages; NULL for any other
 * workload (wb-handover's are the store's metrics table; command's, its
 * script's). Static. */
const char *metric_names(const char *workload);

/* metric_headline - the workload's own headline metric, what a job decides
 * on unless it names another: "worst_lag_s" for wb-handover (its
 * agent's summary, agent/wb_handover.c); NULL for a tool adapter (its
 * report takes the summary metric most runs have, report.h) and for
 * command (its script names its own). Static. */
const char *metric_headline(const char *workload);

#endif
