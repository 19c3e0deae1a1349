/* got.h - what a workload parser reported, for the agent's parser tests
 * (test_fio.c, test_stress_ng.c, test_perf_bench.c); header-only like
 * tests/unit/testutil.h, so each test binary stays one file. Include after
 * <cmocka.h>.
 *
 * struct got collects up to GOT_MAX metrics (got_metric, the parsers'
 * metric callback) or samples (got_sample) in the order they came; names
 * are copied, unit and better borrowed (the parsers pass literals).
 */
#ifndef KC_TEST_GOT_H
#define KC_TEST_GOT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define GOT_MAX 32

struct got {
	char name[GOT_MAX][96];
	double value[GOT_MAX];
	const char *unit[GOT_MAX], *better[GOT_MAX];
	double t[GOT_MAX];       /* samples only: seconds */
	size_t n;
};

static inline void got_metric(void *ud, const char *name, double value, const char *unit,
			      const char *better)
{
	struct got *g = ud;

	assert_true(g->n < GOT_MAX);
	snprintf(g->name[g->n], sizeof(g->name[0]), "%s", name);
	g->value[g->n] = value;
	g->unit[g->n] = unit;
	g->better[g->n++] = better;
}

static inline void got_sample(void *ud, double t, const char *name, double value)
{
	struct got *g = ud;

	assert_true(g->n < GOT_MAX);
	snprintf(g->name[g->n], sizeof(g->name[0]), "%s", name);
	g->t[g->n] = t;
	g->value[g->n++] = value;
}

/* The index of the metric called name; fails the test when there is none. */
static inline size_t got_find(const struct got *g, const char *name)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->name[i], name))
			return i;
	fail_msg("no metric %s", name);
	return 0;
}

/* The text of tests/fixtures/DIR/NAME (at most 1 MiB); caller frees. */
static inline char *got_fixture(const char *dir, const char *name)
{
	char *path = xasprintf("tests/fixtures/%s/%s", dir, name), *text = NULL;

	assert_int_equal(read_file(&text, NULL, path, 1 << 20), 0);
	free(path);
	return text;
}

#endif
