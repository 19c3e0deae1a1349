/* series_diff.h - two revisions of a series compared patch by patch, as
 * git range-diff does: patches matched by patch-id (git patch-id
 * --stable, through git.h), then by subject, then by content (the
 * interdiff's changed lines under a quarter of the two patches' lines,
 * range-diff's creation factor idea), so reordered, retitled and reworked patches are followed;
 * the rest are new or dropped. */
#ifndef KC_SERIES_DIFF_H
#define KC_SERIES_DIFF_H

#include <stddef.h>

#include "wrap/git.h"
#include "kernel/series.h"
#include "util.h"

enum series_diff_kind {
	SERIES_DIFF_SAME,       /* same patch-id: the same change */
	SERIES_DIFF_CHANGED,    /* matched by subject or content, diff differs */
	SERIES_DIFF_DROPPED,    /* in the old revision only */
	SERIES_DIFF_NEW,        /* in the new revision only */
};

struct series_diff_row {
	enum series_diff_kind kind;
	const struct patch *old_p, *new_p; /* borrowed from the revisions; NULL on
					    * the side a patch is not on */
	char old_id[KC_OID_HEX], new_id[KC_OID_HEX]; /* patch-ids, "" for none */
	const char *matched_by;            /* "patch-id", "subject", "content", NULL */
	char *interdiff;                   /* CHANGED: the diff from the old patch's
					    * message and diff to the new one's; else NULL */
};

/*
 * series_diff - rows comparing revision a (old) with b (new), in b's
 * order, each dropped patch after the row of the old patch before it.
 * *out is a new array of *n_out (series_diff_free); it borrows from a and
 * b, which must outlive it. Returns 0, or -EIO when libgit2 cannot diff.
 * A diff libgit2 cannot read has no patch-id (matched by subject).
 */
int series_diff(struct series_diff_row **out, size_t *n_out, const struct series *a,
		const struct series *b, struct buf *err);

/* The kind's word: "=", "!", "<", ">" as range-diff marks them. */
const char *series_diff_mark(enum series_diff_kind k);

void series_diff_free(struct series_diff_row *v, size_t n);

#endif
