/* main.c - the kcanary binary: global options and the subcommand table.
 * Start reading here; each subcommand lives in server/cli/cmd_<name>.c and
 * gets the one struct cmd_ctx (home, store path) made here. */
#define LOG_MODULE "main"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "store/db.h"
#include "error.h"
#include "log.h"
#include "util.h"

#ifndef KC_VERSION
#define KC_VERSION "0.1.0"
#endif

const struct cmd commands[] = {
	/* compare kernels */
	{ "compare", cmd_compare, "build, boot and run each variant; print the cover-letter table" },
	{ "resume",  cmd_resume,  "carry on a compare job whose coordinator stopped" },
	{ "rerun",   cmd_rerun,   "run a stored compare job again with the same spec" },
	{ "status",  cmd_status,  "show a job's progress" },
	{ "jobs",    cmd_jobs,    "list jobs with their progress" },
	{ "report",  cmd_report,  "print a job's cover-letter table" },
	/* the pieces */
	{ "tree",    cmd_tree,    "import a source release into a kernel tree, resolve revisions" },
	{ "series",  cmd_series,  "show (or apply) patch series read from mail" },
	{ "build",   cmd_build,   "build the base and each series revision: one kernel per variant" },
	{ "boot",    cmd_boot,    "boot a kernel in a guest and store one run" },
	{ "rootfs",  cmd_rootfs,  "build (or find cached) a guest root filesystem for --rootfs" },
	{ "ingest",  cmd_ingest,  "store one run's agent record stream" },
	/* other questions */
	{ "bisect",  cmd_bisect,  "find the commit where a metric changed (tree or --kernels; log, replay, simulate)" },
	{ "canary",  cmd_canary,  "judge a canary kernel's runs against the control's" },
	/* service and setup */
	{ "serve",   cmd_serve,   "serve the JSON API and the comparison pages" },
	{ "token",   cmd_token,   "create, list or remove API bearer tokens" },
	{ "lab",     cmd_lab,     "lab hosts: add, list, remove, check the libvirt hosts runs go to" },
	{ "doctor",  cmd_doctor,  "check KVM, libvirt, the channel and the images" },
	{ "help",    cmd_help,    "list commands, or show one command's help" },
	{ "version", cmd_version, "print the kcanary version" },
	{ NULL, NULL, NULL },
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kcanary [--home DIR] [-v|-q] <command> [<args>]\n"
		"\n"
		"Compare kernel revisions, bisect regressions and canary kernels\n"
		"on a noisy metric. Results live in DIR/kcanary.db (default\n"
		"$KCANARY_HOME, else ~/.local/share/kcanary).\n"
		"\n"
		"commands:\n");
	for (const struct cmd *c = commands; c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
	fprintf(f, "\n'kcanary <command> --help' shows a command's options.\n");
}

int cmd_help(struct cmd_ctx *ctx, int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "-h") && strcmp(argv[1], "--help")) {
		for (const struct cmd *c = commands; c->name; c++) {
			if (!strcmp(c->name, argv[1])) {
				char *args[] = { argv[1], (char *)"--help", NULL };
				return c->fn(ctx, 2, args);
			}
		}
		fprintf(stderr, "kcanary: '%s' is not a kcanary command; see 'kcanary help'\n",
			argv[1]);
		return 2;
	}
	usage(stdout);
	return 0;
}

int cmd_version(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)ctx;
	if (argc > 1 && strcmp(argv[1], "--help") && strcmp(argv[1], "-h")) {
		fprintf(stderr, "kcanary version: unexpected '%s'\n", argv[1]);
		return 2;
	}
	printf("kcanary %s\n", KC_VERSION);
	return 0;
}

/* The command argv[0] names, with ctx; 2 when there is none. */
static int run_command(struct cmd_ctx *ctx, int argc, char **argv)
{
	for (const struct cmd *c = commands; c->name; c++)
		if (!strcmp(c->name, argv[0]))
			return c->fn(ctx, argc, argv);
	fprintf(stderr, "kcanary: '%s' is not a kcanary command; see 'kcanary help'\n",
		argv[0]);
	return 2;
}

int main(int argc, char **argv)
{
	const char *home = NULL;
	struct cmd_ctx ctx;
	int i = 1, ret;

	log_set_prog("kcanary");
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--home") && i + 1 < argc) {
			home = argv[++i];
		} else if (!strncmp(argv[i], "--home=", 7)) {
			home = argv[i] + 7;
		} else if (!strcmp(argv[i], "-v")) {
			log_level = log_level < LOG_INFO ? LOG_INFO : LOG_DEBUG;
		} else if (!strcmp(argv[i], "-q")) {
			log_level = LOG_ERROR;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--version")) {
			return cmd_version(NULL, 0, NULL);
		} else {
			fprintf(stderr, "kcanary: unrecognized option '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	cmd_ctx_init(&ctx, home);
	ret = run_command(&ctx, argc - i, argv + i);
	cmd_ctx_release(&ctx);
	return ret;
}
