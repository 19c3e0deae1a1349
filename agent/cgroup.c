/* cgroup.c - see cgroup.h: cgroup v2 plumbing for the workloads. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOG_MODULE "cgroup"
#include "cgroup.h"
#include "log.h"
#include "util.h"

int cg_root(char **out)
{
	FILE *f = setmntent("/proc/self/mounts", "r");
	struct mntent *m;
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while ((m = getmntent(f))) {
		if (!strcmp(m->mnt_type, "cgroup2")) {
			*out = xstrdup(m->mnt_dir);
			ret = 0;
			break;
		}
	}
	endmntent(f);
	return ret;
}

bool cg_has_controller(const char *path, const char *controller)
{
	char *file = xasprintf("%s/cgroup.controllers", path);
	char *text = NULL, *save = NULL;
	size_t len;
	bool found = false;

	if (read_file(&text, &len, file, 4096) == 0) {
		for (char *w = strtok_r(text, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
			if (!strcmp(w, controller))
				found = true;
	}
	free(text);
	free(file);
	return found;
}

int cg_write(const char *path, const char *file, const char *value)
{
	char *p = xasprintf("%s/%s", path, file);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	int ret = 0;
	size_t len = strlen(value);

	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	if (write(fd, value, len) != (ssize_t)len)
		ret = -errno;
	close(fd);
out:
	if (ret < 0)
		log_debug("cannot write '%s' to '%s': %s", value, p, strerror(-ret));
	free(p);
	return ret;
}

int cg_enable(const char *path, const char *ctrls)
{
	char *copy = xstrdup(ctrls), *save = NULL;
	int ret = 0;

	for (char *w = strtok_r(copy, " ", &save); w && !ret; w = strtok_r(NULL, " ", &save)) {
		char *v = xasprintf("+%s", w);
		ret = cg_write(path, "cgroup.subtree_control", v);
		free(v);
	}
	free(copy);
	return ret;
}

int cg_set_max(const char *path, uint64_t limit_bytes)
{
	char v[32];

	if (limit_bytes == UINT64_MAX)
		snprintf(v, sizeof(v), "max");
	else
		snprintf(v, sizeof(v), "%llu", (unsigned long long)limit_bytes);
	return cg_write(path, "memory.max", v);
}

int cg_create(const char *path)
{
	return mkdir(path, 0755) < 0 ? -errno : 0;
}

int cg_move(const char *path, pid_t pid)
{
	char v[24];

	snprintf(v, sizeof(v), "%d", pid ? (int)pid : (int)getpid());
	return cg_write(path, "cgroup.procs", v);
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	nanosleep(&ts, NULL);
}

/* SIGKILL everything in path (not below it); true when it is empty. */
static bool kill_procs(const char *path)
{
	char *file = xasprintf("%s/cgroup.procs", path);
	char *text = NULL, *save = NULL;
	size_t len;
	bool empty = true;

	if (read_file(&text, &len, file, 1 << 20) == 0) {
		for (char *w = strtok_r(text, "\n", &save); w; w = strtok_r(NULL, "\n", &save)) {
			pid_t pid = (pid_t)atoi(w);
			if (pid > 0 && pid != getpid()) {
				kill(pid, SIGKILL);
				empty = false;
			}
		}
	}
	free(text);
	free(file);
	return empty;
}

int cg_remove_tree(const char *path, double timeout_s)
{
	DIR *d = opendir(path);
	struct dirent *de;
	double deadline;
	int ret = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		char *sub;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		sub = xasprintf("%s/%s", path, de->d_name);
		if (stat(sub, &st) == 0 && S_ISDIR(st.st_mode)) {
			int r = cg_remove_tree(sub, timeout_s);
			if (r < 0 && !ret)
				ret = r;
		}
		free(sub);
	}
	closedir(d);
	cg_write(path, "cgroup.kill", "1");   /* 5.14+; ENOENT before */
	deadline = clock_mono_s() + timeout_s;
	for (;;) {
		bool empty = kill_procs(path);

		if (rmdir(path) == 0 || errno == ENOENT)
			return ret;
		if (clock_mono_s() > deadline) {
			int err = -errno;
			log_warn("cannot remove cgroup '%s': %s%s", path, strerror(errno),
				 empty ? "" : " (processes would not die)");
			return ret ? ret : err;
		}
		sleep_s(0.05);
	}
}
