/* cmd_token.c - kcanary token: create, list and remove the API's bearer
 * tokens (token.c, db_tokens.c). */
#define LOG_MODULE "token"
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "db.h"
#include "db_api.h"
#include "log.h"
#include "token.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kcanary token create NAME\n"
		"   or: kcanary token list\n"
		"   or: kcanary token remove NAME\n"
		"\n"
		"Bearer tokens for the state-changing endpoints of 'kcanary serve'\n"
		"(POST /api/v1/jobs, POST /api/v1/jobs/ID/cancel).\n"
		"\n"
		"  create NAME   make a new random token, print its secret once on\n"
		"                stdout; only its sha256 is stored\n"
		"  list          print each token's name and creation time\n"
		"  remove NAME   delete a token; requests using it are refused\n");
}

int cmd_token(int argc, char **argv)
{
	struct db *db = NULL;
	char *path = NULL;
	int ret = 1, r;

	if (cmd_wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	if (argc < 2 || (strcmp(argv[1], "list") && argc != 3) ||
	    (!strcmp(argv[1], "list") && argc != 2)) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "create") && strcmp(argv[1], "list") && strcmp(argv[1], "remove")) {
		fprintf(stderr, "kcanary token: unknown action '%s'\n", argv[1]);
		usage(stderr);
		return 2;
	}
	path = cmd_db_path();
	if (db_open(&db, path))
		goto out;
	if (!strcmp(argv[1], "create")) {
		char secret[TOKEN_SECRET_LEN + 1], hash[TOKEN_HASH_HEX + 1];

		if (!*argv[2]) {
			fprintf(stderr, "kcanary token: the token name is empty\n");
			goto out;
		}
		if ((r = token_generate(secret, sizeof(secret)))) {
			fprintf(stderr, "kcanary token: cannot read random bytes: %s\n", strerror(-r));
			goto out;
		}
		token_hash(hash, secret);
		if ((r = db_token_add(db, argv[2], hash))) {
			fprintf(stderr, "kcanary token: cannot create '%s': %s\n", argv[2],
				db_errmsg(db));
			goto out;
		}
		printf("%s\n", secret);
		fprintf(stderr, "token '%s' created; its secret is shown only this once\n", argv[2]);
	} else if (!strcmp(argv[1], "list")) {
		json_t *list, *t;
		size_t i;

		if (db_token_list(db, &list)) {
			fprintf(stderr, "kcanary token: cannot list tokens: %s\n", db_errmsg(db));
			goto out;
		}
		json_array_foreach(list, i, t)
			printf("%s\t%s\n", json_string_value(json_object_get(t, "name")),
			       json_string_value(json_object_get(t, "created_at")));
		json_decref(list);
	} else {
		if (db_token_remove(db, argv[2])) {
			fprintf(stderr, "kcanary token: cannot remove '%s': %s\n", argv[2],
				db_errmsg(db));
			goto out;
		}
	}
	ret = 0;
out:
	db_close(db);
	free(path);
	return ret;
}
