/* tool_run.c - the scaffolding the tool workloads share (fio.c,
 * stress_ng.c, perf_bench.c): temporary directory, spawn and wait, output
 * file, summary (see tool_run.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_MODULE "tool"
#include "error.h"
#include "log.h"
#include "probes.h"
#include "record.h"
#include "tool_run.h"
#include "util.h"
#include "workload.h"

void argv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

void argv_push(struct argv_buf *a, char *s)
{
	if (a->n + 2 > a->cap) {
		a->cap = a->cap ? a->cap * 2 : 16;
		a->v = xrealloc(a->v, a->cap * sizeof(*a->v));
	}
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

void argv_push_words(struct argv_buf *a, const char *words)
{
	char *copy = xstrdup(words), *save = NULL;

	for (char *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		argv_push(a, xstrdup(tok));
	free(copy);
}

int tr_begin(struct tool_run *tr, struct wl_ctx *ctx, const char *prefix, struct buf *err)
{
	memset(tr, 0, sizeof(*tr));
	tr->ctx = ctx;
	tr->summary = json_object();
	snprintf(tr->tmp, sizeof(tr->tmp), "/tmp/%s.XXXXXX", prefix);
	if (!mkdtemp(tr->tmp)) {
		int e = errno;
		int ret = err_setf(err, -e, "cannot create %s: %s", tr->tmp, strerror(e));

		tr->tmp[0] = '\0';
		return ret;
	}
	return 0;
}

int tr_exec(struct tool_run *tr, const struct tool_cmd *cmd, struct buf *err)
{
	struct wl_ctx *ctx = tr->ctx;
	struct proc_spec spec = {
		.argv = (const char *const *)cmd->argv, .dir = cmd->dir,
		.in = PROC_INHERIT, .out = PROC_INHERIT, .err = PROC_INHERIT,
	};
	const struct wl_child wc = { .cg = NULL, .death_sig = SIGKILL, .own_group = true };
	struct proc *p = NULL;
	char *out_path = NULL;
	int out_fd = -1, ret = 0;

	if (cmd->stdout_name) {
		out_path = xasprintf("%s/%s", tr->tmp, cmd->stdout_name);
		out_fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (out_fd < 0) {
			int e = errno;

			ret = err_setf(err, -e, "cannot create %s: %s", out_path, strerror(e));
			goto out;
		}
		spec.out = PROC_FD;
		spec.out_fd = out_fd;
	}
	rec_phase(ctx->rec, wl_t(ctx), cmd->phase);
	tr->t_start_s = wl_t(ctx);
	if ((ret = wl_start(&p, &spec, &wc, err)) < 0) {
		if (ret == -ENOENT || ret == -EACCES)   /* not installed: how to get it */
			buf_printf(err, " (%s)", cmd->hint);
		goto out;
	}
	close(out_fd);
	out_fd = -1;
	if ((ret = wl_wait_tool(ctx, p, cmd->timeout_s, cmd->label, err)) < 0)
		goto out;
	probes_emit(ctx->probes, ctx->rec, wl_t(ctx));
out:
	if (out_fd >= 0)
		close(out_fd);
	free(out_path);
	return ret;
}

int tr_read(struct tool_run *tr, char **text_out, size_t *len_out, const char *name,
	    size_t max_bytes, const char *label, struct buf *err)
{
	char *path = xasprintf("%s/%s", tr->tmp, name);
	int ret = read_file(text_out, len_out, path, max_bytes);

	if (ret < 0)
		err_setf(err, ret, "%s left no output in %s: %s", label, path, strerror(-ret));
	free(path);
	return ret;
}

void tr_metric(void *ud, const char *name, double value, const char *unit, const char *better)
{
	struct tool_run *tr = ud;

	rec_metric(tr->ctx->rec, name, unit, better);
	json_object_set_new(tr->summary, name, json_real(value));
}

void tr_summary(struct tool_run *tr)
{
	rec_emit(tr->ctx->rec, json_pack("{s:s, s:O}", "type", "summary", "metrics", tr->summary));
}

void tr_end(struct tool_run *tr)
{
	int ret;

	if (tr->tmp[0] && (ret = wl_remove_flat(tr->tmp)) < 0)
		log_warn("cannot remove %s: %s", tr->tmp, strerror(-ret));
	tr->tmp[0] = '\0';
	json_decref(tr->summary);
	tr->summary = NULL;
}
