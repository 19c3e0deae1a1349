/* command.c - the workload `command`: run a user's script (sh -c CMD) in a
 * cgroup of its own and forward each stdout line "metric NAME VALUE" as a
 * sample at the time it arrives (with "metric NAME VALUE UNIT higher|lower"
 * also the metric's unit and direction, sent once), so teams can bring their own reproducer
 * and still get probes, records and the store. Other stdout lines go to
 * the agent's stderr, unchanged; the script's stderr is the agent's.
 *
 * Cgroup: kcanary-cmd/run under the cgroup2 root, memory.max = mem_max
 * (a stale kcanary-cmd from a crashed run is removed first); cgroup=0
 * runs it where the agent runs instead, for fleet hosts without a cgroup v2
 * memory controller (nor root): the script still gets probes and records.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_MODULE "command"
#include "cgroup.h"
#include "error.h"
#include "log.h"
#include "probes.h"
#include "record.h"
#include "util.h"
#include "workload.h"

static const struct knob_def knobs[] = {
	{ "cmd", KNOB_STRING, "", NULL, "shell command to run (sh -c)", NULL },
	{ "dir", KNOB_STRING, "path", ".", "its working directory (checked like wb-handover's: not tmpfs)", NULL },
	{ "mem_max", KNOB_SIZE_MAX, "bytes", "max", "memory.max of its cgroup", NULL },
	{ "timeout_s", KNOB_SECONDS, "s", "0", "kill it after this long (0: no limit)", NULL },
	{ "cgroup", KNOB_BOOL, "", "1", "run it in a cgroup of its own (0: in the agent's; mem_max unused)", NULL },
};

/* The metrics a run has defined (unit, direction), each sent once. */
struct defined {
	char **names;
	size_t n;
};

static bool defined_add(struct defined *d, const char *name)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->names[i], name))
			return false;
	d->names = xrealloc(d->names, (d->n + 1) * sizeof(*d->names));
	d->names[d->n++] = xstrdup(name);
	return true;
}

static void defined_free(struct defined *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->names[i]);
	free(d->names);
}

/*
 * cmd_metric_line - parse a "metric NAME VALUE [UNIT higher|lower]" line.
 * name (128 bytes), unit (32) get the fields ("" when no unit is given),
 * *better "higher", "lower" or NULL. 0; -ENOENT for a line that is not a
 * metric line; -EINVAL for one that is but does not parse (bad value, a
 * unit without its direction, a direction other than higher or lower).
 */
int cmd_metric_line(const char *line, char *name, char *unit, double *value,
		    const char **better)
{
	char v[64], dir[16], extra[2];
	char *end;
	int n;

	n = sscanf(line, "metric %127s %63s %31s %15s %1s", name, v, unit, dir, extra);
	if (n < 2)
		return -ENOENT;
	if (n == 3 || n == 5)
		return -EINVAL;
	*value = strtod(v, &end);
	if (*end || !isfinite(*value))
		return -EINVAL;
	*better = NULL;
	if (n == 2) {
		unit[0] = '\0';
		return 0;
	}
	if (!strcmp(dir, "higher"))
		*better = "higher";
	else if (!strcmp(dir, "lower"))
		*better = "lower";
	else
		return -EINVAL;
	return 0;
}

/* "metric NAME VALUE [UNIT higher|lower]" -> a sample (and the metric's
 * definition the first time it has one); anything else is passed to
 * stderr. */
static void handle_line(struct wl_ctx *ctx, char *line, long *n_metrics, struct defined *defs)
{
	char name[128], unit[32];
	const char *better;
	double v;
	int r = cmd_metric_line(line, name, unit, &v, &better);

	if (r == -ENOENT) {
		fprintf(stderr, "%s\n", line);
		return;
	}
	if (r) {
		log_warn("ignoring a metric line that does not parse (metric NAME VALUE"
			 " [UNIT higher|lower]): '%s'", line);
		return;
	}
	if (better && defined_add(defs, name))
		rec_metric(ctx->rec, name, unit, better);
	rec_sample(ctx->rec, wl_t(ctx), name, v);
	(*n_metrics)++;
}

static int cmd_check(struct wl_ctx *ctx, struct buf *err)
{
	char *cgroot = NULL;
	int ret;

	if (!knobs_bool(ctx->knobs, "cgroup")) {
		struct stat st;
		const char *dir = knobs_str(ctx->knobs, "dir");
		if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
			return err_setf(err, -ENOENT, "directory '%s' (knob dir) does not exist", dir);
		return 0;
	}
	ret = wl_check_common(&cgroot, "memory", knobs_str(ctx->knobs, "dir"), err);
	free(cgroot);
	return ret;
}

/* One run of the command: its cgroup, its stdout pipe, the child, what it
 * printed. cmd_run() takes it through the steps below; cmd_cleanup()
 * undoes whatever of it was done. */
struct cmd_state {
	char *cgroot, *top, *cg;     /* cg NULL: in the agent's cgroup */
	int pipefd[2];
	struct proc *child;          /* sh -c CMD; NULL: none running */
	struct buf line;             /* the stdout line being read */
	long n_metrics;
	struct defined defs;
	double start;                /* clock_mono_s() at the spawn */
	bool timed_out;
};

/* Step 1: the cgroup kcanary-cmd/run under the root, memory.max set (a
 * stale kcanary-cmd from a crashed run removed first). */
static int cmd_cgroup_setup(struct cmd_state *s, struct wl_ctx *ctx, struct buf *err)
{
	int ret = wl_check_common(&s->cgroot, "memory", knobs_str(ctx->knobs, "dir"), err);

	if (ret < 0)
		return ret;
	s->top = xasprintf("%s/kcanary-cmd", s->cgroot);
	s->cg = xasprintf("%s/run", s->top);
	if (access(s->top, F_OK) == 0) {
		log_warn("removing stale cgroup '%s' left by an earlier run", s->top);
		cg_remove_tree(s->top, 10.0);
	}
	cg_enable(s->cgroot, "memory");
	ret = cg_create(s->top);
	if (!ret)
		ret = cg_enable(s->top, "memory");
	if (!ret)
		ret = cg_create(s->cg);
	if (!ret)
		ret = cg_set_max(s->cg, knobs_u64(ctx->knobs, "mem_max"));
	if (ret < 0)
		return err_setf(err, ret, "cannot set up cgroup '%s': %s", s->cg, strerror(-ret));
	return 0;
}

/* Step 2: sh -c CMD in s->cg, in dir, with its stdout on a pipe, in a
 * process group of its own. */
static int cmd_spawn(struct cmd_state *s, struct wl_ctx *ctx, struct buf *err)
{
	const char *argv[] = { "sh", "-c", knobs_str(ctx->knobs, "cmd"), NULL };
	struct proc_spec spec = {
		.argv = argv, .dir = knobs_str(ctx->knobs, "dir"),
		.in = PROC_INHERIT, .out = PROC_FD, .err = PROC_INHERIT,
	};
	const struct wl_child wc = { .cg = s->cg, .death_sig = SIGKILL, .own_group = true };
	int ret;

	if (pipe2(s->pipefd, O_CLOEXEC) < 0) {
		int e = errno;

		s->pipefd[0] = s->pipefd[1] = -1;
		return err_setf(err, -e, "cannot make a pipe: %s", strerror(e));
	}
	spec.out_fd = s->pipefd[1];
	rec_phase(ctx->rec, wl_t(ctx), "command");
	s->start = clock_mono_s();
	ret = wl_start(&s->child, &spec, &wc, err);
	close(s->pipefd[1]);
	s->pipefd[1] = -1;
	return ret;
}

/* Step 3: read its stdout line by line until EOF (handle_line), probe
 * records at each whole second; stop at timeout_s (s->timed_out) or when
 * wl_stop is set (-EINTR). */
static int cmd_pump(struct cmd_state *s, struct wl_ctx *ctx, double timeout_s)
{
	double next_tick = ctx->t0_s + ceil(wl_t(ctx) + 1e-9);

	for (;;) {
		struct pollfd pfd = { s->pipefd[0], POLLIN, 0 };
		double now = clock_mono_s();
		char chunk[4096];
		ssize_t n;
		int pr;

		if (wl_stop)
			return -EINTR;
		if (timeout_s > 0 && now - s->start >= timeout_s) {
			s->timed_out = true;
			break;
		}
		if (now >= next_tick) {
			probes_emit(ctx->probes, ctx->rec, next_tick - ctx->t0_s);
			next_tick += 1.0;
			continue;
		}
		pr = poll(&pfd, 1, (int)ceil((next_tick - now) * 1000.0));
		if (pr <= 0)
			continue;
		n = read(s->pipefd[0], chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;   /* EOF: the command closed stdout (exited) */
		for (ssize_t i = 0; i < n; i++) {
			if (chunk[i] == '\n') {
				handle_line(ctx, s->line.ptr ? s->line.ptr : (char *)"", &s->n_metrics,
					    &s->defs);
				buf_reset(&s->line);
			} else if (buf_append(&s->line, &chunk[i], 1) < 0) {
				log_warn("dropping a stdout line longer than 1 MiB");
				buf_reset(&s->line);
			}
		}
	}
	if (s->line.len)
		handle_line(ctx, s->line.ptr, &s->n_metrics, &s->defs);
	return 0;
}

/* Step 4: reap it (its whole group killed first when it timed out), emit
 * the last probes and the summary, and judge how it ended. */
static int cmd_finish(struct cmd_state *s, struct wl_ctx *ctx, double timeout_s,
		      struct buf *err)
{
	struct proc_outcome o;
	int ret;

	if (s->timed_out)
		kill(-proc_pid(s->child), SIGKILL);   /* the script's group, not only its shell */
	ret = wl_proc_reap(s->child, s->timed_out ? 0.0 : 5.0, &o);
	s->child = NULL;
	probes_emit(ctx->probes, ctx->rec, wl_t(ctx));
	rec_emit(ctx->rec, json_pack("{s:s, s:{s:i, s:f, s:I}}", "type", "summary", "metrics",
				     "exit_status", o.status, "duration_s",
				     rec_ms(clock_mono_s() - s->start),
				     "metric_lines", (json_int_t)s->n_metrics));
	if (s->timed_out)
		return err_setf(err, -ETIMEDOUT,
				"command timed out after %.0f s (timeout_s) and was killed", timeout_s);
	if (ret == -ETIMEDOUT)
		return err_setf(err, ret,
				"command closed its stdout but did not exit within 5 s; killed");
	if (o.signal)
		return err_setf(err, -EIO, "command was killed by signal %d", o.signal);
	if (o.status != 0)
		return err_setf(err, -EIO, "command exited with status %d", o.status);
	return ret;
}

/* Undo what of s was done: the child and its group killed, the pipe
 * closed, the cgroup removed. */
static void cmd_cleanup(struct cmd_state *s)
{
	if (s->child) {
		kill(-proc_pid(s->child), SIGKILL);   /* the script and what it started (its group) */
		kill(proc_pid(s->child), SIGKILL);
		wl_proc_reap(s->child, 5.0, NULL);
	}
	if (s->pipefd[0] >= 0)
		close(s->pipefd[0]);
	if (s->pipefd[1] >= 0)
		close(s->pipefd[1]);
	if (s->top)
		cg_remove_tree(s->top, 10.0);
	buf_release(&s->line);
	defined_free(&s->defs);
	free(s->cgroot);
	free(s->top);
	free(s->cg);
}

static int cmd_run(struct wl_ctx *ctx, struct buf *err)
{
	double timeout_s = knobs_double(ctx->knobs, "timeout_s");
	struct cmd_state s = {
		.pipefd = { -1, -1 }, .line = BUF_INIT_MAX(1 << 20),
		.defs = { NULL, 0 },
	};
	int ret;

	if ((ret = cmd_check(ctx, err)) < 0)
		return ret;
	if (knobs_bool(ctx->knobs, "cgroup") && (ret = cmd_cgroup_setup(&s, ctx, err)) < 0)
		goto out;
	if ((ret = cmd_spawn(&s, ctx, err)) < 0 || (ret = cmd_pump(&s, ctx, timeout_s)) < 0)
		goto out;
	ret = cmd_finish(&s, ctx, timeout_s, err);
out:
	if (ret == -EINTR && !*err_text(err))
		err_setf(err, -EINTR, "interrupted by signal %d", (int)wl_stop);
	cmd_cleanup(&s);
	return ret;
}

/* timeout_s bounds the command; without it nothing says how long it runs. */
static double cmd_expected_s(const struct knobs *k)
{
	double timeout_s = knobs_double(k, "timeout_s");

	return timeout_s > 0 ? timeout_s : -1;
}

const struct workload wl_command = {
	.name = "command",
	.summary = "run your own script in a cgroup; stdout lines 'metric NAME VALUE [UNIT higher|lower]' become samples",
	.notes = NULL,
	.knobs = knobs,
	.nknobs = sizeof(knobs) / sizeof(knobs[0]),
	.check = cmd_check,
	.run = cmd_run,
	.expected_s = cmd_expected_s,
};
