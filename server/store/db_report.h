/* db_report.h - what a report reads: a job's variants, runs with their
 * values, probe totals, run environments (db_report.c).
 * Errors and connections as db.h says.
 */
#ifndef KC_DB_REPORT_H
#define KC_DB_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/db.h"

struct db_report_run {
	int64_t id, variant_id, seq;
	int repeat_idx;
	char *cell, *status, *params_json, *fs, *accel;
	char *host;          /* the agent's hello host (a fleet host); may be NULL */
	char *lab_host;      /* the lab host it ran on (lab.h); NULL: not placed */
	char *rootfs;        /* its root filesystem's spec ("debian:fio", "host");
			      * NULL: the initramfs */
	char *rootfs_hash;   /* rootfs_images.hash (for "host": of its dpkg list) */
	double value;        /* summary value, or derived (see derived) */
	bool has_value;
	bool derived;        /* from samples: worst_X = max(X), mean_X = avg(X),
			      * or a passive run's median (see median) */
	bool passive;        /* a fleet host's passive stream (cell
			      * workload=passive, db_internal.h): no summary,
			      * 'running' while the host streams */
	bool median;         /* the value is the median of all the run's
			      * samples of the metric (a passive run's) */
};

struct db_report_variant {
	int64_t id;
	int idx;
	char *name, *status, *error;
};

struct db_report_probe {   /* final probe totals per variant and cell, summed
			    * over its usable (ok, incomplete) runs */
	int64_t variant_id;
	char *name, *key, *cell;
	int64_t count;
};

struct db_report_run_probe {   /* one run's final count of one probe key */
	int64_t run_id;
	char *name, *key;
	int64_t count;
};

struct db_report_data {
	int64_t job_id;
	char *job_name, *job_kind, *job_status, *job_metric;
	char *spec_json;          /* the job's stored spec ("{}" for ingest jobs) */
	char *unit, *better;      /* of the metric; NULL when unknown */
	struct db_report_variant *variants;
	size_t nvariants;
	struct db_report_run *runs;   /* ordered by cell, variant idx, repeat */
	size_t nruns;
	struct db_report_probe *probes;
	size_t nprobes;
	struct db_report_run_probe *run_probes;  /* usable runs only, by run id,
						  * name, key */
	size_t nrun_probes;
};

/*
 * db_report_load - read a job's variants and runs with each run's value of
 * metric (NULL: the job's headline metric). Fills *out (caller releases it
 * with db_report_release). -ENOENT when the job does not exist.
 */
int db_report_load(struct db *db, int64_t job_id, const char *metric,
		   struct db_report_data *out, struct buf *err);
/*
 * db_report_load_values - db_report_load() of the job's headline metric
 * without the probes: the job, its variants and each run with its value
 * (the summary's, else derived from its samples), what a repeat auto look
 * reads (report_seq_look). Same errors; release with db_report_release.
 */
int db_report_load_values(struct db *db, int64_t job_id, struct db_report_data *out,
			  struct buf *err);
void db_report_release(struct db_report_data *d);

/* One distinct environment of a job's runs: the variant, the kernel
 * release the guest reported, the host and accelerator, the knobs (the
 * run's params_json) and how many runs had it. "" where not recorded. */
struct db_env_row {
	char *variant, *kernel_release, *host, *accel, *fs, *params_json;
	int64_t nruns;
};

/* db_report_env - the job's distinct run environments, by variant idx
 * (db_report.c). *out has *n rows (db_env_rows_free). */
int db_report_env(struct db *db, int64_t job_id, struct db_env_row **out, size_t *n,
		  struct buf *err);
void db_env_rows_free(struct db_env_row *v, size_t n);

/* A summary metric of a job's runs and how many of them have it. */
struct db_job_metric {
	char *name;
	int64_t nruns;
};

/* db_report_job_metrics - the summary metrics the job's runs have
 * (run_summary), the most runs first, then by name: what a report of it
 * can show and its default when the job's metric is not among them
 * (report.h). *out has *n rows (db_job_metrics_free); 0 or the store's
 * error. */
int db_report_job_metrics(struct db *db, int64_t job_id, struct db_job_metric **out, size_t *n,
			  struct buf *err);
void db_job_metrics_free(struct db_job_metric *v, size_t n);

#endif
