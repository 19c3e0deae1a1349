/* hostfs.c - virtiofsd over a read-only bind of the host's / (hostfs.h). */
#define LOG_MODULE "hostfs"
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "guest/hostfs.h"
#include "log.h"
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

/* The child: a private mount namespace, / bound read-only at root, then
 * virtiofsd on it. Only system calls between fork and exec (the parent
 * has threads). */
static void child(const char *root, const char *log, char *const argv[])
{
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		_exit(126);
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("/", root, NULL, MS_BIND, NULL) ||
	    mount(NULL, root, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL)) {
		static const char msg[] = "kcanary: cannot make the read-only bind of / (need root)\n";
		(void)!write(2, msg, sizeof(msg) - 1);
		_exit(125);
	}
	close_range(3, ~0U, 0);
	execv(argv[0], argv);
	_exit(127);
}

int hostfs_start(struct hostfs *h, const char *dir, struct buf *err)
{
	const char *bin = virtiofsd_path();
	char *sock_arg, *src_arg;
	int st, r = 0;

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
		char opt[] = "-o";
		char *argv[] = { (char *)bin, sock_arg, opt, src_arg, NULL };

		h->pid = fork();
		if (h->pid == 0)
			child(h->root, h->log, argv);
	}
	free(sock_arg);
	free(src_arg);
	if (h->pid < 0) {
		h->pid = 0;
		r = err_setf(err, -errno, "cannot fork for virtiofsd: %s", strerror(errno));
		goto fail;
	}
	for (int i = 0; i < 1000; i++) {
		struct stat sb;

		if (!stat(h->socket, &sb) && S_ISSOCK(sb.st_mode)) {
			log_debug("virtiofsd %d shares / read-only at %s", (int)h->pid, h->socket);
			return 0;
		}
		if (waitpid(h->pid, &st, WNOHANG) == h->pid) {
			h->pid = 0;
			r = err_setf(err, -EIO, "virtiofsd (%s) exited with status %d before making its"
				     " socket: see %s", bin, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
				     h->log);
			goto fail;
		}
		usleep(10000);
	}
	r = err_setf(err, -EIO, "virtiofsd (%s) made no socket '%s' in 10 s: see %s", bin, h->socket,
		     h->log);
fail:
	hostfs_stop(h);
	return r;
}

void hostfs_stop(struct hostfs *h)
{
	if (!h)
		return;
	if (h->pid > 0) {
		int st;
		bool reaped = false;

		kill(h->pid, SIGTERM);
		for (int i = 0; i < 200 && !(reaped = waitpid(h->pid, &st, WNOHANG) != 0); i++)
			usleep(10000);
		if (!reaped) {
			kill(h->pid, SIGKILL);
			waitpid(h->pid, &st, 0);
		}
	}
	if (h->socket)
		unlink(h->socket);
	if (h->root)
		rmdir(h->root);
	free(h->socket);
	free(h->root);
	free(h->log);
	memset(h, 0, sizeof(*h));
}
