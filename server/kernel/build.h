/* build.h - kernel builds: config from a base plus kernels/NAME.config
 * fragments (the tree's merge_config.sh, then olddefconfig), `make
 * O=<build dir> bzImage` with ccache, artefacts stored by (tree oid, config
 * hash) and recorded in the kernels table so a second request is a cache
 * hit. The measurements behind the choices are in ../shared/notes/kbuild.md
 * (beside the tree, not in it). Variants reach it through variant_build.h. */
#ifndef KC_BUILD_H
#define KC_BUILD_H

#include <stdbool.h>
#include <stddef.h>

#include "store/db.h"
#include "store/db_kernels.h"
#include "wrap/git.h"
#include "util.h"

/* The fragments of the default guest config, in merge order: with
 * tinyconfig as the base, a kernel that boots a kcanary guest and has
 * cgroup v2 memory+io with writeback, ext4/xfs/btrfs, BPF, kprobes, BTF. */
extern const char *const build_default_fragments[];

struct build_spec {
	const char *home;              /* $KCANARY_HOME: kernels/ below it */
	const char *base_hex;          /* the base commit: one build dir per (base, config) */
	const char *base_config;       /* a .config file, or NULL for tinyconfig */
	const char *const *fragments;  /* fragment files, merged in this order */
	size_t nfragments;
	int jobs;                      /* make -j; <= 0: the number of online CPUs */
	bool progress;                 /* a progress line on stderr when it is a TTY */
	const char *label;             /* what the progress line calls the build */
	const char *make;              /* the make program; NULL: "make" */
	const char *distcc;            /* DISTCC_HOSTS to compile on ("10.0.0.2/8
					* 10.0.0.3:3632"); NULL: this machine alone.
					* With ccache, distcc is its prefix command
					* (CCACHE_PREFIX=distcc), else CC="distcc gcc";
					* jobs <= 0 then sizes -j to the farm
					* (build_distcc_jobs()) */
};

/*
 * struct build_result - one variant's build. tree/config_hash: the cache
 * key (config_hash is the git blob id of the merged .config, what `git
 * hash-object .config` prints). ok: an image exists; cache_hit: it was
 * built before and nothing ran. build_s: wall seconds of the make run here
 * (the stored build's seconds on a cache hit); cpu_s: its CPU seconds. kernel: the kernels row with
 * the artefact paths (bzImage, .config, System.map, build log). error: why
 * not ok (the first compiler error line, "file:line: …" with the tree
 * prefix removed; missing options; a failed config step); where: the
 * error's "file:line" when known. Strings owned; build_result_release().
 */
struct build_result {
	char tree[KC_OID_HEX];
	char config_hash[KC_OID_HEX];
	bool ok, cache_hit;
	double build_s;
	double cpu_s;                  /* user + system seconds of the make run: a
					* measure of the work that does not depend
					* on how busy the machine was */
	int files_compiled;
	struct db_kernel kernel;
	char *build_dir;
	char *error;
	char *where;
};

/*
 * build_kernel - check out commit_hex in r's work tree, make the config in
 * a staging dir beside the build dir (the build dir's .config is replaced
 * only when it changed, so unchanged objects stay valid), verify every
 * option the fragments ask for survived olddefconfig (a missing one fails
 * the build, naming each option and its fragment), look the (tree, config)
 * pair up in the store, and otherwise run make in
 * <tree>/.kcanary-build/<base>-<config key>/ with CC="ccache gcc" (when
 * ccache is installed; CCACHE_BASEDIR the tree, CCACHE_NOHASHDIR=1,
 * CCACHE_SLOPPINESS=time_macros, so another tree at another path hits the
 * same cache entries: bench/b_ccache.sh), LOCALVERSION empty and
 * KBUILD_BUILD_TIMESTAMP/USER/HOST fixed. The whole log is kept with the artefacts in
 * $home/kernels/<tree>-<config>/.
 *
 * Returns 0 when a result was produced, whether the build succeeded or not
 * (out->ok; out->error says why not: a config step that failed, options
 * that did not survive, the first compiler error); a negative errno when
 * the build could not be attempted or was stopped, with err saying why:
 * -ENOSPC (or -EDQUOT) a step whose log says "No space left on device" (or
 * "Disk quota exceeded"), err naming the fullest of the places a build
 * writes (build dir, artefact dir, $CCACHE_DIR, $TMPDIR or /tmp), its free
 * KiB and the log's line, the kernels row kept 'failed' with that error;
 * -EINVAL a bare
 * repository, -ENOENT an unreadable base config or fragment, a step that
 * could not be started, repository, store or file system errors. Release
 * out with build_result_release() in both cases.
 */
int build_kernel(struct build_result *out, struct repo *r, struct db *db,
		 const char *commit_hex, const struct build_spec *spec, struct buf *err);
void build_result_release(struct build_result *res);

/*
 * build_distcc_jobs - make -j for a build on the distcc hosts list hosts
 * (DISTCC_HOSTS syntax, distcc(1) "HOST SPECIFICATIONS"): ncpu (this
 * machine preprocesses and links) plus each host's job limit, HOST/LIMIT,
 * by default 4 a host and 2 for localhost (distcc(1): "the default is 4
 * ... except for localhost"); "--" options are skipped. At most 1024.
 */
int build_distcc_jobs(const char *hosts, long ncpu);

/*
 * build_first_error - the first error of a build log: the first compiler or
 * linker error line ("…:853:9: error: …", "undefined reference"), else the
 * first make "*** … Error" line. Returns a new string with prefix (the
 * source tree path plus '/') removed, or NULL when none; *where gets
 * "file:line" when the line has one (new string, else NULL).
 */
char *build_first_error(const char *log, const char *prefix, char **where);

/*
 * build_kernels_dir - the kernels/ directory of this kcanary (config
 * fragments): $KCANARY_KERNELS_DIR, else ../kernels next to the binary when
 * it holds guest.config, else ./kernels. New string; caller frees.
 */
char *build_kernels_dir(void);

/* build_fragment_path - NAME (kernels/NAME.config) or a path as given.
 * New string; caller frees. */
char *build_fragment_path(const char *kdir, const char *name);

#endif
