/* api_jobs.c - the handlers of /api/v1/jobs…: the jobs list, one job, its
 * variants, runs, curves and report (kept in api_state.c's report cache),
 * submitting and cancelling (docs/api.md). */
#define LOG_MODULE "api"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/job_check.h"
#include "api/api_jobs.h"
#include "api/api_view.h"
#include "api/api_reply.h"
#include "store/db.h"
#include "store/db_api.h"
#include "store/db_overhead.h"
#include "exec/job.h"
#include "log.h"
#include "judge/report.h"
#include "judge/report_overhead.h"

/* Report answers larger than this are refused (a job of 10,000 runs in
 * csv is well under it). */
#define API_MAX_REPORT_BYTES (16u << 20)

void api_metrics(struct api *api, struct http_req *req, struct http_resp *resp)
{
	struct buf err = BUF_INIT;
	json_t *v;
	int r;

	(void)req;
	if ((r = api_view_metrics(api->db, &v, &err)))
		return api_db_error(resp, r, "cannot list metrics", &err);
	api_json(resp, 200, json_pack("{s:o}", "metrics", v));
}

void api_jobs_list(struct api *api, struct http_req *req, struct http_resp *resp)
{
	struct buf err = BUF_INIT;
	long limit = 100;
	json_t *v;
	int r;

	if (api_query_uint(resp, req, "limit", 1, 1000, &limit))
		return;
	if ((r = api_view_jobs(api->db, &v, (int)limit, &err)))
		return api_db_error(resp, r, "cannot list jobs", &err);
	api_json(resp, 200, json_pack("{s:o}", "jobs", v));
}

void api_job_get(struct api *api, struct http_req *req, struct http_resp *resp)
{
	struct buf err = BUF_INIT;
	json_t *v;
	int r;

	struct db_overhead *ov = NULL;
	struct overhead_summary sum;
	size_t nov = 0;

	if ((r = api_view_job(api->db, &v, req->id, &err)))
		return api_db_error(resp, r, "no such job", &err);
	/* the finished runs' overhead, as the report's footer says it */
	if ((r = db_job_overheads(api->db, &ov, &nov, req->id, true, &err))) {
		json_decref(v);
		return api_db_error(resp, r, "cannot read the job's overhead", &err);
	}
	overhead_summarize(&sum, ov, nov);
	free(ov);
	json_object_set_new(v, "overhead", overhead_json(&sum));
	api_json(resp, 200, v);
}

void api_job_variants(struct api *api, struct http_req *req, struct http_resp *resp)
{
	struct buf err = BUF_INIT;
	json_t *v;
	int r;

	if ((r = api_view_variants(api->db, &v, req->id, &err)))
		return api_db_error(resp, r, "no such job", &err);
	api_json(resp, 200, json_pack("{s:I, s:o}", "job_id", (json_int_t)req->id, "variants", v));
}

void api_job_runs(struct api *api, struct http_req *req, struct http_resp *resp)
{
	struct buf err = BUF_INIT;
	json_t *v;
	int r;

	struct db_overhead *ov = NULL;
	size_t nov = 0, k, i;
	json_t *run;

	if ((r = api_view_runs(api->db, &v, req->id, http_query(req, "metric"), &err)))
		return api_db_error(resp, r, "no such job", &err);
	if ((r = db_job_overheads(api->db, &ov, &nov, req->id, false, &err))) {
		json_decref(v);
		return api_db_error(resp, r, "cannot read the runs' overhead", &err);
	}
	/* each run's phases (db_overhead.h), null when it has none; ov is
	 * in run id order, the runs in seq order: a binary search each */
	json_array_foreach(json_object_get(v, "runs"), i, run) {
		json_int_t id = json_integer_value(json_object_get(run, "id"));
		size_t lo = 0, hi = nov;
		while (lo < hi) {
			k = lo + (hi - lo) / 2;
			if (ov[k].run_id < id)
				lo = k + 1;
			else
				hi = k;
		}
		json_object_set_new(run, "overhead", lo < nov && ov[lo].run_id == id ?
				    overhead_run_json(&ov[lo]) : json_null());
	}
	free(ov);
	api_json(resp, 200, v);
}

void api_samples(struct api *api, struct http_req *req, struct http_resp *resp,
		 int64_t job_id, int64_t run_id)
{
	struct buf err = BUF_INIT;
	const char *metric = http_query(req, "metric");
	long max_points = 0;
	json_t *v;
	int r;

	if (api_query_uint(resp, req, "max_points", 0, DB_API_MAX_POINTS, &max_points))
		return;
	r = api_view_samples(api->db, &v, job_id, run_id, metric ? metric : "lag_s", max_points, &err);
	if (r == -EINVAL) {
		api_error(resp, 400, "%s", buf_str(&err));
		buf_release(&err);
		return;
	}
	if (r)
		return api_db_error(resp, r, run_id ? "no such run" : "no such job", &err);
	if (run_id)
		json_object_set_new(v, "run_id", json_integer(run_id));
	else
		json_object_set_new(v, "job_id", json_integer(job_id));
	api_json_exact(resp, 200, v);
}

void api_job_samples(struct api *api, struct http_req *req, struct http_resp *resp)
{
	api_samples(api, req, resp, req->id, 0);
}

void api_job_report(struct api *api, struct http_req *req, struct http_resp *resp)
{
	struct buf err = BUF_INIT;
	const char *fmt_name = http_query(req, "format");
	const char *thr = http_query(req, "threshold");
	const char *metric = http_query(req, "metric");
	const char *by = http_query(req, "by"), *baseline = http_query(req, "baseline");
	struct report_opts opts = { .metric = metric, .by = by, .baseline = baseline };
	enum report_format fmt = REPORT_JSON;
	struct buf out = BUF_INIT_MAX(API_MAX_REPORT_BYTES);
	struct report *rep = NULL;
	char *fp = NULL, *key = NULL;
	int r;

	if (fmt_name && report_format_parse(&fmt, fmt_name))
		return api_error(resp, 400, "report format '%s' is not one of text, markdown, csv, json",
				 fmt_name);
	if (thr) {
		char *end;
		opts.threshold = strtod(thr, &end);
		if (!*thr || *end || !isfinite(opts.threshold))
			return api_error(resp, 400, "query parameter 'threshold' is '%s': expected a number",
					 thr);
		opts.has_threshold = true;
	}
	if ((r = db_api_job_fingerprint(api->db, &fp, req->id, &err)))
		return api_db_error(resp, r, "no such job", &err);
	key = xasprintf("%lld|%d|%s|%s|%s|%s", (long long)req->id, (int)fmt, metric ? metric : "",
			thr ? thr : "", by ? by : "", baseline ? baseline : "");
	if (api_report_cache_get(api->shared, &out, key, fp)) {
		/* build once, keep every format: the page asks for text and json */
		if ((r = report_build(&rep, api->db, req->id, &opts, &err))) {
			if (r == -EINVAL) {
				api_error(resp, 400, "%s", buf_str(&err));
				buf_release(&err);
			} else
				api_db_error(resp, r, "no such job", &err);
			goto out;
		}
		for (int f = REPORT_TEXT; f <= REPORT_JSON; f++) {
			char *k = xasprintf("%lld|%d|%s|%s|%s|%s", (long long)req->id, f,
					    metric ? metric : "", thr ? thr : "", by ? by : "",
					    baseline ? baseline : "");
			buf_reset(&out);
			r = report_format(&out, rep, (enum report_format)f);
			if (!r)
				api_report_cache_put(api->shared, k, fp, &out);
			free(k);
			if (r)
				break;
		}
		buf_reset(&out);
		if (!r)
			r = report_format(&out, rep, fmt);
		report_free(rep);
		if (r) {
			api_error(resp, 500, "the report is larger than %u bytes", API_MAX_REPORT_BYTES);
			goto out;
		}
	}
	api_text(resp, 200, &out);
	if (fmt == REPORT_JSON)
		resp->content_type = "application/json";
	else if (fmt == REPORT_CSV)
		resp->content_type = "text/csv; charset=utf-8";
	else if (fmt == REPORT_MARKDOWN)
		resp->content_type = "text/markdown; charset=utf-8";
out:
	buf_release(&out);
	free(fp);
	free(key);
}

/*
 * Each of the n paths (a job's kernels or series, key names which) must be
 * a file under one of the server's --job-dir directories: a relative one
 * is taken under the first, and each is replaced by its real path, so the
 * job names exactly the file that was checked. 0, or -EACCES after a 403.
 */
static int confine_paths(const struct api_shared *sh, char **paths, size_t n, const char *key,
			 struct http_resp *resp)
{
	for (size_t i = 0; i < n; i++) {
		char *joined = NULL, *real;
		bool inside = false;

		if (!sh->njob_dirs) {
			api_error(resp, 403, "\"%s\": this server takes no kernel or series files"
				  " (start kcanary serve with --job-dir DIR and put them there)", key);
			return -EACCES;
		}
		if (paths[i][0] != '/')
			joined = xasprintf("%s/%s", sh->job_dirs[0], paths[i]);
		real = realpath(joined ? joined : paths[i], NULL);
		free(joined);
		for (size_t d = 0; real && d < sh->njob_dirs && !inside; d++) {
			size_t len = strlen(sh->job_dirs[d]);
			inside = !strncmp(real, sh->job_dirs[d], len) && real[len] == '/';
		}
		if (!inside) {
			api_error(resp, 403, "\"%s\": '%s' is not a file under the server's --job-dir"
				  " (%s%s)", key, paths[i], sh->job_dirs[0],
				  sh->njob_dirs > 1 ? ", ..." : "");
			free(real);
			return -EACCES;
		}
		free(paths[i]);
		paths[i] = real;
	}
	return 0;
}

void api_jobs_submit(struct api *api, struct http_req *req, struct http_resp *resp)
{
	const char *ct = http_header(req, "Content-Type");
	const char *p = req->body;
	struct job_spec *spec = job_spec_new();
	struct job_check chk = { 0 };
	struct buf err = BUF_INIT;
	json_t *job = NULL;
	char loc[64];
	int64_t id;
	int r;

	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	if (!*p) {
		api_error(resp, 400, "the request has no body: send the job file (INI) or its JSON form");
		goto out;
	}
	if (strlen(req->body) != req->body_len) {
		api_error(resp, 400, "the job contains a NUL byte");
		goto out;
	}
	/* the JSON form is what GET /api/v1/jobs/ID returns as "spec" */
	if ((ct && strstr(ct, "json")) || *p == '{')
		r = job_spec_from_json(spec, req->body, &err);
	else
		r = job_spec_parse_ini(spec, req->body, "job", &err);
	if (r) {
		api_error(resp, 400, "%s", buf_str(&err));
		goto out;
	}
	/* --files are paths on this host copied into the guest: a token would
	 * read any file the server can, so only the host's CLI takes them
	 * (refused before job_spec_check, which would say whether one exists) */
	if (spec->nfiles) {
		api_error(resp, 400, "'files' (host paths copied into the guest) cannot be submitted"
			  " through the API: run kcanary compare --files on the host");
		goto out;
	}
	/* files the server would build or boot: only under --job-dir (checked
	 * first: job_spec_check would say whether any file exists) */
	if (confine_paths(api->shared, spec->kernels, spec->nkernels, "kernels", resp) ||
	    confine_paths(api->shared, spec->series, spec->nseries, "series", resp))
		goto out;
	if ((r = job_spec_check(spec, &err))) {
		api_error(resp, 400, "%s", buf_str(&err));
		goto out;
	}
	/* the same knob check as the CLI, before anything is stored */
	if ((r = job_check_cells(&chk, spec, NULL, &err))) {
		if (r == -EINVAL || r == -EFBIG)	/* bad knobs; a disk above the cap */
			api_error(resp, 400, "%s", buf_str(&err));
		else {
			log_err("cannot check the job's knobs: %s", buf_str(&err));
			api_error(resp, 500, "cannot check the job's knobs: %s", buf_str(&err));
		}
		goto out;
	}
	/* the report's names (by, metric), as compare and its --dry-run check them */
	if ((r = job_check_names(api->db, spec, &err))) {
		if (r == -EINVAL)
			api_error(resp, 400, "%s", buf_str(&err));
		else
			api_db_error(resp, r, "cannot check the job's metric", &err);
		goto out;
	}
	/* Stored with its variants and pending runs, status pending: kcanary
	 * serve's job queue (compare_worker_start(), compare.h) carries it
	 * out, oldest first, unless serve runs with --no-exec. */
	buf_reset(&err);
	if ((r = job_store(api->db, spec, NULL, &id, &err))) {
		if (r == -EINVAL || r == -EEXIST)
			api_error(resp, 400, "cannot store the job: %s", buf_str(&err));
		else
			api_db_error(resp, r, "cannot store the job", &err);
		goto out;
	}
	job_check_store(api->db, id, &chk);	/* its runs' lengths; logged when it fails */
	if ((r = api_view_job(api->db, &job, id, &err))) {
		api_db_error(resp, r, "cannot read the job back", &err);
		goto out;
	}
	log_info("job %lld '%s' submitted, pending", (long long)id, spec->name);
	snprintf(loc, sizeof(loc), "/api/v1/jobs/%lld", (long long)id);
	http_resp_header(resp, "Location", loc);
	api_json(resp, 201, job);
out:
	job_check_release(&chk);
	job_spec_free(spec);
	buf_release(&err);
}

void api_job_cancel(struct api *api, struct http_req *req, struct http_resp *resp)
{
	struct buf err = BUF_INIT;
	char status[32] = "";
	json_t *job;
	int r;

	r = db_job_cancel(api->db, req->id, status, &err);
	if (r == -EALREADY) {
		buf_release(&err);
		return api_error(resp, 409, "job %lld has already ended (%s); nothing to cancel",
				 (long long)req->id, status);
	}
	if (r)
		return api_db_error(resp, r, "no such job", &err);
	if ((r = api_view_job(api->db, &job, req->id, &err)))
		return api_db_error(resp, r, "cannot read the job back", &err);
	api_json(resp, 200, job);
}
