/* rootfs.c - guest root filesystems built with mmdebstrap, packed with
 * mksquashfs and cached by content (see rootfs.h). */
#define LOG_MODULE "rootfs"
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "log.h"
#include "guest/ldd.h"
#include "guest/rootfs.h"
#include "hash.h"
#include "proc.h"

void rootfs_strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

void rootfs_image_release(struct rootfs_image *img)
{
	if (!img)
		return;
	free(img->path);
	free(img->packages);
	free(img->files_json);
	memset(img, 0, sizeof(*img));
}

/* Debian policy 5.6.1: lower case letters, digits, + - . ; at least two
 * characters, starting with an alphanumeric. */
static bool package_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 2 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789+-.") == n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int rootfs_parse_spec(char ***out, const char *spec, struct buf *err)
{
	const char *list;
	char **v = NULL, *copy = NULL, *save = NULL, *tok;
	size_t n = 0;

	if (!spec || strncmp(spec, "debian", 6) || (spec[6] && spec[6] != ':'))
		return err_setf(err, -EINVAL,
				"--rootfs '%s': expected debian, debian:PKG,PKG,... or host", spec ? spec : "");
	list = spec[6] ? spec + 7 : "";
	copy = xstrdup(list);
	v = xcalloc(1, sizeof(*v));
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!package_name_ok(tok)) {
			int r = err_setf(err, -EINVAL,
					 "--rootfs '%s': '%s' is not a Debian package name"
					 " (lower case letters, digits, + - .)", spec, tok);
			rootfs_strv_free(v);
			free(copy);
			return r;
		}
		v = xrealloc(v, (n + 2) * sizeof(*v));
		v[n++] = xstrdup(tok);
		v[n] = NULL;
	}
	free(copy);
	qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(v[i], v[i - 1])) {
			free(v[i]);
			memmove(&v[i], &v[i + 1], (n - i) * sizeof(*v));
			n--;
			i--;
		}
	*out = v;
	return 0;
}

/* Run argv with stdout and stderr appended to log_path (NULL: /dev/null)
 * and stdout to out_path instead when not NULL. 0, -ENOENT when argv[0]
 * cannot be run, -EIO when it exits non-zero. Nothing else is inherited
 * (proc.h): mmdebstrap hands apt the lowest free fd for `cat >&N`, and
 * dash cannot redirect to N >= 10 ("Bad fd number"), which it reaches
 * when the caller holds a few open (a flock, the store, sockets). */
static int run_logged(const char *const argv[], const char *log_path, const char *out_path)
{
	struct proc_spec s = { .argv = argv };
	struct proc_outcome o;
	int r;

	if (out_path) {
		s.out = PROC_FILE;
		s.out_path = out_path;
		s.err = log_path ? PROC_FILE : PROC_NULL;
		s.err_path = log_path;
		s.err_append = true;
	} else if (log_path) {
		s.out = PROC_FILE;
		s.out_path = log_path;
		s.out_append = true;
		s.err = PROC_STDOUT;
	}
	if ((r = proc_run(&o, &s, NULL)))
		return r;
	return o.status == 0 ? 0 : -EIO;
}

/* Put a finished image in place: rename tmp to final (atomic on one
 * filesystem), or unlink tmp. 0, or -errno with err naming both paths. */
static int publish(const char *tmp, const char *final, struct buf *err)
{
	if (!rename(tmp, final))
		return 0;
	int r = err_setf(err, -errno, "cannot rename '%s' to '%s': %s", tmp, final, strerror(errno));
	unlink(tmp);
	return r;
}

/* Remove a staging directory and all below it; NULL is fine. */
static void drop_stage(const char *stage)
{
	if (stage) {
		const char *argv[] = { "rm", "-rf", "--", stage, NULL };
		run_logged(argv, NULL, NULL);
	}
}

/* A new staging directory "DIR/name.XXXXXX" beside final (DIR/FILE), in
 * *out (caller frees, and drop_stage()s). */
static int make_stage(char **out, const char *final, const char *name, struct buf *err)
{
	char *dir = xstrdup(final), *stage;
	int r = 0;

	*strrchr(dir, '/') = '\0';
	stage = xasprintf("%s/%s.XXXXXX", dir, name);
	if (!mkdtemp(stage)) {
		r = err_setf(err, -errno, "cannot create a staging directory in '%s': %s", dir,
			     strerror(errno));
		free(stage);
		stage = NULL;
	}
	free(dir);
	*out = stage;
	return r;
}

/* The output of argv (stdout and stderr, as they came) in *out; -EIO when
 * it exits non-zero (unless any_status), with its last output line in
 * err. what names it in messages. */
static int capture(char **out, const char *const argv[], bool any_status, const char *what,
		   struct buf *err)
{
	struct buf b = BUF_INIT;
	struct proc_spec s = { .argv = argv, .out = PROC_CAPTURE, .out_buf = &b,
			       .err = PROC_STDOUT };
	struct proc_outcome o;
	int r;

	if ((r = proc_run(&o, &s, err))) {
		err_setf(err, r, "cannot run %s: %s", what, strerror(-r));
		goto out;
	}
	if (!any_status && (o.status != 0 || o.signal)) {
		char line[PROC_TAIL_BYTES];

		proc_tail_line(line, sizeof(line), &o);
		r = err_setf(err, -EIO, "%s failed: %s", what, line);
		goto out;
	}
	*out = buf_detach(&b);
out:
	buf_release(&b);
	return r;
}

/* The sha256 hex of a manifest, its trailing blanks and newlines left
 * out: the names the images had when the manifest went through
 * token_hash(), which trims them. */
static void manifest_hash(char out[HASH_HEX_SIZE], const struct buf *m)
{
	const char *p = buf_str(m);
	size_t n = m->len;

	while (n && p[n - 1] && strchr(" \t\r\n", p[n - 1]))
		n--;
	hash_hex(out, p, n);
}

static bool shell_safe(const char *s)
{
	return !strchr(s, '\'');
}

/*
 * The versions apt resolves for pkgs from the host's package lists
 * against an empty system: "name=version" lines, sorted, appended to m.
 */
static int resolve(struct buf *m, char **pkgs, struct buf *err)
{
	static const char *const head[] = { "apt-get", "-s", "-q", "-o", "Dir::State::status=/dev/null",
					    "-o", "Debug::NoLocking=1", "install",
					    "--no-install-recommends" };
	const size_t nh = sizeof(head) / sizeof(head[0]);
	char *text = NULL, *save = NULL, *line, **v = NULL;
	const char **argv;
	size_t n = 0, np = 0;
	int r;

	if (!pkgs[0])
		return 0;
	while (pkgs[np])
		np++;
	argv = xcalloc(nh + np + 1, sizeof(*argv));
	memcpy(argv, head, sizeof(head));
	for (size_t i = 0; i < np; i++)
		argv[nh + i] = pkgs[i];
	r = capture(&text, argv, false, "resolving the rootfs packages with apt-get", err);
	free(argv);
	if (r)
		return r;
	/* "Inst libc6 (2.36-9+deb12u14 Debian:12.15/oldstable [amd64]) []" */
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[256], ver[256];

		if (sscanf(line, "Inst %255s (%255s", name, ver) != 2)
			continue;
		v = xrealloc(v, (n + 1) * sizeof(*v));
		v[n++] = xasprintf("%s=%s", name, ver);
	}
	free(text);
	qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++) {
		buf_printf(m, "pkg %s\n", v[i]);
		free(v[i]);
	}
	free(v);
	return 0;
}

struct file_arg {
	char *src, *dst;             /* dst absolute, or relative to the workload dir */
	char sha256[65];
};

static void files_free(struct file_arg *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(f[i].src);
		free(f[i].dst);
	}
	free(f);
}

/* "PATH[:GUEST_PATH]" → src, dst; hashed. */
static int files_parse(struct file_arg **out, size_t *out_n, const char *const *files,
		       struct buf *err)
{
	struct file_arg *f = NULL;
	size_t n = 0;
	int r = 0;

	for (size_t i = 0; files && files[i]; i++) {
		const char *colon = strchr(files[i], ':'), *base;
		struct file_arg *x;

		f = xrealloc(f, (n + 1) * sizeof(*f));
		x = &f[n++];
		x->src = colon ? xstrndup(files[i], (size_t)(colon - files[i])) : xstrdup(files[i]);
		base = strrchr(x->src, '/') ? strrchr(x->src, '/') + 1 : x->src;
		x->dst = xstrdup(colon && colon[1] ? colon + 1 : base);
		if (!*x->src || !*base || strstr(x->dst, "..") || !shell_safe(x->dst)) {
			r = err_setf(err, -EINVAL,
				     "--files '%s': expected PATH[:GUEST_PATH] (a file, a guest path"
				     " without '..' or quotes)", files[i]);
			break;
		}
		if ((r = hash_file_hex(x->sha256, x->src, err)))
			break;
	}
	if (r) {
		files_free(f, n);
		return r;
	}
	*out = f;
	*out_n = n;
	return 0;
}

static char *files_to_json(const struct file_arg *f, size_t n)
{
	json_t *a = json_array();
	char *text;

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_pack("{s:s, s:s, s:s}", "src", f[i].src,
						   "dst", f[i].dst, "sha256", f[i].sha256));
	text = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return text;
}

static const char *default_sources(void)
{
	static const char deb822[] = "/etc/apt/sources.list.d/debian.sources";

	return access(deb822, R_OK) == 0 ? deb822 : "/etc/apt/sources.list";
}

/* Copy src to dst (cp -p, parents made). */
static int copy_in(const char *src, const char *dst, const char *log, struct buf *err)
{
	char *dir = xstrdup(dst), *slash = strrchr(dir, '/');
	const char *argv[] = { "cp", "-pL", "--", src, dst, NULL };
	int r = 0;

	if (slash) {
		*slash = '\0';
		r = mkdir_p(dir, 0755);
	}
	free(dir);
	if (!r)
		r = run_logged(argv, log, NULL);
	if (r)
		return err_setf(err, r, "cannot copy '%s' into the root filesystem as '%s'", src, dst);
	return 0;
}

/* The agent as root/opt/kcanary/bin/kcanary-agent with its ldd closure in
 * root/opt/kcanary/lib, started by ROOTFS_AGENT through that closure's own
 * loader, so the image's libraries and the agent's never mix and nothing
 * (LD_LIBRARY_PATH) leaks into the workloads it starts. */
static int add_agent(const char *root, const char *agent, const char *log, struct buf *err)
{
	const char *ldd[] = { "ldd", agent, NULL };
	char *text = NULL, *dst = NULL, *loader = NULL, **paths = NULL;
	struct buf script = BUF_INIT;
	int r;

	dst = xasprintf("%s/opt/kcanary/bin/kcanary-agent", root);
	if ((r = copy_in(agent, dst, log, err)))
		goto out;
	if ((r = capture(&text, ldd, true, "ldd", err)))
		goto out;
	ldd_paths(text, &paths);
	for (size_t i = 0; paths[i]; i++) {
		const char *base = strrchr(paths[i], '/') + 1;

		free(dst);
		dst = xasprintf("%s/opt/kcanary/lib/%s", root, base);
		if ((r = copy_in(paths[i], dst, log, err)))
			goto out;
		if (strstr(base, "ld-linux")) {
			free(loader);
			loader = xstrdup(base);
		}
	}
	buf_puts(&script, "#!/bin/sh\n# kcanary's agent with its own libraries (server/guest/rootfs.c)\n");
	if (loader)
		buf_printf(&script, "exec /opt/kcanary/lib/%s --library-path /opt/kcanary/lib"
			   " /opt/kcanary/bin/kcanary-agent \"$@\"\n", loader);
	else
		buf_puts(&script, "exec /opt/kcanary/bin/kcanary-agent \"$@\"\n");
	free(dst);
	dst = xasprintf("%s%s", root, ROOTFS_AGENT);
	{
		FILE *f = fopen(dst, "w");

		if (!f || fputs(buf_str(&script), f) < 0 || fclose(f) || chmod(dst, 0755)) {
			r = err_setf(err, -EIO, "cannot write '%s'", dst);
			goto out;
		}
	}
out:
	buf_release(&script);
	free(paths);
	free(text);
	free(dst);
	free(loader);
	return r;
}

/* The first "E: " line of a build log (mmdebstrap's and apt's errors), or
 * its last line; static storage, for one message. */
static const char *log_error_line(const char *log)
{
	static char line[512];
	char *text = NULL, *save = NULL, *l;

	snprintf(line, sizeof(line), "no message");
	if (read_file(&text, NULL, log, 16 << 20))
		return line;
	/* the first E: line says why; mmdebstrap's last one only that it failed */
	for (l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		if (strncmp(line, "E: ", 3) || (!strncmp(l, "E: ", 3) && !strncmp(line, "E: mmdebstrap failed", 20)))
			snprintf(line, sizeof(line), "%s", l);
	free(text);
	return line;
}

/* The host's package lists must be there: the build uses them as they are. */
static int host_lists_ok(struct buf *err)
{
	glob_t g;
	int found = glob("/var/lib/apt/lists/*_Packages*", 0, NULL, &g) == 0;

	globfree(&g);
	if (!found)
		return err_setf(err, -ENOENT,
				"no package lists in /var/lib/apt/lists: run apt-get update first");
	return 0;
}

static int build(const struct rootfs_spec *s, char **pkgs, const char *final,
		 const char *pkgs_path, const char *log, struct buf *err)
{
	char *stage = NULL, *root = NULL, *include = NULL, *tmp = NULL;
	struct buf inc = BUF_INIT;
	int r;

	if ((r = make_stage(&stage, final, "stage", err)))
		goto out;
	root = xasprintf("%s/root", stage);
	for (size_t i = 0; pkgs[i]; i++)
		buf_printf(&inc, "%s%s", i ? "," : "", pkgs[i]);
	include = xasprintf("--include=%s", buf_str(&inc));
	{
		const char *argv[] = {
			"mmdebstrap", "--variant=essential", "--mode=root", "--skip=update,check/empty",
			"--setup-hook=mkdir -p \"$1/var/lib/apt/lists\" && "
			"cp /var/lib/apt/lists/*Release /var/lib/apt/lists/*_Packages* \"$1/var/lib/apt/lists/\"",
			pkgs[0] ? include : "--include=", "bookworm", root,
			s->sources ? s->sources : default_sources(), NULL,
		};
		/* once more on a failure: a download from the mirror can fail
		 * for a moment, and a new try costs what the build costs */
		if ((r = run_logged(argv, log, NULL)) == -EIO) {
			const char *rm[] = { "rm", "-rf", "--", root, NULL };

			log_warn("mmdebstrap %s failed (%s): trying once more", s->spec, log_error_line(log));
			run_logged(rm, NULL, NULL);
			r = run_logged(argv, log, NULL);
		}
		if (r) {
			err_setf(err, r, "mmdebstrap %s failed: %s (its output: %s)", s->spec,
				 r == -ENOENT ? "not installed: apt-get install mmdebstrap" :
				 log_error_line(log), log);
			goto out;
		}
	}
	if ((r = add_agent(root, s->agent_path, log, err)))
		goto out;
	{
		const char *argv[] = { "dpkg-query", "--admindir", NULL, "-W",
				       "-f", "${Package} ${Version}\n", NULL };
		char *admin = xasprintf("%s/var/lib/dpkg", root);

		argv[2] = admin;
		r = run_logged(argv, log, pkgs_path);
		free(admin);
		if (r) {
			err_setf(err, r, "cannot list the packages of '%s' (dpkg-query)", root);
			goto out;
		}
	}
	tmp = xasprintf("%s.tmp.%d", final, (int)getpid());
	{
		/* lz4: the fastest to decompress, which is what a TCG guest pays */
		const char *argv[] = { "mksquashfs", root, tmp, "-comp", "lz4", "-noappend",
				       "-quiet", "-no-progress", NULL };
		if ((r = run_logged(argv, log, NULL))) {
			err_setf(err, r, "mksquashfs '%s' failed (%s; log %s)", root,
				 r == -ENOENT ? "apt-get install squashfs-tools" : "see the log", log);
			unlink(tmp);
			goto out;
		}
	}
	r = publish(tmp, final, err);
out:
	drop_stage(stage);
	buf_release(&inc);
	free(stage);
	free(root);
	free(include);
	free(tmp);
	return r;
}

/*
 * The files layer: a copy of the base image with the files appended
 * (mksquashfs appends to an existing image in place, in well under a
 * second), under ROOTFS_FILES_DIR: rel/PATH for a relative guest path,
 * abs/PATH for an absolute one; /init puts each where it belongs. So a
 * changed script costs a copy, not a Debian build.
 */
static int files_layer(const char *base, const char *final, const struct file_arg *f, size_t nf,
		       const char *log, struct buf *err)
{
	char *stage = NULL, *top = NULL, *tmp = NULL;
	int r;

	if ((r = make_stage(&stage, final, "files", err)))
		goto out;
	top = xasprintf("%s%s", stage, ROOTFS_FILES_DIR);
	for (size_t i = 0; i < nf; i++) {
		char *dst = xasprintf("%s/%s/%s", top, f[i].dst[0] == '/' ? "abs" : "rel",
				      f[i].dst + (f[i].dst[0] == '/'));

		r = copy_in(f[i].src, dst, log, err);
		free(dst);
		if (r)
			goto out;
	}
	tmp = xasprintf("%s.tmp.%d", final, (int)getpid());
	{
		const char *cp[] = { "cp", "--reflink=auto", "--", base, tmp, NULL };
		const char *sq[] = { "mksquashfs", top, tmp, "-keep-as-directory", "-no-recovery",
				     "-quiet", "-no-progress", NULL };

		if ((r = run_logged(cp, log, NULL)) || (r = run_logged(sq, log, NULL))) {
			err_setf(err, r, "cannot add the --files to a copy of '%s' (log %s)", base, log);
			unlink(tmp);
			goto out;
		}
	}
	r = publish(tmp, final, err);
out:
	drop_stage(stage);
	free(stage);
	free(top);
	free(tmp);
	return r;
}

/* Sort "name version" lines (dpkg-query lists in its database's order). */
static char *sorted_lines(char *text)
{
	char **v = NULL, *save = NULL, *line;
	struct buf b = BUF_INIT;
	size_t n = 0;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		v = xrealloc(v, (n + 1) * sizeof(*v));
		v[n++] = line;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++)
		buf_printf(&b, "%s\n", v[i]);
	free(v);
	return buf_detach(&b);
}

int rootfs_get(struct rootfs_image *out, const struct rootfs_spec *s, struct buf *err)
{
	struct rootfs_image img = { 0 };
	struct buf m = BUF_INIT;
	struct file_arg *f = NULL;
	size_t nf = 0;
	char **pkgs = NULL, agent_sha[65], base_hash[65], *dir = NULL, *base = NULL;
	char *pkgs_path = NULL, *log = NULL, *text = NULL;
	double t0 = clock_mono_s();
	struct stat st;
	int r;

	if (!s->agent_path)
		return err_setf(err, -EINVAL, "no agent binary given for the root filesystem");
	if ((r = rootfs_parse_spec(&pkgs, s->spec, err)))
		return r;
	if ((r = files_parse(&f, &nf, s->files, err)) || (r = host_lists_ok(err)))
		goto out;
	if ((r = hash_file_hex(agent_sha, s->agent_path, err)))
		goto out;
	buf_printf(&m, "kcanary-rootfs %d\nsuite bookworm\nvariant essential\n", ROOTFS_RECIPE);
	for (size_t i = 0; pkgs[i]; i++)
		buf_printf(&m, "want %s\n", pkgs[i]);
	if ((r = resolve(&m, pkgs, err)))
		goto out;
	buf_printf(&m, "agent %s\n", agent_sha);
	manifest_hash(base_hash, &m);
	dir = xasprintf("%s/rootfs", s->home);
	if ((r = mkdir_p(dir, 0755))) {
		err_setf(err, r, "cannot create '%s': %s", dir, strerror(-r));
		goto out;
	}
	base = xasprintf("%s/%s.sqfs", dir, base_hash);
	pkgs_path = xasprintf("%s/%s.pkgs", dir, base_hash);
	log = xasprintf("%s/%s.log", dir, base_hash);
	if (access(base, R_OK) || access(pkgs_path, R_OK)) {
		log_info("building root filesystem %s for %s (log %s)", base, s->spec, log);
		unlink(log);
		if ((r = build(s, pkgs, base, pkgs_path, log, err)))
			goto out;
		img.built = true;
	} else {
		log_debug("root filesystem %s is cached", base);
	}
	if (nf) {
		/* the image with files: keyed by the base and each file */
		buf_reset(&m);
		buf_printf(&m, "kcanary-rootfs-files %d\nbase %s\n", ROOTFS_RECIPE, base_hash);
		for (size_t i = 0; i < nf; i++)
			buf_printf(&m, "file %s %s\n", f[i].dst, f[i].sha256);
		manifest_hash(img.hash, &m);
		img.path = xasprintf("%s/%s.sqfs", dir, img.hash);
		if (access(img.path, R_OK)) {
			if ((r = files_layer(base, img.path, f, nf, log, err)))
				goto out;
			img.built = true;
		}
	} else {
		memcpy(img.hash, base_hash, sizeof(img.hash));
		img.path = base;
		base = NULL;
	}
	if (img.built) {
		img.build_s = clock_mono_s() - t0;
		log_info("built root filesystem %s in %.1f s", img.path, img.build_s);
	}
	if ((r = read_file(&text, NULL, pkgs_path, 16 << 20))) {
		err_setf(err, r, "cannot read '%s': %s", pkgs_path, strerror(-r));
		goto out;
	}
	img.packages = sorted_lines(text);
	img.files_json = files_to_json(f, nf);
	if (stat(img.path, &st) == 0)
		img.size_bytes = (int64_t)st.st_size;
	if ((r = rootfs_volume_key(img.volume_key, sizeof(img.volume_key), img.path, err)))
		goto out;
	*out = img;
	memset(&img, 0, sizeof(img));
out:
	rootfs_image_release(&img);
	rootfs_strv_free(pkgs);
	files_free(f, nf);
	buf_release(&m);
	free(dir);
	free(base);
	free(pkgs_path);
	free(log);
	free(text);
	return r;
}

int rootfs_volume_key(char *out, size_t size, const char *image_path, struct buf *err)
{
	char *side = xasprintf("%s.sha256", image_path), *tmp = NULL, *text = NULL;
	char hex[65] = "";
	unsigned long long stored = 0;
	struct stat st;
	FILE *f;
	int r = 0;

	if (stat(image_path, &st)) {
		r = err_setf(err, -errno, "cannot stat '%s': %s", image_path, strerror(errno));
		goto out;
	}
	/* the content hash kept beside the image: the image itself is not read */
	if (read_file(&text, NULL, side, 4096) == 0 &&
	    sscanf(text, "%64[0-9a-f] %llu", hex, &stored) == 2 && strlen(hex) == 64 &&
	    stored == (unsigned long long)st.st_size)
		goto done;
	if ((r = hash_file_hex(hex, image_path, err)))
		goto out;
	tmp = xasprintf("%s.tmp.%d", side, (int)getpid());
	if (!(f = fopen(tmp, "w")) || fprintf(f, "%s %llu\n", hex, (unsigned long long)st.st_size) < 0 ||
	    fclose(f)) {
		r = err_setf(err, -EIO, "cannot write '%s': %s", tmp, strerror(errno));
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, side)) {
		r = err_setf(err, -errno, "cannot rename '%s' to '%s': %s", tmp, side, strerror(errno));
		unlink(tmp);
		goto out;
	}
done:
	snprintf(out, size, "kc-sha256-%s-%llu.rootfs", hex, (unsigned long long)st.st_size);
out:
	free(side);
	free(tmp);
	free(text);
	return r;
}

bool rootfs_is_host(const char *spec)
{
	return spec && !strcmp(spec, ROOTFS_HOST);
}

int rootfs_host(struct rootfs_image *out, struct buf *err)
{
	static const char *const argv[] = { "dpkg-query", "-W", "-f=${Package} ${Version}\\n", NULL };
	char *text = NULL;
	struct buf m = BUF_INIT;
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = capture(&text, argv, false, "dpkg-query -W (the host's package list)", err)))
		return r;
	out->packages = sorted_lines(text);
	free(text);
	buf_printf(&m, "kcanary-rootfs-host %d\n%s", ROOTFS_RECIPE, out->packages);
	manifest_hash(out->hash, &m);
	buf_release(&m);
	out->path = xstrdup("/");
	out->files_json = xstrdup("[]");
	return 0;
}
