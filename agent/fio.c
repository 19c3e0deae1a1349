/* fio.c - the workload `fio`: run fio (a job file, or one job from knobs)
 * in the test directory and turn its JSON output and its per-second logs
 * into samples, summary figures and their units and directions (fio.h
 * names them). fio must be installed (a --rootfs debian:fio guest, or a
 * fleet host with it).
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_MODULE "fio"
#include "error.h"
#include "fio.h"
#include "log.h"
#include "record.h"
#include "tool_run.h"
#include "util.h"
#include "workload.h"

/* ---- parsers (fio.h) ---- */

static json_t *load_json(const char *text, struct buf *err)
{
	const char *start = text ? strchr(text, '{') : NULL;
	json_error_t je;
	json_t *root;

	if (!start) {
		err_setf(err, -EINVAL, "fio's output has no JSON object");
		return NULL;
	}
	root = json_loads(start, JSON_DISABLE_EOF_CHECK, &je);
	if (!root)
		err_setf(err, -EINVAL, "fio's JSON output does not parse: %s (line %d)", je.text,
			 je.line);
	else if (!json_is_array(json_object_get(root, "jobs"))) {
		err_setf(err, -EINVAL, "fio's JSON output has no \"jobs\" array");
		json_decref(root);
		root = NULL;
	}
	return root;
}

/* fio's percentile keys are "%f" of the percentile: "99.900000". */
static const struct { const char *key, *name; } percentiles[] = {
	{ "50.000000", "clat_p50" }, { "99.000000", "clat_p99" }, { "99.900000", "clat_p99.9" },
};

static int emit_dir(json_t *d, const char *job, const char *dir, fio_metric_fn *emit, void *ud)
{
	json_t *pct = json_object_get(json_object_get(d, "clat_ns"), "percentile");
	char name[256];
	int n = 0;

	if (!json_is_object(d) || json_integer_value(json_object_get(d, "io_bytes")) <= 0)
		return 0;
	snprintf(name, sizeof(name), "fio:%s:%s:bw", job, dir);
	emit(ud, name, json_number_value(json_object_get(d, "bw_bytes")), "bytes/s", "higher");
	snprintf(name, sizeof(name), "fio:%s:%s:iops", job, dir);
	emit(ud, name, json_number_value(json_object_get(d, "iops")), "ops/s", "higher");
	n += 2;
	for (size_t i = 0; i < sizeof(percentiles) / sizeof(percentiles[0]); i++) {
		json_t *v = json_object_get(pct, percentiles[i].key);

		if (!json_is_number(v))
			continue;
		snprintf(name, sizeof(name), "fio:%s:%s:%s", job, dir, percentiles[i].name);
		emit(ud, name, json_number_value(v), "ns", "lower");
		n++;
	}
	return n;
}

int fio_parse_json(const char *text, fio_metric_fn *emit, void *ud, size_t *njobs,
		   struct buf *err)
{
	static const char *const dirs[] = { "read", "write", "trim" };
	json_t *root = load_json(text, err), *jobs, *job;
	size_t i;
	int n = 0;

	if (!root)
		return -EINVAL;
	jobs = json_object_get(root, "jobs");
	json_array_foreach(jobs, i, job) {
		const char *jn = json_string_value(json_object_get(job, "jobname"));

		if (!jn)
			continue;
		for (size_t d = 0; d < 3; d++)
			n += emit_dir(json_object_get(job, dirs[d]), jn, dirs[d], emit, ud);
	}
	if (njobs)
		*njobs = json_array_size(jobs);
	json_decref(root);
	return n;
}

char *fio_job_name(const char *text, size_t i)
{
	json_t *root = load_json(text, NULL);
	const char *jn;
	char *out = NULL;

	if (!root)
		return NULL;
	jn = json_string_value(json_object_get(json_array_get(json_object_get(root, "jobs"), i),
					       "jobname"));
	if (jn)
		out = xstrdup(jn);
	json_decref(root);
	return out;
}

int fio_parse_log(const char *text, const char *job, const char *kind, fio_sample_fn *emit,
		  void *ud)
{
	static const char *const dirs[] = { "read", "write", "trim" };
	bool bw = !strcmp(kind, "bw");
	const char *p = text;
	int n = 0;

	while (p && *p) {
		long long msec, value;
		int dir;
		char name[256];

		if (sscanf(p, "%lld, %lld, %d", &msec, &value, &dir) == 3 && dir >= 0 && dir <= 2) {
			snprintf(name, sizeof(name), "fio:%s:%s:%s", job, dirs[dir], kind);
			emit(ud, (double)msec / 1000.0, name, bw ? (double)value * 1024.0 : (double)value);
			n++;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return n;
}

/* ---- the workload ---- */

static const struct knob_def knobs[] = {
	{ "job", KNOB_STRING, "path", "", "fio job file (relative to dir); \"\": one job from the knobs below", NULL },
	{ "dir", KNOB_STRING, "path", ".", "directory fio runs in (its files go there; not tmpfs)", NULL },
	{ "rw", KNOB_STRING, "", "randwrite", "the job's rw= (read, write, randread, randwrite, randrw, ...)", NULL },
	{ "bs", KNOB_SIZE, "bytes", "4K", "block size", NULL },
	{ "size", KNOB_SIZE, "bytes", "64M", "file size of the job", NULL },
	{ "runtime_s", KNOB_SECONDS, "s", "10", "run time (time_based)", NULL },
	{ "ioengine", KNOB_STRING, "", "psync", "ioengine=", NULL },
	{ "iodepth", KNOB_UINT, "", "1", "iodepth=", NULL },
	{ "direct", KNOB_BOOL, "", "0", "O_DIRECT", NULL },
	{ "numjobs", KNOB_UINT, "", "1", "numjobs= (with group_reporting)", NULL },
	{ "timeout_s", KNOB_SECONDS, "s", "0", "kill fio after this long (0: runtime_s + 120 s, or none with a job file)", NULL },
};

static int fio_check(struct wl_ctx *ctx, struct buf *err)
{
	char *cgroot = NULL;
	int ret = wl_check_common(&cgroot, "", knobs_str(ctx->knobs, "dir"), err);

	free(cgroot);
	return ret;
}

/* fio_sample_fn over a struct tool_run: t_s is from fio's start. */
static void on_sample(void *ud, double t_s, const char *name, double value)
{
	struct tool_run *tr = ud;

	rec_sample(tr->ctx->rec, tr->t_start_s + t_s, name, value);
}

static char **fio_argv(const struct knobs *k, const char *tmp)
{
	char **v = xcalloc(24, sizeof(*v));
	size_t n = 0;

	v[n++] = xstrdup("fio");
	v[n++] = xstrdup("--output-format=json");
	v[n++] = xasprintf("--output=%s/out.json", tmp);
	v[n++] = xasprintf("--write_bw_log=%s/kc", tmp);
	v[n++] = xasprintf("--write_iops_log=%s/kc", tmp);
	v[n++] = xstrdup("--log_avg_msec=1000");
	if (*knobs_str(k, "job")) {
		v[n++] = xstrdup(knobs_str(k, "job"));
		return v;
	}
	v[n++] = xstrdup("--name=kc");
	v[n++] = xasprintf("--rw=%s", knobs_str(k, "rw"));
	v[n++] = xasprintf("--bs=%llu", (unsigned long long)knobs_u64(k, "bs"));
	v[n++] = xasprintf("--size=%llu", (unsigned long long)knobs_u64(k, "size"));
	v[n++] = xasprintf("--runtime=%.0f", ceil(knobs_double(k, "runtime_s")));
	v[n++] = xstrdup("--time_based");
	v[n++] = xasprintf("--ioengine=%s", knobs_str(k, "ioengine"));
	v[n++] = xasprintf("--iodepth=%llu", (unsigned long long)knobs_u64(k, "iodepth"));
	v[n++] = xasprintf("--direct=%d", knobs_bool(k, "direct") ? 1 : 0);
	v[n++] = xasprintf("--numjobs=%llu", (unsigned long long)knobs_u64(k, "numjobs"));
	v[n++] = xstrdup("--group_reporting");
	return v;
}

static double fio_timeout_s(const struct knobs *k)
{
	double t = knobs_double(k, "timeout_s");

	if (t > 0)
		return t;
	return *knobs_str(k, "job") ? -1 : knobs_double(k, "runtime_s") + 120;
}

/* The per-second logs of every job: tmp/kc_{bw,iops}.N.log. */
static void emit_logs(struct tool_run *tr, const char *out, size_t njobs)
{
	static const char *const kinds[] = { "bw", "iops" };

	for (size_t i = 0; i < njobs; i++) {
		char *job = fio_job_name(out, i);

		for (size_t k = 0; job && k < 2; k++) {
			char *path = xasprintf("%s/kc_%s.%zu.log", tr->tmp, kinds[k], i + 1), *text = NULL;

			if (read_file(&text, NULL, path, 64 << 20) == 0)
				fio_parse_log(text, job, kinds[k], on_sample, tr);
			else
				log_warn("fio wrote no %s log for job '%s' (%s)", kinds[k], job, path);
			free(text);
			free(path);
		}
		free(job);
	}
}

static int fio_run(struct wl_ctx *ctx, struct buf *err)
{
	struct tool_run tr = { 0 };
	struct tool_cmd cmd = {
		.prog = "fio", .hint = "install fio: --rootfs debian:fio", .label = "fio", .phase = "fio",
		.dir = knobs_str(ctx->knobs, "dir"), .timeout_s = fio_timeout_s(ctx->knobs),
	};
	char *out = NULL;
	size_t njobs = 0;
	int ret;

	if ((ret = fio_check(ctx, err)) < 0 || (ret = tr_begin(&tr, ctx, "kcfio", err)) < 0)
		goto out;
	cmd.argv = fio_argv(ctx->knobs, tr.tmp);
	if ((ret = tr_exec(&tr, &cmd, err)) < 0 ||
	    (ret = tr_read(&tr, &out, NULL, "out.json", 64 << 20, "fio", err)) < 0)
		goto out;
	if ((ret = fio_parse_json(out, tr_metric, &tr, &njobs, err)) < 0)
		goto out;
	emit_logs(&tr, out, njobs);
	tr_summary(&tr);
	ret = 0;
out:
	tr_end(&tr);
	argv_free(cmd.argv);
	free(out);
	return ret;
}

static double fio_expected_s(const struct knobs *k)
{
	return *knobs_str(k, "job") ? -1 : knobs_double(k, "runtime_s") + 30;
}

/* One job from the knobs lays out numjobs files of size bytes and, time
 * based, writes within them (workload.h's disk_use); a job file's are its
 * own: false. fio's logs and JSON output are small, in the agent's temp
 * directory. */
static bool fio_disk_use(const struct knobs *k, uint64_t *bytes, uint64_t *files)
{
	if (*knobs_str(k, "job"))
		return false;
	*files = knobs_u64(k, "numjobs");
	if (__builtin_mul_overflow(knobs_u64(k, "size"), *files, bytes))
		*bytes = UINT64_MAX;     /* 4096T x 8192 jobs: more than any disk */
	return true;
}

const struct workload wl_fio = {
	.name = "fio",
	.summary = "fio (a job file, or one job from knobs): bw, iops, clat p50/p99/p99.9 per job and direction, per-second bw/iops",
	.notes = "  metrics: fio:JOB:DIR:bw (bytes/s, higher), :iops (ops/s, higher),\n"
		 "  :clat_p50, :clat_p99, :clat_p99.9 (ns, lower); DIR read/write/trim;\n"
		 "  bw and iops also as per-second samples from fio's logs. Needs fio.",
	.knobs = knobs,
	.nknobs = sizeof(knobs) / sizeof(knobs[0]),
	.check = fio_check,
	.run = fio_run,
	.expected_s = fio_expected_s,
	.disk_use = fio_disk_use,
	.disk_knobs = "size, numjobs",
};
