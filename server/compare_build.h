/* compare_build.h - a tree variant's kernel for the compare executor:
 * resolve the base, apply the series revision (apply.h), build (build.h). */
#ifndef KC_COMPARE_BUILD_H
#define KC_COMPARE_BUILD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "job.h"
#include "util.h"

/* Returned when a patch does not apply (the variant is 'apply-failed'). */
#define COMPARE_APPLY_FAILED 1

/*
 * compare_build_variant - the kernel of a base or series variant (its
 * stored spec vs: kind, base, series, patches, config; optional build_base,
 * the commit whose build dir it shares, by default base: a bisection's
 * candidates share the old end's, so each builds incrementally, as with
 * git bisect in one work tree). On success *kernel_id
 * is the kernels row and commit (size bytes) the built commit. Returns 0,
 * COMPARE_APPLY_FAILED, or a negative errno for a build that failed or
 * could not be tried; why says what happened (first compiler error with
 * file:line, the patch and hunk that did not apply, ...). progress: the
 * build's progress on stderr (a line a minute when it is not a TTY).
 */
int compare_build_variant(struct db *db, const struct job_spec *spec, json_t *vs,
			  const char *home, bool progress, int64_t *kernel_id, char *commit,
			  size_t size, struct buf *why);

#endif
