/* job.h - a compare job's spec: parsed from an INI job file (libinih) or
 * built from CLI flags, expanded into variants × matrix cells × repeats,
 * and stored (job, variants, runs) before anything is built, so that the
 * job can be resumed and re-run exactly from the store.
 *
 * Job file format (docs/job-file.md): sections [job], [workload],
 * [matrix], [sysctl]. A value with spaces is a list; [matrix] lists expand
 * to their cross product. Every knob has a default.
 */
#ifndef KC_JOB_H
#define KC_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/db.h"
#include "util.h"
#include "kernel/variant.h"

/* repeat = auto's cap when none is given, in blocks (one run of every
 * variant x cell each). */
#define JOB_REPEAT_AUTO_MAX 10
/* margin's default, in % of the baseline median. */
#define JOB_MARGIN_PCT 5.0

/* More runs than this in one job is a mistake, not a plan. */
#define JOB_MAX_RUNS 10000

struct job_kv {
	char *key, *value;
};

struct job_dim {            /* one [matrix] dimension */
	char *key;              /* fs, a knob, sysctl.vm.x, config */
	char **values;
	size_t nvalues;
};

struct job_spec {
	char *name;
	char *tree;             /* git repository of the kernel tree */
	char *base;             /* commit-ish */
	char **series;          /* mbox paths or message-ids; each is one variant */
	size_t nseries;
	int *series_version;    /* nseries revision numbers (variant.h version:
				 * 0 the newest), or NULL: all 0 */
	int version;            /* -v N, [job] version: revision N of each series
				 * (job_spec_resolve_series moves it into
				 * series_version) */
	bool all_revisions;     /* --all-revisions, [job] all_revisions: one variant
				 * per revision of the one series
				 * (job_spec_resolve_series expands it) */
	char *patches;          /* subset, "2-3"; NULL = all */
	bool prefixes;          /* also each patch prefix 1..k */
	bool aa;                /* add a second copy of the base (A/A) */
	char **kernels;         /* prebuilt kernel images, one variant each */
	size_t nkernels;
	char **config;          /* kernels/<name>.config fragments */
	size_t nconfig;
	int repeat;             /* default 3; with repeat_auto the cap in blocks */
	bool repeat_auto;       /* repeat = auto[:MAX]: blocks until every
				 * comparison is decided (report.h, sequential) */
	double margin_pct;      /* margin = 5%: equivalence within +-this % of the
				 * baseline median (repeat auto); default 5 */
	int jobs;               /* guests at once, default 1 */
	uint64_t seed;          /* run-order shuffle; default from the clock, stored */
	char *metric;           /* headline metric, default worst_lag_s */
	bool metric_given;      /* metric was set (job file, --metric, JSON): false
				 * for the default, which follows the workload: a
				 * tool's report picks one its runs have */
	char *by;               /* the report's compared axis, one or "A,B"
				 * (report_axis.h); NULL: the variants */
	char *baseline;         /* the axis value compared against; NULL: the first */
	int vcpus;              /* default 2 */
	int memory_mb;          /* default 2048 */
	uint64_t disk_bytes;    /* [job] disk, --disk: every run's scratch disk,
				 * sparse; 0: the largest any cell needs
				 * (job_check.h, guest/scratch.h) */
	double watchdog_s;      /* 0: measure_s + setup allowance */
	char *rootfs;           /* NULL: the initramfs; "debian[:PKG,...]" (rootfs.h) */
	char *distcc;           /* --distcc, [job] distcc: DISTCC_HOSTS the kernels
				 * are built on (build.h); NULL: this machine */
	char *overlap_builds;   /* --overlap-builds, [job] overlap_builds: "yes"
				 * (runs go while kernels build on every host),
				 * "no" (runs wait for every build) or NULL/"auto"
				 * (overlap on hosts other than this machine;
				 * lab.h lab_pick_next) */
	char **files;           /* "PATH[:GUEST_PATH]" copied into the root filesystem
				 * (rootfs.h), PATH absolute; NULL-ended (NULL when
				 * nfiles is 0) so it passes as guest_job.files */
	size_t nfiles;
	char *workload;         /* [workload] type, default wb-handover */
	struct job_kv *knobs;   /* [workload] other keys */
	size_t nknobs;
	struct job_kv *sysctls; /* [sysctl] */
	size_t nsysctls;
	struct job_dim *dims;   /* [matrix] */
	size_t ndims;
	/* Where each key was set, for errors found after parsing (not stored):
	 * job_spec_parse_ini() fills it; keys set by the CLI are not in it. */
	struct job_where *where;
	size_t nwhere;
};

struct job_where {
	char *text;             /* "job.ini:12: [matrix] pod_max" */
	char *section, *key;
};

/* A new spec with every default set; free with job_spec_free(). */
struct job_spec *job_spec_new(void);
void job_spec_free(struct job_spec *s);

/*
 * job_spec_parse_ini - parse job file text (source names it in errors)
 * into spec (defaults already set; values given override them). On error
 * returns -EINVAL and err says what and where: "job.ini:7: unknown key
 * 'rate' in [job]", "job.ini:12: empty list for 'fs' in [matrix]".
 */
int job_spec_parse_ini(struct job_spec *spec, const char *text, const char *source,
		       struct buf *err);

/*
 * job_spec_where - where key (a knob, sysctl or matrix key) was set in the
 * job file: "job.ini:12: [matrix] pod_max", the last setting of it; NULL
 * when it was not set by a job file (a default, or the CLI's --set, which
 * job_spec_set() records by forgetting the file's line).
 * Borrowed from spec.
 */
const char *job_spec_where(const struct job_spec *spec, const char *key);

/*
 * job_spec_set - set one key of a section as the CLI does (--set k=v goes
 * to [matrix] when the value has a comma or space, else to [workload]).
 * Same errors as the parser, without a line.
 */
int job_spec_set(struct job_spec *spec, const char *section, const char *key,
		 const char *value, struct buf *err);

/*
 * job_spec_check - whole-spec checks after parsing: a tree and base when
 * series are given, at least one variant, repeat >= 1, at most
 * JOB_MAX_RUNS runs (repeat auto: at its cap), two variants or axis
 * values to compare for repeat auto. -EINVAL with err filled.
 */
int job_spec_check(const struct job_spec *spec, struct buf *err);

/*
 * job_spec_add_file - append one "PATH[:GUEST_PATH]" to spec->files (the
 * CLI's --files; [job] files = ... sets the whole list), PATH made
 * absolute against the working directory so that resume and rerun from
 * elsewhere find the same file. -EINVAL with err when PATH is empty or
 * the working directory cannot be read.
 */
int job_spec_add_file(struct job_spec *spec, const char *file, struct buf *err);

/*
 * job_spec_resolve_series - what needs the series' mail before the
 * variants can be named, done once before the job is stored (or printed
 * by --dry-run), so that the stored spec names each revision and base:
 *   all_revisions: the one series (a message-id or URL) becomes one entry
 *     per revision series_revisions() finds, each its revision's
 *     message-id pinned to its version (series_version), variants "+ vN";
 *     revisions the server does not have are left out;
 *   version: every series entry pinned to revision N;
 *   base "auto": the base-commit of the newest revision (or of revision
 *     `version`) resolved in the tree (variant_build_resolve_series_base),
 *     and base set to it; every revision is applied on that one base, and
 *     a revision naming another base-commit is a warning (log).
 * db keeps fetched threads (needed when a series is a message-id; may be
 * NULL otherwise). Returns 0; -EINVAL when all_revisions is given with
 * other than one message-id, or a revision is not in a thread; -ENOENT when
 * the base-commit is not named or not in the tree (err says, and to give
 * --base); series_source's codes (-EIO no server and no kept copy).
 */
int job_spec_resolve_series(struct job_spec *spec, struct db *db, struct buf *err);

/* The spec as JSON text (stored in jobs.spec_json; caller frees). */
char *job_spec_to_json(const struct job_spec *spec);
/* ...and back, for rerun/resume. -EINVAL on a malformed document. */
int job_spec_from_json(struct job_spec *spec, const char *json, struct buf *err);

/*
 * job_variants - the variants of a spec, baseline first (variant.h): names
 * as cover letters give them ("base (v6.12.117)", "+ v6 2-3", "base
 * (v6.12.117) A/A"), each with the job's config fragments recorded. *out
 * is a new array of the returned count; free it with job_variants_free().
 */
size_t job_variants(const struct job_spec *spec, struct variant **out);
void job_variants_free(struct variant *v, size_t n);

/* Number of matrix cells (product of the dimension sizes; 1 without any). */
size_t job_ncells(const struct job_spec *spec);
/* Cell i (0-based) as "k1=v1 k2=v2" in dimension order (caller frees). */
char *job_cell_text(const struct job_spec *spec, size_t i);
/* Cell i's workload params as JSON: knobs, then the cell's knob values,
 * plus "workload", "fs" and sysctls ({"sysctl": {...}}) (caller frees). */
char *job_cell_params(const struct job_spec *spec, size_t i);

/*
 * job_store - store the job, its variants and every run, in the
 * interleaved run order: for each repeat, for each cell (shuffled with
 * spec->seed), each variant — so drift hits all variants alike. One
 * transaction. *out_job gets the job id. With repeat_auto only the first
 * block (repeat) is stored; job_store_block() appends the others. owner
 * ("pid@host", compare_owner_self()) is the coordinator that will carry
 * the job out, stored in the same transaction so that serve's queue never
 * sees the job free; NULL queues it for serve (POST /api/v1/jobs).
 */
int job_store(struct db *db, const struct job_spec *spec, const char *owner, int64_t *out_job,
	      struct buf *err);

/*
 * job_store_block - append block `block` (1-based: the block-th repeat) of
 * a repeat_auto job: one pending run of every variant whose kernel is ok
 * (db_job_variants' status) in every cell, cells in the order job_store()
 * would have given that repeat, all at one repeat index above every
 * stored one (a whole block for the lab, lab.h). One transaction, so a coordinator killed here leaves the
 * block stored whole or not at all. *n_out (may be NULL) gets the runs
 * stored. Store errors as db.h, with err.
 */
int job_store_block(struct db *db, const struct job_spec *spec, int64_t job_id, int block,
		    size_t *n_out, struct buf *err);

#endif
