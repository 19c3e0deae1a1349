/* cmd_tree.c - kcanary tree: import a source release tarball as a commit
 * (tree_import.h does the work), resolve a commit-ish (git.h). */
#define LOG_MODULE "tree"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "error.h"
#include "wrap/git.h"
#include "log.h"
#include "kernel/tree_import.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kcanary tree import TARBALL --repo DIR [--tag T]\n"
		"       kcanary tree resolve --repo DIR REV\n"
		"\n"
		"import: unpack a kernel source release (e.g. Debian's\n"
		"/usr/src/linux-source-6.12.tar.xz) into DIR's work tree, replacing\n"
		"what was there, and commit it on branch kcanary/import on top of the\n"
		"previous import, so releases can be compared and bisected. DIR is\n"
		"created (git init) when missing. Every file is committed, whatever\n"
		"the tarball's .gitignore says. Importing a tarball imported before is\n"
		"a no-op. The commit is tagged T, by default v<version> from the\n"
		"tree's Makefile (v6.12.117). Prints the commit and tag.\n"
		"\n"
		"resolve: print the commit a tag, branch, abbreviated id or revparse\n"
		"expression names; exit 1 when it is missing or ambiguous.\n");
}

static int do_import(struct cmd_ctx *ctx, int argc, char **argv)
{
	const char *tarball = NULL, *repo_path = NULL, *tag = NULL;
	struct repo *r = NULL;
	struct import_result ir;
	struct buf err = BUF_INIT;
	int ret = 1;
	(void)ctx;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--repo") && i + 1 < argc)
			repo_path = argv[++i];
		else if (!strcmp(argv[i], "--tag") && i + 1 < argc)
			tag = argv[++i];
		else if (argv[i][0] != '-' && !tarball)
			tarball = argv[i];
		else {
			fprintf(stderr, "kcanary tree import: %s '%s'\n", argv[i][0] == '-' ?
				"unrecognized option (or missing value)" : "unexpected argument", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (!tarball || !repo_path) {
		usage(stderr);
		return 2;
	}
	if (repo_open(&r, repo_path, true, &err)) {
		log_err("%s", err_text(&err));
		buf_release(&err);
		return 1;
	}
	if (tree_import_tarball(r, &ir, tarball, tag, &err)) {
		log_err("cannot import '%s': %s", tarball, err_text(&err));
		goto out;
	}
	printf("%s %s%s%s\n", ir.noop ? "unchanged" : "imported", ir.commit,
	       *ir.tag ? " tag " : "", ir.tag);
	ret = 0;
out:
	buf_release(&err);
	repo_close(r);
	return ret;
}

static int do_resolve(struct cmd_ctx *ctx, int argc, char **argv)
{
	const char *repo_path = NULL, *rev = NULL;
	struct buf err = BUF_INIT;
	struct repo *r = NULL;
	char oid[KC_OID_HEX];
	int ret = 1;
	(void)ctx;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--repo") && i + 1 < argc)
			repo_path = argv[++i];
		else if (!rev)
			rev = argv[i];
		else {
			usage(stderr);
			return 2;
		}
	}
	if (!repo_path || !rev) {
		usage(stderr);
		return 2;
	}
	if (repo_open(&r, repo_path, false, &err) || repo_resolve(r, oid, rev, &err))
		log_err("%s", err_text(&err));
	else {
		printf("%s\n", oid);
		ret = 0;
	}
	buf_release(&err);
	repo_close(r);
	return ret;
}

static const struct cmd_verb verbs[] = {
	{ "import", do_import },
	{ "resolve", do_resolve },
	{ NULL, NULL },
};

int cmd_tree(struct cmd_ctx *ctx, int argc, char **argv)
{
	if (argc < 2 || cmd_wants_help(argc, argv)) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	return cmd_select(ctx, "kcanary tree", verbs, argc, argv);
}
