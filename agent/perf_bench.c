/* perf_bench.c - the workload `perf-bench`: one `perf bench` benchmark
 * (sched messaging, sched pipe, mem memcpy, ...) with its reported
 * figures stored (see perf_bench.h). perf must be installed (--rootfs
 * debian:linux-perf).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_MODULE "perf-bench"
#include "log.h"
#include "perf_bench.h"
#include "probes.h"
#include "record.h"
#include "util.h"
#include "workload.h"

/* ---- parser ---- */

int pb_parse(const char *text, const char *bench, pb_metric_fn *emit, void *ud)
{
	char *b = xstrdup(bench), *fn = NULL;
	const char *p = text;
	int n = 0;

	for (char *c = b; *c; c++)
		if (*c == '/' || *c == ' ')
			*c = '-';
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xstrndup(p, len), *end, name[256];
		double v;

		if (!strncmp(line, "# function '", 12)) {
			char *q = strchr(line + 12, '\'');

			free(fn);
			fn = q ? xstrndup(line + 12, (size_t)(q - line - 12)) : NULL;
		} else if (len && (v = strtod(line, &end), end != line) && !*end && isfinite(v)) {
			snprintf(name, sizeof(name), "perf-bench:%s:%s", b, fn ? fn : "total_s");
			emit(ud, name, v, fn ? "bytes/s" : "s", fn ? "higher" : "lower");
			n++;
		}
		free(line);
		p = nl ? nl + 1 : NULL;
	}
	free(fn);
	free(b);
	return n;
}

/* ---- the workload ---- */

static const struct knob_def knobs[] = {
	{ "bench", KNOB_STRING, "", "sched/messaging", "SUBSYS/BENCH: sched/messaging, sched/pipe, mem/memcpy, mem/memset, ...", NULL },
	{ "args", KNOB_STRING, "", "", "the benchmark's options, space-separated (-l 100, -s 1MB)", NULL },
	{ "dir", KNOB_STRING, "path", ".", "working directory", NULL },
	{ "timeout_s", KNOB_SECONDS, "s", "300", "kill perf after this long", NULL },
};

struct pb_child {
	char **argv;
	const char *dir;
	int out_fd;
};

static int pb_exec(void *arg)
{
	struct pb_child *c = arg;

	if (chdir(c->dir) < 0 || dup2(c->out_fd, 1) < 0) {
		fprintf(stderr, "kcanary-agent: cannot enter '%s': %s\n", c->dir, strerror(errno));
		return 127;
	}
	signal(SIGINT, SIG_DFL);
	execvp("perf", c->argv);
	fprintf(stderr, "kcanary-agent: cannot run perf: %s (--rootfs debian:linux-perf)\n",
		strerror(errno));
	return 127;
}

static void argv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* perf bench --format=simple SUBSYS BENCH ARGS...; NULL with ctx->err
 * when bench is not SUBSYS/BENCH. */
static char **pb_argv(struct wl_ctx *ctx)
{
	const char *bench = knobs_str(ctx->knobs, "bench"), *slash = strchr(bench, '/');
	char *args = xstrdup(knobs_str(ctx->knobs, "args")), *save = NULL, *tok;
	char **v = xcalloc(64, sizeof(*v));
	size_t n = 0;

	if (!slash || slash == bench || !slash[1] || strchr(slash + 1, '/')) {
		snprintf(ctx->err, sizeof(ctx->err), "knob 'bench': '%s' is not SUBSYS/BENCH (sched/messaging)",
			 bench);
		free(args);
		free(v);
		return NULL;
	}
	v[n++] = xstrdup("perf");
	v[n++] = xstrdup("bench");
	v[n++] = xstrdup("--format=simple");
	v[n++] = xstrndup(bench, (size_t)(slash - bench));
	v[n++] = xstrdup(slash + 1);
	for (tok = strtok_r(args, " ", &save); tok && n < 63; tok = strtok_r(NULL, " ", &save))
		v[n++] = xstrdup(tok);
	free(args);
	return v;
}

static int pb_check(struct wl_ctx *ctx)
{
	char **argv = pb_argv(ctx);

	if (!argv)
		return -EINVAL;
	argv_free(argv);
	return 0;
}

static void on_metric(void *ud, const char *name, double value, const char *unit, const char *better)
{
	struct wl_ctx *ctx = ((void **)ud)[0];
	json_t *summary = ((void **)ud)[1];

	rec_metric(ctx->rec, name, unit, better);
	json_object_set_new(summary, name, json_real(value));
}

static int pb_run(struct wl_ctx *ctx)
{
	char tmp[] = "/tmp/kcpb.XXXXXX", *out_path = NULL, *text = NULL;
	struct pb_child c = { pb_argv(ctx), knobs_str(ctx->knobs, "dir"), -1 };
	json_t *summary = json_object();
	void *ud[2] = { ctx, summary };
	pid_t pid;
	int ret;

	if (!c.argv) {
		ret = -EINVAL;
		goto out;
	}
	if (!mkdtemp(tmp)) {
		ret = -errno;
		snprintf(ctx->err, sizeof(ctx->err), "cannot create %s: %s", tmp, strerror(errno));
		goto out;
	}
	out_path = xasprintf("%s/out.txt", tmp);
	if ((c.out_fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
		ret = -errno;
		snprintf(ctx->err, sizeof(ctx->err), "cannot create %s: %s", out_path, strerror(errno));
		goto out_rm;
	}
	rec_phase(ctx->rec, wl_t(ctx), "perf-bench");
	pid = wl_spawn(NULL, pb_exec, &c);
	close(c.out_fd);
	if (pid < 0) {
		ret = pid;
		snprintf(ctx->err, sizeof(ctx->err), "cannot fork: %s", strerror(-ret));
		goto out_rm;
	}
	if ((ret = wl_wait_tool(ctx, pid, knobs_double(ctx->knobs, "timeout_s"), "perf bench")) < 0)
		goto out_rm;
	probes_emit(ctx->probes, ctx->rec, wl_t(ctx));
	if ((ret = read_file(&text, NULL, out_path, 16 << 20)) < 0) {
		snprintf(ctx->err, sizeof(ctx->err), "cannot read %s: %s", out_path, strerror(-ret));
		goto out_rm;
	}
	if (pb_parse(text, knobs_str(ctx->knobs, "bench"), on_metric, ud) == 0) {
		ret = -EIO;
		snprintf(ctx->err, sizeof(ctx->err), "perf bench %s printed no figure",
			 knobs_str(ctx->knobs, "bench"));
		goto out_rm;
	}
	rec_emit(ctx->rec, json_pack("{s:s, s:O}", "type", "summary", "metrics", summary));
	ret = 0;
out_rm:
	unlink(out_path);
	rmdir(tmp);
out:
	argv_free(c.argv);
	json_decref(summary);
	free(out_path);
	free(text);
	return ret;
}

static double pb_expected_s(const struct knobs *k)
{
	return knobs_double(k, "timeout_s");
}

const struct workload wl_perf_bench = {
	.name = "perf-bench",
	.summary = "one perf bench benchmark (sched/messaging, mem/memcpy, ...) and its reported figures",
	.notes = "  metrics: perf-bench:SUBSYS-BENCH:total_s (s, lower), or :FUNCTION (bytes/s,\n"
		 "  higher) for the mem benchmarks. Needs perf (linux-perf).",
	.knobs = knobs,
	.nknobs = sizeof(knobs) / sizeof(knobs[0]),
	.check = pb_check,
	.run = pb_run,
	.expected_s = pb_expected_s,
};
