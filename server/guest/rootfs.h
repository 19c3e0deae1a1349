/* rootfs.h - guest root filesystems: a Debian 12 userland (mmdebstrap)
 * with the packages a run asks for, the agent and the user's files, packed
 * read-only as squashfs and booted as a second virtio disk beside the
 * initramfs (kernels/init mounts it under a tmpfs overlay and runs the
 * agent chrooted there; the kernel's modules still come from the
 * initramfs). The run service (guest_run.c) is its one caller.
 *
 * Cache: $KCANARY_HOME/rootfs/<hash>.sqfs, where hash is the sha256 of a
 * manifest of the sorted package set with the versions apt resolves for it
 * from the host's own package lists (`apt-get -s` against an empty dpkg
 * status) and the agent's sha256. With --files, a second image keyed by
 * that hash and each file's guest path and sha256: a copy of the first
 * with the files appended (mksquashfs appends in place), so a changed
 * script costs a copy of the image, not a Debian build. The
 * build uses those same lists (mmdebstrap --skip=update with the host's
 * /var/lib/apt/lists copied in) and the host's apt sources, so the key
 * names what gets installed; a second job with the same set builds
 * nothing. Beside each image: <hash>.sqfs.sha256 (its content's sha256
 * and size, rootfs_volume_key()), <hash>.pkgs ("name version" lines, as
 * installed, from dpkg-query), <hash>.files.json, <hash>.log (the build's
 * output).
 *
 * What the resolution does not see: the Essential:yes base (bash,
 * coreutils, ...) that the packages do not pull in is keyed only through
 * the recipe version (ROOTFS_RECIPE); a security update to it alone keeps
 * the old image until the recipe changes. The stored package list is the
 * image's real one either way.
 */
#ifndef KC_ROOTFS_H
#define KC_ROOTFS_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

/* Bumped whenever what goes into an image changes other than by its inputs. */
#define ROOTFS_RECIPE 1

/* Where the agent sits in an image, and where --files are: FILES_DIR/rel/
 * (relative guest paths; /init copies them into the workload's directory)
 * and FILES_DIR/abs/ (absolute ones; /init copies them into place in the
 * overlay). */
#define ROOTFS_AGENT "/opt/kcanary/run-agent"
#define ROOTFS_FILES_DIR "/kcfiles"

struct rootfs_spec {
	const char *home;          /* $KCANARY_HOME: images go to home/rootfs/ */
	const char *spec;          /* "debian" or "debian:PKG,PKG..." */
	const char *agent_path;    /* kcanary-agent (static, or its ldd closure is copied) */
	const char *const *files;  /* NULL-ended "PATH[:GUEST_PATH]"; may be NULL. An
				    * absolute GUEST_PATH is where the file goes; a
				    * relative one (default: PATH's base name) is
				    * relative to the workload's directory */
	const char *sources;       /* apt sources for mmdebstrap; NULL: the host's
				    * /etc/apt/sources.list.d/debian.sources, else
				    * /etc/apt/sources.list */
};

struct rootfs_image {
	char *path;                /* home/rootfs/<hash>.sqfs */
	char hash[65];             /* sha256 hex */
	char *packages;            /* "name version\n" lines as installed, sorted */
	char *files_json;          /* [{"src","dst","sha256"}] */
	int64_t size_bytes;
	char volume_key[96];       /* its volume's name on a host (rootfs_volume_key()) */
	bool built;                /* false: it was in the cache */
	double build_s;            /* wall time of the build; 0 when cached */
};

/*
 * rootfs_parse_spec - the package names of spec ("debian" or
 * "debian:fio,bpftrace"), sorted and without duplicates, as a NULL-ended
 * array of new strings in *out (empty for plain "debian"). -EINVAL when
 * the distribution is not debian or a name is not a Debian package name
 * ([a-z0-9][a-z0-9+.-]+, Debian policy 5.6.1); err says which.
 */
int rootfs_parse_spec(char ***out, const char *spec, struct buf *err);

/*
 * rootfs_get - the image for s: found in the cache, else built (the
 * staging directory is removed on every path; a half image never gets its
 * final name). *out is filled on success (release with
 * rootfs_image_release). -EINVAL a bad spec or file argument, -ENOENT a
 * missing input (file, agent, host package lists, mmdebstrap), -EIO a tool
 * that failed (err names it and its log).
 */
int rootfs_get(struct rootfs_image *out, const struct rootfs_spec *s, struct buf *err);

void rootfs_image_release(struct rootfs_image *img);

/*
 * rootfs_volume_key - the name of image_path's volume on a lab host
 * (vm_volume_upload()): "kc-sha256-<sha256 of its bytes>-<size>.rootfs".
 * The hash is computed once (hash.h) and kept beside the image in
 * image_path.sha256 ("<hex> <size>"); later calls read only that (a stored
 * size other than the image's means it is stale: computed again), so a
 * run on a cached image reads none of it. out: at least 96 bytes. -errno
 * when the image cannot be read or the hash not stored (err says which).
 */
int rootfs_volume_key(char *out, size_t size, const char *image_path, struct buf *err);

/* --rootfs host: the guest runs the host's own userland, its / shared
 * read-only over virtiofs (hostfs.h) under a tmpfs overlay. Not
 * reproducible: what the guest ran is whatever the host has installed at
 * the time, so a run records the host's dpkg package list instead of an
 * image, and reports mark it (report.h: REPORT_ROOTFS_HOST_MARK). */
#define ROOTFS_HOST "host"

/* Is spec "host"? (NULL: no) */
bool rootfs_is_host(const char *spec);

/*
 * rootfs_host - the record of the host's userland in *out: packages the
 * host's `dpkg-query -W` "name version" lines, sorted; hash the sha256 of
 * those lines with the recipe version (so two runs on one unchanged host
 * share a row, a package upgrade makes a new one); path "/", built false.
 * -EIO when dpkg-query fails (err has its last line). Release with
 * rootfs_image_release().
 */
int rootfs_host(struct rootfs_image *out, struct buf *err);

/* rootfs_strv_free - free a NULL-ended array of strings (NULL is fine). */
void rootfs_strv_free(char **v);

#endif
