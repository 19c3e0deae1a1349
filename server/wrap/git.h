/* git.h - kernel trees through libgit2: open, resolve, read and write
 * commits, refs and tags, apply one mailed patch as a commit, check out a
 * commit, walk a bisection range.
 *
 * git.c is the only file that includes <git2.h>; nothing here runs a `git`
 * process. Object ids cross this interface as 40-char hex strings (char
 * [KC_OID_HEX], NUL-terminated).
 *
 * Errors (error.h): functions return 0 or a negative errno and write one
 * message, git-style ("unknown revision 'v9.9': …"), to err, their last
 * parameter (may be NULL); libgit2's own last error is read at once.
 * Not thread-safe per repo: use one struct repo from one thread.
 */
#ifndef KC_GIT_H
#define KC_GIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define KC_OID_HEX 41

struct repo;

/*
 * repo_open - open the repository at path (a work tree or a .git dir).
 * With create set, a missing repository is initialised (path is made).
 * Either way, gc.auto is set to 0 in the repository's config so a `git`
 * run by hand later does not start a background gc that competes with a
 * kernel build (../shared/notes/kbuild.md, outside this tree). -ENOENT
 * when path is not a repository and create is false. Free with
 * repo_close().
 */
int repo_open(struct repo **out, const char *path, bool create, struct buf *err);
void repo_close(struct repo *r);

/* The work tree (borrowed, ends without '/'), or NULL for a bare repo. */
const char *repo_workdir(const struct repo *r);

/*
 * repo_resolve - the commit a commit-ish names: tag, branch, full or
 * abbreviated sha, or any revparse expression (v6.12~2, HEAD^). Writes the
 * commit id to out. -ENOENT when nothing matches, -EINVAL when the name is
 * ambiguous (an abbreviated sha matching several objects, or a name that
 * is both a tag and a branch pointing at different commits), -ENOTDIR when
 * it names something that is not a commit.
 */
int repo_resolve(struct repo *r, char out[KC_OID_HEX], const char *rev, struct buf *err);

/* repo_commit_tree - the tree id of commit commit_hex. */
int repo_commit_tree(struct repo *r, char out[KC_OID_HEX], const char *commit_hex, struct buf *err);

/* The top-level directory of a work tree that holds kcanary's kernel build
 * dirs (build.c): never indexed, never removed by a tree import. */
#define REPO_BUILD_DIR ".kcanary-build"

/*
 * repo_index_workdir - replace the index with every file and symlink of
 * the work tree (all but .git and REPO_BUILD_DIR), without consulting ignore rules (Debian's
 * linux-source tarball ships a .gitignore that ignores every top-level
 * entry), write it, and write its tree id to out. -EINVAL for a bare
 * repository.
 */
int repo_index_workdir(struct repo *r, char out[KC_OID_HEX], struct buf *err);

/*
 * struct repo_commit_spec - a commit to write. tree: the tree id; parent:
 * the parent commit's id, NULL for a root commit; name, email, time_s
 * (seconds since the epoch), tz_offset_min: author and committer; message:
 * as it is (end it with '\n'). All borrowed.
 */
struct repo_commit_spec {
	const char *tree;
	const char *parent;
	const char *name;
	const char *email;
	int64_t time_s;
	int tz_offset_min;
	const char *message;
};

/* repo_commit_create - write the commit spec describes and its id to out;
 * no ref moves. -ENOENT for an unknown tree or parent. */
int repo_commit_create(struct repo *r, char out[KC_OID_HEX], const struct repo_commit_spec *spec, struct buf *err);

/*
 * repo_ref_set - create or move refname (a full name: "refs/heads/x") to
 * commit_hex, forcibly, with log_msg in its reflog; with head set, HEAD
 * then points at refname (attached, not detached). Unlike repo_branch_set
 * this may move the branch HEAD is on; the work tree is not touched.
 */
int repo_ref_set(struct repo *r, const char *refname, const char *commit_hex,
		 const char *log_msg, bool head, struct buf *err);

/*
 * repo_tag_set - the lightweight tag refs/tags/<tag> at commit_hex: 0 when
 * made or already there, -EEXIST (message names the tag and where it
 * points) when it points at another commit.
 */
int repo_tag_set(struct repo *r, const char *tag, const char *commit_hex, struct buf *err);

/*
 * repo_checkout - make the work tree, index and HEAD (detached) match
 * commit_hex, forcibly: local changes to tracked files are lost, untracked
 * files are left. Files whose content does not change are not rewritten
 * (their mtimes stay), so make rebuilds only what a patch touched.
 */
int repo_checkout(struct repo *r, const char *commit_hex, struct buf *err);

/* repo_branch_set - create or move refs/heads/<name> to commit_hex. */
int repo_branch_set(struct repo *r, const char *name, const char *commit_hex, struct buf *err);

/*
 * struct apply_patch - one mailed patch, as the series parser gives it.
 * message: the commit message; when it does not start with subject, the
 * commit message is "subject\n\nmessage". diff: the patch text from its
 * first "diff --git" line (what `git apply` would read). date_s: seconds
 * since the epoch; tz_offset_min: the Date header's offset. All borrowed.
 */
struct apply_patch {
	int k, m;
	const char *subject;
	const char *author_name;
	const char *author_email;
	int64_t date_s;
	int tz_offset_min;
	const char *message;
	const char *diff;
	const char *corrupt;   /* NULL, or why the parser found the diff
				* damaged: the patch is refused with it */
};

/*
 * struct apply_failure - where a patch did not apply. file: the path of the
 * failing file; hunk: the failing hunk's "@@ -a,b +c,d @@ …" header ("" when
 * the file itself was the problem, e.g. missing); hunk_no: 1-based hunk
 * index within the file (0 when none); detail: libgit2's message.
 */
struct apply_failure {
	char file[512];
	char hunk[256];
	int hunk_no;
	char detail[256];
};

/*
 * repo_apply_patch - apply p on top of commit parent_hex as a new commit
 * (author and committer: the mail's author and date, so the same patch on
 * the same parent always gives the same commit id) and write its id to
 * out. Nothing is checked out. Context must match exactly: hunks may move
 * (offsets, placed by patch_fit.h) but never fuzz.
 *
 * Returns 0 when applied; -EALREADY when it does not apply but its reverse
 * does (already applied; out gets parent_hex); -ENOEXEC when it does not
 * apply (fail says where, err says "'<file>' hunk <header> does
 * not match"); -EBADMSG when the diff does not parse (corrupt or
 * whitespace-damaged patch); -EINVAL for a patch with no diff.
 * fail may be NULL.
 */
int repo_apply_patch(struct repo *r, char out[KC_OID_HEX], const char *parent_hex,
		     const struct apply_patch *p, struct apply_failure *fail, struct buf *err);

/*
 * repo_commit_info - author "Name <email>", author time (seconds since the
 * epoch), its offset in minutes and the message of commit hex; strings are
 * new (caller frees). Any out may be NULL.
 */
int repo_commit_info(struct repo *r, const char *hex, char **out_author,
		     int64_t *out_time, int *out_tz_min, char **out_message, struct buf *err);

/* repo_commit_parent - the first parent of commit hex; -ENOENT for a root. */
int repo_commit_parent(struct repo *r, char out[KC_OID_HEX], const char *hex, struct buf *err);
/* repo_commit_nparents - how many parents commit hex has (2+ for a merge),
 * or a negative errno when it cannot be read. */
int repo_commit_nparents(struct repo *r, const char *hex, struct buf *err);

/*
 * kc_hash_buf / kc_hash_file - the git blob id of bytes / of a file's
 * content (what `git hash-object` prints), as 40 hex digits. Used as the
 * config hash and the tarball identity, so a user can check them by hand.
 */
int kc_hash_buf(char out[KC_OID_HEX], const void *data, size_t len, struct buf *err);
int kc_hash_file(char out[KC_OID_HEX], const char *path, struct buf *err);

/*
 * kc_patch_id - the stable patch-id of a mailed diff (what
 * `git patch-id --stable` prints: a hash of its lines with whitespace and
 * line numbers left out, files in order), so that a patch rebased or
 * re-sent unchanged in a later revision has the same id. -EINVAL when
 * diff is not one libgit2 reads.
 */
int kc_patch_id(char out[KC_OID_HEX], const char *diff, size_t len, struct buf *err);

/*
 * repo_find_patch_ids - which of the stable patch-ids ids[0..n) (as
 * kc_patch_id gives, and b4 writes as prerequisite-patch-id) a commit
 * reachable from tip_hex has: the commits are walked newest first, each
 * diffed against its first parent (merges and root commits skipped), at
 * most limit of them, stopping when every id is found. found[i] is set for
 * each id seen (the caller zeroes it); *looked gets the number of commits
 * diffed. Returns 0; -ENOENT when tip_hex is not a commit; -EIO when
 * libgit2 fails, err saying which.
 */
int repo_find_patch_ids(struct repo *r, bool *found, size_t *looked, const char *tip_hex,
			char *const *ids, size_t n, size_t limit, struct buf *err);

/*
 * kc_text_diff - a unified diff of two texts (*out, caller frees; "" when
 * they are equal) with context lines of context, headed "--- old_name" /
 * "+++ new_name". -EIO when libgit2 fails.
 */
int kc_text_diff(char **out, const char *old_text, const char *new_text, const char *old_name,
		 const char *new_name, unsigned context, struct buf *err);

/*
 * repo_range - the candidates of a bisection between old_rev (older end,
 * must be an ancestor of new_rev) and new_rev: old_rev's commit first, then
 * every commit of `old..new` in topological order, parents before children
 * (git rev-list --topo-order --reverse), ending with new_rev's commit. *out
 * is a new array of *n >= 2 ids (caller frees).
 *
 * Merges. With first_parent, only the first-parent chain of new_rev is
 * walked (libgit2's git_revwalk_simplify_first_parent, what `git bisect
 * --first-parent` does): a merge is one candidate standing for its whole
 * side branch, and the history is linear, as the engine (bisect.h)
 * assumes. Without it, every commit of old..new is a candidate and the
 * DAG is linearised topologically; git bisect instead halves the DAG by
 * reachability. The linear order is exact when the culprit's descendants
 * are exactly the commits after it in that order, which holds for linear
 * history; on a side branch that does not contain the culprit, commits
 * after it in the order still test "old", and the posterior must absorb
 * that as noise. Use first_parent for merge-heavy ranges.
 *
 * Errors: those of repo_resolve for an unknown rev; -EINVAL when the two
 * are the same commit or old_rev is not an ancestor of new_rev (message
 * names both revs).
 */
int repo_range(struct repo *r, char (**out)[KC_OID_HEX], size_t *n, const char *old_rev,
	       const char *new_rev, bool first_parent, struct buf *err);

#endif
