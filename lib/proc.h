/* proc.h - the one way to run another program, for both binaries: argv
 * (never a shell), stdin from /dev/null or a given fd, stdout and stderr
 * each captured, passed through, sent to a file or discarded; the exit
 * status and signal come back as an outcome, and proc_exit_err() turns a
 * failed one into an error that names the program, the status or the
 * signal, and the tail of its stderr.
 *
 * How: fork and execve, everything the child needs (the program's path on
 * PATH, its environment, the files it writes) made before the fork; in
 * the child only async-signal-safe calls (dup2, chdir, close_range,
 * execve), so any thread may call it. The child holds no descriptor but
 * its 0, 1 and 2: pipes and files are opened close-on-exec, and every
 * other descriptor (another thread's, a lock's, the store's) is closed
 * before exec. It starts with no signal blocked and SIGPIPE at its
 * default, whatever the calling thread has (child_setup may change
 * that). A failure between fork and exec (chdir, exec itself) comes
 * back through a close-on-exec pipe as the errno it was.
 *
 *     const char *argv[] = { "tar", "-xf", tarball, "-C", dir, NULL };
 *     struct proc_spec s = { .argv = argv, .err = PROC_CAPTURE, .err_buf = &msg };
 *     if ((r = proc_run_ok(&s, err)))
 *             return err_wrapf(err, r, "cannot unpack '%s'", tarball);
 */
#ifndef KC_PROC_H
#define KC_PROC_H

#include <stdbool.h>
#include <sys/types.h>

#include "util.h"

/* What a captured stream keeps when its buf has no max_bytes of its own:
 * 16 MiB. Output past the cap is read (so the child never blocks on a
 * full pipe) and dropped; the outcome says so (truncated). */
#define PROC_CAPTURE_MAX (16u << 20)

/* How much of stderr's end the outcome keeps for messages. */
#define PROC_TAIL_BYTES 512

/* Where one of the child's standard descriptors goes. */
enum proc_io {
	PROC_NULL = 0,   /* /dev/null (the default: stdin empty, output discarded) */
	PROC_INHERIT,    /* ours, as it is */
	PROC_CAPTURE,    /* stdout/stderr: appended to a struct buf (proc_run only) */
	PROC_FILE,       /* stdout/stderr: the file at a path, made 0644, truncated
			  * (or appended to) */
	PROC_FD,         /* the caller's open descriptor (stdin: read from it) */
	PROC_STDOUT,     /* stderr only: wherever stdout goes (2>&1) */
};

/*
 * struct proc_spec - what to run and where its descriptors go. Zeroed, it
 * runs argv with stdin, stdout and stderr on /dev/null. Every pointer is
 * borrowed for the call (for proc_start(), until it returns).
 */
struct proc_spec {
	const char *const *argv;  /* NULL-ended; argv[0] is looked up on PATH
				   * when it holds no '/' */
	const char *dir;          /* the child's working directory; NULL: ours */
	const char *const *env;   /* NULL-ended changes to our environment:
				   * "NAME=VALUE" sets, "NAME" removes; NULL: ours */
	enum proc_io in;          /* PROC_NULL, PROC_INHERIT or PROC_FD */
	int in_fd;
	enum proc_io out, err;
	struct buf *out_buf, *err_buf;     /* PROC_CAPTURE: appended to */
	const char *out_path, *err_path;   /* PROC_FILE */
	bool out_append, err_append;       /* PROC_FILE: append, not truncate */
	int out_fd, err_fd;                /* PROC_FD */
	/* Each line of stdout (the newline removed; a last line without one
	 * too) as it arrives, on the calling thread; stdout still goes where
	 * out says (then through a pipe). proc_run only. */
	void (*on_line)(void *arg, const char *line);
	void *line_arg;
	/* Run in the child after its descriptors are set and before exec
	 * (e.g. unshare(2) and mount(2) for a mount namespace): only
	 * async-signal-safe calls. 0, or a negative errno: then the program
	 * is not run and the caller gets that code, with setup_what (what the
	 * setup does, for the message) named in err. */
	int (*child_setup)(void *arg);
	void *setup_arg;
	const char *setup_what;
};

/* struct proc_outcome - how a program ended. */
struct proc_outcome {
	int status;           /* its exit status when it exited, else -1 */
	int signal;           /* the signal that ended it, else 0 */
	double cpu_s;         /* user + system CPU seconds of it and the children
			       * it waited for */
	bool truncated;       /* a capture reached its cap: the rest was dropped */
	char prog[64];        /* argv[0]'s last part, for messages */
	char tail[PROC_TAIL_BYTES]; /* stderr's last bytes: captured (also merged
			       * into a captured or line-read stdout), or read back
			       * from its file; "" when it went elsewhere */
};

/*
 * proc_run - run spec's program to its end, reading its captured output
 * (stdout and stderr at once, so neither pipe can fill and stall it).
 * Returns 0 when it ran, whatever its exit status: *out (may be NULL)
 * says how it ended. -ENOENT when the program is not there (not on PATH),
 * -EACCES when it cannot be executed, -EINVAL for a spec that asks for
 * something that cannot be, another -errno for a chdir, file or pipe that
 * failed; err names the program and what failed. A capture's bytes past
 * its cap (buf->max_bytes, else PROC_CAPTURE_MAX) are dropped, not an
 * error. Any thread may call it.
 */
int proc_run(struct proc_outcome *out, const struct proc_spec *spec, struct buf *err);

/*
 * proc_exit_err - 0 when o says the program exited with status 0; else
 * -EIO with err set to "'PROG' exited with status N" or "'PROG' was killed
 * by SIGTERM (Terminated)", then ": " and the last line of its stderr tail
 * when there is one.
 */
int proc_exit_err(const struct proc_outcome *o, struct buf *err);

/* proc_tail_line - the last non-empty line of o's stderr tail into out
 * (size bytes, NUL-terminated; "" when there is none): for a caller that
 * words its own message. */
void proc_tail_line(char *out, size_t size, const struct proc_outcome *o);

/* proc_run_ok - proc_run() then proc_exit_err(): 0 only when the program
 * ran and exited 0; its codes and messages as theirs. */
int proc_run_ok(const struct proc_spec *spec, struct buf *err);

/* ---- a program that keeps running (a daemon of ours: virtiofsd) ---- */

struct proc;

/*
 * proc_start - start spec's program and return at once; *out is the
 * handle (owned by the caller: end it with proc_wait() or proc_stop()).
 * stdout and stderr may not be PROC_CAPTURE and there is no on_line
 * (-EINVAL): nobody reads them while it runs. Codes as proc_run().
 */
int proc_start(struct proc **out, const struct proc_spec *spec, struct buf *err);

/* proc_pid - its process id. */
pid_t proc_pid(const struct proc *p);

/* proc_done - has it ended? Does not block; true once it has (reaped),
 * with *o (may be NULL) saying how. */
bool proc_done(struct proc *p, struct proc_outcome *o);

/* proc_wait - wait for it to end, fill *o (may be NULL), free p. */
void proc_wait(struct proc *p, struct proc_outcome *o);

/* proc_stop - end it: SIGTERM, then SIGKILL when it is still running after
 * grace_ms; reap it, fill *o (may be NULL), free p. NULL p is fine. */
void proc_stop(struct proc *p, int grace_ms, struct proc_outcome *o);

#endif
