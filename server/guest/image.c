/* image.c - build and cache the guest initramfs; compose the kernel command
 * line that carries a run's settings to /init (see image.h). */
#define LOG_MODULE "image"
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "error.h"
#include "guest/image.h"
#include "guest/ldd.h"
#include "hash.h"
#include "log.h"
#include "proc.h"
#include "util.h"

/* Bump when the image layout changes, so old cached images are not used. */
#define IMAGE_FORMAT 2

const char *const image_filesystems[] = { "ext4", "xfs", "btrfs", NULL };

/* crc32c-intel: libcrc32c asks for "crc32c" through the crypto API (a soft
 * dependency, not in modules.dep); without it the generic C version runs. */
const char *const image_wanted_modules[] = {
	"*:virtio_pci", "*:virtio_console", "*:virtio_blk",
	"ext4:crc32c_intel", "ext4:ext4",
	"xfs:crc32c_intel", "xfs:xfs",
	"btrfs:crc32c_intel", "btrfs:btrfs",
	"rootfs:squashfs", "rootfs:overlay",   /* --rootfs (rootfs.h): loaded only then */
	NULL,
};

static const char *const mkfs_tools[] = { "mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", NULL };


char *image_default_agent(void)
{
	const char *env = getenv("KCANARY_AGENT");
	char self[4096];
	ssize_t n;

	if (env && *env)
		return xstrdup(env);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return xstrdup("kcanary-agent");
	self[n] = '\0';
	*(strrchr(self, '/') + 1) = '\0';
	return xasprintf("%skcanary-agent", self);
}

/* ---- kernel release from the bzImage header ---- */

int image_kernel_release(char *out, size_t size, const char *path,
			 struct buf *err)
{
	unsigned char hdr[0x240];
	char ver[128];
	ssize_t n;
	int fd, r = 0;
	unsigned off;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_setf(err, -errno, "cannot open kernel image '%s': %s",
			    path, strerror(errno));
	n = pread(fd, hdr, sizeof(hdr), 0);
	if (n < (ssize_t)sizeof(hdr) || memcmp(hdr + 0x202, "HdrS", 4)) {
		r = err_setf(err, -EINVAL,
			 "kernel image '%s' is not a bzImage: no 'HdrS' setup header at offset 0x202",
			 path);
		goto out;
	}
	off = (unsigned)(hdr[0x20e] | hdr[0x20f] << 8);
	n = off ? pread(fd, ver, sizeof(ver) - 1, off + 0x200) : 0;
	off += 0x200;
	if (n <= 0) {
		r = err_setf(err, -EINVAL,
			 "kernel image '%s' is truncated: no version string at offset 0x%x",
			 path, off);
		goto out;
	}
	ver[n] = '\0';
	ver[strcspn(ver, " ")] = '\0';
	if (!ver[0]) {
		r = err_setf(err, -EINVAL,
			 "kernel image '%s' has an empty version string at offset 0x%x",
			 path, off);
		goto out;
	}
	snprintf(out, size, "%s", ver);
out:
	close(fd);
	return r;
}

/* ---- command line ---- */

static bool safe_byte(unsigned char c, bool list_item)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	if (c == ',' && !list_item)
		return true;
	return strchr("._:/+=@^-", c) && c;
}

static void encode(struct buf *b, const char *s, bool list_item)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (safe_byte(*p, list_item))
			buf_append(b, p, 1);
		else
			buf_printf(b, "%%%02X", *p);
	}
}

/* " kc.NAME=K=V,K=V": each key and value encoded as one list item, so the
 * bytes are those of the joined "K=V" ('=' is a safe byte). */
static int add_list(struct buf *b, const char *name, const struct knob *items, size_t n,
		    struct buf *err)
{
	if (!n)
		return 0;
	buf_printf(b, " kc.%s=", name);
	for (size_t i = 0; i < n; i++) {
		const struct knob *k = &items[i];

		if (!k->key || !*k->key || !k->value)
			return err_setf(err, -EINVAL, "%s setting '%s%s%s' is not key=value", name,
					k->key ? k->key : "", k->value ? "=" : "",
					k->value ? k->value : "");
		if (i)
			buf_puts(b, ",");
		encode(b, k->key, true);
		buf_puts(b, "=");
		encode(b, k->value, true);
	}
	return 0;
}

int image_cmdline(char **out, const struct guest_settings *s,
		  struct buf *err)
{
	static const struct run_params none;
	const struct run_params *p = s->run ? s->run : &none;
	struct buf b = BUF_INIT;
	const char *fs = s->fs ? s->fs : "ext4";
	bool known = false;
	int r;

	for (size_t i = 0; image_filesystems[i]; i++)
		known |= !strcmp(fs, image_filesystems[i]);
	if (!known)
		return err_setf(err, -EINVAL,
			    "unknown filesystem '%s': expected ext4, xfs or btrfs", fs);
	/* panic=-1: reboot at once on a panic, which the domain turns into
	 * a stop (on_reboot=destroy); the console keeps the panic text.
	 * loglevel=5: the console gets warnings and worse (a WARN splat, a
	 * hung task, a panic) but not the boot's info lines, which under TCG
	 * cost boot time on the emulated UART (docs/guests.md, "Where a run's time
	 * goes"); --append loglevel=7 brings them back (a later one wins). */
	buf_puts(&b, "console=ttyS0 loglevel=5 panic=-1 rdinit=/init");
	buf_printf(&b, " kc.fs=%s", fs);
	if (p->mkfs_opts && *p->mkfs_opts) {
		buf_puts(&b, " kc.mkfs=");
		encode(&b, p->mkfs_opts, false);
	}
	if (p->mount_opts && *p->mount_opts) {
		buf_puts(&b, " kc.mnt=");
		encode(&b, p->mount_opts, false);
	}
	if ((r = add_list(&b, "sysctl", p->sysctls, p->nsysctls, err)))
		goto out;
	buf_puts(&b, " kc.workload=");
	encode(&b, p->workload ? p->workload : RUN_PARAMS_DEFAULT_WORKLOAD, false);
	if ((r = add_list(&b, "knobs", p->knobs, p->nknobs, err)))
		goto out;
	buf_puts(&b, " kc.port=");
	encode(&b, s->port ? s->port : "kcanary", false);
	if (s->rootfs_host)
		buf_puts(&b, " kc.rootfs=host");
	else if (s->rootfs)
		buf_puts(&b, " kc.rootfs=vdb");
	if (s->extra && *s->extra)
		buf_printf(&b, " %s", s->extra);
	if (b.len >= IMAGE_CMDLINE_MAX) {
		r = err_setf(err, -E2BIG,
			 "kernel command line is %zu bytes, longer than the kernel's %d: fewer or shorter knobs",
			 b.len, IMAGE_CMDLINE_MAX - 1);
		goto out;
	}
	*out = buf_detach(&b);
	return 0;
out:
	buf_release(&b);
	return r;
}

/* ---- modules ---- */

struct mod {
	char *path;     /* as in modules.dep, relative to modules_dir */
	char *name;     /* base name without .ko*, '-' as '_' */
	char **deps;    /* indexes into the table, as names */
	size_t ndeps;
};

static char *mod_name(const char *path)
{
	const char *base = strrchr(path, '/');
	char *name = xstrdup(base ? base + 1 : path);
	char *ko = strstr(name, ".ko");

	if (ko)
		*ko = '\0';
	for (char *p = name; *p; p++)
		if (*p == '-')
			*p = '_';
	return name;
}

static void mods_free(struct mod *mods, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(mods[i].path);
		free(mods[i].name);
		for (size_t j = 0; j < mods[i].ndeps; j++)
			free(mods[i].deps[j]);
		free(mods[i].deps);
	}
	free(mods);
}

static int mods_parse(struct mod **out, size_t *out_n, const char *dep_path,
		      struct buf *err)
{
	char *text = NULL, *save = NULL, *line;
	struct mod *mods = NULL;
	size_t n = 0, cap = 0, line_no = 0;
	int r;

	if ((r = read_file(&text, NULL, dep_path, 64 << 20)))
		return err_setf(err, r, "cannot read '%s': %s", dep_path, strerror(-r));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':'), *tok, *s2 = NULL;
		struct mod *m;

		line_no++;
		if (!colon) {
			r = err_setf(err, -EINVAL,
				 "%s:%zu: expected 'path: deps...', got '%.60s'",
				 dep_path, line_no, line);
			goto out;
		}
		*colon = '\0';
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			mods = xrealloc(mods, cap * sizeof(*mods));
		}
		m = &mods[n++];
		memset(m, 0, sizeof(*m));
		m->path = xstrdup(line);
		m->name = mod_name(line);
		for (tok = strtok_r(colon + 1, " \t", &s2); tok; tok = strtok_r(NULL, " \t", &s2)) {
			m->deps = xrealloc(m->deps, (m->ndeps + 1) * sizeof(*m->deps));
			m->deps[m->ndeps++] = mod_name(tok);
		}
	}
	*out = mods;
	*out_n = n;
	mods = NULL;
	r = 0;
out:
	if (mods)
		mods_free(mods, n);
	free(text);
	return r;
}

static struct mod *mods_find(struct mod *mods, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(mods[i].name, name))
			return &mods[i];
	return NULL;
}

struct order {
	struct buf text;
	char **sources;
	size_t nsources;
	const char *modules_dir;
	char **done;        /* "tag:name" already emitted */
	size_t ndone;
};

static bool order_has(struct order *o, const char *tag, const char *name)
{
	size_t tl = strlen(tag);

	for (size_t i = 0; i < o->ndone; i++)
		if (!strncmp(o->done[i], tag, tl) && o->done[i][tl] == ':' &&
		    !strcmp(o->done[i] + tl + 1, name))
			return true;
	return false;
}

static void order_visit(struct order *o, struct mod *mods, size_t n,
			const char *tag, struct mod *m, int depth)
{
	const char *base;
	char *file, *ko;

	if (depth > 64 || order_has(o, tag, m->name) ||
	    (strcmp(tag, "*") && order_has(o, "*", m->name)))
		return;
	o->done = xrealloc(o->done, (o->ndone + 1) * sizeof(*o->done));
	o->done[o->ndone++] = xasprintf("%s:%s", tag, m->name);
	for (size_t i = 0; i < m->ndeps; i++) {
		struct mod *d = mods_find(mods, n, m->deps[i]);
		if (d)
			order_visit(o, mods, n, tag, d, depth + 1);
	}
	base = strrchr(m->path, '/');
	file = xstrdup(base ? base + 1 : m->path);
	ko = strstr(file, ".ko");
	if (ko)
		ko[3] = '\0';
	buf_printf(&o->text, "%s %s\n", tag, file);
	free(file);
	o->sources = xrealloc(o->sources, (o->nsources + 2) * sizeof(*o->sources));
	o->sources[o->nsources++] = xasprintf("%s/%s", o->modules_dir, m->path);
	o->sources[o->nsources] = NULL;
}

int image_module_order(char **out, char ***sources, const char *modules_dir,
		       const char *const *wanted, struct buf *err)
{
	struct order o = { .text = BUF_INIT, .modules_dir = modules_dir };
	struct mod *mods = NULL;
	size_t n = 0;
	char *dep_path = xasprintf("%s/modules.dep", modules_dir);
	int r;

	if ((r = mods_parse(&mods, &n, dep_path, err)))
		goto out;
	for (size_t i = 0; wanted[i]; i++) {
		const char *colon = strchr(wanted[i], ':');
		char *tag, *name;
		struct mod *m;

		if (!colon) {
			r = err_setf(err, -EINVAL, "wanted module '%s' is not TAG:module",
				 wanted[i]);
			goto out;
		}
		tag = xstrndup(wanted[i], (size_t)(colon - wanted[i]));
		name = mod_name(colon + 1);
		m = mods_find(mods, n, name);
		if (m)
			order_visit(&o, mods, n, tag, m, 0);
		else
			log_debug("module '%s' is not in %s: built in or absent", name, dep_path);
		free(tag);
		free(name);
	}
	*out = buf_detach(&o.text);
	if (sources) {
		if (!o.sources)
			o.sources = xcalloc(1, sizeof(*o.sources));
		*sources = o.sources;
		o.sources = NULL;
	}
	r = 0;
out:
	buf_release(&o.text);
	for (size_t i = 0; o.sources && o.sources[i]; i++)
		free(o.sources[i]);
	free(o.sources);
	for (size_t i = 0; i < o.ndone; i++)
		free(o.done[i]);
	free(o.done);
	if (mods)
		mods_free(mods, n);
	free(dep_path);
	return r;
}

/* ---- the image's file list ---- */

enum entry_kind { ENTRY_COPY, ENTRY_TEXT, ENTRY_MODULE };

struct entry {
	enum entry_kind kind;
	char *dst;           /* path inside the image, no leading slash */
	char *src;           /* host path (COPY, MODULE) */
	char *text;          /* contents (TEXT) */
	unsigned mode;
};

struct entries {
	struct entry *v;
	size_t n;
};

static void entries_add(struct entries *e, enum entry_kind kind, const char *dst,
			const char *src, const char *text, unsigned mode)
{
	struct entry *x;

	while (*dst == '/')
		dst++;
	for (size_t i = 0; i < e->n; i++)
		if (!strcmp(e->v[i].dst, dst))
			return;
	e->v = xrealloc(e->v, (e->n + 1) * sizeof(*e->v));
	x = &e->v[e->n++];
	x->kind = kind;
	x->dst = xstrdup(dst);
	x->src = src ? xstrdup(src) : NULL;
	x->text = text ? xstrdup(text) : NULL;
	x->mode = mode;
}

static void entries_free(struct entries *e)
{
	for (size_t i = 0; i < e->n; i++) {
		free(e->v[i].dst);
		free(e->v[i].src);
		free(e->v[i].text);
	}
	free(e->v);
}

/* Find an executable by name in the usual sbin/bin directories. */
static char *find_tool(const char *name)
{
	static const char *const dirs[] = { "/usr/sbin", "/sbin", "/usr/bin", "/bin", NULL };

	for (size_t i = 0; dirs[i]; i++) {
		char *p = xasprintf("%s/%s", dirs[i], name);
		if (access(p, X_OK) == 0)
			return p;
		free(p);
	}
	return NULL;
}

/* Add the shared libraries `ldd` lists for bin (nothing for static ones). */
static int add_ldd_closure(struct entries *e, const char *bin, struct buf *err)
{
	const char *argv[] = { "ldd", bin, NULL };
	struct buf out = BUF_INIT;
	struct proc_spec s = { .argv = argv, .out = PROC_CAPTURE, .out_buf = &out,
			       .err = PROC_STDOUT };
	char **paths = NULL;
	int r;

	/* ldd exits 1 for a static binary ("not a dynamic executable"): its
	 * status says nothing here */
	if ((r = proc_run(NULL, &s, err))) {
		err_setf(err, r, "cannot run ldd: %s", strerror(-r));
		goto out;
	}
	ldd_paths(out.ptr, &paths);
	for (size_t i = 0; paths[i]; i++)
		entries_add(e, ENTRY_COPY, paths[i], paths[i], NULL, 0755);
out:
	free(paths);
	buf_release(&out);
	return r;
}

static int add_binary(struct entries *e, const char *src, const char *dst,
		      struct buf *err)
{
	if (access(src, X_OK))
		return err_setf(err, -ENOENT, "cannot use '%s' in the guest image: %s",
			    src, strerror(errno));
	entries_add(e, ENTRY_COPY, dst, src, NULL, 0755);
	return add_ldd_closure(e, src, err);
}

/* The modules of image_wanted_modules that spec's image loads: all of them
 * without spec->fs, else those tagged "*", spec->fs and (spec->rootfs)
 * "rootfs". A NULL-ended array of borrowed strings; caller frees the array. */
static const char **wanted_for(const struct image_spec *spec)
{
	size_t n = 0, k = 0;
	const char **v;

	while (image_wanted_modules[n])
		n++;
	v = xcalloc(n + 1, sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		const char *w = image_wanted_modules[i];
		size_t tl = strcspn(w, ":");

		if (!spec->fs || !strncmp(w, "*:", 2) ||
		    (strlen(spec->fs) == tl && !strncmp(w, spec->fs, tl)) ||
		    (spec->rootfs && !strncmp(w, "rootfs:", 7)))
			v[k++] = w;
	}
	return v;
}

/* The mkfs tool of fs, or every one without fs (NULL-ended, borrowed). */
static void tools_for(const char *tools[4], const char *fs)
{
	size_t k = 0;

	for (size_t i = 0; mkfs_tools[i]; i++)
		if (!fs || !strcmp(mkfs_tools[i] + strlen("mkfs."), fs))
			tools[k++] = mkfs_tools[i];
	tools[k] = NULL;
}

static int collect(struct entries *e, const struct image_spec *spec,
		   struct buf *err)
{
	const char *tools[4], **wanted = NULL;
	const char *busybox = spec->busybox_path ? spec->busybox_path : "/bin/busybox";
	char *init = NULL, *order = NULL, **sources = NULL;
	int r = 0;

	if (spec->init_path) {
		if ((r = read_file(&init, NULL, spec->init_path, 1 << 20)))
			return err_setf(err, r, "cannot read init script '%s': %s",
				    spec->init_path, strerror(-r));
		entries_add(e, ENTRY_TEXT, "init", NULL, init, 0755);
		free(init);
	} else {
		entries_add(e, ENTRY_TEXT, "init", NULL, image_init_script, 0755);
	}
	if (access(busybox, X_OK))
		return err_setf(err, -ENOENT,
			    "no busybox at '%s' (Debian: apt-get install busybox-static)", busybox);
	entries_add(e, ENTRY_COPY, "bin/busybox", busybox, NULL, 0755);
	if ((r = add_ldd_closure(e, busybox, err)))
		return r;
	if ((r = add_binary(e, spec->agent_path, "bin/kcanary-agent", err)))
		return r;
	tools_for(tools, spec->fs);
	for (size_t i = 0; tools[i]; i++) {
		char *p = find_tool(tools[i]), *dst;

		if (!p)
			return err_setf(err, -ENOENT,
				    "'%s' not found (Debian: apt-get install e2fsprogs xfsprogs btrfs-progs)",
				    tools[i]);
		dst = xasprintf("sbin/%s", tools[i]);
		r = add_binary(e, p, dst, err);
		free(dst);
		free(p);
		if (r)
			return r;
	}
	if (access("/etc/mke2fs.conf", R_OK) == 0)
		entries_add(e, ENTRY_COPY, "etc/mke2fs.conf", "/etc/mke2fs.conf", NULL, 0644);
	if (spec->modules_dir) {
		wanted = wanted_for(spec);
		r = image_module_order(&order, &sources, spec->modules_dir, wanted, err);
		free(wanted);
		if (r)
			return r;
		entries_add(e, ENTRY_TEXT, "lib/modules/kc/order", NULL, order, 0644);
		for (size_t i = 0; sources[i]; i++) {
			const char *base = strrchr(sources[i], '/') + 1;
			char *file = xstrdup(base), *dst;

			file[strstr(file, ".ko") + 3 - file] = '\0';
			dst = xasprintf("lib/modules/kc/%s", file);
			entries_add(e, ENTRY_MODULE, dst, sources[i], NULL, 0644);
			free(dst);
			free(file);
			free(sources[i]);
		}
		free(sources);
		free(order);
	}
	return 0;
}

/* Run argv (stdin /dev/null, stderr ours) with its stdout into out_path
 * when not NULL. 0, -EIO when it exits non-zero, another -errno when it
 * cannot be run. */
static int run_cmd(const char *const argv[], const char *out_path)
{
	struct proc_spec s = { .argv = argv, .out = out_path ? PROC_FILE : PROC_INHERIT,
			       .out_path = out_path, .err = PROC_INHERIT };
	struct proc_outcome o;
	int r = proc_run(&o, &s, NULL);

	if (r)
		return r;
	return o.status == 0 ? 0 : -EIO;
}

static int write_text(const char *path, const char *text, unsigned mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	size_t len = strlen(text);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -EIO;
}

static int parent_dir(const char *path)
{
	char *d = xstrdup(path), *slash = strrchr(d, '/');
	int r = 0;

	if (slash) {
		*slash = '\0';
		r = mkdir_p(d, 0755);
	}
	free(d);
	return r;
}

static int stage_entry(const char *stage, const struct entry *x, struct buf *err)
{
	char *dst = xasprintf("%s/%s", stage, x->dst);
	int r;

	if ((r = parent_dir(dst)))
		goto out;
	switch (x->kind) {
	case ENTRY_TEXT:
		r = write_text(dst, x->text, x->mode);
		break;
	case ENTRY_COPY: {
		const char *argv[] = { "cp", "-L", "--", x->src, dst, NULL };
		r = run_cmd(argv, NULL);
		break;
	}
	case ENTRY_MODULE: {
		const char *tool = strstr(x->src, ".ko.xz") ? "xz" :
				   strstr(x->src, ".ko.zst") ? "zstd" :
				   strstr(x->src, ".ko.gz") ? "gzip" : NULL;
		if (tool) {
			const char *argv[] = { tool, "-dc", "--", x->src, NULL };
			r = run_cmd(argv, dst);
		} else {
			const char *argv[] = { "cp", "-L", "--", x->src, dst, NULL };
			r = run_cmd(argv, NULL);
		}
		break;
	}
	}
	if (!r && chmod(dst, x->mode))
		r = -errno;
out:
	if (r == -EIO) {
		/* cp's and xz's ENOSPC does not come back through their exit
		 * status: a stage left (nearly) without space says it, as
		 * image_build_locked() does for gzip */
		struct statvfs sv;

		if (statvfs(stage, &sv) == 0 && (uint64_t)sv.f_bavail * sv.f_frsize < (1u << 20)) {
			buf_reset(err);
			buf_printf(err, "cannot put '%s' into the guest image: the file system of its"
				   " stage '%s' is full", x->src ? x->src : "(text)", stage);
			free(dst);
			dst = xasprintf("%s/.", stage);   /* buf_free_space() takes a file in the dir */
			buf_free_space(err, dst);
			buf_puts(err, ": free space there, then run the command again ('kcanary resume"
				 " JOB' for a job)");
			free(dst);
			return -ENOSPC;
		}
	}
	if (r)
		err_setf(err, r, "cannot put '%s' into the guest image as '/%s': %s",
		     x->src ? x->src : "(text)", x->dst,
		     r == -EIO ? "the copy or decompression failed" : strerror(-r));
	free(dst);
	return r;
}

/* The paths below dir/rel (rel "." at the top), as find prints them
 * ("./bin/busybox"), appended to *v (*n of them). */
static int list_tree(char ***v, size_t *n, const char *dir, const char *rel)
{
	char *path = xasprintf("%s/%s", dir, rel);
	DIR *d = opendir(path);
	struct dirent *de;
	int r = 0;

	free(path);
	if (!d)
		return -errno;
	while (!r && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		*v = xrealloc(*v, (*n + 1) * sizeof(**v));
		(*v)[*n] = xasprintf("%s/%s", rel, de->d_name);
		(*n)++;
		if (de->d_type == DT_UNKNOWN) {
			char *p = xasprintf("%s/%s", dir, (*v)[*n - 1]);
			struct stat st;

			if (!lstat(p, &st) && S_ISDIR(st.st_mode))
				de->d_type = DT_DIR;
			free(p);
		}
		if (de->d_type == DT_DIR)
			r = list_tree(v, n, dir, (*v)[*n - 1]);
	}
	closedir(d);
	return r;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Pack the stage into the newc cpio archive tmp, the paths in byte order
 * and every file owned by root (what `find . -mindepth 1 | LC_ALL=C sort |
 * cpio -o -H newc -R 0:0` makes). 0, -EIO when cpio fails (err says how),
 * another -errno. */
static int pack(const char *stage, const char *tmp, struct buf *err)
{
	const char *argv[] = { "cpio", "-o", "-H", "newc", "-R", "0:0", "--quiet", NULL };
	char **v = NULL, *list = xasprintf("%s.list", tmp);
	struct buf msg = BUF_INIT_MAX(64 << 10);
	size_t n = 0;
	FILE *f = NULL;
	int fd = -1, r;

	if ((r = list_tree(&v, &n, stage, "."))) {
		err_setf(err, r, "cannot list '%s': %s", stage, strerror(-r));
		goto out;
	}
	qsort(v, n, sizeof(*v), cmp_path);
	if (!(f = fopen(list, "we"))) {
		r = err_setf(err, -errno, "cannot write '%s': %s", list, strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s\n", v[i]);
	if (fclose(f)) {
		r = err_setf(err, -EIO, "cannot write '%s': %s", list, strerror(errno));
		goto out;
	}
	if ((fd = open(list, O_RDONLY | O_CLOEXEC)) < 0) {
		r = err_setf(err, -errno, "cannot read '%s': %s", list, strerror(errno));
		goto out;
	}
	{
		struct proc_spec s = { .argv = argv, .dir = stage, .in = PROC_FD, .in_fd = fd,
				       .out = PROC_FILE, .out_path = tmp, .err = PROC_CAPTURE,
				       .err_buf = &msg };

		if ((r = proc_run_ok(&s, err)))
			err_wrapf(err, r, "cannot pack the guest image");
	}
out:
	if (fd >= 0)
		close(fd);
	unlink(list);
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	free(list);
	buf_release(&msg);
	return r;
}

static int image_build_locked(char **out_path, const struct image_spec *spec,
			      struct buf *err);

/* One build at a time in a process: the staging and temporary names carry
 * the pid, and a job's workers (lab.h) may ask at once. */
int image_build(char **out_path, const struct image_spec *spec,
		struct buf *err)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	int r;

	pthread_mutex_lock(&lock);
	r = image_build_locked(out_path, spec, err);
	pthread_mutex_unlock(&lock);
	return r;
}

static int image_build_locked(char **out_path, const struct image_spec *spec,
			      struct buf *err)
{
	struct entries e = { 0 };
	struct hash h;
	char *dir = NULL, *final = NULL, *stage = NULL, *tmp = NULL, hex[HASH_HEX_SIZE];
	int format = IMAGE_FORMAT, r;

	if (!spec->agent_path)
		return err_setf(err, -EINVAL, "no agent binary given for the guest image");
	if ((r = collect(&e, spec, err)))
		goto out;
	hash_init(&h);
	hash_update(&h, &format, sizeof(format));
	for (size_t i = 0; i < e.n; i++) {
		hash_update(&h, e.v[i].dst, strlen(e.v[i].dst) + 1);
		if (e.v[i].kind == ENTRY_TEXT) {
			hash_update(&h, e.v[i].text, strlen(e.v[i].text));
		} else if ((r = hash_update_file(&h, e.v[i].src, NULL))) {
			err_setf(err, r, "cannot read '%s' for the guest image: %s",
			     e.v[i].src, strerror(-r));
			goto out;
		}
	}
	hash_final_hex(&h, hex);
	dir = xasprintf("%s/images", spec->home);
	final = xasprintf("%s/%.16s.cpio", dir, hex);
	if (access(final, R_OK) == 0) {
		log_debug("guest image %s is cached", final);
		goto done;
	}
	if ((r = mkdir_p(dir, 0755))) {
		err_setf(err, r, "cannot create '%s': %s", dir, strerror(-r));
		goto out;
	}
	stage = xasprintf("%s/stage.XXXXXX", dir);
	if (!mkdtemp(stage)) {
		r = err_setf(err, -errno, "cannot create a staging directory in '%s': %s",
			 dir, strerror(errno));
		free(stage);
		stage = NULL;
		goto out;
	}
	log_info("building guest image %s (%zu files)", final, e.n);
	for (size_t i = 0; i < e.n; i++)
		if ((r = stage_entry(stage, &e.v[i], err)))
			goto out;
	{
		static const char *const dirs[] = { "proc", "sys", "dev", "tmp", "mnt", "sbin", "usr", NULL };
		for (size_t i = 0; dirs[i]; i++) {
			char *d = xasprintf("%s/%s", stage, dirs[i]);
			mkdir_p(d, 0755);
			free(d);
		}
	}
	/* The kernel opens /dev/console before /init runs; without the node
	 * init has no stdout (devtmpfs is mounted only later, by /init). */
	{
		char *con = xasprintf("%s/dev/console", stage), *nul = xasprintf("%s/dev/null", stage);
		int a = mknod(con, S_IFCHR | 0600, makedev(5, 1));
		int b = a ? a : mknod(nul, S_IFCHR | 0666, makedev(1, 3));
		free(con);
		free(nul);
		if (a || b) {
			r = err_setf(err, -errno,
				 "cannot create /dev/console in the guest image (mknod needs root): %s",
				 strerror(errno));
			goto out;
		}
	}
	tmp = xasprintf("%s.tmp.%d", final, (int)getpid());
	if ((r = pack(stage, tmp, err))) {
		/* cpio's ENOSPC does not come back through its exit status: a
		 * file system left (nearly) without space says it */
		struct statvfs sv;

		if (r == -EIO && statvfs(dir, &sv) == 0 &&
		    (uint64_t)sv.f_bavail * sv.f_frsize < (1u << 20)) {
			buf_reset(err);
			buf_printf(err, "the file system of the guest image '%s' is full", final);
			buf_free_space(err, final);
			buf_puts(err, ": free space there, then run the command again ('kcanary resume"
				 " JOB' for a job)");
			r = -ENOSPC;
		}
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, final)) {
		r = err_setf(err, -errno, "cannot rename '%s' to '%s': %s", tmp, final,
			 strerror(errno));
		unlink(tmp);
		goto out;
	}
done:
	*out_path = final;
	final = NULL;
	r = 0;
out:
	if (stage) {
		const char *argv[] = { "rm", "-rf", "--", stage, NULL };
		run_cmd(argv, NULL);
	}
	entries_free(&e);
	free(dir);
	free(final);
	free(stage);
	free(tmp);
	return r;
}

/* ---- the kernel's PVH entry ---- */

/* The host tool that decompresses a bzImage payload, by its magic bytes
 * (Documentation/arch/x86/boot.rst, "payload_offset"), or NULL. */
static const char *const *payload_tool(const unsigned char *m, size_t n)
{
	static const char *const gz[] = { "gzip", "-dc", NULL }, *const bz[] = { "bzip2", "-dc", NULL },
		*const lzma[] = { "xz", "--format=lzma", "-dc", NULL }, *const xz[] = { "xz", "-dc", NULL },
		*const lz4[] = { "lz4", "-dc", NULL }, *const zst[] = { "zstd", "-dc", NULL };

	if (n < 2)
		return NULL;
	if (m[0] == 0x1f && (m[1] == 0x8b || m[1] == 0x9e)) return gz;
	if (m[0] == 0x42 && m[1] == 0x5a) return bz;
	if (m[0] == 0x5d && m[1] == 0x00) return lzma;
	if (m[0] == 0xfd && m[1] == 0x37) return xz;
	if (m[0] == 0x02 && m[1] == 0x21) return lz4;
	if (m[0] == 0x28 && m[1] == 0xb5) return zst;
	return NULL;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* Whether the ELF64 image in f (len bytes) has the PVH entry note: a
 * PT_NOTE note named "Xen" of type XEN_ELFNOTE_PHYS32_ENTRY (18), which
 * QEMU needs to boot an uncompressed kernel (include/xen/interface/elfnote.h). */
static bool elf_has_pvh(const unsigned char *f, size_t len)
{
	uint64_t phoff;
	unsigned phentsize, phnum;

	if (len < 64 || memcmp(f, "\177ELF", 4) || f[4] != 2 || f[5] != 1)
		return false;
	phoff = le64(f + 32);
	phentsize = (unsigned)(f[54] | f[55] << 8);
	phnum = (unsigned)(f[56] | f[57] << 8);
	for (unsigned i = 0; i < phnum; i++) {
		const unsigned char *ph = f + phoff + (uint64_t)i * phentsize;
		uint64_t off, sz, at;

		if (phoff + (uint64_t)(i + 1) * phentsize > len || le32(ph) != 4)   /* PT_NOTE */
			continue;
		off = le64(ph + 8);
		sz = le64(ph + 32);
		if (off > len || sz > len - off)
			continue;
		for (at = 0; at + 12 <= sz;) {
			const unsigned char *n = f + off + at;
			uint32_t namesz = le32(n), descsz = le32(n + 4), type = le32(n + 8);

			if (namesz == 4 && at + 16 <= sz && !memcmp(n + 12, "Xen", 4) && type == 18)
				return true;
			at += 12 + ((namesz + 3) & ~3u) + ((descsz + 3) & ~3u);
		}
	}
	return false;
}

/* Decompress the payload of the bzImage text (len bytes; path names it)
 * into tmp. 0, -ENOEXEC (no payload that can be unpacked here: why in
 * err), or -errno. */
static int unpack_payload(const char *text, size_t len, const char *path, const char *tmp,
			  struct buf *err)
{
	const unsigned char *h = (const unsigned char *)text;
	const char *const *tool;
	char *z = xasprintf("%s.z", tmp);
	size_t pm, off, plen;
	int r;

	if (len < 0x250 || memcmp(h + 0x202, "HdrS", 4) || (h[0x206] | h[0x207] << 8) < 0x208) {
		r = err_setf(err, -ENOEXEC, "'%s' is no bzImage of boot protocol 2.08 or later", path);
		goto out;
	}
	pm = ((size_t)(h[0x1f1] ? h[0x1f1] : 4) + 1) * 512;
	off = pm + le32(h + 0x248);
	plen = le32(h + 0x24c);
	/* the build appends the uncompressed size (4 bytes) to the payload */
	if (plen < 8 || off > len || plen > len - off) {
		r = err_setf(err, -ENOEXEC, "'%s' has no payload inside it", path);
		goto out;
	}
	if (!(tool = payload_tool(h + off, plen))) {
		r = err_setf(err, -ENOEXEC, "'%s': the payload's compression (magic %02x %02x) is not one "
			     "of gzip, bzip2, lzma, xz, lz4, zstd", path, h[off], h[off + 1]);
		goto out;
	}
	{
		int fd = open(z, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		ssize_t n = fd < 0 ? -1 : write(fd, h + off, plen - 4);

		if (fd >= 0)
			close(fd);
		if (n != (ssize_t)(plen - 4)) {
			r = err_setf(err, fd < 0 ? -errno : -EIO, "cannot write '%s'", z);
			goto out;
		}
	}
	{
		/* no "--": not every one of the tools takes it */
		char *arg = xasprintf("%s%s", z[0] == '-' ? "./" : "", z);
		const char *argv[6];
		size_t k = 0;

		for (; tool[k]; k++)
			argv[k] = tool[k];
		argv[k++] = arg;
		argv[k] = NULL;
		r = run_cmd(argv, tmp);
		free(arg);
		if (r)   /* -EIO: not remembered, the host may get the tool */
			r = err_setf(err, -EIO, "cannot decompress the payload of '%s' with %s", path,
				     tool[0]);
	}
out:
	unlink(z);
	free(z);
	return r;
}

int image_kernel_pvh(char **out, const char *home, const char *path, struct buf *err)
{
	struct hash h;
	int format = IMAGE_FORMAT, r;
	char *dir = xasprintf("%s/kernels", home), *final = NULL, *no = NULL, *tmp = NULL;
	char *text = NULL, *elf = NULL, *why = NULL, hex[HASH_HEX_SIZE];
	size_t len = 0, elen = 0;

	*out = NULL;
	hash_init(&h);
	hash_update(&h, &format, sizeof(format));
	if ((r = hash_update_file(&h, path, NULL))) {
		err_setf(err, r, "cannot read kernel image '%s': %s", path, strerror(-r));
		goto out;
	}
	hash_final_hex(&h, hex);
	final = xasprintf("%s/%.16s.pvh", dir, hex);
	no = xasprintf("%s/%.16s.nopvh", dir, hex);
	if (access(final, R_OK) == 0)
		goto done;
	if (read_file(&why, NULL, no, 4096) == 0) {
		r = err_setf(err, -ENOEXEC, "%s", why);   /* the reason, found before */
		goto out;
	}
	if ((r = mkdir_p(dir, 0755))) {
		err_setf(err, r, "cannot create '%s': %s", dir, strerror(-r));
		goto out;
	}
	if ((r = read_file(&text, &len, path, 256u << 20))) {
		err_setf(err, r, "cannot read kernel image '%s': %s", path, strerror(-r));
		goto out;
	}
	tmp = xasprintf("%s.tmp.%d", final, (int)getpid());
	if (!(r = unpack_payload(text, len, path, tmp, err)) &&
	    !(r = read_file(&elf, &elen, tmp, 1u << 30)) && !elf_has_pvh((unsigned char *)elf, elen))
		r = err_setf(err, -ENOEXEC, "'%s' has no PVH entry note (CONFIG_PVH)", path);
	if (r == -ENOEXEC && write_text(no, buf_str(err), 0644) == 0)
		log_debug("kernel '%s' boots as a bzImage: %s", path, buf_str(err));
	if (!r && rename(tmp, final))
		r = err_setf(err, -errno, "cannot rename '%s' to '%s': %s", tmp, final, strerror(errno));
	if (r) {
		unlink(tmp);
		goto out;
	}
done:
	*out = final;
	final = NULL;
out:
	free(dir);
	free(final);
	free(no);
	free(tmp);
	free(text);
	free(elf);
	free(why);
	return r;
}
