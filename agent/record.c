/* record.c - see record.h: the agent's newline-delimited JSON record stream. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_MODULE "record"
#include "log.h"
#include "error.h"
#include "json_num.h"
#include "record.h"
#include "util.h"

struct rec_out {
	int fd;
	int owned;
	rec_sink_fn *sink;   /* instead of fd, when set */
	void *sink_ud;
};

struct rec_out *rec_open_sink(rec_sink_fn *fn, void *ud)
{
	struct rec_out *r = rec_open_fd(-1);

	r->sink = fn;
	r->sink_ud = ud;
	return r;
}

int rec_find_port(char **out, const char *sysfs_root, const char *name)
{
	DIR *d = opendir(sysfs_root);
	struct dirent *de;
	int ret = -ENOENT;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *path, *text = NULL;
		size_t len = 0;

		if (de->d_name[0] == '.')
			continue;
		path = xasprintf("%s/%s/name", sysfs_root, de->d_name);
		if (read_file(&text, &len, path, 4096) == 0) {
			while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
				text[--len] = '\0';
			if (!strcmp(text, name)) {
				*out = xasprintf("/dev/%s", de->d_name);
				ret = 0;
			}
		}
		free(text);
		free(path);
		if (ret == 0)
			break;
	}
	closedir(d);
	return ret;
}

struct rec_out *rec_open_fd(int fd)
{
	struct rec_out *r = xcalloc(1, sizeof(*r));

	r->fd = fd;
	r->owned = 0;
	return r;
}

int rec_open(struct rec_out **out, const char *spec, struct buf *err)
{
	char *path = NULL;
	struct stat st;
	int fd = -1, ret = 0;

	if (!spec || !strcmp(spec, "-")) {
		*out = rec_open_fd(STDOUT_FILENO);
		return 0;
	}
	if (!strncmp(spec, "port:", 5)) {
		ret = rec_find_port(&path, "/sys/class/virtio-ports", spec + 5);
		if (ret < 0) {
			err_setf(err, ret, "cannot find virtio-serial port '%s' under /sys/class/virtio-ports: %s (is the channel in the domain XML and virtio_console loaded?)",
				 spec + 5, strerror(-ret));
			goto out;
		}
	} else {
		path = xstrdup(spec);
	}
	if (stat(path, &st) == 0 && S_ISCHR(st.st_mode))
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	else
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = err_setf(err, -errno, "cannot open output '%s': %s", path, strerror(errno));
		goto out;
	}
	*out = rec_open_fd(fd);
	(*out)->owned = 1;
out:
	free(path);
	return ret;
}

void rec_close(struct rec_out *r)
{
	if (!r)
		return;
	if (r->owned && r->fd >= 0)
		close(r->fd);
	free(r);
}

int rec_emit(struct rec_out *r, json_t *obj)
{
	/* every real with the digits that read back as the same double (15 to
	 * 17, json_num.h): "0.1" stays "0.1", 2435016766 stays itself (9
	 * digits made it 2.43501677e9) */
	char *s = json_dumps_exact(obj, JSON_PRESERVE_ORDER | JSON_COMPACT);
	size_t len;
	int ret;

	json_decref(obj);
	if (!s)
		return -EIO;
	len = strlen(s);
	if (r->sink) {
		ret = r->sink(r->sink_ud, s, len);
		free(s);
		return ret;
	}
	s = realloc(s, len + 2);
	if (!s)
		return -ENOMEM;
	s[len] = '\n';
	s[len + 1] = '\0';
	ret = write_all(r->fd, s, len + 1);
	free(s);
	if (ret < 0)
		log_err("cannot write a record: %s", strerror(-ret));
	return ret;
}

double rec_ms(double s)
{
	return round(s * 1000.0) / 1000.0;
}

int rec_phase(struct rec_out *r, double t, const char *name)
{
	return rec_emit(r, json_pack("{s:s, s:f, s:s}", "type", "phase",
				     "t", rec_ms(t), "name", name));
}

int rec_sample(struct rec_out *r, double t, const char *metric, double value)
{
	return rec_emit(r, json_pack("{s:s, s:f, s:s, s:f}", "type", "sample",
				     "t", rec_ms(t), "metric", metric, "value", value));
}

int rec_probe(struct rec_out *r, double t, const char *name, const char *key, int64_t count)
{
	return rec_emit(r, json_pack("{s:s, s:f, s:s, s:s, s:I}", "type", "probe",
				     "t", rec_ms(t), "name", name, "key", key,
				     "count", (json_int_t)count));
}

int rec_metric(struct rec_out *r, const char *name, const char *unit, const char *better)
{
	json_t *o = json_pack("{s:s, s:s}", "type", "metric", "name", name);

	if (unit && *unit)
		json_object_set_new(o, "unit", json_string(unit));
	if (better)
		json_object_set_new(o, "better", json_string(better));
	return rec_emit(r, o);
}

int rec_done(struct rec_out *r)
{
	return rec_emit(r, json_pack("{s:s, s:s}", "type", "done", "status", "ok"));
}

int rec_error(struct rec_out *r, const char *message)
{
	return rec_emit(r, json_pack("{s:s, s:s}", "type", "error", "message", message));
}
