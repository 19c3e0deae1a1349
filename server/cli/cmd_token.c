/* cmd_token.c - kcanary token: create, list and remove the API's bearer
 * tokens (token.c, db_tokens.c). */
#define LOG_MODULE "token"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "store/db.h"
#include "store/db_tokens.h"
#include "log.h"
#include "api/token.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kcanary token create NAME [--scope SCOPE]...\n"
		"   or: kcanary token list\n"
		"   or: kcanary token remove NAME\n"
		"\n"
		"Bearer tokens for the state-changing endpoints of 'kcanary serve'\n"
		"(docs/api.md), and the scope each needs:\n"
		"  POST /api/v1/jobs                    submit    submit a job\n"
		"  POST /api/v1/jobs/JOB/cancel         submit    cancel a job\n"
		"  POST /api/v1/agents/register         agent:HOST  register a fleet host\n"
		"  POST /api/v1/agents/HOST/heartbeat   agent:HOST  a host's heartbeat\n"
		"  POST /api/v1/agents/HOST/records     agent:HOST  a host's record batch\n"
		"(admin reaches all of them). The GET endpoints need no token.\n"
		"\n"
		"  create NAME   make a new random token, print its secret once on\n"
		"                stdout; only its sha256 is stored. Scopes (what it may\n"
		"                do; --scope again or a quoted list for several):\n"
		"                  read        the GET endpoints\n"
		"                  submit      POST /api/v1/jobs and .../cancel\n"
		"                  agent:HOST  a fleet agent's endpoints for HOST only\n"
		"                  agent:*     the same for every host\n"
		"                  admin       everything\n"
		"                default: agent:HOST for a name agent:HOST, else\n"
		"                'read submit agent:*'\n"
		"  list          print each token's name, scopes and creation time\n"
		"  remove NAME   delete a token; requests using it are refused\n");
}

/* Wrong arguments for a verb: usage on stderr, exit code 2. */
static int bad_usage(void)
{
	usage(stderr);
	return 2;
}

/* NAME [--scope S]...: the scopes as one space-separated list in out. */
static int parse_create(int argc, char **argv, struct buf *scopes)
{
	for (int i = 2; i < argc; i++) {
		const char *v = NULL;
		if (!strcmp(argv[i], "--scope") && i + 1 < argc)
			v = argv[++i];
		else if (!strncmp(argv[i], "--scope=", 8))
			v = argv[i] + 8;
		else
			return -EINVAL;
		buf_printf(scopes, "%s%s", scopes->len ? " " : "", v);
	}
	return 0;
}

static int do_create(struct cmd_ctx *ctx, int argc, char **argv)
{
	char secret[TOKEN_SECRET_LEN + 1], hash[TOKEN_HASH_HEX + 1], dflt[TOKEN_MAX_SCOPES_LEN];
	struct buf err = BUF_INIT, scopes = BUF_INIT;
	struct db *db = NULL;
	int ret = 1, r;

	if (argc < 2 || argv[1][0] == '-' || parse_create(argc, argv, &scopes)) {
		buf_release(&scopes);
		return bad_usage();
	}
	if (!*argv[1]) {
		fprintf(stderr, "kcanary token: the token name is empty\n");
		goto out;
	}
	if (!scopes.len)
		buf_puts(&scopes, token_default_scopes(argv[1], dflt, sizeof(dflt)));
	if (token_scopes_check(buf_str(&scopes), &err)) {
		fprintf(stderr, "kcanary token: --scope: %s\n", buf_str(&err));
		ret = 2;
		goto out;
	}
	if (!(db = cmd_open_store(ctx, "kcanary token")))
		goto out;
	if ((r = token_generate(secret, sizeof(secret)))) {
		fprintf(stderr, "kcanary token: cannot read random bytes: %s\n", strerror(-r));
		goto out;
	}
	token_hash(hash, secret);
	if (db_token_add(db, argv[1], hash, buf_str(&scopes), &err)) {
		fprintf(stderr, "kcanary token: cannot create '%s': %s\n", argv[1], buf_str(&err));
		goto out;
	}
	printf("%s\n", secret);
	fprintf(stderr, "token '%s' (scopes: %s) created; its secret is shown only this once\n",
		argv[1], buf_str(&scopes));
	ret = 0;
out:
	buf_release(&scopes);
	buf_release(&err);
	db_close(db);
	return ret;
}

static int do_list(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct buf err = BUF_INIT;
	struct db *db = NULL;
	struct db_token_row *list = NULL;
	size_t n = 0;
	int ret = 1;

	(void)argv;
	if (argc != 1)
		return bad_usage();
	if (!(db = cmd_open_store(ctx, "kcanary token")))
		goto out;
	if (db_token_list(db, &list, &n, &err)) {
		fprintf(stderr, "kcanary token: %s\n", buf_str(&err));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		char dflt[TOKEN_MAX_SCOPES_LEN];
		const char *scopes = list[i].scopes;

		printf("%s\t%s\t%s\n", list[i].name,
		       scopes ? scopes : token_default_scopes(list[i].name, dflt, sizeof(dflt)),
		       list[i].created_at);
	}
	db_token_rows_free(list, n);
	ret = 0;
out:
	buf_release(&err);
	db_close(db);
	return ret;
}

static int do_remove(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct buf err = BUF_INIT;
	struct db *db = NULL;
	int ret = 1;

	if (argc != 2)
		return bad_usage();
	if (!(db = cmd_open_store(ctx, "kcanary token")))
		goto out;
	if (db_token_remove(db, argv[1], &err)) {
		fprintf(stderr, "kcanary token: cannot remove '%s': %s\n", argv[1], buf_str(&err));
		goto out;
	}
	ret = 0;
out:
	buf_release(&err);
	db_close(db);
	return ret;
}

static const struct cmd_verb verbs[] = {
	{ "create", do_create },
	{ "list",   do_list },
	{ "remove", do_remove },
	{ NULL, NULL },
};

int cmd_token(struct cmd_ctx *ctx, int argc, char **argv)
{
	if (cmd_wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	return cmd_select(ctx, "kcanary token", verbs, argc, argv);
}
