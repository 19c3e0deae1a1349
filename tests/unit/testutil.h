/* testutil.h - fixtures shared by the unit tests (header-only, so each
 * test binary stays one file): a temporary directory per test; the one
 * switch that rewrites golden files. */
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

/* golden_update - whether a golden-file check rewrites its file instead of
 * comparing: KCANARY_UPDATE_GOLDEN=1, the one name for it (then review the
 * diff). The old name KC_UPDATE_GOLDEN is refused rather than ignored, so
 * a rewrite asked under it is not silently a comparison; both are refused
 * under CI=true, where a rewritten golden would compare nothing. Returns
 * 1 rewrite, 0 compare, -1 refused (said on stderr). */
static inline int golden_update(void)
{
	const char *v = getenv("KCANARY_UPDATE_GOLDEN");
	const char *ci = getenv("CI");

	if (getenv("KC_UPDATE_GOLDEN")) {
		fprintf(stderr, "KC_UPDATE_GOLDEN is not a switch: set KCANARY_UPDATE_GOLDEN=1\n");
		return -1;
	}
	if (!v || strcmp(v, "1"))
		return 0;
	if (ci && !strcmp(ci, "true")) {
		fprintf(stderr, "KCANARY_UPDATE_GOLDEN=1 under CI=true: goldens are compared in CI, not rewritten\n");
		return -1;
	}
	return 1;
}

#endif
