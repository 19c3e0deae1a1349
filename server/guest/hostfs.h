/* hostfs.h - the host's / shared read-only with one guest over virtiofs,
 * for --rootfs host (rootfs.h). The Debian cloud kernel the guests boot
 * has no 9p (CONFIG_NET_9P is not set) but has CONFIG_VIRTIO_FS=y, and
 * libvirt 9.0 refuses <readonly/> on a virtiofs share ("virtiofs does not
 * yet support read-only mode"), so kcanary starts virtiofsd itself and
 * hands libvirt its socket (<source socket='...'/>, vm.h): virtiofsd runs
 * in a mount namespace of its own over a read-only bind of the host's /
 * (non-recursive: /proc, /sys, /dev and other mounts are not shared), so
 * a write from the guest fails with EROFS on the host's side whatever the
 * guest kernel does. The guest mounts it with a tmpfs overlay on top
 * (kernels/init).
 *
 * Only where the guest runs on this machine: the shared tree is the
 * filesystem of the host that starts virtiofsd, so a run on a remote lab
 * host (a libvirt URI naming a host) is refused (hostfs_uri_local()).
 * Needs root (a mount namespace and mounts; virtiofsd itself).
 */
#ifndef KC_HOSTFS_H
#define KC_HOSTFS_H

#include <stdbool.h>

#include "util.h"

struct proc;

struct hostfs {
	struct proc *proc;         /* virtiofsd (proc.h); NULL: none */
	char *socket;              /* its vhost-user socket (dir/hostfs.sock) */
	char *root;                /* the empty mount point of the read-only bind */
	char *log;                 /* its output (dir/virtiofsd.log) */
};

/* Is uri a libvirt daemon on this machine ("driver:///path", no host
 * part; NULL: vm_default_uri())? The same test lab.c uses. */
bool hostfs_uri_local(const char *uri);

/*
 * hostfs_start - start virtiofsd sharing the host's / read-only, its
 * socket, mount point and log under dir (a run's directory, made by the
 * caller), and wait (up to 10 s) for the socket. The binary is
 * $KCANARY_VIRTIOFSD, else /usr/lib/qemu/virtiofsd (Debian's QEMU 7.2),
 * else /usr/libexec/virtiofsd. -ENOENT no virtiofsd, -EPERM not root,
 * another -errno when it cannot be started or the read-only bind cannot
 * be made, -EIO it exited or never made its socket (err names its log). On failure
 * nothing is left running. Stop with hostfs_stop().
 */
int hostfs_start(struct hostfs *h, const char *dir, struct buf *err);

/* hostfs_stop - end virtiofsd (SIGTERM, then SIGKILL after 2 s), reap it
 * and free h's strings. A zeroed h is fine. */
void hostfs_stop(struct hostfs *h);

#endif
