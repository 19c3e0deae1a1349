/* variant_build.c - the build service: resolve, apply, build, cache, or a
 * prebuilt image's kernels row (see variant_build.h). */
#define LOG_MODULE "build"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/build.h"
#include "store/db_guest.h"
#include "store/db_kernels.h"
#include "store/db_runs.h"
#include "error.h"
#include "guest/image.h"
#include "log.h"
#include "kernel/series.h"
#include "kernel/series_source.h"
#include "kernel/variant_build.h"

struct variant_build {
	struct db *db;
	struct variant_build_opts o;
	struct repo *repo;              /* opened when first needed */
	char **frags;                   /* fragment paths, merge order */
	size_t nfrags;
};

static const char *const status_names[] = {
	[VARIANT_BUILD_OK] = "ok",
	[VARIANT_BUILD_APPLY_FAILED] = "apply-failed",
	[VARIANT_BUILD_BUILD_FAILED] = "build-failed",
};

const char *variant_build_status_name(enum variant_build_status s)
{
	return (size_t)s < sizeof(status_names) / sizeof(status_names[0]) ? status_names[s] : "?";
}

void variant_build_result_release(struct variant_build_result *res)
{
	if (!res)
		return;
	free(res->image_path);
	free(res->build_log_path);
	free(res->reason);
	memset(res, 0, sizeof(*res));
}

struct variant_build *variant_build_new(struct db *db, const struct variant_build_opts *o)
{
	struct variant_build *vb = xcalloc(1, sizeof(*vb));
	char *kdir = build_kernels_dir();

	vb->db = db;
	vb->o = *o;
	vb->frags = xcalloc(o->nfragments + 8, sizeof(*vb->frags));
	if (!o->no_default_fragments)
		for (size_t i = 0; build_default_fragments[i]; i++)
			vb->frags[vb->nfrags++] = build_fragment_path(kdir, build_default_fragments[i]);
	for (size_t i = 0; i < o->nfragments; i++)
		vb->frags[vb->nfrags++] = build_fragment_path(kdir, o->fragments[i]);
	free(kdir);
	return vb;
}

void variant_build_free(struct variant_build *vb)
{
	if (!vb)
		return;
	for (size_t i = 0; i < vb->nfrags; i++)
		free(vb->frags[i]);
	free(vb->frags);
	repo_close(vb->repo);
	free(vb);
}

static int open_repo(struct variant_build *vb, struct buf *err)
{
	if (vb->repo)
		return 0;
	if (!vb->o.tree)
		return err_setf(err, -EINVAL, "no kernel tree to build from (give one: --repo, or "
				"'tree' in [job])");
	return repo_open(&vb->repo, vb->o.tree, false, err);
}

int variant_build_resolve(struct variant_build *vb, char out[KC_OID_HEX], const char *rev,
			  struct buf *err)
{
	int r;

	if ((r = open_repo(vb, err)))
		return r;
	return repo_resolve(vb->repo, out, rev, err);
}

int variant_build_resolve_series_base(struct variant_build *vb, char out[KC_OID_HEX],
				      const struct series *rev, struct buf *err)
{
	struct buf why = BUF_INIT;
	int r;

	if (!rev->base_commit)
		return err_setf(err, -ENOENT, "--base auto: series %s v%d names no base-commit "
				"(give --base REV)", rev->name, rev->version);
	if ((r = open_repo(vb, err)))
		return r;
	r = repo_resolve(vb->repo, out, rev->base_commit, &why);
	if (r == -ENOENT || r == -EINVAL)
		r = err_setf(err, -ENOENT, "--base auto: base-commit %.12s of series %s v%d is not "
			     "in the tree '%s' (fetch it, or give --base REV)", rev->base_commit,
			     rev->name, rev->version, vb->o.tree);
	else if (r)
		err_setf(err, r, "%s", buf_str(&why));
	buf_release(&why);
	return r;
}

/* variant_build_load_series with revision `version` of a thread (0: newest). */
static int load_series(struct variant_build *vb, struct series ***out, size_t *n_out,
		       char *const *paths, size_t npaths, int version, struct buf *err)
{
	struct series_source_opts so = { .db = vb->db, .version = version };
	struct buf msg = BUF_INIT;
	int r = series_source_load(out, n_out, paths, npaths, &so, &msg);

	/* a test robot's report names no patches to apply: said, and left out */
	for (size_t i = 0; !r && i < *n_out; ) {
		const struct series *s = (*out)[i];
		if (!s->report && !s->stable_review) {
			i++;
			continue;
		}
		if (s->report)
			log_warn("<%s> is a kernel test robot report, not a patch: left out",
				 s->report->message_id);
		else
			log_warn("<%s> is the stable review cover of %s, not a patch series (its "
				 "patches are replies to it): left out", s->cover_message_id,
				 s->stable_review);
		series_free((*out)[i]);
		memmove(*out + i, *out + i + 1, (*n_out - i - 1) * sizeof(**out));
		(*n_out)--;
	}
	if (!r && !*n_out) {
		free(*out);
		*out = NULL;
		r = -EINVAL;
		buf_printf(&msg, "%sno patches in '%s'", msg.len ? "\n" : "", paths[0]);
	}
	if (r)
		err_setf(err, r, "%s", msg.len ? buf_str(&msg) : "cannot read the series");
	else if (msg.len)
		log_warn("%s", buf_str(&msg));
	buf_release(&msg);
	return r;
}

int variant_build_load_series(struct variant_build *vb, struct series ***out, size_t *n_out,
			      char *const *paths, size_t npaths, struct buf *err)
{
	return load_series(vb, out, n_out, paths, npaths, vb->o.version, err);
}

/* How far back a prerequisite-patch-id is looked for: b4 puts prerequisites
 * just above the base-commit, so they are near the base's tip. */
#define PREREQ_MAX_COMMITS 1000

/* Warn of each prerequisite of rev that base_hex's history does not have:
 * a prerequisite-patch-id not among its last commits' patch-ids, a
 * prerequisite-change-id (a series, not a commit: named, not checked). */
static int check_prereqs(struct variant_build *vb, const char *base_hex,
			 const struct series *rev, struct buf *err)
{
	bool *found = xcalloc(rev->nprereq + 1, sizeof(*found));
	size_t looked = 0;
	int r = 0;

	if (rev->nprereq &&
	    (r = repo_find_patch_ids(vb->repo, found, &looked, base_hex, rev->prerequisite_patch_ids,
				     rev->nprereq, PREREQ_MAX_COMMITS, err)))
		goto out;
	for (size_t i = 0; i < rev->nprereq; i++)
		if (!found[i])
			log_warn("series %s v%d: prerequisite-patch-id %s is not in the history of "
				 "%.12s (none of its last %zu commits has that patch-id): apply the "
				 "prerequisite first, or give a base that has it", rev->name,
				 rev->version, rev->prerequisite_patch_ids[i], base_hex, looked);
		else
			log_info("series %s v%d: prerequisite-patch-id %.12s is in %.12s", rev->name,
				 rev->version, rev->prerequisite_patch_ids[i], base_hex);
	for (size_t i = 0; i < rev->nprereq_change; i++)
		log_warn("series %s v%d: prerequisite-change-id %s names a series that must be "
			 "applied first (not checked: a change-id is not in the tree's commits)",
			 rev->name, rev->version, rev->prerequisite_change_ids[i]);
out:
	free(found);
	return r;
}

int variant_build_apply(struct variant_build *vb, struct apply_result *out,
			const char *base_hex, const struct series *rev, const char *subset,
			struct buf *err)
{
	struct apply_series as;
	int r;

	memset(out, 0, sizeof(*out));
	if (rev->nmissing && !vb->o.allow_missing) {
		struct buf ks = BUF_INIT;
		for (size_t i = 0; i < rev->nmissing; i++)
			buf_printf(&ks, "%s%d", i ? ", " : "", rev->missing[i]);
		r = err_setf(err, -EINVAL, "series %s v%d: patch %s of %d %s not in the mail (give "
			     "--allow-missing to apply the others)", rev->name, rev->version,
			     buf_str(&ks), rev->m, rev->nmissing > 1 ? "are" : "is");
		buf_release(&ks);
		return r;
	}
	if ((r = open_repo(vb, err)) || (r = check_prereqs(vb, base_hex, rev, err)))
		return r;
	apply_series_from(&as, rev);
	r = apply_series(out, vb->repo, base_hex, &as, subset, err);
	apply_series_view_release(&as);
	return r;
}

/* The revision a series variant's mail file stands for: revision version
 * (0: the only one, or the newest when the mailbox holds several). NULL
 * when there is none. */
static const struct series *pick_revision(struct series **revs, size_t n, int version)
{
	const struct series *best = NULL;

	for (size_t i = 0; i < n; i++)
		if (version ? revs[i]->version == version :
		    !best || revs[i]->version > best->version)
			best = revs[i];
	return best;
}

/* Apply a series variant's revision (rev, or the newest in v->series) on
 * base_hex: tip gets the last commit. A patch that does not apply, or a
 * subset the revision does not have, is the variant's outcome (out->status
 * apply-failed), not an error. */
static int apply_revision(struct variant_build *vb, struct variant_build_result *out,
			  const struct variant *v, const struct series *rev,
			  const char *base_hex, char tip[KC_OID_HEX], struct buf *err)
{
	struct series **revs = NULL;
	const struct series *s = rev;
	struct apply_result ar;
	struct buf why = BUF_INIT;
	char *paths[] = { v->series };
	size_t n = 0;
	int r;

	if (!s) {
		if (!v->series)
			return err_setf(err, -EINVAL, "series variant '%s' has no mail file",
					v->name ? v->name : "");
		if ((r = load_series(vb, &revs, &n, paths, 1, v->version, err)))
			return r;
		if (!(s = pick_revision(revs, n, v->version))) {
			r = err_setf(err, -EINVAL, "no %s%.0d in '%s'", v->version ? "v" : "series",
				     v->version, v->series);
			goto out;
		}
	}
	r = variant_build_apply(vb, &ar, base_hex, s, v->patches, &why);
	if (r == -EINVAL || (!r && ar.nfailed)) {
		out->status = VARIANT_BUILD_APPLY_FAILED;
		out->reason = xstrdup(ar.error ? ar.error : buf_str(&why));
		memcpy(out->commit, ar.tip, KC_OID_HEX);
		r = 0;
	} else if (r) {
		err_setf(err, r, "%s", buf_str(&why));
	} else {
		memcpy(tip, ar.tip, KC_OID_HEX);
	}
	apply_result_release(&ar);
out:
	buf_release(&why);
	series_free_all(revs, n);
	return r;
}

/* Build commit tip in the build dir of dir_hex (build.h) into out. */
static int build_commit(struct variant_build *vb, struct variant_build_result *out,
			const struct variant *v, const char *tip, const char *dir_hex,
			struct buf *err)
{
	struct build_spec bs = {
		.home = vb->o.home, .base_hex = dir_hex, .base_config = vb->o.base_config,
		.fragments = (const char *const *)vb->frags, .nfragments = vb->nfrags,
		.jobs = vb->o.jobs, .progress = vb->o.progress, .distcc = vb->o.distcc,
		.label = v->name ? v->name : v->base,
	};
	struct build_result br;
	int r;

	if (!vb->db)
		return err_setf(err, -EINVAL, "no store to record the build of '%s' in", bs.label);
	if ((r = build_kernel(&br, vb->repo, vb->db, tip, &bs, err)))
		goto out;
	memcpy(out->commit, tip, KC_OID_HEX);
	out->cache_hit = br.cache_hit;
	out->build_s = br.ok || br.build_s > 0 ? br.build_s : -1;
	out->cpu_s = br.cache_hit ? 0 : br.cpu_s;
	out->kernel_id = br.kernel.id;
	out->image_path = br.kernel.image_path ? xstrdup(br.kernel.image_path) : NULL;
	out->build_log_path = br.kernel.build_log_path ? xstrdup(br.kernel.build_log_path) : NULL;
	if (br.ok) {
		out->status = VARIANT_BUILD_OK;
		log_info("kernel %s: %s%s", tip, br.kernel.image_path, br.cache_hit ? " (cached)" : "");
	} else {
		out->status = VARIANT_BUILD_BUILD_FAILED;
		out->reason = br.kernel.build_log_path ?
			xasprintf("%s (log: %s)", br.error ? br.error : "build failed",
				  br.kernel.build_log_path) :
			xstrdup(br.error ? br.error : "build failed");
	}
out:
	build_result_release(&br);
	return r;
}

int variant_build_kernel(struct variant_build *vb, struct variant_build_result *out,
			 const struct variant *v, const struct series *rev, struct buf *err)
{
	char base_hex[KC_OID_HEX], dir_hex[KC_OID_HEX], tip[KC_OID_HEX];
	int r;

	memset(out, 0, sizeof(*out));
	out->build_s = -1;
	if (v->kind == VARIANT_PREBUILT) {
		if ((r = variant_prebuilt_kernel(vb->db, v->kernel, &out->kernel_id, err)))
			return r;
		out->image_path = xstrdup(v->kernel);
		return 0;
	}
	if (!v->base)
		return err_setf(err, -EINVAL, "variant '%s' has no base", v->name ? v->name : "");
	if ((r = variant_build_resolve(vb, base_hex, v->base, err)))
		return r;
	memcpy(dir_hex, base_hex, KC_OID_HEX);
	if (v->build_base && (r = variant_build_resolve(vb, dir_hex, v->build_base, err)))
		return r;
	memcpy(tip, base_hex, KC_OID_HEX);
	if (v->kind == VARIANT_SERIES) {
		if ((r = apply_revision(vb, out, v, rev, base_hex, tip, err)))
			goto fail;
		if (out->status == VARIANT_BUILD_APPLY_FAILED)
			return 0;
	}
	if ((r = build_commit(vb, out, v, tip, dir_hex, err)))
		goto fail;
	return 0;
fail:
	variant_build_result_release(out);
	return r;
}

int variant_build_for_job(struct variant_build *vb, struct variant_build_result *out,
			  int64_t variant_id, const struct variant *v, const struct series *rev,
			  struct buf *err)
{
	struct buf why = BUF_INIT;
	const char *commit;
	int r;

	r = variant_build_kernel(vb, out, v, rev, &why);
	if (r == -ENOSPC || r == -EDQUOT) {
		/* a full disk is not the variant's outcome: it stays pending,
		 * to be built again (kcanary resume) once there is space */
		err_setf(err, r, "variant '%s': %s", v->name ? v->name : "", buf_str(&why));
		buf_release(&why);
		return r;
	}
	if (r) {
		/* could not be attempted: a variant without a kernel all the same */
		memset(out, 0, sizeof(*out));
		out->status = VARIANT_BUILD_BUILD_FAILED;
		out->build_s = -1;
		out->reason = buf_detach(&why);
	}
	buf_release(&why);
	commit = out->status == VARIANT_BUILD_APPLY_FAILED || !*out->commit ? NULL : out->commit;
	r = db_variant_set_build(vb->db, variant_id, v->base, commit, v->patches, out->kernel_id,
				 variant_build_status_name(out->status), out->reason, err);
	if (r)
		return err_wrapf(err, r, "variant '%s'", v->name ? v->name : "");
	return 0;
}

int variant_build_adhoc(struct variant_build *vb, int64_t *job_id, const char *name,
			struct variant_build_item *items, size_t n, struct buf *err)
{
	struct db *db = vb->db;
	bool all_ok = true;
	int r;

	for (size_t i = 0; i < n; i++)
		memset(&items[i].res, 0, sizeof(items[i].res));
	if ((r = db_job_create(db, job_id, name, "adhoc", NULL, err)) ||
	    (r = db_job_set_status(db, *job_id, "building", NULL, err)))
		return r;
	for (size_t i = 0; i < n; i++) {
		struct variant_build_item *it = &items[i];
		int64_t vid = 0;

		if ((r = db_variant_get(db, &vid, *job_id, it->v.name, err)))
			goto out;
		if ((r = variant_build_for_job(vb, &it->res, vid, &it->v, it->rev, err)))
			goto out;
		all_ok &= it->res.status == VARIANT_BUILD_OK;
	}
out:
	if (r)       /* the first error is what is reported */
		db_job_set_status(db, *job_id, "failed", NULL, NULL);
	else
		r = db_job_set_status(db, *job_id, all_ok ? "done" : "failed", NULL, err);
	return r;
}

int variant_prebuilt_kernel(struct db *db, const char *path, int64_t *kernel_id,
			    struct buf *err)
{
	char release[128], *modules = NULL;
	int r;

	if (!db)
		return err_setf(err, -EINVAL, "no store to record kernel '%s' in", path);
	if ((r = image_kernel_release(release, sizeof(release), path, err)))
		return r;
	modules = xasprintf("/lib/modules/%s", release);
	if (access(modules, R_OK)) {
		free(modules);
		modules = NULL;
	}
	r = db_kernel_prebuilt(db, kernel_id, path, release, modules, err);
	free(modules);
	return r;
}
