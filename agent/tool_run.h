/* tool_run.h - one run of an external benchmark tool (fio, stress-ng,
 * perf bench) as a workload: a temporary directory for its output, the
 * tool spawned in the test directory and waited for with probe records
 * each second, its output file read back, and the metrics its parser
 * reports gathered into the summary record. The workloads keep their own
 * argv and parser; this is the scaffolding around them.
 */
#ifndef KC_TOOL_RUN_H
#define KC_TOOL_RUN_H

#include <jansson.h>
#include <stddef.h>

#include "util.h"

struct wl_ctx;

struct tool_run {
	struct wl_ctx *ctx;
	char tmp[64];            /* the run's directory; "" until tr_begin */
	json_t *summary;         /* {metric: value}, owned, freed by tr_end */
	double t_start_s;        /* workload time (wl_t) the tool started at */
};

/* What to start: argv (NULL-terminated, borrowed; argv[0], prog, looked
 * up on PATH by lib/proc.h) in dir. hint follows err when prog is not
 * there ("--rootfs debian:stress-ng"). label names the tool in err and
 * is also the phase record's name. stdout_name, when not NULL, is a
 * file in tr->tmp the tool's stdout goes to (perf bench prints its
 * figures there); NULL leaves stdout to the agent's. timeout_s: SIGKILL
 * after this long (<= 0: no limit). */
struct tool_cmd {
	const char *prog, *hint, *label, *phase, *stdout_name;
	char **argv;
	const char *dir;
	double timeout_s;
};

/*
 * tr_begin - make tr's temporary directory /tmp/<prefix>.XXXXXX (prefix at
 * most 40 characters) and an empty summary. 0, or -errno with err (error.h);
 * tr is safe to tr_end either way.
 */
int tr_begin(struct tool_run *tr, struct wl_ctx *ctx, const char *prefix, struct buf *err);

/*
 * tr_exec - emit the phase record cmd->phase, start the tool (see struct
 * tool_cmd) in a process group of its own (wl_start) and wait for it
 * (wl_wait_tool), then emit one round of probe records. 0 when the tool
 * exited 0; -errno with err (cannot create the stdout file, cannot fork,
 * -EINTR, -ETIMEDOUT, -EIO when it failed).
 */
int tr_exec(struct tool_run *tr, const struct tool_cmd *cmd, struct buf *err);

/*
 * tr_read - read the file tr->tmp/name (at most max_bytes) into *text_out
 * (NUL-terminated, caller frees; its length in *len_out, may be NULL). 0,
 * or -errno with err "LABEL left no output in PATH: why".
 */
int tr_read(struct tool_run *tr, char **text_out, size_t *len_out, const char *name,
	    size_t max_bytes, const char *label, struct buf *err);

/*
 * tr_metric - a parser's metric callback (the shape of fio_metric_fn,
 * sng_metric_fn and pb_metric_fn) with ud the struct tool_run: emits the
 * metric record (name, unit, better) and puts value into the summary.
 * Strings are borrowed.
 */
void tr_metric(void *ud, const char *name, double value, const char *unit, const char *better);

/* tr_summary - emit the summary record of the metrics gathered so far. */
void tr_summary(struct tool_run *tr);

/*
 * tr_end - remove tr->tmp and what the tool left in it (one level, as the
 * tools write files only; a warning when it cannot) and free the summary.
 * Safe after a failed or no tr_begin (tr zeroed).
 */
void tr_end(struct tool_run *tr);

/* A tool's argv being built: v is NULL-terminated after every push (or
 * NULL before the first); its strings and v are heap, owned by whoever
 * holds v (argv_free). */
struct argv_buf {
	char **v;
	size_t n, cap;
};

/* argv_push - append s (heap, ownership passes to a). */
void argv_push(struct argv_buf *a, char *s);

/* argv_push_words - append each space-separated word of words (a knob
 * such as "args=-l 100"), copied; runs of spaces make no empty word. */
void argv_push_words(struct argv_buf *a, const char *words);

/* argv_free - free a NULL-terminated vector of heap strings and the vector
 * (NULL is fine). */
void argv_free(char **v);

#endif
