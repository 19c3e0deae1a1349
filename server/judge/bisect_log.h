/* bisect_log.h - a bisection's event log (format: the top of bisect_log.c)
 * read into one value: what the API answers as JSON and the web page draws.
 * bisect_replay() and bisect_log_table() are declared in bisect.h. */
#ifndef KC_BISECT_LOG_H
#define KC_BISECT_LOG_H

#include <stddef.h>

#include "judge/bisect.h"
#include "util.h"

/* One "run" line of a candidate: its value and phase (endpoint, search,
 * check). */
struct bisect_log_run {
	double value;
	char phase[12];
};

/* One candidate the log names ('# candidate I SHA NAME') or runs. */
struct bisect_log_cand {
	size_t idx;
	char *sha;	/* the '# candidate' line's sha, "" for an image or no line */
	char *name;	/* its NAME, NULL without a '# candidate' line */
	char *subject;	/* NAME past "<sha12> " for a commit, else NAME; NULL as name */
	struct bisect_log_run *runs;	/* in log order */
	size_t nruns;
	unsigned skips;
	char verdict[12];	/* the last verdict line's (good, bad, skip, unsure); "" none */
	double median;	/* of every run's value (check runs too), NAN without runs */
};

/* A posterior class: candidates first..last (equal for one) and its
 * probability. */
struct bisect_log_class {
	size_t first, last;
	double prob;
};

/* A line's key=value fields as written, in order (n == 0: no such line). */
struct bisect_log_fields {
	size_t n;
	char **key, **value;
};

struct bisect_log_view {
	struct bisect_opts opts;	/* the config line */
	size_t n;			/* candidates (config n) */
	struct bisect_log_cand *cands;	/* in idx order */
	size_t ncands;
	struct bisect_log_class *post;	/* the last posterior line's classes, best first */
	size_t npost;
	/* the last endpoints, check and result lines (result: n == 0 while the
	 * bisection runs or when it stopped before one) */
	struct bisect_log_fields endpoints, check, result;
};

/*
 * bisect_log_read - read a bisection's log (with bisect_exec.c's
 * '# candidate' lines or without) into *v, which the caller releases with
 * bisect_log_view_free() (also after a failure). Run, skip and verdict
 * lines of an idx outside the config's n are ignored, as the table does.
 * Returns 0, or -EINVAL (err says why) when text has no valid config line.
 */
int bisect_log_read(struct bisect_log_view *v, const char *text, struct buf *err);

/* bisect_log_view_free - release what bisect_log_read() allocated; *v is
 * zeroed. NULL-safe. */
void bisect_log_view_free(struct bisect_log_view *v);

#endif
