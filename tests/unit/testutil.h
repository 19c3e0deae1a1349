/* testutil.h - fixtures shared by the unit tests (header-only, so each
 * test binary stays one file): a temporary directory per test. */
#ifndef KC_TESTUTIL_H
#define KC_TESTUTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tmpdir {
	char path[256];
};

static inline int tmpdir_setup(void **state)
{
	struct tmpdir *td = calloc(1, sizeof(*td));
	const char *base = getenv("TMPDIR");

	snprintf(td->path, sizeof(td->path), "%s/kctest.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(td->path)) {
		free(td);
		return -1;
	}
	*state = td;
	return 0;
}

static inline int tmpdir_teardown(void **state)
{
	struct tmpdir *td = *state;
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", td->path);
	if (system(cmd) != 0)
		fprintf(stderr, "warning: could not remove %s\n", td->path);
	free(td);
	return 0;
}

#endif
