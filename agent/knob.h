/* knob.h - a workload's knobs: their table (name, type, unit, default,
 * meaning) and parsing "name=value" arguments against it.
 *
 * Each workload declares a const array of struct knob_def; knobs_parse()
 * fills a struct knobs with every knob's value, the default where the
 * command line gave none. Values are kept as typed numbers and as the text
 * they came from (echoed in the hello record's params, so a runner can
 * compare what it asked for with what ran).
 */
#ifndef KC_KNOB_H
#define KC_KNOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

enum knob_type {
	KNOB_SIZE,      /* bytes: "4096", "64K", "4G" (binary suffixes) */
	KNOB_SIZE_MAX,  /* a size or "max" (UINT64_MAX), as memory.max takes */
	KNOB_SECONDS,   /* "120", "120s", "2m", "1.5s" */
	KNOB_UINT,      /* a non-negative integer */
	KNOB_NUMBER,    /* a positive decimal number ("250", "12.5") */
	KNOB_BOOL,      /* 0/1, no/yes, false/true, off/on */
	KNOB_ENUM,      /* one of choices[] */
	KNOB_STRING,    /* any text */
};

struct knob_def {
	const char *name;
	enum knob_type type;
	const char *unit;           /* shown by `list`: "MiB/s", "bytes", "s", "" */
	const char *def;            /* default, as text; parsed like user input;
				     * NULL: required, no default (and not empty) */
	const char *help;           /* one line: what it does */
	const char *const *choices; /* KNOB_ENUM: NULL-terminated */
};

struct knob_val {
	uint64_t u;       /* SIZE, SIZE_MAX, UINT, BOOL (0/1), ENUM (index) */
	double d;         /* SECONDS, NUMBER (and UINT/SIZE as double) */
	char *text;       /* the text it was parsed from (owned) */
	bool given;       /* set on the command line (not the default) */
};

struct knobs {
	const struct knob_def *defs;
	size_t n;
	struct knob_val *vals;   /* n entries, owned */
};

/*
 * knobs_parse - parse argv[0..argc) "name=value" against defs[0..n) into
 * *out (every knob filled; defaults first). On error *out is untouched,
 * and err (error.h; may be NULL) holds a one-line message naming the knob, the
 * value and what was expected, e.g.
 *   unknown knob 'foo' for workload 'wb-handover' (see 'kcanary-agent list')
 *   knob 'pod_max': '4Q' is not a size (expected bytes with an optional K, M, G or T suffix, or max)
 *   knob 'cmd' is required by workload 'command' and is empty (pass cmd=VALUE; ...)
 * Returns 0 or -EINVAL. Free with knobs_release().
 */
int knobs_parse(struct knobs *out, const char *workload,
		const struct knob_def *defs, size_t n,
		int argc, char **argv, struct buf *err);

/* Which setting knobs_parse_fault() refuses (its message goes to err). */
struct knob_fault {
	char knob[64];      /* the knob at fault ("pod_max", "foo"); "" when the
			     * argument names none (it is no name=value) */
};

/*
 * knobs_parse_fault - knobs_parse() that also names the knob at fault, for
 * `kcanary-agent check --json` (the coordinator points the user at the job
 * file line or --set that set it). On -EINVAL fault->knob names it and
 * err holds knobs_parse()'s message; on 0 err is not touched.
 */
int knobs_parse_fault(struct knobs *out, const char *workload,
		      const struct knob_def *defs, size_t n,
		      int argc, char **argv, struct knob_fault *fault, struct buf *err);

void knobs_release(struct knobs *k);

/* Typed access by name; the name must be one of the table's (asserted). */
uint64_t knobs_u64(const struct knobs *k, const char *name);
double knobs_double(const struct knobs *k, const char *name);
bool knobs_bool(const struct knobs *k, const char *name);
/* KNOB_ENUM: the choice's text. KNOB_STRING: the value. Borrowed. */
const char *knobs_str(const struct knobs *k, const char *name);

/* The type's name as `list` shows it ("size", "seconds", ...). */
const char *knob_type_name(enum knob_type t);

#endif
