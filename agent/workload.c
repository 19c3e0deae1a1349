/* workload.c - see workload.h: plumbing shared by the agent's workloads. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOG_MODULE "workload"
#include "cgroup.h"
#include "error.h"
#include "log.h"
#include "probes.h"
#include "workload.h"
#include "util.h"

volatile sig_atomic_t wl_stop;

double wl_t(const struct wl_ctx *ctx)
{
	return clock_mono_s() - ctx->t0_s;
}

static void sleep_abs(double until_s)
{
	struct timespec ts;

	ts.tv_sec = (time_t)until_s;
	ts.tv_nsec = (long)((until_s - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec >= 1000000000L)
		ts.tv_nsec = 999999999L;
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

int wl_sleep_until(struct wl_ctx *ctx, double until_s)
{
	for (;;) {
		double now = clock_mono_s();
		double next_tick = ctx->t0_s + (double)((long)(now - ctx->t0_s) + 1);

		if (wl_stop)
			return -EINTR;
		if (now >= until_s)
			return 0;
		if (next_tick > until_s) {
			sleep_abs(until_s);
			continue;
		}
		sleep_abs(next_tick);
		if (clock_mono_s() >= next_tick)
			probes_emit(ctx->probes, ctx->rec, next_tick - ctx->t0_s);
	}
}

int wl_fs_of(char **type_out, char **opts_out, const char *path)
{
	char *real = realpath(path, NULL);
	FILE *f;
	struct mntent *m;
	size_t best = 0;
	char *type = NULL, *opts = NULL;

	if (!real)
		return -errno;
	f = setmntent("/proc/self/mounts", "r");
	if (!f) {
		free(real);
		return -errno;
	}
	while ((m = getmntent(f))) {
		size_t len = strlen(m->mnt_dir);
		bool under = !strcmp(m->mnt_dir, "/") ||
			(!strncmp(real, m->mnt_dir, len) && (real[len] == '/' || real[len] == '\0'));

		if (!strcmp(m->mnt_dir, "/"))
			len = 1;
		/* >=: a later mount on the same point hides the earlier one */
		if (under && len >= best) {
			free(type);
			free(opts);
			type = xstrdup(m->mnt_type);
			opts = xstrdup(m->mnt_opts);
			best = len;
		}
	}
	endmntent(f);
	free(real);
	if (!type)
		return -ENOENT;
	*type_out = type;
	*opts_out = opts;
	return 0;
}

#define TMPFS_MAGIC_ 0x01021994
#define RAMFS_MAGIC_ 0x858458f6

int wl_check_common(char **cgroot_out, const char *controllers, const char *dir,
		    struct buf *err)
{
	char *cgroot = NULL, *copy, *save = NULL;
	struct statfs sfs;
	struct stat st;
	int ret = 0;

	if (geteuid() != 0) {
		return err_setf(err, -EPERM,
				"must run as root (it creates cgroups and loads BPF probes): run it as root in the guest or with sudo");
	}
	if (dir) {
		if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
			ret = err_setf(err, -ENOENT,
				       "test directory '%s' does not exist: create it on the filesystem under test, or pass dir=PATH", dir);
			goto fail;
		}
		if (statfs(dir, &sfs) == 0 &&
		    ((unsigned long)sfs.f_type == TMPFS_MAGIC_ || (unsigned long)sfs.f_type == RAMFS_MAGIC_)) {
			ret = err_setf(err, -EINVAL,
				       "test directory '%s' is on %s, which has no writeback: pass dir=PATH on ext4, xfs or btrfs",
				       dir, (unsigned long)sfs.f_type == TMPFS_MAGIC_ ? "tmpfs" : "ramfs");
			goto fail;
		}
	}
	if (cg_root(&cgroot) < 0) {
		return err_setf(err, -ENOENT,
				"no cgroup v2 hierarchy is mounted: mount -t cgroup2 none /sys/fs/cgroup");
	}
	copy = xstrdup(controllers);
	for (char *c = strtok_r(copy, " ", &save); c; c = strtok_r(NULL, " ", &save)) {
		if (!cg_has_controller(cgroot, c)) {
			ret = err_setf(err, -ENOTSUP,
				       "cgroup v2 controller '%s' is not available in '%s' (bound to a cgroup v1 hierarchy or disabled): unmount its v1 hierarchy or boot with cgroup_no_v1=all",
				       c, cgroot);
			break;
		}
	}
	free(copy);
	if (ret < 0)
		goto fail;
	*cgroot_out = cgroot;
	return 0;
fail:
	free(cgroot);
	return ret;
}

pid_t wl_spawn(const char *cg, int (*fn)(void *arg), void *arg)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int r;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* a process group of its own: the agent stops it with all it
		 * started (kill(-pid, …)) */
		setpgid(0, 0);
		signal(SIGINT, SIG_IGN);   /* the agent decides when we stop */
		signal(SIGTERM, SIG_DFL);
		/* the agent ignores SIGPIPE for itself; a script's `awk | head`
		 * needs it at its default */
		signal(SIGPIPE, SIG_DFL);
		r = cg ? cg_move(cg, 0) : 0;
		if (r < 0) {
			fprintf(stderr, "kcanary-agent: cannot move into cgroup '%s': %s\n", cg, strerror(-r));
			_exit(126);
		}
		_exit(fn(arg));
	}
	return pid;
}

int wl_reap(pid_t pid, double timeout_s, int *status_out)
{
	double deadline = clock_mono_s() + timeout_s;
	int status = 0, ret = 0;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR))
			break;
		if ((timeout_s >= 0 && clock_mono_s() > deadline) || (timeout_s < 0 && wl_stop)) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			ret = -ETIMEDOUT;
			break;
		}
		usleep(10000);
	}
	if (status_out)
		*status_out = status;
	return ret;
}

/* wl_start's setup in the child: async-signal-safe calls only (the
 * cgroup.procs path is made before the fork). */
struct wl_setup {
	const struct wl_child *c;
	const char *procs;   /* <cg>/cgroup.procs, or NULL */
};

static int wl_child_setup(void *arg)
{
	const struct wl_setup *s = arg;
	int fd;

	if (prctl(PR_SET_PDEATHSIG, s->c->death_sig) < 0)
		return -errno;
	if (s->c->parent && getppid() != s->c->parent)
		return -ESRCH;
	if (s->c->own_group && setpgid(0, 0) < 0)
		return -errno;
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	if (!s->procs)
		return 0;
	/* "0": the writing process itself */
	if ((fd = open(s->procs, O_WRONLY | O_CLOEXEC)) < 0)
		return -errno;
	if (write(fd, "0", 1) != 1) {
		int e = errno;

		close(fd);
		return -e;
	}
	close(fd);
	return 0;
}

int wl_start(struct proc **out, struct proc_spec *spec, const struct wl_child *c,
	     struct buf *err)
{
	struct wl_setup s = { c, NULL };
	char *what = NULL;
	int r;

	if (c->cg) {
		s.procs = xasprintf("%s/cgroup.procs", c->cg);
		what = xasprintf("joining cgroup '%s'", c->cg);
	}
	spec->child_setup = wl_child_setup;
	spec->setup_arg = &s;
	spec->setup_what = what ? what : "setting up its process";
	r = proc_start(out, spec, err);
	free((char *)s.procs);
	free(what);
	return r;
}

int wl_proc_reap(struct proc *p, double timeout_s, struct proc_outcome *o)
{
	double deadline = clock_mono_s() + timeout_s;
	int ret = 0;

	while (!proc_done(p, NULL)) {
		if ((timeout_s >= 0 && clock_mono_s() > deadline) || (timeout_s < 0 && wl_stop)) {
			kill(proc_pid(p), SIGKILL);
			ret = -ETIMEDOUT;
			break;
		}
		usleep(10000);
	}
	proc_wait(p, o);
	return ret;
}

int wl_wait_tool(struct wl_ctx *ctx, struct proc *p, double timeout_s, const char *tool,
		 struct buf *err)
{
	double start = clock_mono_s();
	struct proc_outcome o;

	while (!proc_done(p, NULL)) {
		if (wl_stop || (timeout_s > 0 && clock_mono_s() - start > timeout_s)) {
			bool stopped = wl_stop;

			kill(proc_pid(p), SIGKILL);
			proc_wait(p, NULL);
			if (stopped)
				return err_setf(err, -EINTR, "interrupted by signal %d", (int)wl_stop);
			return err_setf(err, -ETIMEDOUT,
					"%s ran longer than %.0f s (timeout_s) and was killed", tool,
					timeout_s);
		}
		wl_sleep_until(ctx, clock_mono_s() + 0.2);
	}
	proc_wait(p, &o);
	if (o.signal || o.status)
		return err_setf(err, -EIO, "%s %s %d (its messages are on the console)", tool,
				o.signal ? "was killed by signal" : "exited with status",
				o.signal ? o.signal : o.status);
	return 0;
}

int wl_remove_flat(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int ret = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) < 0)
			ret = -errno;
	}
	closedir(d);
	if (rmdir(dir) < 0)
		ret = -errno;
	return ret;
}
