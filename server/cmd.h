/* cmd.h - kcanary's subcommands, git-style: one cmd_<name>() per file
 * (server/cmd_<name>.c), registered in the table in server/main.c.
 *
 * To add one: write `int cmd_foo(int argc, char **argv)` in cmd_foo.c
 * (argv[0] is "foo"; return the process exit code: 0 ok, 1 failure,
 * 2 usage), declare it here, and add a row to commands[] in main.c.
 * Every command answers --help with its usage on stdout and exit 0.
 */
#ifndef KC_CMD_H
#define KC_CMD_H

#include <stdbool.h>
#include <stdio.h>

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

/* The table, terminated by a NULL name. */
extern const struct cmd commands[];

/* true when argv has -h or --help (before any "--"). */
bool cmd_wants_help(int argc, char **argv);

/* The store path from --home/$KCANARY_HOME (caller frees). */
char *cmd_db_path(void);
/* Set by the global --home option before the subcommand runs. */
extern const char *cmd_home;

int cmd_help(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_ingest(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_resume(int argc, char **argv);
int cmd_rerun(int argc, char **argv);
int cmd_boot(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_jobs(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_bisect(int argc, char **argv);
int cmd_canary(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_token(int argc, char **argv);
int cmd_series(int argc, char **argv);
int cmd_tree(int argc, char **argv);
int cmd_build(int argc, char **argv);

/* `kcanary series apply ...` (argv[0] is "apply"): defined with the tree
 * code; cmd_series.c has a weak default that says it is not built in. */
int series_cmd_apply(int argc, char **argv);

/* getopt_long() for a subcommand: glibc's messages ("unrecognized option
 * '--x'", "option '--m' requires an argument") name prog, e.g. "kcanary
 * bisect", instead of argv[0]. argv[0] is restored before it returns. */
struct option;
int cmd_getopt(int argc, char **argv, const char *prog, const char *shortopts,
	       const struct option *longopts);

/*
 * Sub-verbs (`kcanary token create NAME`), bpftool's do_<verb> tables: a
 * command with verbs keeps a table of struct cmd_verb, terminated by a
 * NULL name, and hands its argv to cmd_select(). To add a verb: write
 * `static int do_foo(int argc, char **argv)` (argv[0] is "foo"; it
 * returns the exit code and checks its own arguments) and add a row.
 */
struct cmd_verb {
	const char *name;
	int (*fn)(int argc, char **argv);
};

/*
 * cmd_select - run the verb argv[1] names with argc - 1, argv + 1. No verb:
 * usage(stderr), 2. A verb not in the table: "PROG: unknown subcommand
 * 'X' (expected a, b or c)" and usage(stderr), 2. prog names the command
 * in messages ("kcanary token").
 */
int cmd_select(const struct cmd_verb *verbs, int argc, char **argv, const char *prog,
	       void (*usage)(FILE *f));

#endif
