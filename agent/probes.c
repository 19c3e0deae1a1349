/* probes.c - loader for probes.bpf.c (see probes.h): open the generated
 * skeleton, skip the attach points this kernel lacks, attach the rest and
 * read their counters. Built as a stub returning -ENOTSUP when the build
 * had no kernel BTF to generate vmlinux.h from (KC_NO_PROBES). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_MODULE "probes"
#include "error.h"
#include "log.h"
#include "probes.h"
#include "record.h"
#include "util.h"

const char probes_all_names[] = "cgroup_writeback_by_id,balance_dirty_pages,flush_foreign,inode_switch_wbs";

uint64_t probe_snap_ret(const struct probe_snap *s, int v)
{
	for (int i = 0; i < s->nret; i++)
		if (s->ret_value[i] == v)
			return s->ret_count[i];
	return 0;
}

#ifdef KC_NO_PROBES

int probes_open(struct probes **out, struct buf *missing, struct buf *err)
{
	(void)out;
	buf_reset(missing);
	buf_puts(missing, probes_all_names);
	return err_setf(err, -ENOTSUP, "kcanary-agent was built without BPF probes (no kernel BTF, clang or bpftool at build time)");
}

void probes_close(struct probes *p)
{
	(void)p;
}

int probes_snap(struct probes *p, struct probe_snap *out)
{
	(void)p;
	(void)out;
	return -ENOTSUP;
}

int probes_emit(struct probes *p, struct rec_out *r, double t)
{
	(void)p;
	(void)r;
	(void)t;
	return 0;
}

#else

#include <sys/mount.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "probes.skel.h"

struct probes {
	struct probes_bpf *skel;
	struct bpf_link *links[4];
};

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char msg[1024];
	size_t len;

	if (level == LIBBPF_DEBUG && log_level < LOG_DEBUG)
		return 0;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	len = strlen(msg);
	while (len && msg[len - 1] == '\n')
		msg[--len] = '\0';
	if (level == LIBBPF_WARN)
		log_info("libbpf: %s", msg);   /* the caller reports what is missing */
	else
		log_debug("libbpf: %s", msg);
	return 0;
}

/* tracefs where libbpf looks for tracepoint ids; mounted if absent (a
 * guest's /init may not have done it). */
static const char *tracefs_dir(void)
{
	if (access("/sys/kernel/tracing/events", F_OK) == 0)
		return "/sys/kernel/tracing";
	if (access("/sys/kernel/debug/tracing/events", F_OK) == 0)
		return "/sys/kernel/debug/tracing";
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0)
		return "/sys/kernel/tracing";
	return NULL;
}

static bool have_tracepoint(const char *tracefs, const char *name)
{
	char *p;
	bool ok;

	if (!tracefs)
		return false;
	p = xasprintf("%s/events/writeback/%s/id", tracefs, name);
	ok = access(p, R_OK) == 0;
	free(p);
	return ok;
}

static void add_missing(struct buf *missing, const char *name)
{
	buf_printf(missing, "%s%s", missing->len ? "," : "", name);
}

void probes_close(struct probes *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < sizeof(p->links) / sizeof(p->links[0]); i++)
		bpf_link__destroy(p->links[i]);
	probes_bpf__destroy(p->skel);
	free(p);
}

int probes_open(struct probes **out, struct buf *missing, struct buf *err)
{
	struct probes *p = xcalloc(1, sizeof(*p));
	const char *tracefs;
	struct {
		const char *name;
		struct bpf_program *prog;
		bool is_tp;
		bool ok;
	} want[4];
	int n_ok = 0, r;

	buf_reset(missing);
	libbpf_set_print(libbpf_log);
	p->skel = probes_bpf__open();
	if (!p->skel) {
		r = errno ? -errno : -EIO;
		buf_puts(missing, probes_all_names);
		err_setf(err, r, "cannot open the BPF object: %s", strerror(-r));
		goto fail;
	}
	want[0].name = "cgroup_writeback_by_id";
	want[0].prog = p->skel->progs.wb_by_id_exit;
	want[0].is_tp = false;
	want[1].name = "balance_dirty_pages";
	want[1].prog = p->skel->progs.bdp;
	want[2].name = "flush_foreign";
	want[2].prog = p->skel->progs.flush_foreign;
	want[3].name = "inode_switch_wbs";
	want[3].prog = p->skel->progs.inode_switch_wbs;
	want[1].is_tp = want[2].is_tp = want[3].is_tp = true;

	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		buf_puts(missing, probes_all_names);
		r = err_setf(err, -ENOENT, "no kernel BTF (/sys/kernel/btf/vmlinux; CONFIG_DEBUG_INFO_BTF=y is needed for CO-RE)");
		goto fail;
	}
	tracefs = tracefs_dir();
	for (int i = 0; i < 4; i++) {
		/* a kprobe program loads whatever the kernel has: a missing
		 * function shows up at attach time, without parsing the
		 * kernel's BTF a second time here (that took ~0.3 s under TCG) */
		want[i].ok = !want[i].is_tp || have_tracepoint(tracefs, want[i].name);
		if (!want[i].ok) {
			bpf_program__set_autoload(want[i].prog, false);
			add_missing(missing, want[i].name);
			if (want[i].is_tp)
				err_setf(err, -ENOENT, "no tracepoint writeback:%s (is tracefs available?)",
					 want[i].name);
			else
				err_setf(err, -ENOENT, "cannot probe %s", want[i].name);
		}
	}
	r = probes_bpf__load(p->skel);
	if (r) {
		buf_reset(missing);
		buf_puts(missing, probes_all_names);
		r = err_setf(err, r < 0 ? r : -EIO, "cannot load the BPF programs: %s", strerror(-r));
		goto fail;
	}
	for (int i = 0; i < 4; i++) {
		if (!want[i].ok)
			continue;
		p->links[i] = bpf_program__attach(want[i].prog);
		if (!p->links[i]) {
			int e = errno ? -errno : -EIO;

			add_missing(missing, want[i].name);
			err_setf(err, e, "cannot attach %s: %s", want[i].name, strerror(-e));
			continue;
		}
		n_ok++;
	}
	if (!n_ok) {
		r = -ENOENT;
		goto fail;
	}
	*out = p;
	return 0;
fail:
	probes_close(p);
	return r;
}

int probes_snap(struct probes *p, struct probe_snap *out)
{
	int fd = bpf_map__fd(p->skel->maps.wb_by_id_ret);
	int key, next, *prev = NULL;

	memset(out, 0, sizeof(*out));
	for (uint32_t i = 0; i < PC_NR; i++) {
		uint64_t v = 0;
		if (bpf_map__lookup_elem(p->skel->maps.counters, &i, sizeof(i), &v, sizeof(v), 0) == 0)
			out->counters[i] = v;
	}
	while (bpf_map_get_next_key(fd, prev, &next) == 0 && out->nret < PROBES_MAX_RET) {
		uint64_t count;
		int i;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &count))
			continue;
		/* insertion sort by value: a stable order in records */
		for (i = out->nret; i > 0 && out->ret_value[i - 1] > key; i--) {
			out->ret_value[i] = out->ret_value[i - 1];
			out->ret_count[i] = out->ret_count[i - 1];
		}
		out->ret_value[i] = key;
		out->ret_count[i] = count;
		out->nret++;
	}
	return 0;
}

int probes_emit(struct probes *p, struct rec_out *r, double t)
{
	/* counts and sums only: the probes table sums them across runs, so
	 * the largest pause (a maximum) goes to the summary's metrics */
	static const struct { int idx; const char *name, *key; } ctr[] = {
		{ PC_BDP_EVENTS, "balance_dirty_pages", "events" },
		{ PC_BDP_PAUSES, "balance_dirty_pages", "pauses" },
		{ PC_BDP_PAUSE_MS_TOTAL, "balance_dirty_pages", "pause_ms_total" },
		{ PC_FLUSH_FOREIGN, "flush_foreign", "count" },
		{ PC_INODE_SWITCH_WBS, "inode_switch_wbs", "count" },
	};
	struct probe_snap s;
	int ret;

	if (!p)
		return 0;
	ret = probes_snap(p, &s);
	if (ret < 0)
		return ret;
	for (int i = 0; i < s.nret; i++) {
		char key[16];

		snprintf(key, sizeof(key), "%d", s.ret_value[i]);
		ret = rec_probe(r, t, "cgroup_writeback_by_id", key, (int64_t)s.ret_count[i]);
		if (ret < 0)
			return ret;
	}
	for (size_t i = 0; i < sizeof(ctr) / sizeof(ctr[0]); i++) {
		ret = rec_probe(r, t, ctr[i].name, ctr[i].key, (int64_t)s.counters[ctr[i].idx]);
		if (ret < 0)
			return ret;
	}
	return 0;
}

#endif
