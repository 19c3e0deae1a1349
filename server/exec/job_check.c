/* job_check.c - a job spec's cells through the agent's check (job_check.h). */
#define LOG_MODULE "job"
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "exec/job_check.h"
#include "guest/agent_check.h"
#include "guest/run_params.h"
#include "guest/scratch.h"
#include "judge/metric_check.h"
#include "judge/report_axis.h"
#include "log.h"
#include "store/db_cells.h"

/* Where the spec set knob: the job file's line, "--set knob" when the CLI
 * did, NULL when neither (a default). Caller frees. */
static char *knob_where(const struct job_spec *spec, const char *knob)
{
	const char *w;

	if (!knob)
		return NULL;
	if ((w = job_spec_where(spec, knob)))
		return xstrdup(w);
	for (size_t i = 0; i < spec->nknobs; i++)
		if (!strcmp(spec->knobs[i].key, knob))
			return xasprintf("--set %s", knob);
	for (size_t i = 0; i < spec->ndims; i++)
		if (!strcmp(spec->dims[i].key, knob))
			return xasprintf("--set %s", knob);
	return NULL;
}

static double gib(uint64_t b)
{
	return (double)b / (double)(1ULL << 30);
}

/* The cell's filesystem as its params say (ext4 when they do not). Caller
 * frees. */
static char *cell_fs(const char *params)
{
	json_t *p = json_loads(params, 0, NULL);
	const char *fs = json_string_value(json_object_get(p, "fs"));
	char *out = xstrdup(fs ? fs : "ext4");

	json_decref(p);
	return out;
}

/* Append where spec set each of knobs (", "-separated): " (job.ini:8:
 * [matrix] measure_s; --set rate_mbps)", nothing when it set none. */
static void knobs_where(struct buf *b, const struct job_spec *spec, const char *knobs)
{
	char *list = xstrdup(knobs), *save = NULL;
	const char *sep = " (";

	for (char *k = strtok_r(list, ", ", &save); k; k = strtok_r(NULL, ", ", &save)) {
		char *where = knob_where(spec, k);
		if (where) {
			buf_printf(b, "%s%s", sep, where);
			sep = "; ";
		}
		free(where);
	}
	if (*sep == ';')
		buf_puts(b, ")");
	free(list);
}

/* Cell i (text cell, params params) needs a disk of what c says its
 * workload writes (scratch_disk_bytes()): out's disk grows to it, and
 * names the cell when it needs the most so far (the first of equals);
 * -EFBIG with err when the need is above the cap (no disk given), or its
 * files (data and a block per file) above the disk the spec gives, naming
 * the cell, the sizes, --disk and the knobs the size grows with, with
 * where the spec set them. */
static int size_cell(struct job_check *out, const struct job_spec *spec, const char *cell,
		     const char *params, const struct agent_check *c, struct buf *err)
{
	uint64_t need, files, asked = spec->disk_bytes;
	const char *knobs;
	char *fs;

	if (c->disk_bytes < 0 || c->disk_files < 0)
		return 0;
	need = scratch_disk_bytes((uint64_t)c->disk_bytes, (uint64_t)c->disk_files);
	/* not saturated: both are then far below 2^63 */
	files = need == UINT64_MAX ? UINT64_MAX :
		(uint64_t)c->disk_bytes + (uint64_t)c->disk_files * 4096;
	if (asked ? files <= asked : need <= SCRATCH_CAP_BYTES) {
		if (!out->disk_cell || need > out->disk_bytes) {
			out->disk_bytes = need;
			free(out->disk_cell);
			out->disk_cell = xstrdup(cell);
			out->disk_data = c->disk_bytes;
		}
		return 0;
	}
	fs = cell_fs(params);
	knobs = c->disk_knobs && *c->disk_knobs ? c->disk_knobs : "the workload's knobs";
	err_setf(err, -EFBIG, "%s%s%sscratch disk: ", *cell ? "matrix cell '" : "", cell,
		 *cell ? "': " : "");
	if (asked)
		buf_printf(err, "disk (--disk) %.1f GiB cannot hold the %.1f GiB the workload"
			   " writes in %lld files (its %s disk needs %.0f GiB with the filesystem's"
			   " headroom): give --disk %.0fG or lower %s", gib(asked),
			   gib((uint64_t)c->disk_bytes), (long long)c->disk_files, fs, gib(need),
			   gib(need), knobs);
	else
		buf_printf(err, "the workload writes up to %.1f GiB in %lld files, so its %s disk"
			   " needs %.0f GiB, above the %.0f GiB a job's disk is sized to by itself:"
			   " lower %s", gib((uint64_t)c->disk_bytes), (long long)c->disk_files, fs,
			   gib(need), gib(SCRATCH_CAP_BYTES), knobs);
	knobs_where(err, spec, c->disk_knobs ? c->disk_knobs : "");
	if (!asked)
		buf_printf(err, ", or give the size by name (--disk %.0fG)", gib(need));
	free(fs);
	return -EFBIG;
}

/* Cell i through the agent: out->expected_s[i] its run's length (< 0: the
 * agent cannot tell), out's disk grown to what it needs; -EINVAL with err
 * when its knobs do not parse, -EFBIG when its disk would be too large. */
static int check_cell(struct job_check *out, const struct job_spec *spec, size_t i,
		      const char *agent, struct buf *err)
{
	const char *params = out->params[i];
	char *where = NULL, *cell = job_cell_text(spec, i);
	struct run_params rp;
	struct agent_check c;
	int r;

	if ((r = run_params_parse(&rp, params, err)) ||
	    (r = agent_check(&c, agent, &rp, err)))
		goto out;
	out->expected_s[i] = c.expected_s;
	if (!c.ok) {
		if ((where = knob_where(spec, c.knob)))
			r = err_setf(err, -EINVAL, "%s: %s", where, c.error);
		else
			r = err_setf(err, -EINVAL, "%s%s%s%s", *cell ? "matrix cell '" : "", cell,
				     *cell ? "': " : "", c.error);
	} else {
		r = size_cell(out, spec, cell, params, &c, err);
	}
	agent_check_release(&c);
out:
	run_params_release(&rp);
	free(where);
	free(cell);
	return r;
}

int job_check_cells(struct job_check *out, const struct job_spec *spec, const char *agent,
		    struct buf *err)
{
	size_t nc = job_ncells(spec);
	int r = 0;

	*out = (struct job_check){ .ncells = nc };
	out->params = xcalloc(nc ? nc : 1, sizeof(*out->params));
	out->expected_s = xcalloc(nc ? nc : 1, sizeof(*out->expected_s));
	for (size_t i = 0; i < nc && !r; i++) {
		out->params[i] = job_cell_params(spec, i);
		r = check_cell(out, spec, i, agent, err);
	}
	if (!r && spec->disk_bytes) {
		out->disk_bytes = spec->disk_bytes;	/* it holds every cell's files */
		out->disk_asked = true;
	} else if (!r && out->disk_bytes < SCRATCH_FLOOR_BYTES) {
		out->disk_bytes = SCRATCH_FLOOR_BYTES;	/* scratch_disk_bytes()'s floor: none known */
	}
	return r;
}

void job_check_store(struct db *db, int64_t job_id, const struct job_check *c)
{
	struct buf err = BUF_INIT;
	int r = 0;

	for (size_t i = 0; i < c->ncells && !r; i++)
		r = db_cell_expected_set(db, job_id, c->params[i], c->expected_s[i], &err);
	if (r)
		log_warn("job %lld: its runs will ask the agent for their length: %s",
			 (long long)job_id, buf_str(&err));
	buf_reset(&err);
	if (c->disk_bytes && db_job_scratch_set(db, job_id, c->disk_bytes, c->disk_cell,
						c->disk_data, c->disk_asked, &err))
		log_warn("job %lld: each of its runs will size its own scratch disk: %s",
			 (long long)job_id, buf_str(&err));
	buf_release(&err);
}

void job_check_release(struct job_check *c)
{
	if (!c)
		return;
	free(c->disk_cell);
	c->disk_cell = NULL;
	if (!c->params)
		return;
	for (size_t i = 0; i < c->ncells; i++)
		free(c->params[i]);
	free(c->params);
	free(c->expected_s);
	c->params = NULL;
	c->expected_s = NULL;
	c->ncells = 0;
}

/* v[] (*n long) gets s unless it has it. */
static void axis_add(char ***v, size_t *n, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i], s))
			return;
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = xstrdup(s);
}

static void axes_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* The axes a report of spec can take, in the order an error lists them:
 * "variant", "fs", "host", then each cell's knobs and sysctls as the
 * runs' params will have them (job_cell_params). A new vector of *n
 * strings (axes_free). */
static char **spec_axes(const struct job_spec *spec, size_t *n)
{
	char **v = NULL;
	size_t nv = 0;
	bool sys = false;

	axis_add(&v, &nv, "variant");
	axis_add(&v, &nv, "fs");
	axis_add(&v, &nv, "host");
	if (spec->nseries) {
		axis_add(&v, &nv, "revision");
		axis_add(&v, &nv, "patches");
	}
	for (size_t i = 0, nc = job_ncells(spec); i < nc; i++) {
		char *p = job_cell_params(spec, i);
		json_t *params = json_loads(p, 0, NULL), *val;
		const char *k;

		json_object_foreach(params, k, val) {
			if (!strcmp(k, "sysctl")) {
				const char *sk;
				json_t *sv;
				sys = true;
				json_object_foreach(val, sk, sv)
					axis_add(&v, &nv, sk);
			} else if (strcmp(k, "fs") && strcmp(k, "workload")) {
				axis_add(&v, &nv, k);
			}
		}
		json_decref(params);
		free(p);
	}
	if (sys)
		axis_add(&v, &nv, "sysctl");
	*n = nv;
	return v;
}

/* Whether axis is one of have[] (a sysctl also as "sysctl.NAME"; the
 * variant also as "kernel", as report_axis.h takes them). */
static bool axis_known(char **have, size_t n, const char *axis)
{
	const char *bare = !strncmp(axis, "sysctl.", 7) ? axis + 7 : axis;

	if (!strcmp(axis, "kernel"))
		return true;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(have[i], bare))
			return true;
	return false;
}

static int check_by(const struct job_spec *spec, struct buf *err)
{
	size_t n = 0;
	char **have = spec_axes(spec, &n), *by = xstrdup(spec->by);
	int r = 0;

	for (char *save = NULL, *a = strtok_r(by, ",", &save); a && !r;
	     a = strtok_r(NULL, ",", &save)) {
		if (axis_known(have, n, a))
			continue;
		r = err_setf(err, -EINVAL, "by (--by) '%s': the job has no axis '%s': expected one"
			     " of ", spec->by, a);
		for (size_t i = 0; i < n; i++)
			buf_printf(err, "%s%s", i ? ", " : "", have[i]);
		buf_puts(err, " (a knob or sysctl is an axis when the job sets it: --set, --sysctl)");
	}
	axes_free(have, n);
	free(by);
	return r;
}

/* The values axis will have in a report of spec, as the report orders
 * them, into *out (axes_free with *n): the variants' names, or each
 * cell's value of fs, a knob or one sysctl. false (nothing listed) for an
 * axis whose values only the runs tell: host, all sysctls, revision,
 * patches. */
static bool axis_values(const struct job_spec *spec, const char *axis, char ***out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!strcmp(axis, "variant") || !strcmp(axis, "kernel")) {
		struct variant *v = NULL;
		size_t nv = job_variants(spec, &v);
		for (size_t i = 0; i < nv; i++)
			axis_add(out, n, v[i].name);
		job_variants_free(v, nv);
		return true;
	}
	if (!strcmp(axis, "host") || !strcmp(axis, "sysctl") || !strcmp(axis, "revision") ||
	    !strcmp(axis, "patches"))
		return false;
	for (size_t i = 0, nc = job_ncells(spec); i < nc; i++) {
		char *p = job_cell_params(spec, i), *t;
		json_t *params = json_loads(p, 0, NULL);

		if ((t = report_axis_param(params, axis)))
			axis_add(out, n, t);
		free(t);
		json_decref(params);
		free(p);
	}
	return true;
}

/* Whether baseline names one of vals: the value, a variant's name before
 * " (" ("base" of "base (v6.12.117)"), or the row label "AXIS=VALUE". */
static bool baseline_known(char **vals, size_t n, const char *axis, const char *baseline)
{
	const char *bare = !strncmp(axis, "sysctl.", 7) ? axis + 7 : axis;
	size_t bl = strlen(bare);

	for (size_t i = 0; i < n; i++) {
		const char *paren = strstr(vals[i], " (");
		if (!strcmp(vals[i], baseline) ||
		    (paren && strlen(baseline) == (size_t)(paren - vals[i]) &&
		     !strncmp(vals[i], baseline, (size_t)(paren - vals[i]))) ||
		    (!strncmp(baseline, bare, bl) && baseline[bl] == '=' && !strcmp(baseline + bl + 1, vals[i])))
			return true;
	}
	return false;
}

/* The baseline ("V", or "VA,VB" for two axes) against each axis' values,
 * as the report will take it (report_axis.c put_baseline_first). */
static int check_baseline(const struct job_spec *spec, struct buf *err)
{
	char *by = xstrdup(spec->by ? spec->by : "variant"), *bl = xstrdup(spec->baseline);
	char *sb = NULL, *sl = NULL;
	int r = 0;

	for (char *a = strtok_r(by, ",", &sb), *b = strtok_r(bl, ",", &sl); a && b && !r;
	     a = strtok_r(NULL, ",", &sb), b = strtok_r(NULL, ",", &sl)) {
		char **vals = NULL;
		size_t n = 0;
		if (axis_values(spec, a, &vals, &n) && !baseline_known(vals, n, a, b)) {
			r = err_setf(err, -EINVAL, "baseline (--baseline) '%s' is not a value of axis"
				     " '%s': expected one of ", b, a);
			for (size_t i = 0; i < n; i++)
				buf_printf(err, "%s'%s'", i ? ", " : "", vals[i]);
		}
		axes_free(vals, n);
	}
	free(by);
	free(bl);
	return r;
}

int job_check_names(struct db *db, const struct job_spec *spec, struct buf *err)
{
	int r;

	if (spec->by && (r = check_by(spec, err)))
		return r;
	if (spec->baseline && *spec->baseline && (r = check_baseline(spec, err)))
		return r;
	if (spec->metric_given) {
		if ((r = metric_check(db, spec->metric, spec->workload, err)))
			return err_wrapf(err, r, "metric (--metric)");
	} else if (metric_names(spec->workload) && spec->repeat_auto) {
		/* its looks decide on the metric, and a tool names its own */
		return err_setf(err, -EINVAL, "repeat auto decides on the job's metric, and workload"
				" '%s' names its own: name one (metric, --metric): %s",
				spec->workload, metric_names(spec->workload));
	}
	return 0;
}
