/* variant_build.h - the build service: one variant's kernel (variant.h).
 * Resolve the base, apply the series revision or a subset of it (apply.h),
 * build it with the build cache (build.h); or take a prebuilt image. The
 * one path `kcanary compare` (compare.c), `bisect` (bisect_exec.c),
 * `build` (cmd_build.c) and, for resolve and apply, `series apply`
 * (cmd_series_apply.c) share: the commands parse flags and print, the
 * steps are here, as git's sequencer.c is under builtin/.
 *
 * Outcomes are not errors (error.h): a patch that does not apply or a
 * kernel that does not build is a result (status, reason, log, times) and
 * the call returns 0; a negative errno means the variant could not be
 * attempted (no tree, an unknown base, a mail file that does not parse, the
 * store or the disk failed), with err saying why. One struct variant_build
 * per thread: it holds one open repository.
 */
#ifndef KC_VARIANT_BUILD_H
#define KC_VARIANT_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/apply.h"
#include "store/db.h"
#include "wrap/git.h"
#include "util.h"
#include "kernel/variant.h"

struct series;

enum variant_build_status {
	VARIANT_BUILD_OK,
	VARIANT_BUILD_APPLY_FAILED,     /* a selected patch did not apply */
	VARIANT_BUILD_BUILD_FAILED,     /* the kernel did not build */
};

/* The status as the variants table stores it: "ok", "apply-failed",
 * "build-failed". */
const char *variant_build_status_name(enum variant_build_status s);

/* How every variant of one job is built. Strings are borrowed: they must
 * outlive the struct variant_build made from them. */
struct variant_build_opts {
	const char *tree;               /* the kernel tree (a git repository);
					 * NULL when only prebuilt variants come */
	const char *home;               /* $KCANARY_HOME: build/ and kernels/ below it */
	const char *base_config;        /* a .config to start from; NULL: tinyconfig */
	const char *const *fragments;   /* config fragments after the defaults:
					 * kernels/NAME.config names or paths */
	size_t nfragments;
	bool no_default_fragments;      /* leave out build_default_fragments */
	int jobs;                       /* make -jN; <= 0: the online CPUs (or the
					 * distcc farm's size) */
	const char *distcc;             /* DISTCC_HOSTS to build on (build.h);
					 * NULL: this machine alone */
	bool progress;                  /* the build's progress line on stderr */
	bool allow_missing;             /* apply a revision some of whose patches
					 * are not in the mail (series.h missing[]);
					 * else that is refused */
	int version;                    /* -v N: variant_build_load_series keeps
					 * revision N of a message-id's thread;
					 * 0: the newest */
};

/*
 * struct variant_build_result - what became of one variant. commit: the
 * commit built; for apply-failed the last commit that applied (the base
 * when none did); "" for a prebuilt image. kernel_id: its kernels row (a
 * failed build has one too, with its log), 0 when none. build_s: wall
 * seconds of the make run here, the stored build's on a cache hit, < 0
 * when none is known (no make ran); cpu_s: the make run's CPU seconds, 0
 * on a cache hit. image_path, build_log_path: NULL when there is none.
 * reason: why not ok (the patch and hunk that did not apply, the first
 * compiler error with file:line and "(log: PATH)", the options that did
 * not survive olddefconfig), NULL when ok. Strings owned:
 * variant_build_result_release().
 */
struct variant_build_result {
	enum variant_build_status status;
	char commit[KC_OID_HEX];
	int64_t kernel_id;
	bool cache_hit;
	double build_s, cpu_s;
	char *image_path;
	char *build_log_path;
	char *reason;
};

void variant_build_result_release(struct variant_build_result *res);

/*
 * variant_build_new - a builder for the variants of one job: db receives
 * the kernels rows (NULL when only resolve and apply are used), o says how
 * to build (copied; its strings borrowed). The repository is opened when
 * a variant first needs it. Free with variant_build_free() (NULL is fine).
 */
struct variant_build;
struct variant_build *variant_build_new(struct db *db, const struct variant_build_opts *o);
void variant_build_free(struct variant_build *vb);

/*
 * variant_build_resolve - the commit rev names in the tree (git.h
 * repo_resolve: a tag, branch, sha or revparse expression) into out.
 * -EINVAL when the builder has no tree; else repo_open's and repo_resolve's
 * codes (-ENOENT: no such repository or revision), err saying which.
 */
int variant_build_resolve(struct variant_build *vb, char out[KC_OID_HEX], const char *rev,
			  struct buf *err);

/*
 * variant_build_resolve_series_base - `--base auto`: the commit rev's
 * base-commit: names (series.h) in the tree, into out. -ENOENT when the
 * revision names none, or names one the tree does not have (err says
 * which, and to give --base); else variant_build_resolve's codes.
 */
int variant_build_resolve_series_base(struct variant_build *vb, char out[KC_OID_HEX],
				      const struct series *rev, struct buf *err);

/*
 * variant_build_load_series - the series revisions in the mail files,
 * "-" (standard input) or message-ids (series_source.h: a thread fetched
 * once and kept in vb's store, the newest revision in it, or revision
 * o->version) into a new
 * array *out of *n_out (free with series_free_all()). What the parser
 * warns about is logged; a file that cannot be read or holds no complete
 * series is an error (its codes), err naming the file.
 */
int variant_build_load_series(struct variant_build *vb, struct series ***out, size_t *n_out,
			      char *const *paths, size_t npaths, struct buf *err);

/*
 * variant_build_apply - apply revision rev (subset as patch_range_parse
 * takes it, NULL for every patch) on base_hex: one commit per patch and,
 * when none failed, the branch kcanary/<series>/vN (apply.h). Returns 0
 * when the result was produced whatever each patch's outcome (out says:
 * applied, already applied, failed with file and hunk); a negative errno
 * when it could not be (-EINVAL a subset the revision does not have, a
 * repository error), err saying why. Release out with
 * apply_result_release() in both cases. rev must outlive out. A revision
 * with missing patches is -EINVAL naming them unless the builder was made
 * with allow_missing.
 */
int variant_build_apply(struct variant_build *vb, struct apply_result *out,
			const char *base_hex, const struct series *rev, const char *subset,
			struct buf *err);

/*
 * variant_build_kernel - v's kernel: a base variant's base built; a series
 * variant's base plus its revision or subset (v->patches), applied then
 * built; a prebuilt image's kernels row (variant_prebuilt_kernel). rev: the
 * series revision already read (borrowed; `kcanary build` reads every
 * revision of its mail files, which may span several), or NULL to apply
 * revision v->version of v->series (the newest when 0; apply-failed naming
 * the revisions there are when it has no such revision). The build dir is shared per
 * (v->build_base or v->base, config), so the variants of a base rebuild
 * only what they touch. Returns 0 with *out filled (out->status says ok,
 * apply-failed or build-failed); a negative errno when v could not be
 * attempted, with err saying why and *out holding nothing to release.
 */
int variant_build_kernel(struct variant_build *vb, struct variant_build_result *out,
			 const struct variant *v, const struct series *rev, struct buf *err);

/*
 * variant_build_for_job - variant_build_kernel() for the variants row
 * variant_id, then that row's build outcome stored (db_variant_set_build:
 * v's base and subset, the commit unless apply-failed, the kernels row,
 * status, reason). What the executors need: a variant that could not be
 * attempted is stored and returned as build-failed with the reason (its
 * runs never start; the job goes on with the others). A build stopped by
 * a full disk is not stored: -ENOSPC (or -EDQUOT), err naming the full
 * place and its free space, the variant left as it was (pending) so that
 * `kcanary resume` builds it again. Returns 0, or a negative errno when
 * the store failed (err says; *out is still filled).
 */
int variant_build_for_job(struct variant_build *vb, struct variant_build_result *out,
			  int64_t variant_id, const struct variant *v, const struct series *rev,
			  struct buf *err);

/* One variant of `kcanary build`'s job: what to build (the caller's) and
 * what became of it (filled; release it). */
struct variant_build_item {
	struct variant v;
	const struct series *rev;       /* as for variant_build_kernel */
	struct variant_build_result res;
};

/*
 * variant_build_adhoc - `kcanary build`'s job: store a job of kind 'adhoc'
 * named name, build each of the n items in order into its variants row
 * (variant_build_for_job), and end the job 'done' when every variant has
 * a kernel, else 'failed'. *job_id gets the job. Returns 0 whatever the
 * variants' outcomes; a negative errno when the store failed (err says;
 * the items' results so far are filled, the others zeroed).
 */
int variant_build_adhoc(struct variant_build *vb, int64_t *job_id, const char *name,
			struct variant_build_item *items, size_t n, struct buf *err);

/*
 * variant_prebuilt_kernel - the kernels row (source 'prebuilt') of the
 * image at path: its release from the bzImage setup header (image.h),
 * modules from /lib/modules/<release> when that is there. Returns 0 with
 * *kernel_id; -EINVAL when path is not a bzImage, -errno when it cannot
 * be read, the store's code when it fails; err says which.
 */
int variant_prebuilt_kernel(struct db *db, const char *path, int64_t *kernel_id,
			    struct buf *err);

#endif
