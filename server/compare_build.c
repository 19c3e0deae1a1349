/* compare_build.c - a tree variant's kernel: resolve, apply, build
 * (see compare_build.h). The same steps as `kcanary build`, for one
 * variant of a stored job. */
#define LOG_MODULE "compare"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply.h"
#include "build.h"
#include "compare_build.h"
#include "git.h"
#include "log.h"
#include "series.h"

/* The series revision in path: the only one, or the newest when the
 * mailbox holds several. */
static struct series *pick_revision(struct series **revs, size_t n)
{
	struct series *best = NULL;
	for (size_t i = 0; i < n; i++)
		if (!best || revs[i]->version > best->version)
			best = revs[i];
	return best;
}

int compare_build_variant(struct db *db, const struct job_spec *spec, json_t *vs,
			  const char *home, bool progress, int64_t *kernel_id, char *commit,
			  size_t size, struct buf *why)
{
	const char *base = json_string_value(json_object_get(vs, "base"));
	const char *series_path = json_string_value(json_object_get(vs, "series"));
	const char *subset = json_string_value(json_object_get(vs, "patches"));
	const char *build_base = json_string_value(json_object_get(vs, "build_base"));
	struct repo *r = NULL;
	struct series **revs = NULL;
	size_t nrev = 0, nfrag = 0;
	char base_hex[KC_OID_HEX], tip[KC_OID_HEX], dir_hex[KC_OID_HEX];
	char *kdir = build_kernels_dir();
	char **frags = xcalloc(spec->nconfig + 16, sizeof(*frags));
	struct build_result br;
	bool have_br = false;
	int ret = -EINVAL;

	if (!spec->tree || !base) {
		buf_puts(why, "no kernel tree or base in the job");
		goto out;
	}
	if (repo_open(&r, spec->tree, false) || repo_resolve(r, base_hex, base)) {
		buf_printf(why, "%s", repo_errmsg());
		goto out;
	}
	memcpy(tip, base_hex, KC_OID_HEX);
	memcpy(dir_hex, base_hex, KC_OID_HEX);
	if (build_base && repo_resolve(r, dir_hex, build_base)) {
		buf_printf(why, "%s", repo_errmsg());
		goto out;
	}
	if (series_path) {
		struct apply_series as;
		struct apply_result res;
		struct series *s;
		char *paths[] = { (char *)series_path };

		if (series_load(&revs, &nrev, paths, 1, why) || !(s = pick_revision(revs, nrev))) {
			if (!why->len)
				buf_printf(why, "no series in '%s'", series_path);
			goto out;
		}
		apply_series_from(&as, s);
		int rc = apply_series(&res, r, base_hex, &as, subset);
		if (rc || res.nfailed) {
			buf_puts(why, res.error ? res.error : repo_errmsg());
			apply_result_release(&res);
			apply_series_view_release(&as);
			ret = COMPARE_APPLY_FAILED;
			goto out;
		}
		memcpy(tip, res.tip, KC_OID_HEX);
		apply_result_release(&res);
		apply_series_view_release(&as);
	}
	for (size_t i = 0; build_default_fragments[i]; i++)
		frags[nfrag++] = build_fragment_path(kdir, build_default_fragments[i]);
	for (size_t i = 0; i < spec->nconfig && nfrag < spec->nconfig + 15; i++)
		frags[nfrag++] = build_fragment_path(kdir, spec->config[i]);
	{
		struct build_spec bs = { .home = home, .base_hex = dir_hex,
					 .fragments = (const char *const *)frags,
					 .nfragments = nfrag, .progress = progress, .label = base };
		int rc = build_kernel(&br, r, db, tip, &bs);
		have_br = true;
		if (rc || !br.ok) {
			buf_puts(why, br.error ? br.error : "build failed");
			if (br.kernel.build_log_path)
				buf_printf(why, " (log: %s)", br.kernel.build_log_path);
			ret = -EIO;
			goto out;
		}
		log_info("kernel %s: %s%s", tip, br.kernel.image_path, br.cache_hit ? " (cached)" : "");
		*kernel_id = br.kernel.id;
		snprintf(commit, size, "%s", tip);
	}
	ret = 0;
out:
	if (have_br)
		build_result_release(&br);
	for (size_t i = 0; i < nfrag; i++)
		free(frags[i]);
	free(frags);
	free(kdir);
	series_free_all(revs, nrev);
	repo_close(r);
	return ret;
}
