/* hostfs.c - virtiofsd over a read-only bind of the host's / (hostfs.h). */
#define LOG_MODULE "hostfs"
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "guest/hostfs.h"
#include "log.h"
#include "proc.h"
#include "wrap/vm.h"

bool hostfs_uri_local(const char *uri)
{
	if (!uri)
		uri = vm_default_uri();
	return strstr(uri, ":///") != NULL;
}

static const char *virtiofsd_path(void)
{
	const char *env = getenv("KCANARY_VIRTIOFSD");
	static const char *const cand[] = { "/usr/lib/qemu/virtiofsd", "/usr/libexec/virtiofsd" };

	if (env && *env)
		return env;
	for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++)
		if (!access(cand[i], X_OK))
			return cand[i];
	return NULL;
}

/* In the child, before virtiofsd runs (proc.h's child_setup: system
 * calls only, the parent has threads): a private mount namespace with /
 * bound read-only at root. */
static int private_ro_root(void *root)
{
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("/", root, NULL, MS_BIND, NULL) ||
	    mount(NULL, root, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL))
		return -errno;
	return 0;
}

int hostfs_start(struct hostfs *h, const char *dir, struct buf *err)
{
	const char *bin = virtiofsd_path();
	char *sock_arg = NULL, *src_arg = NULL;
	struct proc_outcome o;
	int r = 0;

	memset(h, 0, sizeof(*h));
	if (!bin)
		return err_setf(err, -ENOENT, "--rootfs host needs virtiofsd (not at /usr/lib/qemu/virtiofsd"
				" or /usr/libexec/virtiofsd; set KCANARY_VIRTIOFSD)");
	if (geteuid() != 0)
		return err_setf(err, -EPERM, "--rootfs host needs root (a mount namespace with a"
				" read-only bind of / for virtiofsd)");
	h->socket = xasprintf("%s/hostfs.sock", dir);
	h->root = xasprintf("%s/hostfs-root", dir);
	h->log = xasprintf("%s/virtiofsd.log", dir);
	unlink(h->socket);
	if (mkdir(h->root, 0755) && errno != EEXIST) {
		r = err_setf(err, -errno, "cannot create '%s': %s", h->root, strerror(errno));
		goto fail;
	}
	sock_arg = xasprintf("--socket-path=%s", h->socket);
	src_arg = xasprintf("source=%s,cache=auto,sandbox=namespace", h->root);
	{
		const char *argv[] = { bin, sock_arg, "-o", src_arg, NULL };
		struct proc_spec s = { .argv = argv, .out = PROC_FILE, .out_path = h->log,
				       .err = PROC_STDOUT, .child_setup = private_ro_root,
				       .setup_arg = h->root,
				       .setup_what = "the read-only bind of / in a mount namespace (needs root)" };

		r = proc_start(&h->proc, &s, err);
	}
	if (r)
		goto fail;
	for (int i = 0; i < 1000; i++) {
		struct stat sb;

		if (!stat(h->socket, &sb) && S_ISSOCK(sb.st_mode)) {
			log_debug("virtiofsd %d shares / read-only at %s", (int)proc_pid(h->proc), h->socket);
			goto out;
		}
		if (proc_done(h->proc, &o)) {
			r = err_setf(err, -EIO, "virtiofsd (%s) exited with status %d before making its"
				     " socket: see %s", bin, o.signal ? 128 + o.signal : o.status, h->log);
			goto fail;
		}
		usleep(10000);
	}
	r = err_setf(err, -EIO, "virtiofsd (%s) made no socket '%s' in 10 s: see %s", bin, h->socket,
		     h->log);
fail:
	hostfs_stop(h);
out:
	free(sock_arg);
	free(src_arg);
	return r;
}

void hostfs_stop(struct hostfs *h)
{
	if (!h)
		return;
	proc_stop(h->proc, 2000, NULL);
	if (h->socket)
		unlink(h->socket);
	if (h->root)
		rmdir(h->root);
	free(h->socket);
	free(h->root);
	free(h->log);
	memset(h, 0, sizeof(*h));
}
