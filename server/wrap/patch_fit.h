/* patch_fit.h - a mailed diff fitted to the files it is applied to, as
 * `git apply` fits it, in text: each hunk moved to the nearest line where
 * its pre-image matches exactly (an offset, never fuzz), the reverse diff
 * (to tell "already applied"), and git apply's rule that a deleted file is
 * exactly the patch's '-' lines.
 *
 * Pure: no libgit2, no I/O. The caller reads the pre-image files through a
 * struct patch_fit_source (git.c reads them from the parent commit's tree)
 * and hands the fitted text to libgit2, which applies a hunk only at the
 * line its header names.
 */
#ifndef KC_PATCH_FIT_H
#define KC_PATCH_FIT_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

/*
 * struct patch_fit_source - the files of the tree a diff is applied to.
 * read: put path's content in *data and its length in *len and return 0;
 * return -ENOENT (or any negative errno: the file is then treated as
 * missing) when the tree has no such file. *data need not be
 * NUL-terminated; it is borrowed until the next read or until the
 * patch_fit_* call that asked returns. payload: the caller's, passed back.
 */
struct patch_fit_source {
	int (*read)(void *payload, const char *path, const char **data, size_t *len);
	void *payload;
};

/*
 * struct patch_fit_result - what patch_fit_hunks did, hunk by hunk, over
 * the hunks of files the source has (a new file's hunks and those of a
 * file the tree lacks are left alone and not counted).
 * placed: hunks whose pre-image (context and '-' lines) was found exactly,
 *         their header rewritten to that line;
 * moved: of those, the ones found at another line than their header named
 *         (an offset);
 * unplaced: hunks whose pre-image matches nowhere at or after the previous
 *         hunk: left as they were, so the applier refuses them and names
 *         them;
 * unanchored: hunks with no pre-image lines (`@@ -5,0 +6,2 @@`, from a
 *         diff -U0): they would match anywhere, so they stay where their
 *         header says.
 */
struct patch_fit_result {
	unsigned placed;
	unsigned moved;
	unsigned unplaced;
	unsigned unanchored;
};

/*
 * patch_fit_hunks - append diff to out with every hunk header rewritten to
 * the line where its pre-image matches the file exactly, as git apply
 * places hunks (apply.c, find_pos()): the match nearest to the header's
 * line shifted by the previous hunk's offset, searched both ways, never
 * before the end of the previous hunk; on a tie the earlier line. The new
 * side's start moves with it ("+c" = old start + the lines the earlier
 * hunks added). Exact matching only: a hunk needing fuzz is unplaced.
 * Everything else in diff is copied as it is.
 *
 * out: appended to (the caller releases it). res may be NULL. diff: the
 * patch text from its first "diff --git" line; pre-images are read from
 * src by the path after "--- a/" (up to a tab).
 */
void patch_fit_hunks(struct buf *out, struct patch_fit_result *res, const char *diff,
		     const struct patch_fit_source *src);

/*
 * patch_reverse - append the same patch the other way round to out (what
 * `git apply -R` applies): paths swapped in "diff --git", "---"/"+++" and
 * "index" lines, "new file mode" and "deleted file mode" swapped, hunk
 * ranges swapped and '+'/'-' lines exchanged. Lines between patches (the
 * "-- " signature) are kept.
 */
void patch_reverse(struct buf *out, const char *diff);

/*
 * patch_fit_deletions - git apply's rule for a deleted file ("+++
 * /dev/null"): its content must be exactly the patch's '-' lines (with "\
 * No newline at end of file" honoured). libgit2 deletes the file without
 * looking. Returns true when every deleted file in diff is there and
 * matches; false when one is missing or differs, with its path put in
 * bad_path (reset first; may be NULL).
 */
bool patch_fit_deletions(struct buf *bad_path, const char *diff,
			 const struct patch_fit_source *src);

#endif
