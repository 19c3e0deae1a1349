/* cmd_rootfs.c - `kcanary rootfs build SPEC`: build (or find in the cache)
 * the guest root filesystem a --rootfs SPEC run would boot (rootfs.h), and
 * say which it is and how long it took. For warming the cache before a
 * job, and for timing builds (bench/b_rootfs.sh). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "store/db.h"
#include "error.h"
#include "guest/image.h"
#include "guest/rootfs.h"
#include "util.h"

#define MAX_FILES 64

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kcanary rootfs build debian[:PKG,PKG...] [--files PATH[:GUEST_PATH]]...\n"
		"                            [--agent PATH]\n"
		"\n"
		"Build the Debian 12 root filesystem that 'kcanary boot --rootfs SPEC' (and\n"
		"compare) would boot, or find it in $KCANARY_HOME/rootfs/, keyed by the\n"
		"packages' resolved versions, the agent and the files. Prints one line:\n"
		"  rootfs HASH built|cached in SECONDS s: N packages, SIZE MiB, PATH\n");
}

static int do_build(struct cmd_ctx *ctx, int argc, char **argv)
{
	const char *files[MAX_FILES + 1] = { NULL }, *spec = NULL, *agent = NULL;
	struct rootfs_image img = { 0 };
	struct buf err = BUF_INIT;
	char *agent_def = NULL;
	size_t nfiles = 0, npk = 0;
	double t0 = clock_mono_s();
	int rc = 1;

	for (int i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "--files") || !strcmp(argv[i], "--agent")) && i + 1 < argc) {
			if (argv[i][2] == 'a')
				agent = argv[++i];
			else if (nfiles < MAX_FILES)
				files[nfiles++] = argv[++i];
			else {
				fprintf(stderr, "kcanary rootfs: more than %d --files\n", MAX_FILES);
				return 2;
			}
		} else if (argv[i][0] != '-' && !spec) {
			spec = argv[i];
		} else {
			fprintf(stderr, "kcanary rootfs build: unexpected argument '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (!spec) {
		usage(stderr);
		return 2;
	}
	if (!agent)
		agent = agent_def = image_default_agent();
	{
		struct rootfs_spec s = { .home = ctx->home, .spec = spec, .agent_path = agent, .files = files };

		if (rootfs_get(&img, &s, &err)) {
			fprintf(stderr, "kcanary rootfs: %s\n", buf_str(&err));
			goto out;
		}
	}
	for (const char *p = img.packages; p && *p; p++)
		npk += *p == '\n';
	printf("rootfs %s %s in %.1f s: %zu packages, %.0f MiB, %s\n", img.hash,
	       img.built ? "built" : "cached", clock_mono_s() - t0, npk,
	       (double)img.size_bytes / (1 << 20), img.path);
	rc = 0;
out:
	rootfs_image_release(&img);
	buf_release(&err);
	free(agent_def);
	return rc;
}

int cmd_rootfs(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct cmd_verb verbs[] = {
		{ "build", do_build },
		{ NULL, NULL },
	};

	if (cmd_wants_help(argc, argv) || argc < 2) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	return cmd_select(ctx, "kcanary rootfs", verbs, argc, argv);
}
