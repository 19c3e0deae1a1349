/* tree_import.c - a kernel source release tarball as a commit of a kernel
 * tree (see tree_import.h): the work tree emptied, `tar` unpacking into it,
 * the version read from the Makefile; the index, commit, branch and tag
 * through git.h. */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "proc.h"
#include "wrap/git.h"
#include "kernel/tree_import.h"
#include "util.h"

#define TARBALL_TRAILER "Kcanary-Tarball: "

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP ? rmdir(path) : unlink(path))
		return -errno;
	return 0;
}

/* Remove everything in dir except .git and the build dirs (REPO_BUILD_DIR:
 * the next build of the new release is then incremental). */
static int empty_workdir(const char *dir, struct buf *err)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int ret = 0;

	if (!d)
		return err_setf(err, -errno, "cannot open '%s': %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    !strcmp(e->d_name, ".git") || !strcmp(e->d_name, REPO_BUILD_DIR))
			continue;
		char *p = xasprintf("%s/%s", dir, e->d_name);
		int rc = nftw(p, rm_entry, 64, FTW_DEPTH | FTW_PHYS);
		if (rc) {
			ret = err_setf(err, rc < 0 ? rc : -EIO, "cannot remove '%s': %s", p,
				       strerror(rc < 0 ? -rc : EIO));
			free(p);
			break;
		}
		free(p);
	}
	closedir(d);
	return ret;
}

/* `tar -xf tarball -C dir --strip-components=1 --no-same-owner`; its
 * stderr's last line in err when it fails. */
static int run_tar(const char *tarball, const char *dir, struct buf *err)
{
	const char *argv[] = { "tar", "-xf", tarball, "-C", dir, "--strip-components=1",
			       "--no-same-owner", NULL };
	struct buf msg = BUF_INIT_MAX(64 << 10);
	struct proc_spec s = { .argv = argv, .out = PROC_INHERIT,
			       .err = PROC_CAPTURE, .err_buf = &msg };
	struct proc_outcome o;
	int rc;

	if ((rc = proc_run(&o, &s, err)))
		goto out;
	if (o.status != 0 || o.signal) {
		char line[PROC_TAIL_BYTES];

		proc_tail_line(line, sizeof(line), &o);
		rc = err_setf(err, -EIO, "cannot unpack '%s': tar failed (status %d)%s%s", tarball,
			      o.status, *line ? ": " : "", line);
	}
out:
	buf_release(&msg);
	return rc;
}

/* "6.12.117" from the top Makefile of dir; "" when it cannot be read. */
static void kernel_version(char *out, size_t size, const char *dir)
{
	char *path = xasprintf("%s/Makefile", dir);
	char line[256], v[4][64] = { "", "", "", "" };
	static const char *const keys[] = { "VERSION", "PATCHLEVEL", "SUBLEVEL", "EXTRAVERSION" };
	FILE *f = fopen(path, "r");

	out[0] = '\0';
	free(path);
	if (!f)
		return;
	for (int n = 0; n < 40 && fgets(line, sizeof(line), f); n++) {
		for (int i = 0; i < 4; i++) {
			size_t kl = strlen(keys[i]);
			if (strncmp(line, keys[i], kl) || strncmp(line + kl, " =", 2))
				continue;
			char *s = line + kl + 2;
			s += strspn(s, " \t");
			s[strcspn(s, " \t\r\n")] = '\0';
			snprintf(v[i], sizeof(v[i]), "%s", s);
		}
	}
	fclose(f);
	if (*v[0] && *v[1])
		snprintf(out, size, "%s.%s%s%s%s", v[0], v[1], *v[2] ? "." : "", v[2], v[3]);
}

/* The tip of the import branch into tip; *has false when there is none. */
static int import_tip(struct repo *r, char tip[KC_OID_HEX], bool *has, struct buf *err)
{
	struct buf why = BUF_INIT;
	int rc = repo_resolve(r, tip, TREE_IMPORT_BRANCH, &why);

	*has = rc == 0;
	if (rc == -ENOENT)       /* no import yet: not an error, err stays as it was */
		rc = 0;
	else if (rc)
		err_setf(err, rc, "%s", buf_str(&why));
	buf_release(&why);
	return rc;
}

/* Walk the first-parent chain of the import branch for a commit whose
 * message names blob id want; *has and found when there is one. */
static int find_import(struct repo *r, const char *want, char found[KC_OID_HEX], bool *has,
		       struct buf *err)
{
	char c[KC_OID_HEX], parent[KC_OID_HEX];
	bool more;
	int ret;

	*has = false;
	if ((ret = import_tip(r, c, &more, err)))
		return ret;
	while (more) {
		char *msg = NULL;
		const char *t;

		if ((ret = repo_commit_info(r, c, NULL, NULL, NULL, &msg, err)))
			return ret;
		t = strstr(msg, TARBALL_TRAILER);
		*has = t && !strncmp(t + strlen(TARBALL_TRAILER), want, 40);
		free(msg);
		if (*has) {
			memcpy(found, c, KC_OID_HEX);
			return 0;
		}
		more = repo_commit_parent(r, parent, c, NULL) == 0;   /* -ENOENT: the root */
		memcpy(c, parent, KC_OID_HEX);
	}
	return 0;
}

/* Commit the unpacked work tree on the import branch (res->commit), or
 * find it is the last import's tree (res->noop). */
static int commit_workdir(struct repo *r, struct import_result *res, const char *tarball,
			  const char *blob_hex, const struct stat *st, struct buf *err)
{
	char tree[KC_OID_HEX], parent[KC_OID_HEX], parent_tree[KC_OID_HEX];
	const char *base = strrchr(tarball, '/') ? strrchr(tarball, '/') + 1 : tarball;
	char *title, *msg;
	bool has_parent;
	int ret;

	if ((ret = repo_index_workdir(r, tree, err)))
		return ret;
	if ((ret = import_tip(r, parent, &has_parent, err)))
		return ret;
	if (has_parent && (ret = repo_commit_tree(r, parent_tree, parent, err)))
		return ret;
	if (has_parent && !strcmp(parent_tree, tree)) {
		/* another tarball of the same tree (recompressed, renamed) */
		res->noop = true;
		memcpy(res->commit, parent, KC_OID_HEX);
		return 0;
	}
	title = *res->version ? xasprintf("Linux %s", res->version) : xstrdup(base);
	msg = xasprintf("Import %s\n\nSource release tarball %s imported by kcanary.\n\n"
			TARBALL_TRAILER "%s\n", title, base, blob_hex);
	const struct repo_commit_spec spec = {
		.tree = tree, .parent = has_parent ? parent : NULL, .name = "kcanary import",
		.email = "kcanary@localhost", .time_s = (int64_t)st->st_mtime, .message = msg,
	};
	if (!(ret = repo_commit_create(r, res->commit, &spec, err)))
		ret = repo_ref_set(r, TREE_IMPORT_BRANCH, res->commit, "kcanary: import tarball",
				   true, err);
	free(title);
	free(msg);
	return ret;
}

int tree_import_tarball(struct repo *r, struct import_result *out, const char *tarball,
			const char *tag, struct buf *err)
{
	struct import_result res;
	const char *workdir = repo_workdir(r);
	char blob_hex[KC_OID_HEX];
	struct stat st;
	bool has = false;
	int ret;

	memset(&res, 0, sizeof(res));
	if (!workdir)
		return err_setf(err, -EINVAL, "cannot import into a bare repository");
	if (stat(tarball, &st) < 0)
		return err_setf(err, -errno, "cannot read '%s': %s", tarball, strerror(errno));
	/* The tarball's identity: its git blob id (sha1 of its content). */
	if ((ret = kc_hash_file(blob_hex, tarball, err)))
		return ret;
	if ((ret = find_import(r, blob_hex, res.commit, &has, err)))
		return ret;
	if (has) {
		res.noop = true;
		kernel_version(res.version, sizeof(res.version), workdir);
	} else {
		if ((ret = empty_workdir(workdir, err)) || (ret = run_tar(tarball, workdir, err)))
			return ret;
		/* Every file, ignored or not: the tarball is the source of truth. */
		kernel_version(res.version, sizeof(res.version), workdir);
		if ((ret = commit_workdir(r, &res, tarball, blob_hex, &st, err)))
			return ret;
	}
	if (tag && *tag)
		snprintf(res.tag, sizeof(res.tag), "%s", tag);
	else if (*res.version)
		snprintf(res.tag, sizeof(res.tag), "v%s", res.version);
	if (*res.tag && (ret = repo_tag_set(r, res.tag, res.commit, err)))
		return ret;
	*out = res;
	return 0;
}
