/* build.c - kernel builds with a merged config, one build dir per (base,
 * config), artefacts cached by (tree oid, config hash) (see build.h). */
#define LOG_MODULE "build"
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "build.h"
#include "log.h"
#include "util.h"

extern char **environ;

const char *const build_default_fragments[] = {
	"guest", "cgroup-wb", "fs", "probes", NULL,
};

/* Fixed so two builds of the same tree and config give the same image
 * (Documentation/kbuild/reproducible-builds.rst). */
static const char *const build_env[] = {
	"KBUILD_BUILD_TIMESTAMP=1970-01-01",
	"KBUILD_BUILD_USER=kcanary",
	"KBUILD_BUILD_HOST=kcanary",
	NULL,
};

static bool have_program(const char *name)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL;
	bool found = false;

	if (!path)
		return false;
	copy = xstrdup(path);
	for (dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		char *p = xasprintf("%s/%s", dir, name);
		found = access(p, X_OK) == 0;
		free(p);
	}
	free(copy);
	return found;
}

static char **make_envp(void)
{
	size_t n = 0, k = 0;
	char **envp;

	while (environ[n])
		n++;
	envp = xcalloc(n + 4, sizeof(*envp));
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "KBUILD_BUILD_", 13))
			envp[k++] = environ[i];
	for (size_t i = 0; build_env[i]; i++)
		envp[k++] = (char *)build_env[i];
	return envp;
}

/* A make run being watched: files compiled ("  CC" lines), the expected
 * total, the progress line (redrawn each second on a TTY, a new line each
 * minute in a log), and its CPU time at the end. */
struct run_ctx {
	const struct build_spec *spec;
	int ncc, expected;
	double cpu_s;           /* user + system seconds of make and its children */
	double t0, last_draw;
	bool tty, lines;
};

static void on_line(struct run_ctx *c, const char *line)
{
	if (!strncmp(line, "  CC ", 5))
		c->ncc++;
	if (c->tty || c->lines) {
		double now = clock_mono_s();
		if (now - c->last_draw >= (c->tty ? 1.0 : 60.0)) {
			int el = (int)(now - c->t0);
			const char *pre = c->tty ? "\r" : "", *post = c->tty ? " " : "\n";

			c->last_draw = now;
			if (c->expected > 0)
				fprintf(stderr, "%s  building %s: %d/%d files, %dm%02ds%s", pre,
					c->spec->label ? c->spec->label : "", c->ncc, c->expected,
					el / 60, el % 60, post);
			else
				fprintf(stderr, "%s  building %s: %d files, %dm%02ds%s", pre,
					c->spec->label ? c->spec->label : "", c->ncc, el / 60, el % 60,
					post);
			fflush(stderr);
		}
	}
}

/*
 * Run argv (in dir when not NULL) with stdout and stderr into log_fd and
 * stdin from /dev/null; with ctx, each output line also goes to on_line()
 * and ctx->cpu_s gets the CPU time. Returns the exit status (0 ok, > 0
 * failed), or a negative errno when it could not run.
 */
static int run(char *const argv[], const char *dir, int log_fd, struct run_ctx *ctx)
{
	posix_spawn_file_actions_t fa;
	int pfd[2] = { -1, -1 };
	char **envp = make_envp();
	pid_t pid;
	int st, rc;

	if (pipe(pfd) < 0) {
		free(envp);
		return -errno;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addclose(&fa, pfd[0]);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (dir)
		posix_spawn_file_actions_addchdir_np(&fa, dir);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	free(envp);
	close(pfd[1]);
	if (rc) {
		close(pfd[0]);
		return -rc;
	}
	{
		FILE *in = fdopen(pfd[0], "r");
		char *line = NULL;
		size_t cap = 0;
		ssize_t n;

		while ((n = getline(&line, &cap, in)) > 0) {
			if (write(log_fd, line, (size_t)n) != n)
				log_warn("cannot write the build log: %s", strerror(errno));
			if (ctx) {
				if (line[n - 1] == '\n')
					line[n - 1] = '\0';
				on_line(ctx, line);
			}
		}
		free(line);
		fclose(in);
	}
	{
		struct rusage ru;

		if (wait4(pid, &st, 0, &ru) < 0)
			return -errno;
		if (ctx)
			ctx->cpu_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
				     (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static int copy_file(const char *from, const char *to)
{
	char *data = NULL, *tmp;
	size_t len = 0;
	FILE *f;
	int r;

	if ((r = read_file(&data, &len, from, (size_t)1 << 31)))
		return r;
	tmp = xasprintf("%s.tmp", to);
	f = fopen(tmp, "w");
	if (!f || fwrite(data, 1, len, f) != len) {
		r = -errno ? -errno : -EIO;
		if (f)
			fclose(f);
		goto out;
	}
	if (fclose(f) || rename(tmp, to))
		r = -errno;
out:
	free(tmp);
	free(data);
	return r;
}

static bool same_content(const char *a, const char *b)
{
	char *x = NULL, *y = NULL;
	size_t xl = 0, yl = 0;
	bool same = false;

	if (!read_file(&x, &xl, a, (size_t)1 << 26) && !read_file(&y, &yl, b, (size_t)1 << 26))
		same = xl == yl && !memcmp(x, y, xl);
	free(x);
	free(y);
	return same;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Every "CONFIG_X=v" and "# CONFIG_X is not set" of each fragment must be in
 * config as asked; the ones that are not go to missing, one per line:
 * "CONFIG_X=y (fs.config; got: is not set)". */
static void check_options(struct buf *missing, const char *config,
			  const char *const *frags, size_t nfrags)
{
	for (size_t i = 0; i < nfrags; i++) {
		char *text = NULL;
		if (read_file(&text, NULL, frags[i], 1 << 20))
			continue;
		for (char *save = NULL, *l = strtok_r(text, "\n", &save); l;
		     l = strtok_r(NULL, "\n", &save)) {
			char sym[256], *have = NULL;
			bool unset = false;
			const char *p;

			if (!strncmp(l, "CONFIG_", 7)) {
				snprintf(sym, sizeof(sym), "%.*s", (int)strcspn(l, "="), l);
			} else if (!strncmp(l, "# CONFIG_", 9) && strstr(l, " is not set")) {
				snprintf(sym, sizeof(sym), "%.*s", (int)strcspn(l + 2, " "), l + 2);
				unset = true;
			} else {
				continue;
			}
			/* what the config has for sym */
			for (p = config; p && *p; ) {
				const char *nl = strchr(p, '\n');
				size_t n = nl ? (size_t)(nl - p) : strlen(p);
				size_t sl = strlen(sym);
				if (n > sl && !strncmp(p, sym, sl) && p[sl] == '=') {
					have = xstrndup(p, n);
					break;
				}
				p = nl ? nl + 1 : NULL;
			}
			if (unset ? have != NULL : !have || strcmp(have, l))
				buf_printf(missing, "%s%s (%s; got: %s)", missing->len ? ", " : "",
					   l, base_name(frags[i]), have ? have : "is not set");
			free(have);
		}
		free(text);
	}
}

char *build_first_error(const char *log, const char *prefix, char **where)
{
	const char *p = log, *hit = NULL, *fallback = NULL;
	size_t hit_len = 0, fb_len = 0, pl = prefix ? strlen(prefix) : 0;
	struct buf o = BUF_INIT;

	*where = NULL;
	while (p && *p && !hit) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (memmem(p, n, ": error: ", 9) || memmem(p, n, ": fatal error: ", 15) ||
		    memmem(p, n, "undefined reference to", 22)) {
			hit = p;
			hit_len = n;
		} else if (!fallback && memmem(p, n, "*** ", 4) && memmem(p, n, "Error", 5)) {
			fallback = p;
			fb_len = n;
		}
		p = nl ? nl + 1 : NULL;
	}
	if (!hit) {
		hit = fallback;
		hit_len = fb_len;
	}
	if (!hit)
		return NULL;
	/* drop every occurrence of the tree prefix */
	for (const char *q = hit; q < hit + hit_len; ) {
		if (pl && (size_t)(hit + hit_len - q) >= pl && !strncmp(q, prefix, pl)) {
			q += pl;
			continue;
		}
		buf_append(&o, q, 1);
		q++;
	}
	{
		/* "file:LINE:" at the start */
		const char *s = buf_str(&o), *c1 = strchr(s, ':');
		if (c1 && c1 > s && c1[1] >= '0' && c1[1] <= '9' && !memchr(s, ' ', (size_t)(c1 - s))) {
			size_t dl = strspn(c1 + 1, "0123456789");
			*where = xstrndup(s, (size_t)(c1 + 1 + dl - s));
		}
	}
	return buf_detach(&o);
}

static int read_int_file(const char *path)
{
	char *t = NULL;
	int v = 0;

	if (!read_file(&t, NULL, path, 64))
		v = atoi(t);
	free(t);
	return v;
}

/* Files a full build of this config compiles, for the progress line: what
 * this build dir counted last time, else what any build dir of the same
 * config (another base) counted; 0 when unknown. */
static int expected_files(const char *home, const char *build_dir, const char *cfgkey)
{
	char *own = xasprintf("%s/.kcanary-files", build_dir);
	char *pat = xasprintf("%s/build/*-%.12s/.kcanary-files", home, cfgkey);
	int n = read_int_file(own);
	glob_t g;

	if (n <= 0 && glob(pat, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			int v = read_int_file(g.gl_pathv[i]);
			if (v > n)
				n = v;
		}
		globfree(&g);
	}
	free(own);
	free(pat);
	return n;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

int build_kernel(struct build_result *out, struct repo *r, struct db *db,
		 const char *commit_hex, const struct build_spec *spec)
{
	const char *src = repo_workdir(r);
	const char *make = spec->make ? spec->make : "make";
	struct buf key = BUF_INIT, missing = BUF_INIT;
	char cfgkey[KC_OID_HEX], jobs[32], *cc_arg = NULL;
	char *staging = NULL, *sconfig = NULL, *bconfig = NULL, *lock_path = NULL;
	char *art = NULL, *cfglog = NULL, *config = NULL, *log_text = NULL, *prefix = NULL;
	char *ncc_path = NULL;
	struct db_kernel k;
	int lock_fd = -1, log_fd = -1, rc, ret = 0;
	int64_t kid = 0;

	memset(out, 0, sizeof(*out));
	memset(&k, 0, sizeof(k));
	k.build_s = -1;
	if (!src) {
		out->error = xstrdup("cannot build from a bare repository");
		return -EINVAL;
	}
	if ((ret = repo_checkout(r, commit_hex)) ||
	    (ret = repo_commit_tree(r, out->tree, commit_hex))) {
		out->error = xstrdup(repo_errmsg());
		return ret;
	}

	/* One build dir per (base, config request). */
	buf_printf(&key, "base-config %s\n", spec->base_config ? spec->base_config : "tinyconfig");
	if (spec->base_config) {
		char *t = NULL;
		if (read_file(&t, NULL, spec->base_config, 1 << 24)) {
			out->error = xasprintf("cannot read config '%s'", spec->base_config);
			ret = -ENOENT;
			goto out;
		}
		buf_puts(&key, t);
		free(t);
	}
	for (size_t i = 0; i < spec->nfragments; i++) {
		char *t = NULL;
		if (read_file(&t, NULL, spec->fragments[i], 1 << 20)) {
			out->error = xasprintf("cannot read config fragment '%s'", spec->fragments[i]);
			ret = -ENOENT;
			goto out;
		}
		buf_printf(&key, "fragment %s\n%s", base_name(spec->fragments[i]), t);
		free(t);
	}
	kc_hash_buf(cfgkey, key.ptr, key.len);
	out->build_dir = xasprintf("%s/build/%.12s-%.12s", spec->home, spec->base_hex, cfgkey);
	staging = xasprintf("%s.cfg", out->build_dir);
	lock_path = xasprintf("%s.lock", out->build_dir);
	if ((ret = mkdir_p(out->build_dir, 0755)) || (ret = mkdir_p(staging, 0755))) {
		out->error = xasprintf("cannot create '%s': %s", out->build_dir, strerror(-ret));
		goto out;
	}
	lock_fd = open(lock_path, O_CREAT | O_RDWR | O_CLOEXEC, 0644);
	if (lock_fd < 0 || flock(lock_fd, LOCK_EX) < 0) {
		ret = -errno;
		out->error = xasprintf("cannot lock '%s': %s", lock_path, strerror(errno));
		goto out;
	}

	snprintf(jobs, sizeof(jobs), "-j%ld", spec->jobs > 0 ? (long)spec->jobs
		 : sysconf(_SC_NPROCESSORS_ONLN));
	cc_arg = have_program("ccache") ? xstrdup("CC=ccache gcc") : xstrdup("CC=gcc");

	/* The config, in the staging dir. */
	sconfig = xasprintf("%s/.config", staging);
	bconfig = xasprintf("%s/.config", out->build_dir);
	cfglog = xasprintf("%s/config.log", staging);
	log_fd = open(cfglog, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
	if (log_fd < 0) {
		ret = -errno;
		out->error = xasprintf("cannot write '%s': %s", cfglog, strerror(errno));
		goto out;
	}
	{
		char *o_arg = xasprintf("O=%s", staging);
		char *merge = xasprintf("%s/scripts/kconfig/merge_config.sh", src);
		char **margv = xcalloc(spec->nfragments + 8, sizeof(*margv));
		size_t n = 0;
		const char *step;

		if (spec->base_config) {
			step = "copy the base config";
			rc = copy_file(spec->base_config, sconfig) ? 1 : 0;
		} else {
			char *tv[] = { (char *)make, (char *)"-C", (char *)src, o_arg, cc_arg,
				       (char *)"tinyconfig", NULL };
			step = "make tinyconfig";
			rc = run(tv, NULL, log_fd, NULL);
		}
		if (rc == 0) {
			margv[n++] = (char *)"sh";
			margv[n++] = merge;
			margv[n++] = (char *)"-m";
			margv[n++] = (char *)"-O";
			margv[n++] = staging;
			margv[n++] = sconfig;
			for (size_t i = 0; i < spec->nfragments; i++)
				margv[n++] = (char *)spec->fragments[i];
			step = "merge_config.sh";
			rc = run(margv, src, log_fd, NULL);
		}
		if (rc == 0) {
			char *ov[] = { (char *)make, (char *)"-C", (char *)src, o_arg, cc_arg,
				       (char *)"olddefconfig", NULL };
			step = "make olddefconfig";
			rc = run(ov, NULL, log_fd, NULL);
		}
		free(margv);
		free(merge);
		free(o_arg);
		if (rc) {
			out->error = xasprintf("config step '%s' failed (%s %d); see %s", step,
					       rc < 0 ? "error" : "status", rc, cfglog);
			ret = rc < 0 ? rc : 0;
			goto out;
		}
	}
	close(log_fd);
	log_fd = -1;
	if ((ret = read_file(&config, NULL, sconfig, 1 << 24))) {
		out->error = xasprintf("cannot read '%s'", sconfig);
		goto out;
	}
	check_options(&missing, config, spec->fragments, spec->nfragments);
	if (missing.len) {
		out->error = xasprintf("config options asked for but missing after olddefconfig: %s",
				       missing.ptr);
		goto out;
	}
	kc_hash_buf(out->config_hash, config, strlen(config));

	/* Built before? */
	if (db_kernel_find(db, &k, out->tree, out->config_hash) == 0 &&
	    k.build_status && !strcmp(k.build_status, "ok") && k.image_path &&
	    access(k.image_path, R_OK) == 0) {
		out->ok = out->cache_hit = true;
		out->build_s = k.build_s;
		out->kernel = k;
		memset(&k, 0, sizeof(k));
		goto out;
	}
	db_kernel_release(&k);
	k.build_s = -1;

	/* Replace the build dir's .config only when it changed, so make sees
	 * nothing new for a variant that only touched .c files. */
	if (!same_content(sconfig, bconfig) && (ret = copy_file(sconfig, bconfig))) {
		out->error = xasprintf("cannot write '%s': %s", bconfig, strerror(-ret));
		goto out;
	}
	art = xasprintf("%s/kernels/%s-%.12s", spec->home, out->tree, out->config_hash);
	if ((ret = mkdir_p(art, 0755))) {
		out->error = xasprintf("cannot create '%s': %s", art, strerror(-ret));
		goto out;
	}
	if ((ret = db_kernel_begin(db, &kid, out->tree, out->config_hash))) {
		out->error = xasprintf("cannot record the build: %s", db_errmsg(db));
		goto out;
	}
	k.build_log_path = xasprintf("%s/build.log", art);
	log_fd = open(k.build_log_path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
	if (log_fd < 0) {
		ret = -errno;
		out->error = xasprintf("cannot write '%s': %s", k.build_log_path, strerror(errno));
		goto out;
	}
	ncc_path = xasprintf("%s/.kcanary-files", out->build_dir);
	{
		char *o_arg = xasprintf("O=%s", out->build_dir);
		char *mv[] = { (char *)make, (char *)"-C", (char *)src, o_arg, jobs, cc_arg,
			       (char *)"LOCALVERSION=", (char *)"bzImage", NULL };
		struct run_ctx ctx = { .spec = spec, .t0 = clock_mono_s(),
				       .expected = expected_files(spec->home, out->build_dir, cfgkey),
				       .tty = spec->progress && isatty(2),
				       .lines = spec->progress && !isatty(2) };

		log_info("make %s %s bzImage in %s (log: %s)", o_arg, jobs, src, k.build_log_path);
		dprintf(log_fd, "# kcanary: make -C %s %s %s %s LOCALVERSION= bzImage\n",
			src, o_arg, jobs, cc_arg);
		rc = run(mv, NULL, log_fd, &ctx);
		out->build_s = clock_mono_s() - ctx.t0;
		out->files_compiled = ctx.ncc;
		out->cpu_s = ctx.cpu_s;
		if (ctx.tty)
			fprintf(stderr, "\r\033[K");
		free(o_arg);
		k.build_s = out->build_s;
		if (rc == 0 && ctx.ncc > read_int_file(ncc_path)) {
			char num[32];
			snprintf(num, sizeof(num), "%d\n", ctx.ncc);
			write_text(ncc_path, num);
		}
	}
	close(log_fd);
	log_fd = -1;
	if (rc != 0) {
		prefix = xasprintf("%s/", src);
		if (!read_file(&log_text, NULL, k.build_log_path, (size_t)1 << 30))
			out->error = build_first_error(log_text, prefix, &out->where);
		if (!out->error)
			out->error = xasprintf("make failed (status %d)", rc);
		k.build_error = xstrdup(out->error);
		db_kernel_finish(db, kid, "failed", &k);
		goto found;
	}
	{
		static const struct { const char *from, *to; } arts[] = {
			{ "arch/x86/boot/bzImage", "bzImage" },
			{ ".config", "config" },
			{ "System.map", "System.map" },
		};
		char *paths[3];
		for (int i = 0; i < 3; i++) {
			char *from = xasprintf("%s/%s", out->build_dir, arts[i].from);
			paths[i] = xasprintf("%s/%s", art, arts[i].to);
			if ((rc = copy_file(from, paths[i])) && !ret) {
				out->error = xasprintf("cannot store '%s': %s", from, strerror(-rc));
				ret = rc;
			}
			free(from);
		}
		k.image_path = paths[0];
		k.config_path = paths[1];
		k.system_map_path = paths[2];
		char *rel_path = xasprintf("%s/include/config/kernel.release", out->build_dir);
		if (!read_file(&k.release, NULL, rel_path, 256))
			k.release[strcspn(k.release, "\n")] = '\0';
		free(rel_path);
		if (ret) {
			k.build_error = xstrdup(out->error);
			db_kernel_finish(db, kid, "failed", &k);
			goto found;
		}
		if ((ret = db_kernel_finish(db, kid, "ok", &k))) {
			out->error = xasprintf("cannot record the build: %s", db_errmsg(db));
			goto found;
		}
		out->ok = true;
	}
found:
	db_kernel_release(&k);
	if (db_kernel_find(db, &out->kernel, out->tree, out->config_hash))
		memset(&out->kernel, 0, sizeof(out->kernel));
out:
	db_kernel_release(&k);
	if (log_fd >= 0)
		close(log_fd);
	if (lock_fd >= 0)
		close(lock_fd);
	buf_release(&key);
	buf_release(&missing);
	free(cc_arg);
	free(staging);
	free(sconfig);
	free(bconfig);
	free(lock_path);
	free(art);
	free(cfglog);
	free(config);
	free(log_text);
	free(prefix);
	free(ncc_path);
	return ret;
}

void build_result_release(struct build_result *res)
{
	if (!res)
		return;
	db_kernel_release(&res->kernel);
	free(res->build_dir);
	free(res->error);
	free(res->where);
	memset(res, 0, sizeof(*res));
}

/* kernels/ of this kcanary: $KCANARY_KERNELS_DIR, else next to the binary
 * (build/kcanary -> kernels/), else ./kernels. New string. */
char *build_kernels_dir(void)
{
	const char *env = getenv("KCANARY_KERNELS_DIR");
	char exe[PATH_MAX];
	ssize_t n;

	if (env && *env)
		return xstrdup(env);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			char *d = xasprintf("%s/../kernels", exe);
			char *g = xasprintf("%s/guest.config", d);
			bool ok = access(g, R_OK) == 0;
			free(g);
			if (ok)
				return d;
			free(d);
		}
	}
	return xstrdup("kernels");
}

char *build_fragment_path(const char *kdir, const char *name)
{
	size_t n = strlen(name);

	if (strchr(name, '/') || (n > 7 && !strcmp(name + n - 7, ".config")))
		return xstrdup(name);
	return xasprintf("%s/%s.config", kdir, name);
}
