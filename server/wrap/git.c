/* git.c - kernel trees through libgit2 (see git.h). The only file that
 * includes <git2.h>: libgit2 errors become an errno plus one message here. */
#define LOG_MODULE "git"
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <git2.h>

#include "error.h"
#include "wrap/git.h"
#include "log.h"
#include "wrap/patch_fit.h"
#include "util.h"

struct repo {
	git_repository *g;
	char *workdir;
};

/* libgit2's message for the last failure, read at once (it is per thread). */
static const char *gerr(void)
{
	const git_error *e = git_error_last();

	return e && e->message ? e->message : "unknown libgit2 error";
}

static int git_code_to_errno(int rc)
{
	switch (rc) {
	case GIT_ENOTFOUND: return -ENOENT;
	case GIT_EAMBIGUOUS: return -EINVAL;
	case GIT_EEXISTS: return -EEXIST;
	case GIT_EINVALIDSPEC: return -EINVAL;
	default: return -EIO;
	}
}

static void lib_init(void)
{
	static bool done;

	if (!done) {
		git_libgit2_init();
		done = true;
	}
}

int repo_open(struct repo **out, const char *path, bool create, struct buf *err)
{
	git_repository *g = NULL;
	git_config *cfg = NULL;
	struct repo *r;
	int rc;

	lib_init();
	rc = git_repository_open_ext(&g, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (rc == GIT_ENOTFOUND && create) {
		if ((rc = mkdir_p(path, 0755)))
			return err_setf(err, rc, "cannot create '%s': %s", path, strerror(-rc));
		rc = git_repository_init(&g, path, 0);
		if (rc < 0)
			return err_setf(err, -EIO, "cannot init repository '%s': %s", path, gerr());
	} else if (rc == GIT_ENOTFOUND) {
		return err_setf(err, -ENOENT, "cannot open repository '%s': not a git repository", path);
	} else if (rc < 0) {
		return err_setf(err, -EIO, "cannot open repository '%s': %s", path, gerr());
	}
	/* A `git gc --auto` started by a later `git` command would compete
	 * with the kernel build for the two cores (../shared/notes/kbuild.md,
	 * outside this tree). */
	if (git_repository_config(&cfg, g) == 0) {
		int32_t cur = -1;

		if (git_config_get_int32(&cur, cfg, "gc.auto") < 0 || cur != 0)
			if (git_config_set_int32(cfg, "gc.auto", 0) < 0)
				log_warn("cannot set gc.auto=0 in '%s': %s", path, gerr());
		git_config_free(cfg);
	}
	r = xcalloc(1, sizeof(*r));
	r->g = g;
	if (git_repository_workdir(g)) {
		r->workdir = xstrdup(git_repository_workdir(g));
		size_t n = strlen(r->workdir);
		while (n > 1 && r->workdir[n - 1] == '/')
			r->workdir[--n] = '\0';
	}
	*out = r;
	return 0;
}

void repo_close(struct repo *r)
{
	if (!r)
		return;
	git_repository_free(r->g);
	free(r->workdir);
	free(r);
}

const char *repo_workdir(const struct repo *r)
{
	return r->workdir;
}

static int peel_ref_commit(git_repository *g, const char *refname, git_oid *out)
{
	git_reference *ref = NULL;
	git_object *obj = NULL;
	int rc;

	if ((rc = git_reference_lookup(&ref, g, refname)) < 0)
		return rc;
	rc = git_reference_peel(&obj, ref, GIT_OBJECT_COMMIT);
	if (rc == 0)
		git_oid_cpy(out, git_object_id(obj));
	git_object_free(obj);
	git_reference_free(ref);
	return rc;
}

int repo_resolve(struct repo *r, char out[KC_OID_HEX], const char *rev, struct buf *err)
{
	git_object *obj = NULL, *commit = NULL;
	git_oid tag_oid, head_oid;
	char *tref, *href;
	int rc, ret = 0;

	if (!rev || !*rev)
		return err_setf(err, -EINVAL, "empty revision");
	/* git warns "refname is ambiguous" and picks the tag; a base that
	 * silently means something else is worse than an error. */
	tref = xasprintf("refs/tags/%s", rev);
	href = xasprintf("refs/heads/%s", rev);
	if (peel_ref_commit(r->g, tref, &tag_oid) == 0 &&
	    peel_ref_commit(r->g, href, &head_oid) == 0 &&
	    !git_oid_equal(&tag_oid, &head_oid)) {
		ret = err_setf(err, -EINVAL, "revision '%s' is ambiguous: both tag %s and branch %s exist",
			      rev, tref, href);
		goto out;
	}
	rc = git_revparse_single(&obj, r->g, rev);
	if (rc == GIT_EAMBIGUOUS) {
		ret = err_setf(err, -EINVAL, "revision '%s' is ambiguous: several objects start with it in '%s'",
			      rev, r->workdir ? r->workdir : git_repository_path(r->g));
		goto out;
	}
	if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC) {
		ret = err_setf(err, -ENOENT, "unknown revision '%s': no tag, branch or commit of that name in '%s'",
			      rev, r->workdir ? r->workdir : git_repository_path(r->g));
		goto out;
	}
	if (rc < 0) {
		ret = err_setf(err, git_code_to_errno(rc), "cannot resolve '%s': %s", rev, gerr());
		goto out;
	}
	if (git_object_peel(&commit, obj, GIT_OBJECT_COMMIT) < 0) {
		ret = err_setf(err, -ENOTDIR, "revision '%s' names a %s, not a commit", rev,
			      git_object_type2string(git_object_type(obj)));
		goto out;
	}
	git_oid_tostr(out, KC_OID_HEX, git_object_id(commit));
out:
	git_object_free(commit);
	git_object_free(obj);
	free(tref);
	free(href);
	return ret;
}

static int lookup_commit(struct repo *r, git_commit **out, const char *hex, struct buf *err)
{
	git_oid oid;

	if (git_oid_fromstr(&oid, hex) < 0)
		return err_setf(err, -EINVAL, "'%s' is not a commit id", hex);
	if (git_commit_lookup(out, r->g, &oid) < 0)
		return err_setf(err, -ENOENT, "commit %s not found: %s", hex, gerr());
	return 0;
}

int repo_commit_tree(struct repo *r, char out[KC_OID_HEX], const char *commit_hex, struct buf *err)
{
	git_commit *c = NULL;
	int rc;

	if ((rc = lookup_commit(r, &c, commit_hex, err)))
		return rc;
	git_oid_tostr(out, KC_OID_HEX, git_commit_tree_id(c));
	git_commit_free(c);
	return 0;
}

/* ---- writing: index, commits, refs, tags ---- */

/* nftw has no payload: the index being filled, for add_entry. */
static __thread git_index *walk_idx;
static __thread size_t walk_root_len;
static __thread int walk_err;
static __thread struct buf *walk_errbuf;

static int add_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	const char *rel = path + walk_root_len;

	(void)st;
	if (ftw->level == 0)
		return FTW_CONTINUE;
	while (*rel == '/')
		rel++;
	if (flag == FTW_D && ftw->level == 1 && (!strcmp(rel, ".git") ||
						  !strcmp(rel, REPO_BUILD_DIR)))
		return FTW_SKIP_SUBTREE;
	if (flag == FTW_F || flag == FTW_SL) {
		if (git_index_add_bypath(walk_idx, rel) < 0) {
			walk_err = err_setf(walk_errbuf, -EIO, "cannot add '%s' to the index: %s", rel, gerr());
			return FTW_STOP;
		}
	}
	return FTW_CONTINUE;
}

/* Add every file and symlink under root (except .git) to idx. */
static int index_add_tree(git_index *idx, const char *root, struct buf *err)
{
	int rc;

	walk_idx = idx;
	walk_root_len = strlen(root);
	walk_err = 0;
	walk_errbuf = err;
	rc = nftw(root, add_entry, 64, FTW_PHYS | FTW_ACTIONRETVAL);
	if (walk_err)
		return walk_err;
	if (rc < 0)
		return err_setf(err, -errno, "cannot walk '%s': %s", root, strerror(errno));
	return 0;
}

int repo_index_workdir(struct repo *r, char out[KC_OID_HEX], struct buf *err)
{
	git_index *idx = NULL;
	git_oid tree_oid;
	int ret = 0;

	if (!r->workdir)
		return err_setf(err, -EINVAL, "cannot index a bare repository");
	/* (git_index_add_all with GIT_INDEX_ADD_FORCE stops at an ignored
	 * directory with "invalid path", so walk the tree ourselves.) */
	if (git_repository_index(&idx, r->g) < 0 || git_index_clear(idx) < 0) {
		ret = err_setf(err, -EIO, "cannot index '%s': %s", r->workdir, gerr());
		goto out;
	}
	if ((ret = index_add_tree(idx, r->workdir, err)))
		goto out;
	if (git_index_write(idx) < 0 || git_index_write_tree(&tree_oid, idx) < 0) {
		ret = err_setf(err, -EIO, "cannot index '%s': %s", r->workdir, gerr());
		goto out;
	}
	git_oid_tostr(out, KC_OID_HEX, &tree_oid);
out:
	git_index_free(idx);
	return ret;
}

int repo_commit_create(struct repo *r, char out[KC_OID_HEX], const struct repo_commit_spec *spec, struct buf *err)
{
	git_tree *tree = NULL;
	git_commit *parent = NULL;
	git_signature *sig = NULL;
	const git_commit *parents[1];
	git_oid tree_oid, commit_oid;
	int ret = 0;

	if (git_oid_fromstr(&tree_oid, spec->tree) < 0 ||
	    git_tree_lookup(&tree, r->g, &tree_oid) < 0)
		return err_setf(err, -ENOENT, "cannot read tree %.12s: %s", spec->tree, gerr());
	if (spec->parent && (ret = lookup_commit(r, &parent, spec->parent, err)))
		goto out;
	if (git_signature_new(&sig, spec->name, spec->email, (git_time_t)spec->time_s,
			      spec->tz_offset_min) < 0) {
		ret = err_setf(err, -EINVAL, "cannot make signature '%s <%s>': %s", spec->name,
			      spec->email, gerr());
		goto out;
	}
	parents[0] = parent;
	if (git_commit_create(&commit_oid, r->g, NULL, sig, sig, NULL, spec->message, tree,
			      parent ? 1 : 0, parents) < 0) {
		ret = err_setf(err, -EIO, "cannot commit: %s", gerr());
		goto out;
	}
	git_oid_tostr(out, KC_OID_HEX, &commit_oid);
out:
	git_signature_free(sig);
	git_commit_free(parent);
	git_tree_free(tree);
	return ret;
}

int repo_ref_set(struct repo *r, const char *refname, const char *commit_hex,
		 const char *log_msg, bool head, struct buf *err)
{
	git_reference *ref = NULL;
	git_oid oid;
	int ret = 0;

	if (git_oid_fromstr(&oid, commit_hex) < 0)
		return err_setf(err, -EINVAL, "'%s' is not a commit id", commit_hex);
	if (git_reference_create(&ref, r->g, refname, &oid, 1, log_msg) < 0 ||
	    (head && git_repository_set_head(r->g, refname) < 0))
		ret = err_setf(err, -EIO, "cannot update %s: %s", refname, gerr());
	git_reference_free(ref);
	return ret;
}

int repo_tag_set(struct repo *r, const char *tag, const char *commit_hex, struct buf *err)
{
	git_object *obj = NULL;
	git_oid have, want, tag_oid;
	char *ref = xasprintf("refs/tags/%s", tag);
	int ret = 0;

	if (git_oid_fromstr(&want, commit_hex) < 0) {
		ret = err_setf(err, -EINVAL, "'%s' is not a commit id", commit_hex);
		goto out;
	}
	if (peel_ref_commit(r->g, ref, &have) == 0) {
		if (!git_oid_equal(&have, &want)) {
			char h[KC_OID_HEX];
			git_oid_tostr(h, sizeof(h), &have);
			ret = err_setf(err, -EEXIST, "tag '%s' already exists and points at %.12s", tag, h);
		}
		goto out;
	}
	if (git_object_lookup(&obj, r->g, &want, GIT_OBJECT_COMMIT) < 0 ||
	    git_tag_create_lightweight(&tag_oid, r->g, tag, obj, 0) < 0)
		ret = err_setf(err, -EIO, "cannot create tag '%s': %s", tag, gerr());
out:
	git_object_free(obj);
	free(ref);
	return ret;
}

int repo_checkout(struct repo *r, const char *commit_hex, struct buf *err)
{
	git_commit *c = NULL;
	git_checkout_options opts;
	int ret;

	git_checkout_options_init(&opts, GIT_CHECKOUT_OPTIONS_VERSION);

	if ((ret = lookup_commit(r, &c, commit_hex, err)))
		return ret;
	opts.checkout_strategy = GIT_CHECKOUT_FORCE;
	if (git_checkout_tree(r->g, (const git_object *)c, &opts) < 0 ||
	    git_repository_set_head_detached(r->g, git_commit_id(c)) < 0)
		ret = err_setf(err, -EIO, "cannot check out %.12s in '%s': %s", commit_hex,
			      r->workdir ? r->workdir : "?", gerr());
	git_commit_free(c);
	return ret;
}

int repo_branch_set(struct repo *r, const char *name, const char *commit_hex, struct buf *err)
{
	git_commit *c = NULL;
	git_reference *ref = NULL;
	int ret;

	if ((ret = lookup_commit(r, &c, commit_hex, err)))
		return ret;
	if (git_branch_create(&ref, r->g, name, c, 1) < 0)
		ret = err_setf(err, -EIO, "cannot set branch '%s': %s", name, gerr());
	git_reference_free(ref);
	git_commit_free(c);
	return ret;
}

/* ---- apply ---- */

/* Which file and hunk libgit2 is at: its callbacks run before each delta
 * and each hunk is applied, so after a failure they name the culprit
 * (libgit2 itself only says "hunk at line N did not apply"). */
struct apply_track {
	char file[512];
	char hunk[256];
	int hunk_no;
	git_tree *tree;     /* the pre-image, to refuse creating existing files */
	bool exists;
	bool deleted_differs;
};

static int track_delta(const git_diff_delta *d, void *payload)
{
	struct apply_track *t = payload;
	const char *path = d->new_file.path ? d->new_file.path : d->old_file.path;

	snprintf(t->file, sizeof(t->file), "%s", path ? path : "?");
	t->hunk[0] = '\0';
	t->hunk_no = 0;
	/* libgit2 lets a new-file patch overwrite an existing file; git apply
	 * refuses ("already exists in index"), and so do we. */
	if (d->status == GIT_DELTA_ADDED && t->tree && path) {
		git_tree_entry *e = NULL;
		if (git_tree_entry_bypath(&e, t->tree, path) == 0) {
			git_tree_entry_free(e);
			t->exists = true;
			git_error_set_str(GIT_ERROR_PATCH, "file already exists");
			return GIT_EEXISTS;
		}
		git_error_clear();
	}
	return 0;
}

static int track_hunk(const git_diff_hunk *h, void *payload)
{
	struct apply_track *t = payload;
	size_t n = h->header_len;

	while (n && (h->header[n - 1] == '\n' || h->header[n - 1] == '\r'))
		n--;
	if (n >= sizeof(t->hunk))
		n = sizeof(t->hunk) - 1;
	memcpy(t->hunk, h->header, n);
	t->hunk[n] = '\0';
	t->hunk_no++;
	return 0;
}

/* The blob at path in tree, or NULL. */
static git_blob *tree_blob(git_repository *g, git_tree *tree, const char *path)
{
	git_tree_entry *e = NULL;
	git_blob *b = NULL;

	if (git_tree_entry_bypath(&e, tree, path) < 0) {
		git_error_clear();
		return NULL;
	}
	if (git_tree_entry_type(e) == GIT_OBJECT_BLOB &&
	    git_blob_lookup(&b, g, git_tree_entry_id(e)) < 0) {
		git_error_clear();
		b = NULL;
	}
	git_tree_entry_free(e);
	return b;
}

/* The parent tree's files for patch_fit.h: the blob read last is kept
 * (its content is borrowed) until the next read or tree_source_release(). */
struct tree_source {
	git_repository *g;
	git_tree *tree;
	git_blob *blob;
};

static int tree_source_read(void *payload, const char *path, const char **data, size_t *len)
{
	struct tree_source *s = payload;

	git_blob_free(s->blob);
	s->blob = tree_blob(s->g, s->tree, path);
	if (!s->blob)
		return -ENOENT;
	*data = git_blob_rawcontent(s->blob);
	*len = (size_t)git_blob_rawsize(s->blob);
	return 0;
}

static void tree_source_release(struct tree_source *s)
{
	git_blob_free(s->blob);
	s->blob = NULL;
}

/* Apply diff text to tree, its hunks first moved to where their context
 * is (patch_fit.h); *out_idx gets the result unless check_only. */
static int apply_text(struct repo *r, git_index **out_idx, git_tree *tree,
		      const char *text, bool check_only, struct apply_track *t,
		      int *parse_rc)
{
	struct tree_source src = { r->g, tree, NULL };
	const struct patch_fit_source fs = { tree_source_read, &src };
	struct buf moved = BUF_INIT, bad = BUF_INIT;
	git_diff *diff = NULL;
	git_index *idx = NULL;
	git_apply_options opts;
	bool deletions_ok;
	int rc;

	git_apply_options_init(&opts, GIT_APPLY_OPTIONS_VERSION);
	patch_fit_hunks(&moved, NULL, text, &fs);
	deletions_ok = patch_fit_deletions(&bad, text, &fs);
	tree_source_release(&src);
	*parse_rc = git_diff_from_buffer(&diff, buf_str(&moved), moved.len);
	buf_release(&moved);
	if (*parse_rc < 0) {
		buf_release(&bad);
		return *parse_rc;
	}
	opts.delta_cb = track_delta;
	opts.hunk_cb = track_hunk;
	opts.payload = t;
	t->tree = tree;
	if (!deletions_ok) {
		snprintf(t->file, sizeof(t->file), "%s", buf_str(&bad));
		buf_release(&bad);
		git_diff_free(diff);
		git_error_set_str(GIT_ERROR_PATCH, "file to delete differs from the patch");
		t->deleted_differs = true;
		return GIT_EAPPLYFAIL;
	}
	buf_release(&bad);
	if (check_only)
		opts.flags = GIT_APPLY_CHECK;
	rc = git_apply_to_tree(&idx, r->g, tree, diff, &opts);
	git_diff_free(diff);
	if (rc == 0 && out_idx)
		*out_idx = idx;
	else
		git_index_free(idx);
	return rc;
}

static char *commit_message(const struct apply_patch *p)
{
	const char *msg = p->message ? p->message : "";
	const char *subj = p->subject ? p->subject : "";
	size_t sl = strlen(subj);
	struct buf b = BUF_INIT;

	if (sl && !strncmp(msg, subj, sl) && (msg[sl] == '\n' || msg[sl] == '\0'))
		buf_puts(&b, msg);
	else if (*msg)
		buf_printf(&b, "%s\n\n%s", subj, msg);
	else
		buf_puts(&b, subj);
	while (b.len && (b.ptr[b.len - 1] == '\n' || b.ptr[b.len - 1] == ' '))
		b.ptr[--b.len] = '\0';
	buf_puts(&b, "\n");
	return buf_detach(&b);
}

int repo_apply_patch(struct repo *r, char out[KC_OID_HEX], const char *parent_hex,
		     const struct apply_patch *p, struct apply_failure *fail, struct buf *err)
{
	git_commit *parent = NULL;
	git_tree *tree = NULL, *new_tree = NULL;
	git_index *idx = NULL;
	git_signature *sig = NULL;
	struct apply_track t;
	git_oid tree_oid, commit_oid;
	struct buf rev = BUF_INIT;
	char *msg = NULL;
	const git_commit *parents[1];
	int parse_rc = 0, rc, ret = 0;

	memset(&t, 0, sizeof(t));
	if (fail)
		memset(fail, 0, sizeof(*fail));
	if (!p->diff || !strstr(p->diff, "diff --git "))
		return err_setf(err, -EINVAL, "patch %d/%d '%s' has no diff", p->k, p->m,
			       p->subject ? p->subject : "");
	if (p->corrupt) {
		const char *pre = strncmp(p->corrupt, "corrupt", 7) ? "corrupt patch: " : "";
		if (fail)
			snprintf(fail->detail, sizeof(fail->detail), "%s%s", pre, p->corrupt);
		return err_setf(err, -EBADMSG, "cannot apply patch %d/%d '%s': %s%s", p->k, p->m,
			       p->subject ? p->subject : "", pre, p->corrupt);
	}
	if ((ret = lookup_commit(r, &parent, parent_hex, err)))
		return ret;
	if (git_commit_tree(&tree, parent) < 0) {
		ret = err_setf(err, -EIO, "cannot read tree of %.12s: %s", parent_hex, gerr());
		goto out;
	}
	rc = apply_text(r, &idx, tree, p->diff, false, &t, &parse_rc);
	if (parse_rc < 0) {
		if (fail)
			snprintf(fail->detail, sizeof(fail->detail), "corrupt patch: %s", gerr());
		ret = err_setf(err, -EBADMSG, "corrupt patch %d/%d '%s': %s", p->k, p->m,
			      p->subject ? p->subject : "", gerr());
		goto out;
	}
	if (rc < 0) {
		struct apply_track rt;
		char detail[256];
		int rparse = 0;

		snprintf(detail, sizeof(detail), "%s", gerr());
		if (fail) {
			snprintf(fail->file, sizeof(fail->file), "%s", t.file);
			snprintf(fail->hunk, sizeof(fail->hunk), "%s", t.hunk);
			fail->hunk_no = t.hunk_no;
			snprintf(fail->detail, sizeof(fail->detail), "%s", detail);
		}
		memset(&rt, 0, sizeof(rt));
		patch_reverse(&rev, p->diff);
		if (apply_text(r, NULL, tree, buf_str(&rev), true, &rt, &rparse) == 0 &&
		    rparse == 0) {
			memcpy(out, parent_hex, KC_OID_HEX);
			out[KC_OID_HEX - 1] = '\0';
			ret = err_setf(err, -EALREADY, "patch %d/%d '%s' is already applied (it reverse-applies)",
				      p->k, p->m, p->subject ? p->subject : "");
			goto out;
		}
		if (t.exists)
			ret = err_setf(err, -ENOEXEC, "cannot apply patch %d/%d '%s': %s already exists",
				      p->k, p->m, p->subject ? p->subject : "", t.file);
		else if (t.deleted_differs)
			ret = err_setf(err, -ENOEXEC, "cannot apply patch %d/%d '%s': %s to delete is missing or differs from the patch",
				      p->k, p->m, p->subject ? p->subject : "", t.file);
		else if (*t.hunk)
			ret = err_setf(err, -ENOEXEC, "cannot apply patch %d/%d '%s': %s hunk #%d %s does not match",
				      p->k, p->m, p->subject ? p->subject : "", t.file,
				      t.hunk_no, t.hunk);
		else
			ret = err_setf(err, -ENOEXEC, "cannot apply patch %d/%d '%s': %s: %s",
				      p->k, p->m, p->subject ? p->subject : "",
				      *t.file ? t.file : "?", detail);
		goto out;
	}
	if (git_index_write_tree_to(&tree_oid, idx, r->g) < 0 ||
	    git_tree_lookup(&new_tree, r->g, &tree_oid) < 0) {
		ret = err_setf(err, -EIO, "cannot write tree: %s", gerr());
		goto out;
	}
	if (git_signature_new(&sig, p->author_name && *p->author_name ? p->author_name
			      : (p->author_email ? p->author_email : "unknown"),
			      p->author_email ? p->author_email : "", (git_time_t)p->date_s,
			      p->tz_offset_min) < 0) {
		ret = err_setf(err, -EINVAL, "bad author of patch %d/%d '%s': %s", p->k, p->m,
			      p->subject ? p->subject : "", gerr());
		goto out;
	}
	msg = commit_message(p);
	parents[0] = parent;
	if (git_commit_create(&commit_oid, r->g, NULL, sig, sig, NULL, msg, new_tree,
			      1, parents) < 0) {
		ret = err_setf(err, -EIO, "cannot commit patch %d/%d: %s", p->k, p->m, gerr());
		goto out;
	}
	git_oid_tostr(out, KC_OID_HEX, &commit_oid);
out:
	buf_release(&rev);
	free(msg);
	git_signature_free(sig);
	git_index_free(idx);
	git_tree_free(new_tree);
	git_tree_free(tree);
	git_commit_free(parent);
	return ret;
}

int kc_hash_buf(char out[KC_OID_HEX], const void *data, size_t len, struct buf *err)
{
	git_oid oid;

	lib_init();
	if (git_odb_hash(&oid, data, len, GIT_OBJECT_BLOB) < 0)
		return err_setf(err, -EIO, "cannot hash: %s", gerr());
	git_oid_tostr(out, KC_OID_HEX, &oid);
	return 0;
}

int kc_hash_file(char out[KC_OID_HEX], const char *path, struct buf *err)
{
	git_oid oid;

	lib_init();
	if (git_odb_hashfile(&oid, path, GIT_OBJECT_BLOB) < 0)
		return err_setf(err, -EIO, "cannot hash '%s': %s", path, gerr());
	git_oid_tostr(out, KC_OID_HEX, &oid);
	return 0;
}

int repo_commit_info(struct repo *r, const char *hex, char **out_author,
		     int64_t *out_time, int *out_tz_min, char **out_message, struct buf *err)
{
	git_commit *c = NULL;
	const git_signature *a;
	int ret;

	if ((ret = lookup_commit(r, &c, hex, err)))
		return ret;
	a = git_commit_author(c);
	if (out_author)
		*out_author = xasprintf("%s <%s>", a->name, a->email);
	if (out_time)
		*out_time = (int64_t)a->when.time;
	if (out_tz_min)
		*out_tz_min = a->when.offset;
	if (out_message)
		*out_message = xstrdup(git_commit_message(c));
	git_commit_free(c);
	return 0;
}

int repo_commit_nparents(struct repo *r, const char *hex, struct buf *err)
{
	git_commit *c = NULL;
	int ret;

	if ((ret = lookup_commit(r, &c, hex, err)))
		return ret;
	ret = (int)git_commit_parentcount(c);
	git_commit_free(c);
	return ret;
}

int repo_commit_parent(struct repo *r, char out[KC_OID_HEX], const char *hex, struct buf *err)
{
	git_commit *c = NULL;
	int ret;

	if ((ret = lookup_commit(r, &c, hex, err)))
		return ret;
	if (git_commit_parentcount(c) == 0)
		ret = err_setf(err, -ENOENT, "commit %.12s has no parent", hex);
	else
		git_oid_tostr(out, KC_OID_HEX, git_commit_parent_id(c, 0));
	git_commit_free(c);
	return ret;
}

/* ---- bisection range ---- */

int repo_range(struct repo *r, char (**out)[KC_OID_HEX], size_t *n, const char *old_rev,
	       const char *new_rev, bool first_parent, struct buf *err)
{
	char old_hex[KC_OID_HEX], new_hex[KC_OID_HEX];
	git_oid old_oid, new_oid, oid;
	git_revwalk *w = NULL;
	char (*v)[KC_OID_HEX] = NULL;
	size_t cnt = 0, cap = 0;
	int rc, ret;

	*out = NULL;
	*n = 0;
	if ((ret = repo_resolve(r, old_hex, old_rev, err)) || (ret = repo_resolve(r, new_hex, new_rev, err)))
		return ret;
	git_oid_fromstr(&old_oid, old_hex);
	git_oid_fromstr(&new_oid, new_hex);
	if (git_oid_equal(&old_oid, &new_oid))
		return err_setf(err, -EINVAL, "'%s' and '%s' are the same commit %.12s: nothing to "
			       "bisect", old_rev, new_rev, old_hex);
	rc = git_graph_descendant_of(r->g, &new_oid, &old_oid);
	if (rc < 0)
		return err_setf(err, git_code_to_errno(rc), "cannot relate '%s' and '%s': %s", old_rev,
			       new_rev, gerr());
	if (rc == 0)
		return err_setf(err, -EINVAL, "'%s' (%.12s) is not an ancestor of '%s' (%.12s): the "
			       "older end of the range must be in the newer end's history",
			       old_rev, old_hex, new_rev, new_hex);
	if ((rc = git_revwalk_new(&w, r->g)) < 0 ||
	    (rc = git_revwalk_sorting(w, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE)) < 0 ||
	    (first_parent && (rc = git_revwalk_simplify_first_parent(w)) < 0) ||
	    (rc = git_revwalk_push(w, &new_oid)) < 0 || (rc = git_revwalk_hide(w, &old_oid)) < 0) {
		ret = err_setf(err, git_code_to_errno(rc), "cannot walk '%s..%s': %s", old_rev, new_rev,
			      gerr());
		goto out;
	}
	cap = 64;
	v = xcalloc(cap, sizeof(*v));
	memcpy(v[cnt++], old_hex, KC_OID_HEX);
	while ((rc = git_revwalk_next(&oid, w)) == 0) {
		if (cnt == cap) {
			cap *= 2;
			v = xrealloc(v, cap * sizeof(*v));
		}
		git_oid_tostr(v[cnt++], KC_OID_HEX, &oid);
	}
	if (rc != GIT_ITEROVER) {
		ret = err_setf(err, git_code_to_errno(rc), "cannot walk '%s..%s': %s", old_rev, new_rev,
			      gerr());
		goto out;
	}
	if (strcmp(v[cnt - 1], new_hex)) {
		/* topological order ends at the tip, always; guard anyway */
		ret = err_setf(err, -EIO, "walk of '%s..%s' did not end at %.12s", old_rev, new_rev, new_hex);
		goto out;
	}
	*out = v;
	*n = cnt;
	v = NULL;
	ret = 0;
out:
	free(v);
	git_revwalk_free(w);
	return ret;
}

int kc_patch_id(char out[KC_OID_HEX], const char *diff, size_t len, struct buf *err)
{
	git_diff *d = NULL;
	git_oid oid;
	int r = 0;

	lib_init();
	if (git_diff_from_buffer(&d, diff, len) < 0)
		return err_setf(err, -EINVAL, "cannot read the diff: %s", gerr());
	if (git_diff_patchid(&oid, d, NULL) < 0)
		r = err_setf(err, -EINVAL, "cannot compute the patch-id: %s", gerr());
	else
		git_oid_tostr(out, KC_OID_HEX, &oid);
	git_diff_free(d);
	return r;
}

/* The stable patch-id of commit c against its first parent, into hex. */
static int commit_patch_id(struct repo *r, char hex[KC_OID_HEX], git_commit *c)
{
	git_commit *parent = NULL;
	git_tree *a = NULL, *b = NULL;
	git_diff *d = NULL;
	git_oid id;
	int rc;

	if ((rc = git_commit_parent(&parent, c, 0)) < 0 || (rc = git_commit_tree(&a, parent)) < 0 ||
	    (rc = git_commit_tree(&b, c)) < 0 ||
	    (rc = git_diff_tree_to_tree(&d, r->g, a, b, NULL)) < 0 ||
	    (rc = git_diff_patchid(&id, d, NULL)) < 0)
		goto out;
	git_oid_tostr(hex, KC_OID_HEX, &id);
out:
	git_diff_free(d);
	git_tree_free(a);
	git_tree_free(b);
	git_commit_free(parent);
	return rc;
}

int repo_find_patch_ids(struct repo *r, bool *found, size_t *looked, const char *tip_hex,
			char *const *ids, size_t n, size_t limit, struct buf *err)
{
	git_revwalk *w = NULL;
	git_oid tip, oid;
	size_t left = 0, seen = 0;
	int rc, ret = 0;

	for (size_t i = 0; i < n; i++)
		left += !found[i];
	if (git_oid_fromstr(&tip, tip_hex) < 0)
		return err_setf(err, -ENOENT, "'%s' is not a commit id", tip_hex);
	if ((rc = git_revwalk_new(&w, r->g)) < 0 || (rc = git_revwalk_push(w, &tip)) < 0) {
		ret = err_setf(err, rc == GIT_ENOTFOUND ? -ENOENT : -EIO, "cannot walk the history "
			       "of %.12s in '%s': %s", tip_hex, r->workdir, gerr());
		goto out;
	}
	while (left && seen < limit && (rc = git_revwalk_next(&oid, w)) == 0) {
		git_commit *c = NULL;
		char hex[KC_OID_HEX];

		if (git_commit_lookup(&c, r->g, &oid) < 0) {
			ret = err_setf(err, -EIO, "cannot read a commit of '%s': %s", r->workdir, gerr());
			goto out;
		}
		if (git_commit_parentcount(c) == 1) {
			seen++;
			if (commit_patch_id(r, hex, c) < 0) {
				git_commit_free(c);
				ret = err_setf(err, -EIO, "cannot diff commit %.12s of '%s': %s",
					       git_oid_tostr_s(&oid), r->workdir, gerr());
				goto out;
			}
			for (size_t i = 0; i < n; i++)
				if (!found[i] && !strcasecmp(ids[i], hex)) {
					found[i] = true;
					left--;
				}
		}
		git_commit_free(c);
	}
out:
	*looked = seen;
	git_revwalk_free(w);
	return ret;
}

int kc_text_diff(char **out, const char *old_text, const char *new_text, const char *old_name,
		 const char *new_name, unsigned context, struct buf *err)
{
	git_diff_options o;
	git_patch *p = NULL;
	git_buf b = { 0 };
	int r = 0;

	lib_init();
	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.context_lines = context;
	if (git_patch_from_buffers(&p, old_text, strlen(old_text), old_name, new_text,
				   strlen(new_text), new_name, &o) < 0)
		return err_setf(err, -EIO, "cannot diff '%s' and '%s': %s", old_name, new_name,
				gerr());
	if (git_patch_to_buf(&b, p) < 0) {
		r = err_setf(err, -EIO, "cannot print the diff of '%s' and '%s': %s", old_name,
			     new_name, gerr());
		goto out;
	}
	*out = xstrdup(b.ptr ? b.ptr : "");
out:
	git_buf_dispose(&b);
	git_patch_free(p);
	return r;
}
