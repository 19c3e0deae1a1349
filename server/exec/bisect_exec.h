/* bisect_exec.h - the real `kcanary bisect` (cmd_bisect.c calls it):
 * candidates from a kernel tree (git.h repo_range) or a list of prebuilt
 * images, and the engine's oracle (bisect.h) that has a candidate's kernel
 * built once by the build service (variant_build.h) and boots one guest
 * run of the job's workload per call, stored as a run of a job of kind
 * 'bisect' (one variant per tested candidate: named "<sha12> <subject>",
 * its spec a variant.h base variant with subject, build_base (the old
 * end), author and author_time, or a prebuilt one). */
#ifndef KC_BISECT_EXEC_H
#define KC_BISECT_EXEC_H

#include <stdbool.h>
#include <stdint.h>

#include "judge/bisect.h"
#include "store/db.h"
#include "wrap/git.h"
#include "guest/guest_run.h"
#include "exec/job.h"
#include "exec/job_check.h"
#include "util.h"

/* One candidate, in history order (index 0 is the old end). */
struct bisect_cand {
	char sha[KC_OID_HEX];	/* "" for a prebuilt image */
	char *kernel;		/* prebuilt image path, NULL for a tree commit */
	char *name;		/* variant name: "<sha12> <subject>" or "k<i> <path>" */
	char *subject, *author;	/* NULL for a prebuilt image */
	int64_t date_s;		/* author time, 0 for a prebuilt image */
	/* filled as the bisection goes */
	int64_t variant_id, kernel_id;
	int state;		/* 0 untried, 1 kernel ready, -1 cannot be tried */
	char *why;		/* for state -1: the build/apply/boot failure */
	double *values;		/* the metric of each measured run */
	unsigned nvalues, nskips;
};

struct bisect_cands {
	struct bisect_cand *c;
	size_t n;
};

/*
 * bisect_cands_from_repo - the commits from old_rev to new_rev (repo_range:
 * see its note on merges), each named by short sha and subject. Without
 * first_parent a range holding a merge is still walked first-parent (with
 * a warning saying so and how to bisect a culprit merge's branch): the
 * engine needs a linear history. err gets
 * a message for humans on failure (unknown rev, old not an ancestor of
 * new, fewer than 2 candidates). Release with bisect_cands_release().
 */
int bisect_cands_from_repo(struct bisect_cands *out, const char *repo_path,
			   const char *old_rev, const char *new_rev, bool first_parent,
			   struct buf *err);

/* bisect_cands_from_kernels - prebuilt images in the order given (old
 * first); -EINVAL with err when fewer than 2 or one is not readable. */
int bisect_cands_from_kernels(struct bisect_cands *out, char *const *paths, size_t n,
			      struct buf *err);
void bisect_cands_release(struct bisect_cands *cs);

/* What one bisection job measured, besides the engine's result. */
struct bisect_totals {
	unsigned builds;	/* kernels prepared (built, found in the cache, or prebuilt) */
	unsigned build_failures;
	unsigned boots;		/* guests started */
	unsigned runs;		/* runs that gave a value */
	unsigned skips;		/* runs or kernels that were no evidence */
	double wall_s;
};

/* What bisect_execute() is asked to do. Everything is borrowed. */
struct bisect_exec_opts {
	const struct job_spec *spec;      /* tree, config, workload, knobs, fs: one matrix cell */
	const char *name;                 /* the job's name */
	const char *metric;               /* measured with db_run_metric() */
	const struct bisect_opts *engine; /* bisect.h */
	const struct guest_opts *guest;   /* how runs are booted (guest_run.h) */
	const struct job_check *check;    /* spec's cell as the agent's check saw it
					   * (job_check_cells()): its length is stored
					   * with the job, so runs do not ask the agent
					   * (job_check_store()); NULL: each run asks */
};

/* What one bisection gave. */
struct bisect_exec_out {
	int64_t job_id;                   /* the job stored (0 when none was) */
	struct bisect_result res;         /* the engine's result */
	struct bisect_totals totals;
};

/*
 * bisect_execute - store a job of kind 'bisect' named o->name and run the
 * engine over cands with o->engine, measuring o->metric, each run through
 * the run service (guest_run.h). Every oracle call rewrites the job's
 * event log (db_bisect.h), preceded by one "# candidate I SHA NAME"
 * comment per candidate. Skips: a patch, build or boot failure, a run that
 * did not end 'ok', a run without the metric.
 *
 * With o->guest->hosts (lab_select()'s spec, chosen before the job is
 * stored) every run goes through lab_run_pending() on that pool: the
 * engine's planned rounds (bisect_run_planned(): endpoint and check rounds)
 * at once, an old/new pair a block, a one-pair round filled up to a pair
 * a slot; other runs one at a time. A run its host failed ('infra') is
 * placed again on a live host and is never an answer; answers reach the
 * engine, and the log, in the order it asks. -EHOSTDOWN (the job 'failed')
 * when every host went down with runs left.
 *
 * On 0, *out and verdicts (cands->n entries, caller's) are filled.
 * Returns -EINVAL (more than one matrix cell), -EINTR when SIGINT/SIGTERM
 * stopped it (the job is 'interrupted'), -EIO when the store failed during
 * the bisection (the job is 'failed'), or another negative errno; err says
 * why. out->job_id is set as soon as the job is stored.
 */
int bisect_execute(struct db *db, struct bisect_cands *cands, const struct bisect_exec_opts *o,
		   struct bisect_exec_out *out, enum bisect_verdict *verdicts, struct buf *err);

#endif
