/* tree_import.h - `kcanary tree import`: a kernel source release tarball
 * as one commit of a kernel tree, so releases can be compared and
 * bisected like any other revisions.
 *
 * The tarball is unpacked by `tar` (every format it reads: .tar.xz,
 * .tar.gz, ...) into the work tree; the commit, branch and tag are written
 * through git.h, so libgit2 stays behind git.c.
 */
#ifndef KC_TREE_IMPORT_H
#define KC_TREE_IMPORT_H

#include <stdbool.h>

#include "wrap/git.h"
#include "util.h"

/* The branch every import goes on, each on top of the previous one. */
#define TREE_IMPORT_BRANCH "refs/heads/kcanary/import"

/*
 * struct import_result - what tree_import_tarball did.
 * commit: the import commit; noop: this tarball (same content, by its git
 * blob id) was imported before, or another tarball of the same tree was
 * the last import, and nothing changed; version: the kernel version read
 * from the tree's Makefile ("6.12.117"), "" when not found; tag: the tag
 * set ("" when none).
 */
struct import_result {
	char commit[KC_OID_HEX];
	bool noop;
	char version[64];
	char tag[256];
};

/*
 * tree_import_tarball - import a kernel source release tarball as one
 * commit on TREE_IMPORT_BRANCH (parent: the previous import), author and
 * committer "kcanary import" dated by the tarball's mtime, and leave it
 * checked out (HEAD on that branch).
 *
 * The work tree is emptied (everything but .git) and the tarball unpacked
 * into it by `tar` (first path component stripped, mtimes kept); the index
 * is rebuilt from every file there (repo_index_workdir: ignore rules are
 * not consulted). The commit message records the tarball's blob id (the
 * "Kcanary-Tarball:" trailer); importing a tarball whose id is already on
 * the import branch is a no-op that leaves the work tree alone and returns
 * that commit; a different tarball of the same tree as the last import is
 * a no-op too (after unpacking). tag may be NULL: the tag is then
 * "v<version>" from the tree's Makefile when that can be read.
 *
 * Returns 0 and fills *out; on failure a negative errno with the message
 * in err (may be NULL): -EEXIST when the tag exists and points elsewhere,
 * -EINVAL for a bare repository, -ENOENT (or another errno from stat) when
 * the tarball cannot be read, -EIO when tar fails or the tree cannot be
 * written.
 */
int tree_import_tarball(struct repo *r, struct import_result *out, const char *tarball,
			const char *tag, struct buf *err);

#endif
