/* cmd_series_apply.c - kcanary series apply: each revision of the given
 * mail files as commits on a base, one line per patch. The steps (resolve,
 * read the mail, apply) are the build service's (variant_build.h); here
 * the flags and the printing. cmd_series.c's verb table dispatches here. */
#define LOG_MODULE "apply"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/apply.h"
#include "cli/cmd.h"
#include "log.h"
#include "store/db.h"
#include "kernel/series.h"
#include "kernel/series_source.h"
#include "util.h"
#include "kernel/variant_build.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kcanary series apply --repo DIR --base REV [--patches K] SERIES...\n"
		"\n"
		"Apply each revision found in the mail (SERIES: a file, '-' or a\n"
		"message-id, as 'kcanary series show' takes it) on\n"
		"REV, one commit per patch with the mail's author, date and message,\n"
		"as `git am` would without -3: context must match exactly (hunks may\n"
		"move, never fuzz). A revision whose patches all apply becomes branch\n"
		"kcanary/<series>/vN (…/vN-p<K> for a subset). Prints per patch\n"
		"  K/M applied <commit>\n"
		"  K/M already applied        (its reverse applies: already in REV)\n"
		"  K/M failed: <file> hunk <header>\n"
		"and the reason on stderr. A failed patch is skipped and the next\n"
		"ones are tried on the last good commit.\n"
		"\n"
		"  --repo DIR     the kernel tree (a git repository)\n"
		"  --base REV     tag, branch or commit to apply on; 'auto': each\n"
		"                 revision's base-commit (said plainly when the tree\n"
		"                 does not have it)\n"
		"  --patches K    only these patches: 2, 1-2, 1,3 (like b4 -P)\n"
		"  --allow-missing  apply a revision some of whose patches are not in\n"
		"                 the mail (one patch of a larger series); else refused\n"
		"\n"
		"Exit 0 only when every selected patch applied; 1 otherwise; 2 on a\n"
		"usage error.\n");
}

int cmd_series_apply(struct cmd_ctx *ctx, int argc, char **argv)
{
	const char *repo_path = NULL, *base = NULL, *subset = NULL;
	bool allow_missing = false;
	char **files = xcalloc((size_t)argc + 1, sizeof(*files));
	size_t nfiles = 0, nrev = 0;
	struct series **revs = NULL;
	struct variant_build *vb = NULL;
	struct db *db = NULL;
	struct buf err = BUF_INIT;
	char base_hex[KC_OID_HEX];
	int ret = 1;

	if (cmd_wants_help(argc, argv)) {
		usage(stdout);
		free(files);
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--repo") && i + 1 < argc)
			repo_path = argv[++i];
		else if (!strcmp(argv[i], "--base") && i + 1 < argc)
			base = argv[++i];
		else if (!strcmp(argv[i], "--patches") && i + 1 < argc)
			subset = argv[++i];
		else if (!strcmp(argv[i], "--allow-missing"))
			allow_missing = true;
		else if (argv[i][0] != '-' || !strcmp(argv[i], "-"))
			files[nfiles++] = argv[i];
		else {
			fprintf(stderr, "kcanary series apply: unrecognized option '%s'\n", argv[i]);
			usage(stderr);
			free(files);
			return 2;
		}
	}
	if (!repo_path || !base || !nfiles) {
		usage(stderr);
		free(files);
		return 2;
	}
	/* a message-id's thread is kept in the store */
	if (series_source_any_ref(files, nfiles) && !(db = cmd_open_store(ctx, "kcanary series apply")))
		goto out;
	vb = variant_build_new(db, &(struct variant_build_opts){ .tree = repo_path,
							 .allow_missing = allow_missing });
	bool auto_base = !strcmp(base, "auto");
	if ((!auto_base && variant_build_resolve(vb, base_hex, base, &err)) ||
	    variant_build_load_series(vb, &revs, &nrev, files, nfiles, &err)) {
		log_err("%s", buf_str(&err));
		goto out;
	}
	ret = 0;
	for (size_t i = 0; i < nrev; i++) {
		struct apply_result res;

		if (auto_base && variant_build_resolve_series_base(vb, base_hex, revs[i], &err)) {
			log_err("%s", buf_str(&err));
			buf_reset(&err);
			ret = 1;
			continue;
		}
		printf("series %s v%d (%zu patches) on %.12s\n", revs[i]->name, revs[i]->version,
		       revs[i]->npatches, base_hex);
		if (variant_build_apply(vb, &res, base_hex, revs[i], subset, &err)) {
			log_err("%s", buf_str(&err));
			ret = 1;
		} else {
			apply_result_print(stdout, &res);
			for (size_t k = 0; k < res.npatches; k++)
				if (res.patches[k].outcome == APPLY_FAILED)
					log_err("%s", res.patches[k].error);
			if (res.nfailed || res.nalready || res.npatches == 0)
				ret = 1;
		}
		apply_result_release(&res);
	}
out:
	series_free_all(revs, nrev);
	variant_build_free(vb);
	db_close(db);
	buf_release(&err);
	free(files);
	return ret;
}
