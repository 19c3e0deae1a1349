/* perf_bench.c - the workload `perf-bench`: one `perf bench` benchmark
 * (sched messaging, sched pipe, mem memcpy, ...) with its reported
 * figures stored (see perf_bench.h). perf must be installed (--rootfs
 * debian:linux-perf).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_MODULE "perf-bench"
#include "error.h"
#include "log.h"
#include "perf_bench.h"
#include "tool_run.h"
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

/* perf bench --format=simple SUBSYS BENCH ARGS...; NULL with err when
 * bench is not SUBSYS/BENCH. */
static char **pb_argv(struct wl_ctx *ctx, struct buf *err)
{
	const char *bench = knobs_str(ctx->knobs, "bench"), *slash = strchr(bench, '/');
	struct argv_buf a = { 0 };

	if (!slash || slash == bench || !slash[1] || strchr(slash + 1, '/')) {
		err_setf(err, -EINVAL, "knob 'bench': '%s' is not SUBSYS/BENCH (sched/messaging)",
			 bench);
		return NULL;
	}
	argv_push(&a, xstrdup("perf"));
	argv_push(&a, xstrdup("bench"));
	argv_push(&a, xstrdup("--format=simple"));
	argv_push(&a, xstrndup(bench, (size_t)(slash - bench)));
	argv_push(&a, xstrdup(slash + 1));
	argv_push_words(&a, knobs_str(ctx->knobs, "args"));
	return a.v;
}

static int pb_check(struct wl_ctx *ctx, struct buf *err)
{
	char **argv = pb_argv(ctx, err);

	if (!argv)
		return -EINVAL;
	argv_free(argv);
	return 0;
}

static int pb_run(struct wl_ctx *ctx, struct buf *err)
{
	struct tool_run tr = { 0 };
	struct tool_cmd cmd = {
		.prog = "perf", .hint = "--rootfs debian:linux-perf", .label = "perf bench",
		.phase = "perf-bench", .stdout_name = "out.txt", .argv = pb_argv(ctx, err),
		.dir = knobs_str(ctx->knobs, "dir"), .timeout_s = knobs_double(ctx->knobs, "timeout_s"),
	};
	char *text = NULL;
	int ret;

	if (!cmd.argv) {
		ret = -EINVAL;
		goto out;
	}
	if ((ret = tr_begin(&tr, ctx, "kcpb", err)) < 0 || (ret = tr_exec(&tr, &cmd, err)) < 0 ||
	    (ret = tr_read(&tr, &text, NULL, "out.txt", 16 << 20, "perf bench", err)) < 0)
		goto out;
	if (pb_parse(text, knobs_str(ctx->knobs, "bench"), tr_metric, &tr) == 0) {
		ret = err_setf(err, -EIO, "perf bench %s printed no figure",
			       knobs_str(ctx->knobs, "bench"));
		goto out;
	}
	tr_summary(&tr);
	ret = 0;
out:
	tr_end(&tr);
	argv_free(cmd.argv);
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
