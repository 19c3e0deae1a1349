/* proc.c - the one subprocess helper: fork and execve with everything made
 * before the fork, pipes read at once with poll (see proc.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "proc.h"

extern char **environ;

struct proc {
	pid_t pid;
	bool reaped;
	struct proc_outcome o;
	char *tail_path;        /* stderr's file, read back for the tail; NULL: none */
};

/* Everything a child needs, made before the fork. */
struct launch {
	char *path;             /* the program, found on PATH */
	char **envp;            /* NULL: environ */
	int src[3];             /* the child's 0, 1, 2 come from these; -1: ours as is */
	bool err_to_out;        /* the child's 2 is its 1 */
	int rd[2];              /* our read ends of the stdout and stderr pipes; -1 */
	int sink[2];            /* where a piped stream's bytes go on our side; -1: a buf
				 * or nowhere */
	struct buf *cap[2];     /* a piped stream's capture; NULL: none */
	int sink_file[2];       /* a sink we opened (PROC_FILE read through us):
				 * ours until launch_release(); -1 none */
	int own[8];             /* descriptors to close in the parent after the fork */
	size_t nown;
	char *tail_path;
};

/* What the child sends back through its close-on-exec pipe when it could
 * not get to its program. */
struct child_fail {
	int step;               /* enum child_step */
	int code;               /* negative errno */
};

enum child_step { STEP_FDS, STEP_CHDIR, STEP_SETUP, STEP_EXEC };

/* Move fd to 3 or above (close-on-exec), so that setting the child's 0, 1
 * and 2 cannot overwrite it: a process started with one of those closed
 * gets them back from open() and pipe(). */
static int fd_high(int fd)
{
	int h;

	if (fd < 0 || fd > 2)
		return fd;
	h = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return h;
}

static void launch_init(struct launch *L)
{
	memset(L, 0, sizeof(*L));
	for (int i = 0; i < 3; i++)
		L->src[i] = -1;
	L->rd[0] = L->rd[1] = L->sink[0] = L->sink[1] = -1;
	L->sink_file[0] = L->sink_file[1] = -1;
}

static void launch_release(struct launch *L)
{
	for (size_t i = 0; i < L->nown; i++)
		close(L->own[i]);
	for (int i = 0; i < 2; i++) {
		if (L->rd[i] >= 0)
			close(L->rd[i]);
		if (L->sink_file[i] >= 0)
			close(L->sink_file[i]);
	}
	free(L->path);
	free(L->envp);
	free(L->tail_path);
	launch_init(L);
}

static int own(struct launch *L, int fd)
{
	fd = fd_high(fd);
	if (fd >= 0)
		L->own[L->nown++] = fd;
	return fd;
}

/* argv0 itself when it holds a '/', else the first executable dir/argv0 of
 * PATH (execvp's default "/bin:/usr/bin" without one). */
static int find_program(char **out, const char *argv0)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL;
	int r = -ENOENT;

	if (!*argv0)
		return -ENOENT;
	if (strchr(argv0, '/')) {
		*out = xstrdup(argv0);
		return 0;
	}
	copy = xstrdup(path && *path ? path : "/bin:/usr/bin");
	for (dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char *p = xasprintf("%s/%s", *dir ? dir : ".", argv0);
		struct stat st;

		if (!stat(p, &st) && S_ISREG(st.st_mode)) {
			if (!access(p, X_OK)) {
				*out = p;
				r = 0;
				break;
			}
			r = -EACCES;
		}
		free(p);
	}
	free(copy);
	return r;
}

/* Our environment with changes applied: "NAME=VALUE" sets, "NAME" removes.
 * The array is new; its strings are borrowed. */
static char **make_envp(const char *const *changes)
{
	size_t n = 0, nc = 0, k = 0;
	char **envp;

	while (environ[n])
		n++;
	while (changes[nc])
		nc++;
	envp = xcalloc(n + nc + 1, sizeof(*envp));
	for (size_t i = 0; i < n; i++) {
		size_t len = strcspn(environ[i], "=");
		bool changed = false;

		for (size_t j = 0; j < nc && !changed; j++)
			changed = strcspn(changes[j], "=") == len && !strncmp(changes[j], environ[i], len);
		if (!changed)
			envp[k++] = environ[i];
	}
	for (size_t j = 0; j < nc; j++)
		if (strchr(changes[j], '='))
			envp[k++] = (char *)changes[j];
	return envp;
}

static int open_null(struct launch *L, int flags, struct buf *err)
{
	int fd = own(L, open("/dev/null", flags | O_CLOEXEC));

	if (fd < 0)
		return err_setf(err, -errno, "cannot open /dev/null: %s", strerror(errno));
	return fd;
}

/* A pipe whose write end becomes the child's descriptor t (1 or 2) and
 * whose read end is ours. */
static int make_pipe(struct launch *L, int t, struct buf *err)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC))
		return err_setf(err, -errno, "cannot make a pipe: %s", strerror(errno));
	L->rd[t - 1] = fd_high(p[0]);
	L->src[t] = own(L, p[1]);
	if (L->rd[t - 1] < 0 || L->src[t] < 0)
		return err_setf(err, -errno, "cannot make a pipe: %s", strerror(errno));
	return 0;
}

/* Set up the child's descriptor t (1 stdout, 2 stderr) from how, given
 * whether its bytes must pass through us (line reading). */
static int setup_output(struct launch *L, int t, enum proc_io how, struct buf *cap,
			const char *path, bool append, int fd, bool through_us, struct buf *err)
{
	int r, file = -1;

	switch (how) {
	case PROC_NULL:
		if (!through_us)
			return (r = open_null(L, O_WRONLY, err)) < 0 ? r : (L->src[t] = r, 0);
		break;
	case PROC_INHERIT:
		if (!through_us)
			return 0;
		L->sink[t - 1] = t;
		break;
	case PROC_CAPTURE:
		if (!cap)
			return err_setf(err, -EINVAL, "a capture without a buffer");
		L->cap[t - 1] = cap;
		break;
	case PROC_FILE:
		if (!path)
			return err_setf(err, -EINVAL, "an output file without a path");
		/* the child's own descriptor is closed on our side after the
		 * fork; one we write through (on_line) stays ours until the end */
		file = fd_high(open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC),
				    0644));
		if (file < 0)
			return err_setf(err, -errno, "cannot open '%s': %s", path, strerror(errno));
		if (t == 2 || L->err_to_out)
			L->tail_path = xstrdup(path);
		if (!through_us) {
			L->own[L->nown++] = file;
			return (L->src[t] = file, 0);
		}
		L->sink[t - 1] = L->sink_file[t - 1] = file;
		break;
	case PROC_FD:
		if (fd < 0)
			return err_setf(err, -EINVAL, "an output descriptor %d", fd);
		if (!through_us)
			return (L->src[t] = fd, 0);
		L->sink[t - 1] = fd;
		break;
	default:
		return err_setf(err, -EINVAL, "output %d: not a place for it", (int)how);
	}
	return make_pipe(L, t, err);
}

static int prepare(struct launch *L, const struct proc_spec *s, bool may_pipe, struct buf *err)
{
	int r;

	if (!s->argv || !s->argv[0])
		return err_setf(err, -EINVAL, "no program to run");
	if (!may_pipe && (s->out == PROC_CAPTURE || s->err == PROC_CAPTURE || s->on_line))
		return err_setf(err, -EINVAL, "cannot start '%s': nobody would read its output",
				s->argv[0]);
	if ((r = find_program(&L->path, s->argv[0])))
		return err_setf(err, r, "cannot run '%s': %s", s->argv[0], strerror(-r));
	if (s->env)
		L->envp = make_envp(s->env);
	switch (s->in) {
	case PROC_NULL:
		if ((r = open_null(L, O_RDONLY, err)) < 0)
			return r;
		L->src[0] = r;
		break;
	case PROC_INHERIT:
		break;
	case PROC_FD:
		L->src[0] = s->in_fd;
		break;
	default:
		return err_setf(err, -EINVAL, "stdin %d: not a place to read from", (int)s->in);
	}
	L->err_to_out = s->err == PROC_STDOUT;
	if ((r = setup_output(L, 1, s->out, s->out_buf, s->out_path, s->out_append, s->out_fd,
			      s->on_line != NULL, err)))
		return r;
	if (L->err_to_out)
		return 0;
	return setup_output(L, 2, s->err, s->err_buf, s->err_path, s->err_append, s->err_fd,
			    false, err);
}

/* The child, after fork: only async-signal-safe calls. Never returns. */
static void child(const struct launch *L, const struct proc_spec *s, int report)
{
	struct child_fail f = { STEP_FDS, 0 };
	sigset_t none;
	int src[3];

	/* a caller's blocked SIGTERM (kcanary serve blocks it in every
	 * thread) or ignored SIGPIPE is not the program's: exec keeps both */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	for (int t = 0; t < 3; t++) {
		src[t] = L->src[t];
		/* a caller's descriptor 0-2 that a dup2 below would overwrite */
		if (src[t] >= 0 && src[t] < 3 && src[t] != t && (src[t] = fcntl(src[t], F_DUPFD, 3)) < 0)
			goto fail;
	}
	for (int t = 0; t < 3; t++)
		if (src[t] >= 0 && src[t] != t && dup2(src[t], t) < 0)
			goto fail;
	if (L->err_to_out && dup2(1, 2) < 0)
		goto fail;
	/* nothing else crosses exec but the report pipe, until exec closes it */
	if (report > 3)
		close_range(3, (unsigned)report - 1, 0);
	close_range((unsigned)report + 1, ~0U, 0);
	f.step = STEP_CHDIR;
	if (s->dir && chdir(s->dir))
		goto fail;
	f.step = STEP_SETUP;
	if (s->child_setup && (f.code = s->child_setup(s->setup_arg)))
		goto report;
	f.step = STEP_EXEC;
	execve(L->path, (char *const *)s->argv, L->envp ? L->envp : environ);
fail:
	f.code = -errno;
report:
	(void)!write(report, &f, sizeof(f));
	_exit(127);
}

static void name_prog(struct proc_outcome *o, const char *argv0)
{
	const char *slash = strrchr(argv0, '/');

	memset(o, 0, sizeof(*o));
	o->status = -1;
	snprintf(o->prog, sizeof(o->prog), "%s", slash && slash[1] ? slash + 1 : argv0);
}

static void set_ended(struct proc_outcome *o, int ws, const struct rusage *ru)
{
	o->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
	o->signal = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
	if (ru)
		o->cpu_s = (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 +
			   (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
}

/* Fork and exec; *pid_out on success. The parent's copies of the child's
 * descriptors are closed here, the read ends stay in L. */
static int launch(pid_t *pid_out, struct launch *L, const struct proc_spec *s, struct buf *err)
{
	struct child_fail f = { 0, 0 };
	int rep[2], ws;
	ssize_t n;
	pid_t pid;

	if (pipe2(rep, O_CLOEXEC))
		return err_setf(err, -errno, "cannot make a pipe: %s", strerror(errno));
	rep[0] = fd_high(rep[0]);
	rep[1] = fd_high(rep[1]);
	pid = fork();
	if (pid == 0)
		child(L, s, rep[1]);
	close(rep[1]);
	for (size_t i = 0; i < L->nown; i++)
		close(L->own[i]);
	L->nown = 0;
	if (pid < 0) {
		close(rep[0]);
		return err_setf(err, -errno, "cannot start '%s': fork: %s", s->argv[0], strerror(errno));
	}
	while ((n = read(rep[0], &f, sizeof(f))) < 0 && errno == EINTR)
		;
	close(rep[0]);
	if (n <= 0) {
		*pid_out = pid;
		return 0;
	}
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	if (f.code >= 0)
		f.code = -EIO;
	switch (f.step) {
	case STEP_CHDIR:
		return err_setf(err, f.code, "cannot run '%s' in '%s': %s", s->argv[0], s->dir,
				strerror(-f.code));
	case STEP_SETUP:
		return err_setf(err, f.code, "cannot run '%s': %s: %s", s->argv[0],
				s->setup_what ? s->setup_what : "its setup", strerror(-f.code));
	default:
		return err_setf(err, f.code, "cannot run '%s': %s", s->argv[0], strerror(-f.code));
	}
}

/* Keep the last bytes of a stream in o->tail (*n of them). */
static void tail_add(struct proc_outcome *o, size_t *n, const char *p, size_t len)
{
	const size_t max = sizeof(o->tail) - 1;

	if (len >= max) {
		memcpy(o->tail, p + len - max, max);
		*n = max;
	} else {
		if (*n + len > max) {
			size_t drop = *n + len - max;

			memmove(o->tail, o->tail + drop, *n - drop);
			*n -= drop;
		}
		memcpy(o->tail + *n, p, len);
		*n += len;
	}
	o->tail[*n] = '\0';
}

/* Each whole line of chunk (with what came before it in line) to on_line. */
static void lines_add(const struct proc_spec *s, struct buf *line, const char *p, size_t len)
{
	const char *end = p + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!nl) {
			buf_append(line, p, (size_t)(end - p));
			return;
		}
		buf_append(line, p, (size_t)(nl - p));
		s->on_line(s->line_arg, buf_str(line));
		buf_reset(line);
		p = nl + 1;
	}
}

static void capture_add(struct proc_outcome *o, struct buf *b, const char *p, size_t len)
{
	size_t max = b->max_bytes ? b->max_bytes : PROC_CAPTURE_MAX;
	size_t room = b->len < max ? max - b->len : 0;

	if (len > room) {
		o->truncated = true;
		len = room;
	}
	if (len)
		buf_append(b, p, len);
}

/* Read both pipes until both are closed (poll: neither can fill while we
 * wait on the other). */
static void pump(struct launch *L, const struct proc_spec *s, struct proc_outcome *o)
{
	struct buf line = BUF_INIT;
	size_t tail_n = 0;
	int tail_of = L->err_to_out ? 0 : 1;   /* the stream that carries stderr */
	enum { CHUNK = 65536 };
	char *buf = xmalloc(CHUNK);

	for (;;) {
		struct pollfd pf[2];
		int map[2], np = 0;

		for (int i = 0; i < 2; i++)
			if (L->rd[i] >= 0) {
				pf[np] = (struct pollfd){ .fd = L->rd[i], .events = POLLIN };
				map[np++] = i;
			}
		if (!np)
			break;
		if (poll(pf, (nfds_t)np, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int k = 0; k < np; k++) {
			int i = map[k];
			ssize_t n;

			if (!pf[k].revents)
				continue;
			n = read(L->rd[i], buf, CHUNK);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				close(L->rd[i]);
				L->rd[i] = -1;
				continue;
			}
			if (L->cap[i])
				capture_add(o, L->cap[i], buf, (size_t)n);
			else if (L->sink[i] >= 0)
				(void)write_all(L->sink[i], buf, (size_t)n);
			if (i == 0 && s->on_line)
				lines_add(s, &line, buf, (size_t)n);
			if (i == tail_of)
				tail_add(o, &tail_n, buf, (size_t)n);
		}
	}
	if (s->on_line && line.len)
		s->on_line(s->line_arg, buf_str(&line));
	buf_release(&line);
	free(buf);
}

/* The last bytes of the file at path into o->tail. */
static void tail_from_file(struct proc_outcome *o, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	ssize_t n;
	off_t at;

	if (fd < 0)
		return;
	if (!fstat(fd, &st)) {
		at = st.st_size > (off_t)sizeof(o->tail) - 1 ? st.st_size - (off_t)sizeof(o->tail) + 1 : 0;
		n = pread(fd, o->tail, sizeof(o->tail) - 1, at);
		o->tail[n > 0 ? n : 0] = '\0';
	}
	close(fd);
}

int proc_run(struct proc_outcome *out, const struct proc_spec *spec, struct buf *err)
{
	struct proc_outcome o;
	struct launch L;
	struct rusage ru;
	int ws = 0, r;
	pid_t pid;

	launch_init(&L);
	name_prog(&o, spec->argv && spec->argv[0] ? spec->argv[0] : "");
	if ((r = prepare(&L, spec, true, err)) || (r = launch(&pid, &L, spec, err)))
		goto out;
	pump(&L, spec, &o);
	while (wait4(pid, &ws, 0, &ru) < 0) {
		if (errno != EINTR) {
			r = err_setf(err, -errno, "cannot wait for '%s': %s", spec->argv[0],
				     strerror(errno));
			goto out;
		}
	}
	set_ended(&o, ws, &ru);
	if (L.tail_path)
		tail_from_file(&o, L.tail_path);
	if (out)
		*out = o;
out:
	launch_release(&L);
	return r;
}

void proc_tail_line(char *out, size_t size, const struct proc_outcome *o)
{
	const char *t = o->tail, *last = t;
	size_t len = strlen(t);

	while (len && (t[len - 1] == '\n' || t[len - 1] == '\r' || t[len - 1] == ' '))
		len--;
	for (const char *p = t; p < t + len; p++)
		if (*p == '\n')
			last = p + 1;
	snprintf(out, size, "%.*s", (int)(t + len - last), last);
}

int proc_exit_err(const struct proc_outcome *o, struct buf *err)
{
	char line[PROC_TAIL_BYTES];

	if (o->status == 0 && !o->signal)
		return 0;
	proc_tail_line(line, sizeof(line), o);
	if (o->signal)
		err_setf(err, -EIO, "'%s' was killed by SIG%s (%s)", o->prog,
			 sigabbrev_np(o->signal) ? sigabbrev_np(o->signal) : "?", strsignal(o->signal));
	else
		err_setf(err, -EIO, "'%s' exited with status %d", o->prog, o->status);
	if (err && *line)
		buf_printf(err, ": %s", line);
	return -EIO;
}

int proc_run_ok(const struct proc_spec *spec, struct buf *err)
{
	struct proc_outcome o;
	int r = proc_run(&o, spec, err);

	return r ? r : proc_exit_err(&o, err);
}

int proc_start(struct proc **out, const struct proc_spec *spec, struct buf *err)
{
	struct proc *p = NULL;
	struct launch L;
	pid_t pid;
	int r;

	launch_init(&L);
	if ((r = prepare(&L, spec, false, err)) || (r = launch(&pid, &L, spec, err)))
		goto out;
	p = xcalloc(1, sizeof(*p));
	p->pid = pid;
	name_prog(&p->o, spec->argv[0]);
	p->tail_path = L.tail_path;
	L.tail_path = NULL;
	*out = p;
out:
	launch_release(&L);
	return r;
}

pid_t proc_pid(const struct proc *p)
{
	return p->pid;
}

static bool reap(struct proc *p, bool block)
{
	struct rusage ru;
	int ws;
	pid_t w;

	if (p->reaped)
		return true;
	while ((w = wait4(p->pid, &ws, block ? 0 : WNOHANG, &ru)) < 0 && errno == EINTR)
		;
	if (w == 0)
		return false;
	p->reaped = true;
	if (w < 0)   /* not our child any more: nothing to say how it ended */
		return true;
	set_ended(&p->o, ws, &ru);
	if (p->tail_path)
		tail_from_file(&p->o, p->tail_path);
	return true;
}

bool proc_done(struct proc *p, struct proc_outcome *o)
{
	if (!reap(p, false))
		return false;
	if (o)
		*o = p->o;
	return true;
}

void proc_wait(struct proc *p, struct proc_outcome *o)
{
	if (!p)
		return;
	reap(p, true);
	if (o)
		*o = p->o;
	free(p->tail_path);
	free(p);
}

void proc_stop(struct proc *p, int grace_ms, struct proc_outcome *o)
{
	if (!p)
		return;
	if (!p->reaped) {
		kill(p->pid, SIGTERM);
		for (int ms = 0; ms < grace_ms && !reap(p, false); ms += 10)
			usleep(10000);
		if (!reap(p, false)) {
			kill(p->pid, SIGKILL);
			reap(p, true);
		}
	}
	proc_wait(p, o);
}
