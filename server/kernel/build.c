/* build.c - kernel builds with a merged config, one build dir per (base,
 * config), artefacts cached by (tree oid, config hash) (see build.h). */
#define LOG_MODULE "build"
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "kernel/build.h"
#include "error.h"
#include "log.h"
#include "proc.h"
#include "util.h"

extern char **environ;

/* The build dirs' parent inside the kernel tree (prepare_dirs()); git.c
 * and tree imports leave it alone. */
#define BUILD_DIR_NAME REPO_BUILD_DIR

const char *const build_default_fragments[] = {
	"guest", "cgroup-wb", "fs", "probes", NULL,
};

/* Fixed so two builds of the same tree and config give the same image
 * (the kernel's Documentation/kbuild/reproducible-builds.rst: "Timestamps",
 * "User, host"), and so ccache finds a file compiled in another tree at
 * another path (ccache(1), "Compiling in different directories": base_dir
 * turns absolute paths below it into paths relative to the working
 * directory; hash_dir false leaves the working directory out of the hash,
 * which gcc only puts into debug info; sloppiness time_macros lets a file
 * that uses __DATE__ or __TIME__ hit, which the kernel forbids anyway,
 * -Wdate-time). base_dir is the tree itself, CCACHE_BASEDIR=<tree> in
 * make_env(), and the build dir lies inside the tree
 * (prepare_dirs()), so the relative paths are the same in every tree. */
static const char *const build_env[] = {
	"KBUILD_BUILD_TIMESTAMP=1970-01-01",
	"KBUILD_BUILD_USER=kcanary",
	"KBUILD_BUILD_HOST=kcanary",
	"CCACHE_NOHASHDIR=1",
	"CCACHE_SLOPPINESS=time_macros",
	NULL,
};

/* Variables of ours that replace the caller's (matched up to the '='). */
static bool ours(const char *var)
{
	static const char *const names[] = { "KBUILD_BUILD_", "CCACHE_BASEDIR=",
					     "CCACHE_NOHASHDIR=", "CCACHE_HASHDIR=",
					     "CCACHE_SLOPPINESS=", "CCACHE_PREFIX=",
					     "DISTCC_HOSTS=", NULL };

	for (size_t i = 0; names[i]; i++)
		if (!strncmp(var, names[i], strlen(names[i])))
			return true;
	return false;
}

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

/* The environment of a build step, as changes to the caller's (proc.h):
 * ours over the caller's, with CCACHE_BASEDIR at tree, and for a build
 * through distcc (hosts not NULL) CCACHE_PREFIX=distcc and
 * DISTCC_HOSTS=hosts (ccache(1), "prefix_command": a cache miss is
 * compiled by "distcc gcc ..."); the caller's CCACHE_PREFIX and
 * DISTCC_HOSTS never reach a build that did not ask (each of the caller's
 * variables of ours() is removed), so the kernels row says truly whether
 * distcc built it. New strings in a new array: env_free(). */
static char **make_env(const char *tree, const char *hosts)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = xcalloc(n + 10, sizeof(*env));
	for (size_t i = 0; i < n; i++)
		if (ours(environ[i]))
			env[k++] = xstrndup(environ[i], strcspn(environ[i], "="));
	for (size_t i = 0; build_env[i]; i++)
		env[k++] = xstrdup(build_env[i]);
	if (tree)
		env[k++] = xasprintf("CCACHE_BASEDIR=%s", tree);
	if (hosts) {
		env[k++] = xstrdup("CCACHE_PREFIX=distcc");
		env[k++] = xasprintf("DISTCC_HOSTS=%s", hosts);
	}
	return env;
}

static void env_free(char **env)
{
	for (size_t i = 0; env[i]; i++)
		free(env[i]);
	free(env);
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
	char **full;            /* NULL, or gets the first line saying a disk is full */
};

/* Whether a line of a build step says a write found no space
 * (strerror(ENOSPC), strerror(EDQUOT): what gcc, as, ld, ccache, make and
 * the shell print). Seen as the lines stream, since the build log may be
 * on the file system that filled and miss them. */
static bool says_full(const char *line, size_t n)
{
	static const char *const says[] = { "No space left on device", "Disk quota exceeded" };

	for (size_t i = 0; i < sizeof(says) / sizeof(says[0]); i++)
		if (memmem(line, n, says[i], strlen(says[i])))
			return true;
	return false;
}

static void on_line(void *arg, const char *line)
{
	struct run_ctx *c = arg;

	if (!strncmp(line, "  CC ", 5))
		c->ncc++;
	if (c->full && !*c->full && says_full(line, strlen(line)))
		*c->full = xstrdup(line);
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
 * Run argv (in dir when not NULL; tree: the kernel tree, ccache's base_dir)
 * with stdout and stderr into log_fd and stdin from /dev/null; each output
 * line also goes to on_line() and ctx->cpu_s gets the CPU time. Returns
 * the exit status (0 ok, > 0 failed; 128 + N for signal N), or a negative
 * errno when it could not run.
 */
static int run(char *const argv[], const char *dir, const char *tree, int log_fd,
	       struct run_ctx *ctx)
{
	char **env = make_env(tree, ctx->spec->distcc);
	struct proc_spec s = { .argv = (const char *const *)argv, .dir = dir,
			       .env = (const char *const *)env, .out = PROC_FD, .out_fd = log_fd,
			       .err = PROC_STDOUT, .on_line = on_line, .line_arg = ctx };
	struct proc_outcome o;
	int rc = proc_run(&o, &s, NULL);

	env_free(env);
	if (rc)
		return rc;
	ctx->cpu_s = o.cpu_s;
	return o.signal ? 128 + o.signal : o.status;
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
static int expected_files(const char *tree, const char *build_dir, const char *cfgkey)
{
	char *own = xasprintf("%s/.kcanary-files", build_dir);
	char *pat = xasprintf("%s/" BUILD_DIR_NAME "/*-%.12s/.kcanary-files", tree, cfgkey);
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

/* What one build_kernel() call works with: the tree, the make words every
 * step shares, the dirs and the lock, and the kernels row as it is made. */
struct build_job {
	const struct build_spec *spec;
	struct repo *r;
	struct db *db;
	const char *src, *make;
	char cfgkey[KC_OID_HEX];        /* the config request: base config + fragments */
	char jobs[32], *cc_arg;
	char *staging, *sconfig, *bconfig, *lock_path, *cfglog, *art;
	char *full_line;                /* a step's first line saying a disk is full */
	int lock_fd;
	struct db_kernel k;
	int64_t kid;
};

static void build_job_release(struct build_job *b)
{
	db_kernel_release(&b->k);
	if (b->lock_fd >= 0)
		close(b->lock_fd);
	free(b->cc_arg);
	free(b->staging);
	free(b->sconfig);
	free(b->bconfig);
	free(b->lock_path);
	free(b->cfglog);
	free(b->art);
	free(b->full_line);
}

/* Check out commit_hex and take its tree id (half of the cache key). */
static int checkout(struct build_job *b, struct build_result *out, const char *commit_hex,
		    struct buf *err)
{
	int r;

	if (!b->src)
		return err_setf(err, -EINVAL, "cannot build from a bare repository");
	if ((r = repo_checkout(b->r, commit_hex, err)) ||
	    (r = repo_commit_tree(b->r, out->tree, commit_hex, err)))
		return r;
	return 0;
}

/* The config request's key: the base config's name and text, then each
 * fragment's name and text. One build dir per (base, key). */
static int config_request_key(struct build_job *b, struct buf *err)
{
	const struct build_spec *spec = b->spec;
	struct buf key = BUF_INIT;
	char *t = NULL;
	int r = 0;

	buf_printf(&key, "base-config %s\n", spec->base_config ? spec->base_config : "tinyconfig");
	if (spec->base_config) {
		if (read_file(&t, NULL, spec->base_config, 1 << 24)) {
			r = err_setf(err, -ENOENT, "cannot read config '%s'", spec->base_config);
			goto out;
		}
		buf_puts(&key, t);
		free(t);
		t = NULL;
	}
	for (size_t i = 0; i < spec->nfragments; i++) {
		if (read_file(&t, NULL, spec->fragments[i], 1 << 20)) {
			r = err_setf(err, -ENOENT, "cannot read config fragment '%s'",
				     spec->fragments[i]);
			goto out;
		}
		buf_printf(&key, "fragment %s\n%s", base_name(spec->fragments[i]), t);
		free(t);
		t = NULL;
	}
	kc_hash_buf(b->cfgkey, key.ptr, key.len, NULL);   /* hashing memory cannot fail */
out:
	buf_release(&key);
	return r;
}

/* <tree>/.kcanary-build/<base>-<key>/ and its staging dir, locked against
 * another kcanary building in the same dir. Inside the tree so that the
 * build dir's path relative to the tree, which is what ccache hashes once
 * base_dir is the tree, is the same in every tree (a compare's tree and a
 * bisection's); a dot name, which the kernel's .gitignore ignores. */
static int prepare_dirs(struct build_job *b, struct build_result *out, struct buf *err)
{
	int r;

	out->build_dir = xasprintf("%s/" BUILD_DIR_NAME "/%.12s-%.12s", b->src, b->spec->base_hex,
				   b->cfgkey);
	b->staging = xasprintf("%s.cfg", out->build_dir);
	b->lock_path = xasprintf("%s.lock", out->build_dir);
	b->sconfig = xasprintf("%s/.config", b->staging);
	b->bconfig = xasprintf("%s/.config", out->build_dir);
	b->cfglog = xasprintf("%s/config.log", b->staging);
	if ((r = mkdir_p(out->build_dir, 0755)) || (r = mkdir_p(b->staging, 0755)))
		return err_setf(err, r, "cannot create '%s': %s", out->build_dir, strerror(-r));
	b->lock_fd = open(b->lock_path, O_CREAT | O_RDWR | O_CLOEXEC, 0644);
	if (b->lock_fd < 0 || flock(b->lock_fd, LOCK_EX) < 0)
		return err_setf(err, -errno, "cannot lock '%s': %s", b->lock_path, strerror(errno));
	return 0;
}

/* The config steps in the staging dir: tinyconfig (or the base config),
 * merge_config.sh with the fragments, olddefconfig. Returns 0 when they
 * ran (*failed_step: the one that exited non-zero with *status, or NULL),
 * a negative errno when one could not be started. */
static int run_config_steps(struct build_job *b, int log_fd, const char **failed_step,
			    int *status)
{
	const struct build_spec *spec = b->spec;
	char *o_arg = xasprintf("O=%s", b->staging);
	char *merge = xasprintf("%s/scripts/kconfig/merge_config.sh", b->src);
	char **margv = xcalloc(spec->nfragments + 8, sizeof(*margv));
	struct run_ctx ctx = { .spec = spec, .full = &b->full_line };
	size_t n = 0;
	const char *step;
	int rc;

	if (spec->base_config) {
		step = "copy the base config";
		rc = copy_file(spec->base_config, b->sconfig) ? 1 : 0;
	} else {
		char *tv[] = { (char *)b->make, (char *)"-C", (char *)b->src, o_arg, b->cc_arg,
			       (char *)"tinyconfig", NULL };
		step = "make tinyconfig";
		rc = run(tv, NULL, b->src, log_fd, &ctx);
	}
	if (rc == 0) {
		margv[n++] = (char *)"sh";
		margv[n++] = merge;
		margv[n++] = (char *)"-m";
		margv[n++] = (char *)"-O";
		margv[n++] = b->staging;
		margv[n++] = b->sconfig;
		for (size_t i = 0; i < spec->nfragments; i++)
			margv[n++] = (char *)spec->fragments[i];
		step = "merge_config.sh";
		rc = run(margv, b->src, b->src, log_fd, &ctx);
	}
	if (rc == 0) {
		char *ov[] = { (char *)b->make, (char *)"-C", (char *)b->src, o_arg, b->cc_arg,
			       (char *)"olddefconfig", NULL };
		step = "make olddefconfig";
		rc = run(ov, NULL, b->src, log_fd, &ctx);
	}
	free(margv);
	free(merge);
	free(o_arg);
	*failed_step = rc ? step : NULL;
	*status = rc;
	return rc < 0 ? rc : 0;
}

/* The first line of a build log that says a write found no space
 * (strerror(ENOSPC), strerror(EDQUOT): what gcc, as, ld, ccache, make and
 * the shell print), with prefix removed; NULL when there is none. New
 * string. */
static char *full_disk_line(const char *log, const char *prefix)
{
	size_t pl = strlen(prefix);

	for (const char *p = log; p && *p; ) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (says_full(p, n)) {
			struct buf o = BUF_INIT;
			for (size_t k = 0; k < n; k++) {
				if (n - k >= pl && !strncmp(p + k, prefix, pl)) {
					k += pl - 1;
					continue;
				}
				buf_append(&o, p + k, 1);
			}
			return buf_detach(&o);
		}
		p = nl ? nl + 1 : NULL;
	}
	return NULL;
}

/* Of the places a build writes (the build dir, the artefact dir, ccache's
 * dir, the compiler's temporary dir), the one with the least space left
 * for an unprivileged writer (statvfs f_bavail): the one that filled. */
static const char *fullest_place(struct build_job *b, const char *build_dir, const char **what)
{
	const char *env_cc = getenv("CCACHE_DIR"), *env_tmp = getenv("TMPDIR");
	const char *paths[] = { build_dir, b->art, env_cc, env_tmp ? env_tmp : "/tmp" };
	static const char *const names[] = { "build dir", "artefact dir", "ccache dir",
					     "temporary dir" };
	unsigned long long best = ~0ull;
	const char *at = build_dir;

	*what = names[0];
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct statvfs sv;
		if (paths[i] && statvfs(paths[i], &sv) == 0 &&
		    (unsigned long long)sv.f_bavail * sv.f_frsize < best) {
			best = (unsigned long long)sv.f_bavail * sv.f_frsize;
			at = paths[i];
			*what = names[i];
		}
	}
	return at;
}

/* A build step stopped by a full disk (line: the log's line saying so):
 * err names the full place, its free space and the log, and says to free
 * space and resume; the kernels row (kid > 0) keeps it as its error, when
 * the store can still be written. Returns -ENOSPC. */
static int disk_full(struct build_job *b, struct build_result *out, const char *line,
		     const char *log_path, struct buf *err)
{
	const char *what, *at = fullest_place(b, out->build_dir, &what);
	char *file = xasprintf("%s/.", at);   /* buf_free_space() takes a file in the dir */

	buf_reset(err);
	buf_printf(err, "the build of '%s' stopped: the file system of the %s '%s' is full",
		   b->spec->label ? b->spec->label : b->spec->base_hex, what, at);
	buf_free_space(err, file);
	buf_printf(err, " (make said, in %s: %s); free space there, then run the build again ('kcanary"
		   " resume JOB' for a compare)", log_path, line);
	if (b->kid > 0) {
		b->k.build_error = xstrdup(buf_str(err));
		db_kernel_finish(b->db, b->kid, "failed", &b->k, NULL);   /* err says why */
	}
	free(file);
	return -ENOSPC;
}

/*
 * stage_config - make the merged config in the staging dir and check that
 * every option the fragments ask for survived. On 0 either *config is the
 * config's text (new string) and out->config_hash its hash, or *config is
 * NULL and out->error says which step failed or which options are missing
 * (an outcome: the build is not ok). Negative errno when a step could not
 * be run or a file not written.
 */
static int stage_config(struct build_job *b, struct build_result *out, char **config,
			struct buf *err)
{
	struct buf missing = BUF_INIT;
	const char *failed = NULL;
	char *text = NULL;
	int log_fd, status = 0, r;

	*config = NULL;
	log_fd = open(b->cfglog, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
	if (log_fd < 0)
		return err_setf(err, -errno, "cannot write '%s': %s", b->cfglog, strerror(errno));
	r = run_config_steps(b, log_fd, &failed, &status);
	close(log_fd);
	if (r)
		return err_setf(err, r, "config step '%s' could not be run (%s); see %s", failed,
				strerror(-r), b->cfglog);
	if (failed) {
		char *log_text = NULL, *full = NULL, *prefix = xasprintf("%s/", b->src);

		if (b->full_line)
			full = full_disk_line(b->full_line, prefix);
		else if (!read_file(&log_text, NULL, b->cfglog, 1 << 24))
			full = full_disk_line(log_text, prefix);
		if (full)
			r = disk_full(b, out, full, b->cfglog, err);
		else
			out->error = xasprintf("config step '%s' failed (status %d); see %s", failed,
					       status, b->cfglog);
		free(full);
		free(log_text);
		free(prefix);
		return r;
	}
	if ((r = read_file(&text, NULL, b->sconfig, 1 << 24)))
		return err_setf(err, r, "cannot read '%s'", b->sconfig);
	check_options(&missing, text, b->spec->fragments, b->spec->nfragments);
	if (missing.len) {
		out->error = xasprintf("config options asked for but missing after olddefconfig: %s",
				       missing.ptr);
		free(text);
	} else {
		kc_hash_buf(out->config_hash, text, strlen(text), NULL);
		*config = text;
	}
	buf_release(&missing);
	return 0;
}

/* Built before? A stored ok build of (tree, config hash) whose image is
 * still there becomes out's kernel. */
static bool cache_lookup(struct build_job *b, struct build_result *out)
{
	struct db_kernel k = { 0 };

	/* a store that cannot answer is a miss: the build's own writes then
	 * say what is wrong with it */
	if (db_kernel_find(b->db, &k, out->tree, out->config_hash, NULL) == 0 &&
	    k.build_status && !strcmp(k.build_status, "ok") && k.image_path &&
	    access(k.image_path, R_OK) == 0) {
		out->ok = out->cache_hit = true;
		out->build_s = k.build_s;
		out->kernel = k;
		return true;
	}
	db_kernel_release(&k);
	return false;
}

/*
 * run_make - `make O=<build dir> bzImage` with the build log in the
 * artefact dir, after replacing the build dir's .config only when it
 * changed (so make sees nothing new for a variant that only touched .c
 * files) and starting the kernels row. *make_rc: make's exit status.
 */
static int run_make(struct build_job *b, struct build_result *out, int *make_rc,
		    struct buf *err)
{
	const struct build_spec *spec = b->spec;
	char *o_arg = NULL, *ncc_path = NULL;
	int log_fd = -1, r;

	if (!same_content(b->sconfig, b->bconfig) && (r = copy_file(b->sconfig, b->bconfig)))
		return err_setf(err, r, "cannot write '%s': %s", b->bconfig, strerror(-r));
	b->art = xasprintf("%s/kernels/%s-%.12s", spec->home, out->tree, out->config_hash);
	if ((r = mkdir_p(b->art, 0755)))
		return err_setf(err, r, "cannot create '%s': %s", b->art, strerror(-r));
	if ((r = db_kernel_begin(b->db, &b->kid, out->tree, out->config_hash, err)))
		return r;
	b->k.build_log_path = xasprintf("%s/build.log", b->art);
	log_fd = open(b->k.build_log_path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
	if (log_fd < 0)
		return err_setf(err, -errno, "cannot write '%s': %s", b->k.build_log_path,
				strerror(errno));
	ncc_path = xasprintf("%s/.kcanary-files", out->build_dir);
	o_arg = xasprintf("O=%s", out->build_dir);
	{
		char *mv[] = { (char *)b->make, (char *)"-C", (char *)b->src, o_arg, b->jobs,
			       b->cc_arg, (char *)"LOCALVERSION=", (char *)"bzImage", NULL };
		struct run_ctx ctx = { .spec = spec, .t0 = clock_mono_s(), .full = &b->full_line,
				       .expected = expected_files(b->src, out->build_dir, b->cfgkey),
				       .tty = spec->progress && isatty(2),
				       .lines = spec->progress && !isatty(2) };

		log_info("make %s %s bzImage in %s (log: %s)", o_arg, b->jobs, b->src,
			 b->k.build_log_path);
		dprintf(log_fd, "# kcanary: %s%s%smake -C %s %s %s %s LOCALVERSION= bzImage\n",
			spec->distcc ? "CCACHE_PREFIX=distcc DISTCC_HOSTS='" : "",
			spec->distcc ? spec->distcc : "", spec->distcc ? "' " : "",
			b->src, o_arg, b->jobs, b->cc_arg);
		*make_rc = run(mv, NULL, b->src, log_fd, &ctx);
		out->build_s = clock_mono_s() - ctx.t0;
		out->files_compiled = ctx.ncc;
		out->cpu_s = ctx.cpu_s;
		if (ctx.tty)
			fprintf(stderr, "\r\033[K");
		b->k.build_s = out->build_s;
		/* the full build's file count, for the next progress line */
		if (*make_rc == 0 && ctx.ncc > read_int_file(ncc_path)) {
			char num[32];
			snprintf(num, sizeof(num), "%d\n", ctx.ncc);
			write_text(ncc_path, num);
		}
	}
	close(log_fd);
	free(o_arg);
	free(ncc_path);
	return 0;
}

/* A failed make: its first error (file:line, tree prefix removed) as
 * out->error and on the kernels row; a full disk is an error (-ENOSPC,
 * disk_full()), not the build's outcome, so that the variant is built
 * again once there is space. */
static int record_make_failure(struct build_job *b, struct build_result *out, int make_rc,
			       struct buf *err)
{
	char *prefix = xasprintf("%s/", b->src), *log_text = NULL, *full = NULL;
	int r;

	/* the line as make printed it: the log may be on the full disk */
	if (b->full_line && (full = full_disk_line(b->full_line, prefix))) {
		r = disk_full(b, out, full, b->k.build_log_path, err);
		goto out;
	}
	if (!read_file(&log_text, NULL, b->k.build_log_path, (size_t)1 << 30)) {
		if ((full = full_disk_line(log_text, prefix))) {
			r = disk_full(b, out, full, b->k.build_log_path, err);
			goto out;
		}
		out->error = build_first_error(log_text, prefix, &out->where);
	}
	if (!out->error)
		out->error = xasprintf("make failed (status %d)", make_rc);
	b->k.build_error = xstrdup(out->error);
	r = db_kernel_finish(b->db, b->kid, "failed", &b->k, err);
out:
	free(full);
	free(prefix);
	free(log_text);
	return r;
}

/* Keep bzImage, .config and System.map in the artefact dir, with the
 * release, and finish the kernels row as ok. */
static int store_artefacts(struct build_job *b, struct build_result *out, struct buf *err)
{
	static const struct { const char *from, *to; } arts[] = {
		{ "arch/x86/boot/bzImage", "bzImage" },
		{ ".config", "config" },
		{ "System.map", "System.map" },
	};
	char *paths[3], *rel_path, *why = NULL;
	int r = 0, rc;

	for (int i = 0; i < 3; i++) {
		char *from = xasprintf("%s/%s", out->build_dir, arts[i].from);
		paths[i] = xasprintf("%s/%s", b->art, arts[i].to);
		if ((rc = copy_file(from, paths[i])) && !r) {
			why = xasprintf("cannot store '%s': %s", from, strerror(-rc));
			r = rc;
		}
		free(from);
	}
	b->k.image_path = paths[0];
	b->k.config_path = paths[1];
	b->k.system_map_path = paths[2];
	rel_path = xasprintf("%s/include/config/kernel.release", out->build_dir);
	if (!read_file(&b->k.release, NULL, rel_path, 256))
		b->k.release[strcspn(b->k.release, "\n")] = '\0';
	free(rel_path);
	if (r) {
		b->k.build_error = why;
		db_kernel_finish(b->db, b->kid, "failed", &b->k, NULL);   /* err says why */
		return err_setf(err, r, "%s", why);
	}
	if ((r = db_kernel_finish(b->db, b->kid, "ok", &b->k, err)))
		return r;
	out->ok = true;
	return 0;
}

int build_distcc_jobs(const char *hosts, long ncpu)
{
	char *copy = xstrdup(hosts), *save = NULL;
	long jobs = ncpu > 0 ? ncpu : 1;

	for (char *t = strtok_r(copy, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save)) {
		char *slash, *end;
		long limit;

		if (!strncmp(t, "--", 2))
			continue;                      /* --randomize, --localslots=N */
		t[strcspn(t, ",")] = '\0';             /* ,lzo ,cpp options */
		slash = strchr(t, '/');
		limit = !strncmp(t, "localhost", 9) ? 2 : 4;
		if (slash && (limit = strtol(slash + 1, &end, 10)) < 1)
			limit = 1;
		jobs += limit;
	}
	free(copy);
	return jobs > 1024 ? 1024 : (int)jobs;
}

/* --distcc: distcc must be installed here (the hosts need distccd and the
 * same compiler). */
static int distcc_check(const struct build_spec *spec, struct buf *err)
{
	if (!spec->distcc)
		return 0;
	if (!*spec->distcc || strspn(spec->distcc, " \t") == strlen(spec->distcc))
		return err_setf(err, -EINVAL, "--distcc: expected hosts (\"HOST[:PORT][/LIMIT] ...\","
				" distcc(1)), got an empty list");
	if (!have_program("distcc"))
		return err_setf(err, -ENOENT, "--distcc %s: no distcc on this machine's PATH"
				" (make deps installs it)", spec->distcc);
	return 0;
}

int build_kernel(struct build_result *out, struct repo *r, struct db *db,
		 const char *commit_hex, const struct build_spec *spec, struct buf *err)
{
	struct build_job b = { .spec = spec, .r = r, .db = db, .src = repo_workdir(r),
			       .make = spec->make ? spec->make : "make", .lock_fd = -1 };
	char *config = NULL;
	int ret, make_rc = 0;

	memset(out, 0, sizeof(*out));
	b.k.build_s = -1;
	if ((ret = distcc_check(spec, err)) ||
	    (ret = checkout(&b, out, commit_hex, err)) ||
	    (ret = config_request_key(&b, err)) ||
	    (ret = prepare_dirs(&b, out, err)))
		goto out;
	snprintf(b.jobs, sizeof(b.jobs), "-j%ld", spec->jobs > 0 ? (long)spec->jobs : spec->distcc ?
		 (long)build_distcc_jobs(spec->distcc, sysconf(_SC_NPROCESSORS_ONLN)) :
		 sysconf(_SC_NPROCESSORS_ONLN));
	/* through ccache, distcc is its prefix command (make_env()) */
	b.cc_arg = have_program("ccache") ? xstrdup("CC=ccache gcc") :
		   xstrdup(spec->distcc ? "CC=distcc gcc" : "CC=gcc");
	b.k.distcc_hosts = spec->distcc ? xstrdup(spec->distcc) : NULL;
	if ((ret = stage_config(&b, out, &config, err)) || !config)
		goto out;
	if (cache_lookup(&b, out))
		goto out;
	if ((ret = run_make(&b, out, &make_rc, err)))
		goto out;
	if (make_rc != 0)
		ret = record_make_failure(&b, out, make_rc, err);
	else
		ret = store_artefacts(&b, out, err);
	/* the row as stored, for a failed build too (its log, its error) */
	if (db_kernel_find(db, &out->kernel, out->tree, out->config_hash, NULL))
		memset(&out->kernel, 0, sizeof(out->kernel));
out:
	build_job_release(&b);
	free(config);
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
	return exe_sibling("KCANARY_KERNELS_DIR", "../kernels", "guest.config", "kernels");
}

char *build_fragment_path(const char *kdir, const char *name)
{
	size_t n = strlen(name);

	if (strchr(name, '/') || (n > 7 && !strcmp(name + n - 7, ".config")))
		return xstrdup(name);
	return xasprintf("%s/%s.config", kdir, name);
}
