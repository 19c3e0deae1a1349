/* cmd_build.c - kcanary build: one kernel per variant (the base, and the
 * base plus each series revision), recorded as a job with its variants. */
#define LOG_MODULE "build"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apply.h"
#include "build.h"
#include "cmd.h"
#include "cmd_series_apply.h"
#include "db.h"
#include "db_kernels.h"
#include "git.h"
#include "log.h"
#include "series.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kcanary build --repo DIR --base REV [--series FILE... [--patches K]]\n"
		"                     [--config FILE] [--config-fragment NAME...]\n"
		"                     [--no-default-fragments] [--jobs N]\n"
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
		"$KCANARY_HOME/build/<base>-<config>/, shared by the variants of a\n"
		"base, so a patch that touches two files recompiles two files. Images\n"
		"(bzImage, .config, System.map, build log) are kept in\n"
		"$KCANARY_HOME/kernels/<tree>-<config>/; the same tree and config\n"
		"again is a cache hit. Prints: variant, commit, status (ok, cached,\n"
		"apply-failed, build-failed), build time, artefact; the reason of\n"
		"each failure follows the table.\n"
		"\n"
		"  --repo DIR              the kernel tree (a git repository)\n"
		"  --base REV              tag, branch or commit\n"
		"  --series FILE...        series mail files (several may follow)\n"
		"  --patches K             apply only these patches of each revision\n"
		"  --config FILE           base config instead of tinyconfig\n"
		"  --config-fragment NAME  one more fragment (repeatable), e.g.\n"
		"                          debug-lockdep, debug-kasan\n"
		"  --no-default-fragments  only the fragments given\n"
		"  --jobs N                make -jN (default: online CPUs)\n"
		"\n"
		"Exit 0 when every variant has a kernel, 1 otherwise, 2 on usage.\n");
}

struct variant_row {
	char *name;
	char commit[KC_OID_HEX];
	const char *status;
	double build_s, cpu_s;
	bool has_time;
	char *artefact;
	char *error;
};

static void print_table(const struct variant_row *v, size_t n)
{
	int w = 7;

	for (size_t i = 0; i < n; i++)
		if ((int)strlen(v[i].name) > w)
			w = (int)strlen(v[i].name);
	printf("%-*s  %-12s  %-12s  %10s  %8s  %s\n", w, "variant", "commit", "status",
	       "build time", "cpu", "artefact");
	for (size_t i = 0; i < n; i++) {
		char t[32] = "-", c[32] = "-";
		if (v[i].has_time)
			snprintf(t, sizeof(t), "%dm%04.1fs", (int)(v[i].build_s / 60),
				 v[i].build_s - 60 * (int)(v[i].build_s / 60));
		if (v[i].cpu_s > 0)
			snprintf(c, sizeof(c), "%dm%02ds", (int)(v[i].cpu_s / 60),
				 (int)v[i].cpu_s % 60);
		printf("%-*s  %-12.12s  %-12s  %10s  %8s  %s\n", w, v[i].name,
		       *v[i].commit ? v[i].commit : "-", v[i].status, t, c,
		       v[i].artefact ? v[i].artefact : "-");
	}
	for (size_t i = 0; i < n; i++)
		if (v[i].error)
			printf("%s: %s\n", v[i].name, v[i].error);
}

int cmd_build(int argc, char **argv)
{
	const char *repo_path = NULL, *base = NULL, *subset = NULL, *config = NULL;
	char **files = xcalloc((size_t)argc + 1, sizeof(*files));
	const char **frag_names = xcalloc((size_t)argc + 8, sizeof(*frag_names));
	char **frags = NULL, *kdir = NULL, *home = NULL, *dbp = NULL;
	size_t nfiles = 0, nfrag = 0, nrev = 0, nv = 0;
	bool defaults = true;
	int jobs = 0, ret = 1;
	struct series **revs = NULL;
	struct repo *r = NULL;
	struct db *db = NULL;
	struct variant_row *rows = NULL;
	char base_hex[KC_OID_HEX];
	int64_t job_id = 0;

	if (cmd_wants_help(argc, argv)) {
		usage(stdout);
		ret = 0;
		goto out;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--repo") && i + 1 < argc)
			repo_path = argv[++i];
		else if (!strcmp(a, "--base") && i + 1 < argc)
			base = argv[++i];
		else if (!strcmp(a, "--patches") && i + 1 < argc)
			subset = argv[++i];
		else if (!strcmp(a, "--config") && i + 1 < argc)
			config = argv[++i];
		else if (!strcmp(a, "--jobs") && i + 1 < argc)
			jobs = atoi(argv[++i]);
		else if (!strcmp(a, "--no-default-fragments"))
			defaults = false;
		else if (!strcmp(a, "--config-fragment") && i + 1 < argc) {
			while (i + 1 < argc && argv[i + 1][0] != '-')
				frag_names[nfrag++] = argv[++i];
		} else if (!strcmp(a, "--series") && i + 1 < argc) {
			while (i + 1 < argc && argv[i + 1][0] != '-')
				files[nfiles++] = argv[++i];
		} else {
			fprintf(stderr, "kcanary build: %s '%s'\n", a[0] == '-' ?
				"unrecognized option (or missing value)" : "unexpected argument", a);
			usage(stderr);
			ret = 2;
			goto out;
		}
	}
	if (!repo_path || !base || (subset && !nfiles)) {
		usage(stderr);
		ret = 2;
		goto out;
	}

	kdir = build_kernels_dir();
	frags = xcalloc(nfrag + 8, sizeof(*frags));
	{
		size_t n = 0;
		if (defaults)
			for (size_t i = 0; build_default_fragments[i]; i++)
				frags[n++] = build_fragment_path(kdir, build_default_fragments[i]);
		for (size_t i = 0; i < nfrag; i++)
			frags[n++] = build_fragment_path(kdir, frag_names[i]);
		nfrag = n;
	}

	if (repo_open(&r, repo_path, false) || repo_resolve(r, base_hex, base)) {
		log_err("%s", repo_errmsg());
		goto out;
	}
	if (nfiles && series_files_load(&revs, &nrev, files, nfiles))
		goto out;
	home = cmd_home ? xstrdup(cmd_home) : kc_home();
	dbp = cmd_db_path();
	if (db_open(&db, dbp)) {
		log_err("cannot open the store '%s': %s", dbp, db ? db_errmsg(db) : "");
		goto out;
	}
	{
		char *jname = xasprintf("build %s", base);
		if (db_job_create(db, &job_id, jname, "adhoc", NULL)) {
			log_err("cannot record the job: %s", db_errmsg(db));
			free(jname);
			goto out;
		}
		free(jname);
		db_job_set_status(db, job_id, "building", NULL);
	}

	rows = xcalloc(nrev + 1, sizeof(*rows));
	ret = 0;
	for (size_t i = 0; i <= nrev; i++) {
		struct variant_row *row = &rows[nv++];
		struct build_result br;
		struct build_spec spec = { .home = home, .base_hex = base_hex,
					   .base_config = config,
					   .fragments = (const char *const *)frags,
					   .nfragments = nfrag, .jobs = jobs, .progress = true };
		char commit[KC_OID_HEX];
		int64_t vid = 0;

		memcpy(commit, base_hex, KC_OID_HEX);
		if (i == 0) {
			row->name = xstrdup("base");
		} else {
			const struct series *s = revs[i - 1];
			struct apply_series as;
			struct apply_result res;
			int m = s->npatches ? s->patches[s->npatches - 1].m : 0;

			row->name = subset ? xasprintf("%s v%d %s/%d", s->name, s->version, subset, m)
					   : xasprintf("%s v%d", s->name, s->version);
			apply_series_from(&as, s);
			if (apply_series(&res, r, base_hex, &as, subset) || res.nfailed) {
				row->status = "apply-failed";
				row->error = xstrdup(res.error ? res.error : repo_errmsg());
				memcpy(row->commit, res.tip, KC_OID_HEX);
			} else {
				memcpy(commit, res.tip, KC_OID_HEX);
			}
			apply_result_release(&res);
			apply_series_view_release(&as);
		}
		if (db_variant_get(db, &vid, job_id, row->name))
			log_warn("cannot record variant '%s': %s", row->name, db_errmsg(db));
		if (row->status) {
			db_variant_set_build(db, vid, base, NULL, subset, 0, "apply-failed", row->error);
			ret = 1;
			continue;
		}
		memcpy(row->commit, commit, KC_OID_HEX);
		spec.label = row->name;
		int rc = build_kernel(&br, r, db, commit, &spec);
		if (rc || !br.ok) {
			row->status = "build-failed";
			row->error = xstrdup(br.error ? br.error : "build failed");
			ret = 1;
		} else {
			row->status = br.cache_hit ? "cached" : "ok";
		}
		if (br.build_s > 0 || (!rc && br.ok)) {
			row->build_s = br.build_s;
			row->cpu_s = br.cache_hit ? 0 : br.cpu_s;
			row->has_time = br.build_s >= 0;
		}
		row->artefact = br.kernel.image_path ? xstrdup(br.kernel.image_path)
			      : (br.kernel.build_log_path ? xstrdup(br.kernel.build_log_path) : NULL);
		db_variant_set_build(db, vid, base, commit, i ? subset : NULL, br.kernel.id,
				     br.ok ? "ok" : "build-failed", br.ok ? NULL : row->error);
		build_result_release(&br);
	}
	db_job_set_status(db, job_id, ret ? "failed" : "done", NULL);
	print_table(rows, nv);
out:
	for (size_t i = 0; i < nv; i++) {
		free(rows[i].name);
		free(rows[i].artefact);
		free(rows[i].error);
	}
	free(rows);
	for (size_t i = 0; frags && frags[i]; i++)
		free(frags[i]);
	free(frags);
	free(frag_names);
	free(files);
	free(kdir);
	free(home);
	free(dbp);
	series_free_all(revs, nrev);
	db_close(db);
	repo_close(r);
	return ret;
}
