/* apply.h - a series revision on a base: one commit per patch, the branch
 * kcanary/<series>/vN, and per-patch outcomes (applied, already applied,
 * failed with the file and hunk). Trees and commits go through git.h. */
#ifndef KC_APPLY_H
#define KC_APPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "wrap/git.h"
#include "util.h"

/* One revision to apply: name (series slug), version (the N of vN) and its
 * patches ordered by k. All borrowed. */
struct apply_series {
	const char *name;
	int version;
	size_t npatches;
	const struct apply_patch *patches;
};

/*
 * patch_range_parse - parse a subset like b4's -P: "2", "1-2", "1,3",
 * "2-" (2 to the end), NULL or "" for all. sel must have m + 1 entries;
 * sel[k] is set for each selected k in 1..m. -EINVAL for a malformed
 * spec or one outside 1..m, with a message naming it in err (may be NULL).
 */
int patch_range_parse(bool *sel, int m, const char *spec, struct buf *err);

enum apply_outcome {
	APPLY_APPLIED,
	APPLY_ALREADY,   /* reverse-applies: already in the base */
	APPLY_FAILED,    /* does not apply (or corrupt) */
};

struct apply_patch_result {
	int k, m;
	const char *subject;           /* borrowed from the input */
	enum apply_outcome outcome;
	char commit[KC_OID_HEX];       /* the new commit, when applied */
	struct apply_failure fail;     /* where, when failed */
	char *error;                   /* full message when not applied (owned) */
};

/*
 * struct apply_result - what apply_series did. tip: the last commit (the
 * base when nothing applied); branch: the branch set ("" when a patch
 * failed: no branch is made for a broken revision); error: the first
 * failure's message ("cannot apply patch 1/3 '…': fs/fs-writeback.c hunk #1
 * @@ -566,7 +566,7 @@ … does not match"), NULL when none failed.
 */
struct apply_result {
	char tip[KC_OID_HEX];
	char branch[256];
	size_t npatches;
	struct apply_patch_result *patches;
	int napplied, nalready, nfailed;
	char *error;
};

/*
 * apply_series - apply the selected patches of s (subset as for
 * patch_range_parse, NULL for all) on base_hex in order, one commit each.
 * A patch that fails is recorded and skipped; the ones after it are still
 * tried on the last good commit (so the report shows every patch). When
 * none failed, refs/heads/kcanary/<name>/vN (or …/vN-p<subset> for a
 * subset) is set to the tip. Returns 0 when the result was produced
 * (whatever the outcomes: each patch's, and out->error the first failed
 * patch's message); a negative errno when it could not be (bad subset:
 * -EINVAL; repository errors), with err saying why (the result is then
 * still to be released). Release out with apply_result_release().
 */
int apply_series(struct apply_result *out, struct repo *r, const char *base_hex,
		 const struct apply_series *s, const char *subset, struct buf *err);
void apply_result_release(struct apply_result *res);

/* The branch name for s and subset (e.g. "kcanary/memcg-cleanup/v2-p1-2",
 * "…/v2-p1+3" for "1,3"; plain "…/v2" when the subset selects every
 * patch), characters outside [A-Za-z0-9._-] in the name replaced by '-'. */
void apply_branch_name(char *out, size_t size, const struct apply_series *s,
		       const char *subset);

/*
 * apply_result_print - one line per patch: "K/M applied <commit>",
 * "K/M already applied" or "K/M failed: <file> hunk <header>", then the
 * branch. For `kcanary series apply`.
 */
void apply_result_print(FILE *f, const struct apply_result *res);

/*
 * apply_series_from - the apply view of a parsed revision (series.h):
 * out's patches array is new (free with apply_series_view_release()), its
 * strings are borrowed from s, which must outlive it.
 */
struct series;
void apply_series_from(struct apply_series *out, const struct series *s);
void apply_series_view_release(struct apply_series *v);

#endif
