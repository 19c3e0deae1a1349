/* cmd.h - kcanary's subcommands, git-style: one cmd_<name>() per file
 * (server/cli/cmd_<name>.c), registered in the table in server/cli/main.c.
 *
 * To add one: write `int cmd_foo(struct cmd_ctx *ctx, int argc, char
 * **argv)` in cmd_foo.c (argv[0] is "foo"; return the process exit code:
 * 0 ok, 1 failure, 2 usage), declare it here, and add a row to commands[]
 * in main.c. Every command answers --help with its usage on stdout and
 * exit 0. A command's work lives in the layers below (exec/, judge/, ...):
 * the command parses flags, calls it and prints.
 */
#ifndef KC_CMD_H
#define KC_CMD_H

#include <stdbool.h>
#include <stdio.h>

struct db;

/*
 * struct cmd_ctx - what every command and verb is given: the home
 * directory and the store in it. main() makes it once from the global
 * --home (cmd_ctx_init) and passes it down; `serve --home DIR` points it
 * elsewhere with cmd_ctx_init() again after cmd_ctx_release().
 */
struct cmd_ctx {
	char *home;		/* --home DIR, else kc_home(): images/, runs/, the store */
	char *db_path;		/* db_path_in(home) */
	const char *home_from;	/* where home came from, for messages: "--home",
				 * "$KCANARY_HOME" or "the default home" */
};

/* cmd_ctx_init - ctx for home (borrowed, copied; NULL: kc_home()).
 * cmd_ctx_release() frees what it holds. */
void cmd_ctx_init(struct cmd_ctx *ctx, const char *home);
void cmd_ctx_release(struct cmd_ctx *ctx);

struct cmd {
	const char *name;
	int (*fn)(struct cmd_ctx *ctx, int argc, char **argv);
	const char *summary;
};

/* The table, terminated by a NULL name. */
extern const struct cmd commands[];

/* true when argv has -h or --help (before any "--"). */
bool cmd_wants_help(int argc, char **argv);

/* cmd_open_store - open the store at ctx->db_path; NULL after printing
 * "PROG: <why>" on stderr (prog: "kcanary compare"). db_close() it. */
struct db *cmd_open_store(const struct cmd_ctx *ctx, const char *prog);
/* cmd_open_existing_store - cmd_open_store() for a command that only reads
 * (jobs, status, report): when the store file does not exist it creates
 * nothing and returns NULL after "PROG: no store at 'PATH' (--home): ...",
 * so a mistyped --home or $KCANARY_HOME is an error, not an empty list. */
struct db *cmd_open_existing_store(const struct cmd_ctx *ctx, const char *prog);

int cmd_help(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_version(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_ingest(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_report(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_compare(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_resume(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_rerun(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_boot(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_doctor(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_jobs(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_status(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_bisect(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_canary(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_serve(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_token(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_series(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_tree(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_build(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_lab(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_rootfs(struct cmd_ctx *ctx, int argc, char **argv);

/* `kcanary series apply ...` (argv[0] is "apply"), in cmd_series_apply.c:
 * a row of cmd_series.c's verb table. */
int cmd_series_apply(struct cmd_ctx *ctx, int argc, char **argv);
/* `kcanary series revisions|diff ...`, in cmd_series_revs.c. */
int cmd_series_revisions(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_series_diff(struct cmd_ctx *ctx, int argc, char **argv);

/*
 * struct cmd_verb - one sub-verb of a subcommand, bpftool's do_<verb>
 * tables (its main.c, cmd_select()): `kcanary tree import ...` runs the
 * "import" row's fn with argv[0] "import". A table ends with a row whose
 * name is NULL; that row's fn, when set, is the subcommand's own work when
 * no verb is named (`kcanary canary --control ...`), run with argv as
 * given.
 *
 * To add a verb: write `static int do_foo(struct cmd_ctx *ctx, int argc,
 * char **argv)` in the subcommand's file, add { "foo", do_foo } to its table and a line to its
 * usage text.
 */
struct cmd_verb {
	const char *name;
	int (*fn)(struct cmd_ctx *ctx, int argc, char **argv);
};

/*
 * cmd_select - run the verb argv[1] names (exact match) from verbs, with
 * ctx, argc - 1, argv + 1; anything else goes to the final row's fn when it has
 * one. Without one, a missing or unknown verb is a usage error: a message
 * naming prog ("kcanary tree") and the verbs there are on stderr, and exit
 * status 2. Help (--help) is the subcommand's to handle first.
 */
int cmd_select(struct cmd_ctx *ctx, const char *prog, const struct cmd_verb *verbs, int argc,
	       char **argv);

/* getopt_long() for a subcommand: glibc's messages ("unrecognized option
 * '--x'", "option '--m' requires an argument") name prog, e.g. "kcanary
 * bisect", instead of argv[0]. argv[0] is restored before it returns. */
struct option;
int cmd_getopt(int argc, char **argv, const char *prog, const char *shortopts,
	       const struct option *longopts);

#endif
