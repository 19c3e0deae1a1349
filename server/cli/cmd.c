/* cmd.c - what every subcommand shares: --help and getopt, verb tables,
 * the home directory and the store (cmd.h). */
#define LOG_MODULE "cmd"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "store/db.h"
#include "store/db_runs.h"
#include "error.h"
#include "log.h"
#include "util.h"

void cmd_ctx_init(struct cmd_ctx *ctx, const char *home)
{
	const char *env = getenv("KCANARY_HOME");

	ctx->home = home ? xstrdup(home) : kc_home();
	ctx->db_path = db_path_in(ctx->home);
	ctx->home_from = home ? "--home" : env && *env ? "$KCANARY_HOME" : "the default home";
}

void cmd_ctx_release(struct cmd_ctx *ctx)
{
	free(ctx->home);
	free(ctx->db_path);
	ctx->home = ctx->db_path = NULL;
}

bool cmd_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return true;
	}
	return false;
}

int cmd_getopt(int argc, char **argv, const char *prog, const char *shortopts,
	       const struct option *longopts)
{
	char *name = argv[0];
	int c;

	argv[0] = (char *)prog;
	c = getopt_long(argc, argv, shortopts, longopts, NULL);
	argv[0] = name;
	return c;
}

int cmd_select(struct cmd_ctx *ctx, const char *prog, const struct cmd_verb *verbs, int argc,
	       char **argv)
{
	const struct cmd_verb *v;
	size_t n = 0;

	for (v = verbs; v->name; v++, n++)
		if (argc > 1 && !strcmp(argv[1], v->name))
			return v->fn(ctx, argc - 1, argv + 1);
	if (v->fn)
		return v->fn(ctx, argc, argv);
	if (argc > 1)
		fprintf(stderr, "%s: unknown subcommand '%s' (expected ", prog, argv[1]);
	else
		fprintf(stderr, "%s: expected a subcommand (", prog);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s%s", i == 0 ? "" : i + 1 < n ? ", " : " or ", verbs[i].name);
	fprintf(stderr, ")\n");
	return 2;
}

struct db *cmd_open_store(const struct cmd_ctx *ctx, const char *prog)
{
	struct buf err = BUF_INIT;
	struct db *db = NULL;

	if (db_open(&db, ctx->db_path, &err))
		fprintf(stderr, "%s: %s\n", prog, err_text(&err));
	/* a run whose writer died is shown as interrupted, never as live */
	else if (db_runs_reap(db, NULL, &err))
		fprintf(stderr, "%s: warning: %s\n", prog, err_text(&err));
	buf_release(&err);
	return db;
}

struct db *cmd_open_existing_store(const struct cmd_ctx *ctx, const char *prog)
{
	if (access(ctx->db_path, F_OK) == 0)
		return cmd_open_store(ctx, prog);
	fprintf(stderr, "%s: no store at '%s' (%s): no job has run with this home\n", prog,
		ctx->db_path, ctx->home_from);
	return NULL;
}
