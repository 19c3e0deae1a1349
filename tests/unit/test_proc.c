/* test_proc.c - the subprocess helper (proc.h): capture, exit status,
 * signals, a missing program, stderr's tail in the error, output larger
 * than a pipe on both streams, files, stdin, environment, directory, lines,
 * the cap, and a long-running child started and stopped. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "error.h"
#include "proc.h"
#include "testutil.h"

static void test_capture_and_status(void **state)
{
	const char *argv[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
	struct buf out = BUF_INIT, errb = BUF_INIT, err = BUF_INIT;
	struct proc_spec s = { .argv = argv, .out = PROC_CAPTURE, .out_buf = &out,
			       .err = PROC_CAPTURE, .err_buf = &errb };
	struct proc_outcome o;

	(void)state;
	assert_int_equal(proc_run(&o, &s, &err), 0);
	assert_string_equal(buf_str(&out), "out\n");
	assert_string_equal(buf_str(&errb), "err\n");
	assert_int_equal(o.status, 3);
	assert_int_equal(o.signal, 0);
	assert_string_equal(o.prog, "sh");
	assert_string_equal(o.tail, "err\n");
	assert_int_equal(proc_exit_err(&o, &err), -EIO);
	assert_string_equal(buf_str(&err), "'sh' exited with status 3: err");
	buf_release(&out);
	buf_release(&errb);
	buf_release(&err);
}

/* The error names the program and the last line of its stderr, and only
 * stderr: a stdout captured apart is not in it. */
static void test_stderr_tail_in_error(void **state)
{
	const char *argv[] = { "sh", "-c", "echo noise; echo first >&2; "
			       "echo 'tar: x.tar: Cannot open' >&2; exit 2", NULL };
	struct buf out = BUF_INIT, err = BUF_INIT;
	struct proc_spec s = { .argv = argv, .out = PROC_CAPTURE, .out_buf = &out,
			       .err = PROC_CAPTURE, .err_buf = &(struct buf)BUF_INIT };

	(void)state;
	assert_int_equal(proc_run_ok(&s, &err), -EIO);
	assert_string_equal(buf_str(&err), "'sh' exited with status 2: tar: x.tar: Cannot open");
	buf_release(s.err_buf);
	buf_release(&out);
	buf_release(&err);
	/* 2>&1 into a capture: the merged stream's end */
	struct buf both = BUF_INIT;
	struct proc_spec m = { .argv = argv, .out = PROC_CAPTURE, .out_buf = &both,
			       .err = PROC_STDOUT };
	assert_int_equal(proc_run_ok(&m, &err), -EIO);
	assert_string_equal(buf_str(&both), "noise\nfirst\ntar: x.tar: Cannot open\n");
	assert_string_equal(buf_str(&err), "'sh' exited with status 2: tar: x.tar: Cannot open");
	buf_release(&both);
	buf_release(&err);
}

static void test_signal(void **state)
{
	const char *argv[] = { "sh", "-c", "kill -TERM $$", NULL };
	struct proc_spec s = { .argv = argv };
	struct buf err = BUF_INIT;
	struct proc_outcome o;

	(void)state;
	assert_int_equal(proc_run(&o, &s, &err), 0);
	assert_int_equal(o.status, -1);
	assert_int_equal(o.signal, SIGTERM);
	assert_int_equal(proc_exit_err(&o, &err), -EIO);
	assert_string_equal(buf_str(&err), "'sh' was killed by SIGTERM (Terminated)");
	buf_release(&err);
}

static void test_missing_program(void **state)
{
	const char *argv[] = { "kcanary-no-such-program", NULL };
	const char *abs[] = { "/nonexistent/prog", NULL };
	struct proc_spec s = { .argv = argv };
	struct buf err = BUF_INIT;
	struct proc_outcome o;

	(void)state;
	assert_int_equal(proc_run(&o, &s, &err), -ENOENT);
	assert_string_equal(buf_str(&err), "cannot run 'kcanary-no-such-program': No such file or directory");
	s.argv = abs;
	assert_int_equal(proc_run(&o, &s, &err), -ENOENT);
	assert_string_equal(buf_str(&err), "cannot run '/nonexistent/prog': No such file or directory");
	/* not a program: exec's own error comes back */
	const char *notx[] = { "/", NULL };
	s.argv = notx;
	assert_int_equal(proc_run(&o, &s, &err), -EACCES);
	assert_string_equal(buf_str(&err), "cannot run '/': Permission denied");
	buf_release(&err);
}

/* 1 MiB on each stream at once, more than either pipe holds: a reader
 * that read one stream to its end first would never finish. */
static void test_large_output_both_streams(void **state)
{
	const char *argv[] = { "sh", "-c", "i=0; while [ $i -lt 16 ]; do "
			       "head -c 65536 /dev/zero; head -c 65536 /dev/zero >&2; "
			       "i=$((i+1)); done", NULL };
	struct buf out = BUF_INIT, errb = BUF_INIT, err = BUF_INIT;
	struct proc_spec s = { .argv = argv, .out = PROC_CAPTURE, .out_buf = &out,
			       .err = PROC_CAPTURE, .err_buf = &errb };
	struct proc_outcome o;

	(void)state;
	assert_int_equal(proc_run(&o, &s, &err), 0);
	assert_int_equal(o.status, 0);
	assert_int_equal(out.len, 16 * 65536);
	assert_int_equal(errb.len, 16 * 65536);
	assert_false(o.truncated);
	buf_release(&out);
	buf_release(&errb);
	buf_release(&err);
}

/* A capture stops at its cap; the child still runs to its end. */
static void test_cap(void **state)
{
	const char *argv[] = { "head", "-c", "300000", "/dev/zero", NULL };
	struct buf out = BUF_INIT_MAX(1000), err = BUF_INIT;
	struct proc_spec s = { .argv = argv, .out = PROC_CAPTURE, .out_buf = &out };
	struct proc_outcome o;

	(void)state;
	assert_int_equal(proc_run(&o, &s, &err), 0);
	assert_int_equal(o.status, 0);
	assert_int_equal(out.len, 1000);
	assert_true(o.truncated);
	buf_release(&out);
}

/* stdin from a descriptor, stdout to a file, stderr appended to another,
 * the tail read back from it; a working directory and the environment. */
static void test_files_stdin_dir_env(void **state)
{
	struct tmpdir *td = *state;
	char *in = xasprintf("%s/in", td->path), *outp = xasprintf("%s/out", td->path);
	char *log = xasprintf("%s/log", td->path), *text = NULL;
	const char *argv[] = { "sh", "-c", "tr a-z A-Z; pwd >&2; echo \"$KC_A-${KC_B-unset}\" >&2; exit 1",
			       NULL };
	const char *env[] = { "KC_A=set", "KC_B", NULL };
	struct buf err = BUF_INIT;
	struct proc_outcome o;
	int fd;

	assert_int_equal(write_all(fd = open(in, O_WRONLY | O_CREAT, 0644), "abc\n", 4), 0);
	close(fd);
	assert_int_equal(write_all(fd = open(log, O_WRONLY | O_CREAT, 0644), "before\n", 7), 0);
	close(fd);
	setenv("KC_B", "ours", 1);
	fd = open(in, O_RDONLY);
	struct proc_spec s = { .argv = argv, .dir = td->path, .env = env, .in = PROC_FD, .in_fd = fd,
			       .out = PROC_FILE, .out_path = outp, .err = PROC_FILE, .err_path = log,
			       .err_append = true };
	assert_int_equal(proc_run(&o, &s, &err), 0);
	close(fd);
	unsetenv("KC_B");
	assert_int_equal(o.status, 1);
	assert_int_equal(read_file(&text, NULL, outp, 1 << 20), 0);
	assert_string_equal(text, "ABC\n");
	free(text);
	assert_int_equal(read_file(&text, NULL, log, 1 << 20), 0);
	char *want = xasprintf("before\n%s\nset-unset\n", td->path);
	assert_string_equal(text, want);
	assert_string_equal(o.tail, want);
	assert_int_equal(proc_exit_err(&o, &err), -EIO);
	assert_string_equal(buf_str(&err), "'sh' exited with status 1: set-unset");
	free(want);
	free(text);
	/* a directory that is not there */
	s.dir = "/nonexistent";
	s.in = PROC_NULL;
	assert_int_equal(proc_run(&o, &s, &err), -ENOENT);
	assert_non_null(strstr(buf_str(&err), "cannot run 'sh' in '/nonexistent'"));
	free(in);
	free(outp);
	free(log);
	buf_release(&err);
}

struct lines {
	int n;
	char last[64];
};

static void on_line(void *arg, const char *line)
{
	struct lines *l = arg;

	l->n++;
	snprintf(l->last, sizeof(l->last), "%s", line);
}

/* on_line sees each line of stdout (and of stderr merged into it) while
 * the bytes still go to the descriptor given. */
static void test_lines_and_fd(void **state)
{
	struct tmpdir *td = *state;
	char *logp = xasprintf("%s/build.log", td->path), *text = NULL;
	const char *argv[] = { "sh", "-c", "echo '  CC a.o'; echo '  CC b.o' >&2; printf last", NULL };
	struct lines l = { 0, "" };
	struct buf err = BUF_INIT;
	struct proc_outcome o;
	int fd = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct proc_spec s = { .argv = argv, .out = PROC_FD, .out_fd = fd, .err = PROC_STDOUT,
			       .on_line = on_line, .line_arg = &l };

	assert_int_equal(proc_run(&o, &s, &err), 0);
	close(fd);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.last, "last");
	assert_int_equal(read_file(&text, NULL, logp, 1 << 20), 0);
	assert_string_equal(text, "  CC a.o\n  CC b.o\nlast");
	assert_string_equal(o.tail, "  CC a.o\n  CC b.o\nlast");
	free(text);
	free(logp);
	buf_release(&err);
}

/* on_line with stdout to a file: the lines are seen and the file holds
 * every byte (the file is ours to write through until the child ends). */
static void test_lines_and_file(void **state)
{
	struct tmpdir *td = *state;
	char *logp = xasprintf("%s/build.log", td->path), *text = NULL;
	const char *argv[] = { "sh", "-c", "echo one; echo two", NULL };
	struct lines l = { 0, "" };
	struct buf err = BUF_INIT;
	struct proc_outcome o;
	struct proc_spec s = { .argv = argv, .out = PROC_FILE, .out_path = logp,
			       .on_line = on_line, .line_arg = &l };

	assert_int_equal(proc_run(&o, &s, &err), 0);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.last, "two");
	assert_int_equal(read_file(&text, NULL, logp, 1 << 20), 0);
	assert_string_equal(text, "one\ntwo\n");
	free(text);
	free(logp);
	buf_release(&err);
}

/* A caller that blocks SIGTERM and ignores SIGPIPE (kcanary serve does, in
 * every thread) still starts children with an empty signal mask and
 * SIGPIPE at its default: proc_stop()'s SIGTERM reaches them. */
static void test_child_signals_reset(void **state)
{
	const char *argv[] = { "sh", "-c", "grep -E '^Sig(Blk|Ign):' /proc/self/status", NULL };
	struct buf out = BUF_INIT, err = BUF_INIT;
	struct proc_outcome o;
	struct proc_spec s = { .argv = argv, .out = PROC_CAPTURE, .out_buf = &out };
	sigset_t set, old;
	void (*oldpipe)(int) = signal(SIGPIPE, SIG_IGN);

	(void)state;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &old);
	assert_int_equal(proc_run(&o, &s, &err), 0);
	sigprocmask(SIG_SETMASK, &old, NULL);
	signal(SIGPIPE, oldpipe);
	/* SigBlk: no signal blocked; SigIgn: not SIGPIPE (bit 13, 0x1000) */
	assert_non_null(strstr(buf_str(&out), "SigBlk:\t0000000000000000"));
	const char *ign = strstr(buf_str(&out), "SigIgn:\t");
	assert_non_null(ign);
	assert_false(strtoull(ign + 8, NULL, 16) & (1ULL << (SIGPIPE - 1)));
	buf_release(&out);
	buf_release(&err);
}

static int fail_setup(void *arg)
{
	(void)arg;
	return -EPERM;
}

/* A child that keeps running: started, seen running, stopped (SIGTERM);
 * one that ignores SIGTERM is killed after the grace time; a setup in the
 * child that fails is the caller's error. */
static void test_start_stop(void **state)
{
	const char *argv[] = { "sleep", "30", NULL };
	const char *stubborn[] = { "sh", "-c", "trap '' TERM; exec sleep 30", NULL };
	const char *quick[] = { "sh", "-c", "echo bye >&2; exit 4", NULL };
	struct proc_spec s = { .argv = argv };
	struct buf err = BUF_INIT;
	struct proc_outcome o;
	struct proc *p = NULL;

	(void)state;
	assert_int_equal(proc_start(&p, &s, &err), 0);
	assert_true(proc_pid(p) > 0);
	assert_false(proc_done(p, &o));
	proc_stop(p, 2000, &o);
	assert_int_equal(o.signal, SIGTERM);

	s.argv = stubborn;
	assert_int_equal(proc_start(&p, &s, &err), 0);
	usleep(100000);
	proc_stop(p, 200, &o);
	assert_int_equal(o.signal, SIGKILL);

	struct tmpdir *td = *state;
	char *log = xasprintf("%s/d.log", td->path);
	struct proc_spec q = { .argv = quick, .out = PROC_FILE, .out_path = log, .err = PROC_STDOUT };
	assert_int_equal(proc_start(&p, &q, &err), 0);
	while (!proc_done(p, &o))
		usleep(10000);
	assert_int_equal(o.status, 4);
	assert_string_equal(o.tail, "bye\n");
	proc_wait(p, NULL);

	/* nobody would read a capture */
	struct proc_spec c = { .argv = argv, .out = PROC_CAPTURE, .out_buf = &err };
	assert_int_equal(proc_start(&p, &c, &err), -EINVAL);

	struct proc_spec f = { .argv = argv, .child_setup = fail_setup,
			       .setup_what = "the read-only bind of /" };
	assert_int_equal(proc_start(&p, &f, &err), -EPERM);
	assert_string_equal(buf_str(&err),
			    "cannot run 'sleep': the read-only bind of /: Operation not permitted");
	free(log);
	buf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capture_and_status),
		cmocka_unit_test(test_stderr_tail_in_error),
		cmocka_unit_test(test_signal),
		cmocka_unit_test(test_missing_program),
		cmocka_unit_test(test_large_output_both_streams),
		cmocka_unit_test(test_cap),
		cmocka_unit_test_setup_teardown(test_files_stdin_dir_env, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_lines_and_fd, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_lines_and_file, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test(test_child_signals_reset),
		cmocka_unit_test_setup_teardown(test_start_stop, tmpdir_setup, tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
