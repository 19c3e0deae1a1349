/* cmd_build.c - kcanary build: one kernel per variant (the base, and the
 * base plus each series revision), recorded as a job with its variants by
 * the build service (variant_build.h); here the flags and the table. */
#define LOG_MODULE "build"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "store/db.h"
#include "log.h"
#include "kernel/series.h"
#include "util.h"
#include "kernel/variant.h"
#include "kernel/variant_build.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kcanary build --repo DIR --base REV|auto [--series SERIES... [-v N]\n"
		"                     [--patches K]]\n"
		"                     [--config FILE] [--config-fragment NAME...]\n"
		"                     [--no-default-fragments] [--jobs N] [--distcc HOSTS]\n"
		"\n"
		"Build one kernel per variant: the base REV, and REV plus each revision\n"
		"of the series in the mail FILEs (mbox, .eml, .patch; only patches K\n"
		"with --patches: 2, 1-2). The config is tinyconfig (or --config FILE)\n"
		"plus the fragments kernels/guest, cgroup-wb, fs and probes, plus each\n"
		"--config-fragment NAME (kernels/NAME.config, or a path), merged with\n"
		"the tree's scripts/kconfig/merge_config.sh, then olddefconfig; an\n"
		"option a fragment asks for that did not survive fails the variant.\n"
		"\n"
		"Builds run `make O=<dir> -jN bzImage` with ccache in\n"
		"<tree>/.kcanary-build/<base>-<config>/, shared by the variants of a\n"
		"base, so a patch that touches two files recompiles two files. Images\n"
		"(bzImage, .config, System.map, build log) are kept in\n"
		"$KCANARY_HOME/kernels/<tree>-<config>/; the same tree and config\n"
		"again is a cache hit. Prints: variant, commit, status (ok, cached,\n"
		"apply-failed, build-failed), build time, artefact; the reason of\n"
		"each failure follows the table.\n"
		"\n"
		"  --repo DIR              the kernel tree (a git repository)\n"
		"  --base REV              tag, branch or commit; 'auto': the series'\n"
		"                          base-commit (the newest revision's), said\n"
		"                          plainly when the tree does not have it\n"
		"  --series SERIES...      series mail files, '-' or message-ids (several\n"
		"                          may follow)\n"
		"  -v N                    revision N of a thread (default the newest)\n"
		"  --patches K             apply only these patches of each revision\n"
		"  --config FILE           base config instead of tinyconfig\n"
		"  --config-fragment NAME  one more fragment (repeatable), e.g.\n"
		"                          debug-lockdep, debug-kasan\n"
		"  --no-default-fragments  only the fragments given\n"
		"  --jobs N                make -jN (default: online CPUs; with --distcc,\n"
		"                          those plus each host's job limit)\n"
		"  --distcc HOSTS          compile on a distcc farm: HOSTS as DISTCC_HOSTS\n"
		"                          ('10.0.0.2/8 10.0.0.3:3632', distcc(1)); each\n"
		"                          host runs distccd with this machine's gcc.\n"
		"                          ccache calls distcc for a miss (CCACHE_PREFIX);\n"
		"                          the kernel's row records the hosts\n"
		"\n"
		"Exit 0 when every variant has a kernel, 1 otherwise, 2 on usage.\n");
}

/* The flags. */
struct build_args {
	const char *repo, *base, *subset, *config, *distcc;
	char **files;                   /* --series FILE... */
	size_t nfiles;
	const char **frags;             /* --config-fragment NAME... */
	size_t nfrags;
	bool no_defaults;
	int jobs;
	int version;                    /* -v N; 0: the newest */
};

/* Parse argv into a; 0, or 2 (usage, printed). */
static int parse_args(struct build_args *a, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];
		if (!strcmp(o, "--repo") && i + 1 < argc)
			a->repo = argv[++i];
		else if (!strcmp(o, "--base") && i + 1 < argc)
			a->base = argv[++i];
		else if (!strcmp(o, "--patches") && i + 1 < argc)
			a->subset = argv[++i];
		else if (!strcmp(o, "--config") && i + 1 < argc)
			a->config = argv[++i];
		else if (!strcmp(o, "--jobs") && i + 1 < argc)
			a->jobs = atoi(argv[++i]);
		else if (!strcmp(o, "--distcc") && i + 1 < argc)
			a->distcc = argv[++i];
		else if (!strcmp(o, "-v") && i + 1 < argc && atoi(argv[i + 1]) > 0)
			a->version = atoi(argv[++i]);
		else if (!strcmp(o, "--no-default-fragments"))
			a->no_defaults = true;
		else if (!strcmp(o, "--config-fragment") && i + 1 < argc) {
			while (i + 1 < argc && argv[i + 1][0] != '-')
				a->frags[a->nfrags++] = argv[++i];
		} else if (!strcmp(o, "--series") && i + 1 < argc) {
			while (i + 1 < argc && argv[i + 1][0] != '-')
				a->files[a->nfiles++] = argv[++i];
		} else {
			fprintf(stderr, "kcanary build: %s '%s'\n", o[0] == '-' ?
				"unrecognized option (or missing value)" : "unexpected argument", o);
			usage(stderr);
			return 2;
		}
	}
	if (!a->repo || !a->base || ((a->subset || a->version) && !a->nfiles) ||
	    (!strcmp(a->base, "auto") && !a->nfiles)) {
		usage(stderr);
		return 2;
	}
	return 0;
}

/* The variants: the base, then the base plus each revision read. */
static struct variant_build_item *make_items(const struct build_args *a, const char *base,
					     struct series **revs, size_t nrev)
{
	struct variant_build_item *items = xcalloc(nrev + 1, sizeof(*items));

	items[0].v = (struct variant){ .kind = VARIANT_BASE, .name = xstrdup("base"),
				       .base = xstrdup(base) };
	for (size_t i = 0; i < nrev; i++) {
		const struct series *s = revs[i];
		struct variant *v = &items[i + 1].v;
		int m = s->npatches ? s->patches[s->npatches - 1].m : 0;

		*v = (struct variant){ .kind = VARIANT_SERIES, .base = xstrdup(base),
				       .patches = a->subset ? xstrdup(a->subset) : NULL };
		v->name = a->subset ? xasprintf("%s v%d %s/%d", s->name, s->version, a->subset, m)
				    : xasprintf("%s v%d", s->name, s->version);
		items[i + 1].rev = s;
	}
	return items;
}

/* The newest of the revisions read (the one --base auto takes the base of). */
static const struct series *newest(struct series **revs, size_t n)
{
	const struct series *best = revs[0];

	for (size_t i = 1; i < n; i++)
		if (revs[i]->version > best->version)
			best = revs[i];
	return best;
}

static void print_table(const struct variant_build_item *it, size_t n)
{
	int w = 7;

	for (size_t i = 0; i < n; i++)
		if ((int)strlen(it[i].v.name) > w)
			w = (int)strlen(it[i].v.name);
	printf("%-*s  %-12s  %-12s  %10s  %8s  %s\n", w, "variant", "commit", "status",
	       "build time", "cpu", "artefact");
	for (size_t i = 0; i < n; i++) {
		const struct variant_build_result *r = &it[i].res;
		const char *artefact = r->image_path ? r->image_path : r->build_log_path;
		char t[32] = "-", c[32] = "-";

		if (r->build_s >= 0)
			snprintf(t, sizeof(t), "%dm%04.1fs", (int)(r->build_s / 60),
				 r->build_s - 60 * (int)(r->build_s / 60));
		if (r->cpu_s > 0)
			snprintf(c, sizeof(c), "%dm%02ds", (int)(r->cpu_s / 60), (int)r->cpu_s % 60);
		printf("%-*s  %-12.12s  %-12s  %10s  %8s  %s\n", w, it[i].v.name,
		       *r->commit ? r->commit : "-",
		       r->status == VARIANT_BUILD_OK && r->cache_hit ? "cached" :
		       variant_build_status_name(r->status), t, c, artefact ? artefact : "-");
	}
	for (size_t i = 0; i < n; i++)
		if (it[i].res.reason)
			printf("%s: %s\n", it[i].v.name, it[i].res.reason);
}

int cmd_build(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct build_args a = { .files = xcalloc((size_t)argc + 1, sizeof(char *)),
				.frags = xcalloc((size_t)argc + 1, sizeof(char *)) };
	struct variant_build_opts bo = { 0 };
	struct variant_build *vb = NULL;
	struct variant_build_item *items = NULL;
	struct series **revs = NULL;
	struct buf err = BUF_INIT;
	struct db *db = NULL;
	char base_hex[KC_OID_HEX], *jname = NULL;
	size_t nrev = 0, nitems = 0;
	int64_t job_id = 0;
	int ret = 1;

	if (cmd_wants_help(argc, argv)) {
		usage(stdout);
		ret = 0;
		goto out;
	}
	if ((ret = parse_args(&a, argc, argv)))
		goto out;
	ret = 1;
	bo = (struct variant_build_opts){
		.tree = a.repo, .home = ctx->home, .base_config = a.config,
		.fragments = a.frags, .nfragments = a.nfrags, .no_default_fragments = a.no_defaults,
		.jobs = a.jobs, .progress = true, .version = a.version, .distcc = a.distcc,
	};
	if (db_open(&db, ctx->db_path, &err)) {
		log_err("%s", buf_str(&err));
		goto out;
	}
	vb = variant_build_new(db, &bo);
	bool auto_base = !strcmp(a.base, "auto");
	if ((!auto_base && variant_build_resolve(vb, base_hex, a.base, &err)) ||
	    (a.nfiles && variant_build_load_series(vb, &revs, &nrev, a.files, a.nfiles, &err)) ||
	    (auto_base && variant_build_resolve_series_base(vb, base_hex,
							    newest(revs, nrev), &err))) {
		log_err("%s", buf_str(&err));
		goto out;
	}
	items = make_items(&a, auto_base ? base_hex : a.base, revs, nrev);
	nitems = nrev + 1;
	jname = xasprintf("build %s", a.base);
	if (variant_build_adhoc(vb, &job_id, jname, items, nitems, &err)) {
		log_err("%s", buf_str(&err));
		goto out;
	}
	print_table(items, nitems);
	ret = 0;
	for (size_t i = 0; i < nitems; i++)
		if (items[i].res.status != VARIANT_BUILD_OK)
			ret = 1;
out:
	for (size_t i = 0; i < nitems; i++) {
		variant_release(&items[i].v);
		variant_build_result_release(&items[i].res);
	}
	free(items);
	free(a.files);
	free(a.frags);
	free(jname);
	buf_release(&err);
	series_free_all(revs, nrev);
	variant_build_free(vb);
	db_close(db);
	return ret;
}
