/* lab.h - lab hosts: the libvirt hosts a job's guests run on (stored by
 * db_lab.h), choosing them for a job, checking one over its connection,
 * and placing a job's pending runs on them in parallel.
 *
 * Placement (lab_run_pending()): one worker thread per slot of every
 * chosen host, each with its own store connection and run service
 * context. The pending runs are cut into blocks, one per repeat (one run
 * of every variant x cell: a randomized complete block design with the
 * host as the block), shuffled inside the block by the job's seed; a
 * worker takes a whole block and runs it in order, so host differences
 * fall equally on every variant. A run its host failed ('infra': the
 * connection dropped, the host did not answer) gets a fresh repeat, which
 * goes back to the queue with the rest of its block for any live host; a
 * host whose runs or probes fail LAB_DOWN_AFTER times in a row is marked
 * down and gets no more runs until `kcanary lab check` passes.
 *
 * Builds and runs overlap (struct lab_builds): while a job's kernels are
 * still being built (one build at a time, in a build thread of compare.c)
 * the dispatcher already holds every planned run. Blocks are still taken
 * whole and in order; inside its block a worker starts the first run, in
 * the block's shuffled order, whose variant's kernel exists
 * (lab_pick_next()), and when every run left in its block waits for a
 * kernel it waits for the next build to end. So the first variant's runs
 * start as soon as its kernel exists, and a second host takes the next
 * block meanwhile. Runs of a variant whose build fails are not run (the
 * build thread stores them as skipped, compare.c). A host on this machine
 * (hostfs_uri_local()) does not overlap by default: a build on the
 * coordinator perturbs its guests, so its workers wait until every build
 * has ended (--overlap-builds yes|no|auto).
 */
#ifndef KC_LAB_H
#define KC_LAB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/db.h"
#include "store/db_compare.h"
#include "guest/guest_run.h"
#include "util.h"
#include "wrap/vm.h"

/* The default host's name: guest_opts.uri, else vm_default_uri(), unless a
 * lab host of this name is stored. */
#define LAB_LOCAL "local"

/* Consecutive failures (infra runs or failed probes) that mark a host down. */
#define LAB_DOWN_AFTER 3

struct lab_host {
	char *name, *uri;
	int slots;
};

struct lab_pool {
	struct lab_host *v;
	size_t n;
};

/*
 * lab_select - the hosts spec names: NULL or "" the default host alone;
 * "all" every stored host that is not down (the default host when none is
 * stored); "NAME,NAME" those (LAB_LOCAL may be one); "KEY=VALUE" the stored
 * hosts whose labels have it (not down). default_uri: NULL for
 * vm_default_uri(). -ENOENT when a name is unknown or nothing matches,
 * with err. Release with lab_pool_release().
 */
int lab_select(struct lab_pool *out, struct db *db, const char *spec, const char *default_uri,
	       struct buf *err);
void lab_pool_release(struct lab_pool *p);

/*
 * lab_check - the doctor for one host, over its connection (vm_host_info():
 * versions, the pool, free memory; vm_accel_probe_host(): its own
 * accelerator, *ai, kvm only for hardware KVM), stored on its row (up, or
 * down with why). *info and *ai are filled when the host answered (*ai
 * TCG otherwise). Returns 0 when
 * the check ran and was stored (info->pool_ok and *ok say how it went),
 * -ENOENT when no such host is stored, or a store error.
 */
int lab_check(struct db *db, const char *name, struct vm_host_info *info,
	      struct vm_accel_info *ai, bool *ok, struct buf *err);

/*
 * lab_probe_accel - the accelerator of stored host name, asked over its
 * connection (vm_accel_probe_host()) and stored on its row; its state is
 * left alone (lab add does this: a host not reachable yet is not down).
 * -ENOENT no such host, -EHOSTUNREACH it did not answer (err says why;
 * *ai TCG), or a store error.
 */
int lab_probe_accel(struct db *db, const char *name, struct vm_accel_info *ai, struct buf *err);

/*
 * What a job's builds have done so far, shared by the build thread that
 * publishes it (lab_builds_ready(), lab_builds_end()) and the dispatcher
 * that waits on it. Init with lab_builds_init(), release with
 * lab_builds_release().
 */
struct lab_builds {
	pthread_mutex_t lock;
	pthread_cond_t cond;           /* broadcast on every change */
	bool going;                    /* builds still to end */
	int64_t *ready;                /* variant ids with a kernel */
	size_t nready;
	int overlap;                   /* LAB_OVERLAP_* */
};

enum { LAB_OVERLAP_AUTO, LAB_OVERLAP_YES, LAB_OVERLAP_NO };

/* going: builds still to come (false: every variant already built). */
void lab_builds_init(struct lab_builds *b, bool going, int overlap);
void lab_builds_release(struct lab_builds *b);
/* Variant variant_id has its kernel: its runs may start. */
void lab_builds_ready(struct lab_builds *b, int64_t variant_id);
/* Every build has ended (built or failed). */
void lab_builds_end(struct lab_builds *b);
/* LAB_OVERLAP_* from "yes", "no", "auto" or NULL (auto). */
int lab_overlap_parse(const char *s);

enum lab_pick { LAB_PICK_RUN, LAB_PICK_WAIT, LAB_PICK_NONE };

/*
 * lab_pick_next - the dispatch rule, pure: which run of a block (runs[n] in
 * the block's order, taken[i] true for those already started) a worker
 * starts next, given the variant ids whose kernels exist (ready[nready]),
 * whether builds are still going and whether this host may overlap them.
 * LAB_PICK_RUN with *idx: the first untaken run whose kernel exists (only
 * when the host may overlap or no build is going). LAB_PICK_WAIT: wait
 * for a build to end (an untaken run's kernel is still to be built, or
 * the host does not overlap builds). LAB_PICK_NONE: the block is done
 * (what is left belongs to variants without a kernel, builds over).
 */
enum lab_pick lab_pick_next(const struct db_pending_run *runs, const bool *taken, size_t n,
			    const int64_t *ready, size_t nready, bool going, bool may_overlap,
			    size_t *idx);

/* What a job's runs share, for lab_run_pending(). */
struct lab_job {
	const struct guest_opts *o;
	struct guest_job j;
	const char *db_path;       /* each worker opens its own connection */
	uint64_t seed;             /* the job's: shuffles inside a block */
	const char *metric;        /* for the progress lines; NULL none */
	struct lab_builds *builds; /* NULL: every kernel is built; else the
				    * planned runs of variants still to be
				    * built are dispatched as they get one */
	bool *warned;              /* per pool host: its TCG warning said, kept across
				    * calls (a bisection's rounds); NULL: once a call */
};

/*
 * lab_run_pending - carry job_id's pending runs out on pool (see the top of
 * this file). Each run is stored with its lab host. Returns 0 when no run
 * is left to do (or the job was cancelled), -EINTR when interrupted
 * (runs left stay pending; the run in progress is 'interrupted' with a
 * fresh repeat), -EHOSTDOWN when every host went down with runs left, or
 * a store error; err says which. Call from the main thread (it installs
 * the runner's signal handlers).
 */
int lab_run_pending(struct db *db, int64_t job_id, const struct lab_pool *pool,
		    const struct lab_job *lj, struct buf *err);

#endif
