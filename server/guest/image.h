/* image.h - the guest's initramfs and kernel command line.
 *
 * A guest boots the kernel under test directly (no disk image, no boot
 * loader) with one initramfs: busybox-static, kcanary-agent and the mkfs
 * tools with their shared libraries (their `ldd` closure), the modules the
 * kernel needs from its /lib/modules tree (decompressed), and kernels/init
 * as /init (compiled into kcanary, see image_init_script). Images are built
 * once and cached under $KCANARY_HOME/images/<hash>.cpio, keyed by the
 * content of every file that goes in, so a new agent or a rebuilt module
 * gives a new image and nothing else does. A run's image holds only what
 * its filesystem needs (image_spec.fs), and is not compressed: under TCG
 * the guest inflating ~11 MB of gzip took ~1.4 s more than copying the
 * 24 MB cpio (docs/guests.md, "Where a run's time goes").
 *
 * A run's settings reach /init on the kernel command line, as kc.NAME=VALUE
 * words (the kernel ignores dotted unknown parameters and does not pass
 * them to init's environment; /init reads /proc/cmdline):
 *   kc.fs=ext4          the scratch disk's filesystem (ext4, xfs, btrfs)
 *   kc.mkfs=OPTS        extra mkfs options        (one value, encoded)
 *   kc.mnt=OPTS         mount options             (one value, encoded)
 *   kc.sysctl=K=V,K=V   sysctls                   (each item encoded)
 *   kc.workload=NAME    agent workload
 *   kc.knobs=K=V,K=V    workload knobs for the agent (each item encoded)
 *   kc.port=NAME        the virtio-serial port the agent writes records to
 *   kc.rootfs=vdb       run the agent in the root filesystem on /dev/vdb
 *                       (rootfs.h: squashfs under a tmpfs overlay, chrooted)
 *   kc.rootfs=host      the same on the host's / shared read-only over
 *                       virtiofs (tag kchost; hostfs.h), the agent copied in
 * Encoding: every byte outside [A-Za-z0-9._:/+=@^-] becomes %XX (so a space
 * is %20 and a comma inside a value %2C); /init decodes. The whole command
 * line must fit the kernel's COMMAND_LINE_SIZE (2048 bytes on x86).
 */
#ifndef KC_IMAGE_H
#define KC_IMAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "guest/run_params.h"
#include "util.h"

/* x86's COMMAND_LINE_SIZE (arch/x86/include/uapi/asm/setup.h, 2048). */
#define IMAGE_CMDLINE_MAX 2048

/* Every filesystem the image can format, and the modules each one needs
 * (besides virtio_blk for the disk). */
extern const char *const image_filesystems[];

/* What goes into an image. Paths are host paths; NULL picks the default. */
struct image_spec {
	const char *home;         /* $KCANARY_HOME: images go to home/images/ */
	const char *agent_path;   /* kcanary-agent binary (required) */
	const char *modules_dir;  /* /lib/modules/<release>, NULL: none (all built in) */
	const char *busybox_path; /* NULL: /bin/busybox (must be static) */
	const char *init_path;    /* NULL: the /init compiled into kcanary */
	const char *fs;           /* only this filesystem's mkfs tool and modules (a run's
				   * image: a smaller initramfs boots faster, docs/guests.md "Where a
				   * run's time goes"); NULL: every filesystem's */
	bool rootfs;              /* with fs: the --rootfs modules (squashfs, overlay) too */
};

/* The guest settings carried on the command line. Any field may be NULL. */
struct guest_settings {
	const char *fs;
	const struct run_params *run; /* the run's settings (run_params.h): workload, knobs,
				       * sysctls, mkfs and mount options; NULL: the default
				       * workload alone */
	const char *port;
	bool rootfs;              /* kc.rootfs=vdb: the second disk is a root filesystem */
	bool rootfs_host;         /* kc.rootfs=host: the host's / over virtiofs (wins) */
	const char *extra;        /* appended as it is (e.g. "loglevel=7") */
};

/*
 * image_build - return the path of the initramfs for spec, building it when
 * the cache has none (staging directory, `find | cpio -o -H newc`,
 * rename into place, so a crash never leaves a half image under the final
 * name). *out_path is a new string owned by the caller. On failure returns
 * -errno (-ENOENT a missing input, -EIO a tool failed) and writes one
 * message to err (may be NULL).
 */
int image_build(char **out_path, const struct image_spec *spec,
		struct buf *err);

/*
 * image_module_order - the modules file for /init: one "TAG FILE" line per
 * module in load order, TAG "*" (always loaded) or a filesystem name.
 * wanted[] is a NULL-ended list of "TAG:module" (module names with - or _);
 * each module's dependencies come from modules_dir/modules.dep and are
 * loaded before it (depth first), each at most once per tag. A module that
 * is not in modules.dep is skipped (built in, or not available: /init then
 * fails on mkfs or mount with the tool's message). The FILE written is the
 * module's base name without compression suffix (xfs.ko); its source path
 * is appended to *sources (NULL-ended, new strings) when sources is not
 * NULL, in the same order. *out is a new string. Returns 0, -ENOENT (no
 * modules.dep) or -EINVAL (a line that does not parse).
 */
int image_module_order(char **out, char ***sources, const char *modules_dir,
		       const char *const *wanted, struct buf *err);

/* The modules wanted for the guest, as "TAG:module" (NULL-ended). */
extern const char *const image_wanted_modules[];

/*
 * image_cmdline - the kernel command line for a run: "console=ttyS0
 * panic=-1 …" then the kc.* words of settings (see above). *out is a new
 * string. -EINVAL for a knob or sysctl with an empty key or no value, or
 * an unknown fs,
 * -E2BIG when the line would exceed IMAGE_CMDLINE_MAX; err says which.
 */
int image_cmdline(char **out, const struct guest_settings *settings,
		  struct buf *err);

/*
 * image_kernel_release - read the release string ("6.12.117+deb12-cloud-amd64")
 * from a bzImage's setup header (Documentation/arch/x86/boot.rst: "HdrS" at
 * 0x202, kernel_version pointer at 0x20e, +0x200). Writes at most size
 * bytes to out. -EINVAL, with a message naming the file and what was
 * expected, when the file is not a bzImage; -errno when it cannot be read.
 */
int image_kernel_release(char *out, size_t size, const char *path,
			 struct buf *err);

/*
 * image_kernel_pvh - the uncompressed kernel (the ELF vmlinux) inside the
 * bzImage at path, for QEMU to boot through its PVH entry: the guest then
 * skips decompressing itself, seconds under TCG (docs/guests.md, "Where a run's
 * time goes"). The payload is found and unpacked by the boot protocol
 * (Documentation/arch/x86/boot.rst: payload_offset and payload_length, the
 * compression told by its magic bytes) with the host's gzip, bzip2, xz,
 * lz4 or zstd; it must carry the PVH note (a kernel with CONFIG_PVH).
 * Cached under home/kernels/<hash of the bzImage>.pvh, and a kernel that
 * cannot boot this way is remembered (.nopvh, holding the reason). *out is
 * a new path. -ENOEXEC when the kernel cannot boot this way (why in err:
 * boot it as the bzImage), -EIO when the host's tool failed, other -errno
 * when a file cannot be read or written.
 */
int image_kernel_pvh(char **out, const char *home, const char *path, struct buf *err);

/* image_default_agent - the kcanary-agent to put in images: $KCANARY_AGENT,
 * else the one beside the running kcanary binary. New string; caller frees. */
char *image_default_agent(void);

/* The /init script compiled into kcanary (kernels/init), NUL-terminated. */
extern const char image_init_script[];

#endif
