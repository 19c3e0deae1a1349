/* db_guest.h - what the guest runner stores about a run besides its records
 * (db_guest.c): accelerator, console log and tail, the prebuilt kernel.
 * Same rules as db.h: 0 or -errno, the reason in err.
 */
#ifndef KC_DB_GUEST_H
#define KC_DB_GUEST_H

#include <stdint.h>

#include "store/db.h"

/*
 * db_kernel_prebuilt - id of the kernels row (source 'prebuilt') for the
 * image at image_path, inserting it (with release and modules_dir, either
 * may be NULL) when there is none.
 */
int db_kernel_prebuilt(struct db *db, int64_t *out_id, const char *image_path,
		       const char *release, const char *modules_dir, struct buf *err);

/*
 * db_run_set_guest - record how a run is booted: accel ("kvm", "tcg"),
 * console_log_path, and kernel_id (0: leave as is; also set on the run's
 * variant when it has none). -ENOENT when the run does not exist.
 */
int db_run_set_guest(struct db *db, int64_t run_id, const char *accel,
		     const char *console_log_path, int64_t kernel_id, struct buf *err);

/* db_run_set_guest_json - store how the run's guest was booted (a JSON
 * object as text; schema/003_guest.sql lists its fields). */
int db_run_set_guest_json(struct db *db, int64_t run_id, const char *json, struct buf *err);

/*
 * db_run_guest_host - where run_id's guest was (or was to be) booted: the
 * libvirt URI and the domain name of its guest_json (both malloc'd, caller
 * frees; NULL when the run has no guest_json or the field is missing).
 * -ENOENT when the run does not exist.
 */
int db_run_guest_host(struct db *db, int64_t run_id, char **uri, char **domain,
		      struct buf *err);

/* db_run_set_console_tail - keep the console's last lines with the run. */
int db_run_set_console_tail(struct db *db, int64_t run_id, const char *tail, struct buf *err);

/* A guest root filesystem image as the store keeps it (schema/015_rootfs.sql).
 * Strings are borrowed. */
struct db_rootfs {
	const char *hash;          /* sha256 hex of its content key */
	const char *spec;          /* "debian:fio,bpftrace" */
	const char *packages;      /* "name version" lines as installed */
	const char *files_json;    /* [{"src","dst","sha256"}]; NULL: [] */
	const char *path;          /* the image file */
	int64_t size_bytes;
	double build_s;            /* < 0: found in the cache, not built */
};

/*
 * db_run_set_rootfs - record the image (inserted once per hash; a later
 * build time fills a missing one) and name it as run_id's root filesystem.
 * -ENOENT when the run does not exist.
 */
int db_run_set_rootfs(struct db *db, int64_t run_id, const struct db_rootfs *img, struct buf *err);

#endif
