/* db_kernels.h - built kernel images in the store (the kernels table of
 * schema/001): one row per (tree oid, config hash), so a second request for
 * the same tree and config finds the image. Rules as in db.h. */
#ifndef KC_DB_KERNELS_H
#define KC_DB_KERNELS_H

#include <stdint.h>

#include "store/db.h"

/* A kernels row; strings are owned (free with db_kernel_release). */
struct db_kernel {
	int64_t id;
	char *tree_oid, *config_hash, *release;
	char *image_path, *config_path, *system_map_path, *build_log_path;
	char *build_status;            /* pending, building, ok, failed */
	char *build_error;             /* first error line, "file:line: message" */
	char *distcc_hosts;            /* DISTCC_HOSTS of a build through distcc; NULL: none */
	double build_s;                /* < 0 when not recorded */
};

/* db_kernel_find - the row for (tree_oid, config_hash); -ENOENT when none. */
int db_kernel_find(struct db *db, struct db_kernel *out, const char *tree_oid,
		   const char *config_hash, struct buf *err);

/*
 * db_kernel_begin - insert the row for (tree_oid, config_hash) or reset an
 * existing one to status 'building' with no artefacts; *out_id gets its id.
 */
int db_kernel_begin(struct db *db, int64_t *out_id, const char *tree_oid,
		    const char *config_hash, struct buf *err);

/*
 * db_kernel_finish - record a build's end: status 'ok' or 'failed', the
 * artefact paths (any may be NULL), the release, build seconds and the
 * first error (NULL when ok).
 */
int db_kernel_finish(struct db *db, int64_t id, const char *status,
		     const struct db_kernel *k, struct buf *err);

void db_kernel_release(struct db_kernel *k);

/*
 * db_variant_set_build - a variant's tree and build outcome: the base as
 * given, the commit built (may be NULL when nothing was), the patch subset
 * (may be NULL), the kernel row (0 for none), status (pending, ok,
 * apply-failed, build-failed) and error (may be NULL). -EINVAL for a status
 * outside that set, -ENOENT for no such variant.
 */
int db_variant_set_build(struct db *db, int64_t variant_id, const char *base_rev,
			 const char *commit_oid, const char *patches, int64_t kernel_id,
			 const char *status, const char *error, struct buf *err);

#endif
