/* bpftrace.c - a bpftrace program run beside a workload, its maps stored
 * as probe counts (see bpftrace.h). */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOG_MODULE "bpftrace"
#include "bpftrace.h"
#include "error.h"
#include "log.h"
#include "record.h"
#include "util.h"
#include "workload.h"

struct bt {
	struct proc *p;      /* bpftrace; NULL once it has been waited for */
	char dir[32];        /* /tmp/kcbt.XXXXXX: out.json, err.txt */
};

static void emit_map(json_t *data, bt_entry_fn *emit, void *ud, int *n)
{
	const char *map, *key;
	json_t *v, *e;

	json_object_foreach(data, map, v) {
		char *name = xasprintf("bpftrace:%s", map[0] == '@' ? map + 1 : map);

		if (json_is_integer(v)) {
			emit(ud, name, "", json_integer_value(v));
			(*n)++;
		} else if (json_is_object(v)) {
			json_object_foreach(v, key, e) {
				if (!json_is_integer(e))
					continue;
				emit(ud, name, key, json_integer_value(e));
				(*n)++;
			}
		} else if (json_is_array(v)) {         /* hist, lhist: buckets */
			size_t i;

			json_array_foreach(v, i, e) {
				json_t *lo = json_object_get(e, "min"), *hi = json_object_get(e, "max");
				json_t *c = json_object_get(e, "count");
				char k[64];

				if (!json_is_integer(c))
					continue;
				snprintf(k, sizeof(k), "%" JSON_INTEGER_FORMAT "-%" JSON_INTEGER_FORMAT,
					 json_integer_value(lo), json_integer_value(hi));
				emit(ud, name, k, json_integer_value(c));
				(*n)++;
			}
		}
		free(name);
	}
}

int bt_parse(const char *text, bt_entry_fn *emit, void *ud)
{
	const char *p = text;
	int n = 0;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		json_t *o = len ? json_loadb(p, len, 0, NULL) : NULL;
		const char *type = json_string_value(json_object_get(o, "type"));

		if (type && (!strcmp(type, "map") || !strcmp(type, "hist") || !strcmp(type, "lhist")))
			emit_map(json_object_get(o, "data"), emit, ud, &n);
		json_decref(o);
		p = nl ? nl + 1 : NULL;
	}
	return n;
}

static char *path_in(const struct bt *b, const char *name)
{
	return xasprintf("%s/%s", b->dir, name);
}

/* The last non-empty line of bpftrace's stderr, for a message. */
static void last_err_line(const struct bt *b, char *out, size_t size)
{
	char *p = path_in(b, "err.txt"), *text = NULL, *line, *save = NULL, *last = NULL;

	out[0] = '\0';
	if (read_file(&text, NULL, p, 1 << 20) == 0)
		for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			if (!strstr(line, "RLIMIT_MEMLOCK"))   /* its harmless warning */
				last = line;
	if (last)
		snprintf(out, size, "%s", last);
	free(text);
	free(p);
}

static void bt_free(struct bt *b)
{
	int r;

	if (!b)
		return;
	if ((r = wl_remove_flat(b->dir)) < 0)
		log_warn("cannot remove %s: %s", b->dir, strerror(-r));
	free(b);
}

int bt_start(struct bt **out, const char *program, double attach_timeout_s,
	     struct buf *err)
{
	struct bt *b = xcalloc(1, sizeof(*b));
	char *outp, *errp;
	double start = clock_mono_s();

	snprintf(b->dir, sizeof(b->dir), "/tmp/kcbt.XXXXXX");
	if (!mkdtemp(b->dir)) {
		int e = errno;
		int r = err_setf(err, -e, "cannot create %s for bpftrace: %s", b->dir, strerror(e));

		free(b);
		return r;
	}
	outp = path_in(b, "out.json");
	errp = path_in(b, "err.txt");
	{
		const char *argv[] = { "bpftrace", "-f", "json", "-o", outp, "-e", program, NULL };
		struct proc_spec spec = {
			.argv = argv, .in = PROC_INHERIT, .out = PROC_INHERIT,
			.err = PROC_FILE, .err_path = errp,
		};
		const struct wl_child wc = { .cg = NULL, .death_sig = 0, .own_group = false };
		int r = wl_start(&b->p, &spec, &wc, err);

		free(errp);
		if (r < 0) {
			if (r == -ENOENT || r == -EACCES)
				buf_printf(err, " (install it: --rootfs debian:bpftrace)");
			free(outp);
			bt_free(b);
			return r;
		}
	}
	for (;;) {
		char *text = NULL;
		bool attached = read_file(&text, NULL, outp, 1 << 20) == 0 &&
				strstr(text, "\"attached_probes\"");

		free(text);
		if (attached)
			break;
		if (proc_done(b->p, NULL)) {
			char line[256];

			last_err_line(b, line, sizeof(line));
			proc_wait(b->p, NULL);
			free(outp);
			bt_free(b);
			return err_setf(err, -EIO, "bpftrace exited before attaching its probes: %s",
					line[0] ? line : "no message");
		}
		if (clock_mono_s() - start > attach_timeout_s) {
			kill(proc_pid(b->p), SIGKILL);
			proc_wait(b->p, NULL);
			free(outp);
			bt_free(b);
			return err_setf(err, -ETIMEDOUT,
					"bpftrace did not attach its probes within %.0f s",
					attach_timeout_s);
		}
		nanosleep(&(struct timespec){ 0, 100000000L }, NULL);
	}
	free(outp);
	log_info("bpftrace attached after %.1f s", clock_mono_s() - start);
	*out = b;
	return 0;
}

struct probe_emit {
	struct rec_out *rec;
	double t;
};

static void on_entry(void *ud, const char *name, const char *key, int64_t value)
{
	struct probe_emit *e = ud;

	rec_probe(e->rec, e->t, name, key, value);
}

/* How long bt_stop() waits for bpftrace to exit after SIGINT, in seconds. */
#define BT_STOP_S 120

int bt_stop(struct bt *b, struct rec_out *rec, double t, struct buf *err)
{
	struct probe_emit e = { rec, t };
	char *outp, *text = NULL;
	double start = clock_mono_s();
	struct proc_outcome o;
	int n;

	if (!b)
		return 0;
	kill(proc_pid(b->p), SIGINT);
	while (!proc_done(b->p, NULL)) {
		/* bpftrace detaches its probes and prints its maps on SIGINT;
		 * under TCG that once took over 60 s (t_guest_rootfs: the map
		 * lost, the run 58 s longer), so it gets BT_STOP_S */
		if (clock_mono_s() - start > BT_STOP_S) {
			log_warn("bpftrace did not exit within %d s of SIGINT: killed, its maps are lost",
				 BT_STOP_S);
			kill(proc_pid(b->p), SIGKILL);
			break;
		}
		nanosleep(&(struct timespec){ 0, 50000000L }, NULL);
	}
	proc_wait(b->p, &o);
	outp = path_in(b, "out.json");
	if (read_file(&text, NULL, outp, 64 << 20)) {
		n = err_setf(err, -EIO, "bpftrace left no output in %s", outp);
	} else {
		n = bt_parse(text, on_entry, &e);
	}
	if (n >= 0 && o.status > 0) {
		char line[256];

		last_err_line(b, line, sizeof(line));
		log_warn("bpftrace exited with status %d: %s", o.status, line);
	}
	free(text);
	free(outp);
	bt_free(b);
	return n;
}
