/* cmd.h - kcanary's subcommands, git-style: one cmd_<name>() per file
 * (server/cmd_<name>.c), registered in the table in server/cli/main.c.
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

struct db;

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
/* cmd_open_store - open the store at cmd_db_path(); NULL after printing
 * "PROG: <why>" on stderr (prog: "kcanary compare"). db_close() it. */
struct db *cmd_open_store(const char *prog);
/* cmd_open_existing_store - cmd_open_store() for a command that only reads
 * (jobs, status, report): when the store file does not exist it creates
 * nothing and returns NULL after "PROG: no store at 'PATH' (--home): ...",
 * so a mistyped --home or $KCANARY_HOME is an error, not an empty list. */
struct db *cmd_open_existing_store(const char *prog);
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
int cmd_lab(int argc, char **argv);
int cmd_rootfs(int argc, char **argv);

/* `kcanary series apply ...` (argv[0] is "apply"), in cmd_series_apply.c:
 * a row of cmd_series.c's verb table. */
int cmd_series_apply(int argc, char **argv);
/* `kcanary series revisions|diff ...`, in cmd_series_revs.c. */
int cmd_series_revisions(int argc, char **argv);
int cmd_series_diff(int argc, char **argv);

/*
 * struct cmd_verb - one sub-verb of a subcommand, bpftool's do_<verb>
 * tables (its main.c, cmd_select()): `kcanary tree import ...` runs the
 * "import" row's fn with argv[0] "import". A table ends with a row whose
 * name is NULL; that row's fn, when set, is the subcommand's own work when
 * no verb is named (`kcanary canary --control ...`), run with argv as
 * given.
 *
 * To add a verb: write `static int do_foo(int argc, char **argv)` in the
 * subcommand's file, add { "foo", do_foo } to its table and a line to its
 * usage text.
 */
struct cmd_verb {
	const char *name;
	int (*fn)(int argc, char **argv);
};

/*
 * cmd_select - run the verb argv[1] names (exact match) from verbs, with
 * argc - 1, argv + 1; anything else goes to the final row's fn when it has
 * one. Without one, a missing or unknown verb is a usage error: a message
 * naming prog ("kcanary tree") and the verbs there are on stderr, and exit
 * status 2. Help (--help) is the subcommand's to handle first.
 */
int cmd_select(const char *prog, const struct cmd_verb *verbs, int argc, char **argv);

/* getopt_long() for a subcommand: glibc's messages ("unrecognized option
 * '--x'", "option '--m' requires an argument") name prog, e.g. "kcanary
 * bisect", instead of argv[0]. argv[0] is restored before it returns. */
struct option;
int cmd_getopt(int argc, char **argv, const char *prog, const char *shortopts,
	       const struct option *longopts);

#endif
