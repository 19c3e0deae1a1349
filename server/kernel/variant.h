/* variant.h - a variant as a type: which kernel one compared arm of a job
 * runs (a base commit, a base plus a series revision or a subset of it,
 * or a prebuilt image), and its one JSON form, the spec stored in
 * variants.spec_json. job.c (a compare job's variants) and bisect_exec.c
 * (a bisection's candidates) write it; compare.c and the build service
 * (variant_build.h) read it. Pure: jansson only.
 *
 * The JSON keeps the keys stores have always held, so jobs stored by an
 * older kcanary read back (and resume) as they were:
 *   {"kind": "base"|"series"|"prebuilt", "base": REV, "series": PATH,
 *    "patches": SUBSET, "kernel": PATH, "config": [NAME...],
 *    "subject": S, "build_base": REV, "author": "Name <email>",
 *    "author_time": SECONDS, "version": N}
 * Unset fields are left out; null reads as unset (older writers wrote
 * null for them). The name is not in it: it is the variants row's name.
 */
#ifndef KC_VARIANT_H
#define KC_VARIANT_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

enum variant_kind {
	VARIANT_BASE,           /* the base commit-ish as it is */
	VARIANT_SERIES,         /* the base plus a series revision (or a subset) */
	VARIANT_PREBUILT,       /* a kernel image built elsewhere: nothing to build */
};

/*
 * struct variant - every string owned (variant_release() frees them), any
 * may be NULL unless its kind needs it.
 */
struct variant {
	enum variant_kind kind;
	char *name;             /* "base (v6.12.117)", "+ v6 2-3": the variants row's name */
	char *base;             /* commit-ish; needed by base and series */
	char *series;           /* mail file (mbox, .eml, .patch); needed by series:
				 * its newest revision is applied */
	char *patches;          /* subset ("2", "1-2", "1,3"), NULL: every patch */
	int version;            /* N: apply revision vN of the series (a thread
				 * holding several, `-v N`, `--all-revisions`);
				 * 0: its newest revision */
	char *kernel;           /* image path; needed by prebuilt */
	char *build_base;       /* commit whose build dir it shares; NULL: base.
				 * A bisection's candidates share the old end's,
				 * so each builds incrementally, as git bisect in
				 * one work tree does */
	char **config;          /* the config fragments the job builds with, as
				 * given (a record: the same for every variant of
				 * a job); NULL when not recorded, an empty list
				 * is kept as one */
	size_t nconfig;
	/* a bisection's candidate, for the web view's culprit line */
	char *subject;          /* the commit's first line */
	char *author;           /* "Name <email>" */
	int64_t author_time;    /* seconds since the epoch; 0: not recorded */
};

/* The kind's name in the JSON ("base", "series", "prebuilt"). */
const char *variant_kind_name(enum variant_kind kind);

/* variant_release - free v's strings and zero it; NULL is fine. */
void variant_release(struct variant *v);

/* variant_copy - a deep copy of from in *out (release it as any variant). */
void variant_copy(struct variant *out, const struct variant *from);

/*
 * variant_to_json - v as its compact JSON spec (the keys above, in that
 * order; unset ones left out). A new string; caller frees.
 */
char *variant_to_json(const struct variant *v);

/*
 * variant_from_json - read a stored spec into *out, named name (may be
 * NULL; copied). Returns 0, or -EINVAL when json is not an object, has no
 * or an unknown kind, a key holds the wrong type (a number for a path,
 * ...), or the kind lacks what it needs (series without "series", ...):
 * err says which key and what was expected. *out is written only on
 * success.
 */
int variant_from_json(struct variant *out, const char *name, const char *json,
		      struct buf *err);

#endif
