/* api_bisect.c - GET /api/v1/jobs/{job}/bisect-log: a bisection job's
 * event log as text (bisect_log.c's format with '# candidate' lines), what
 * `kcanary bisect log JOB` prints; with ?format=json the same log read by
 * the judge (bisect_log_read) as one JSON object, which the web view draws. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "judge/bisect_log.h"
#include "api/api_bisect.h"
#include "api/api_reply.h"
#include "store/db_bisect.h"
#include "util.h"

/* s as a JSON string; a log line that is not UTF-8 (a commit subject in
 * another encoding) keeps its ASCII, each other byte becomes '?'. */
static json_t *str_json(const char *s)
{
	json_t *j = json_string(s);
	char *c;

	if (j)
		return j;
	c = xstrdup(s);
	for (char *p = c; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	j = json_string(c);
	free(c);
	return j;
}

/* A field's value as written: an integer, a finite real, null for a
 * non-finite one ("nan"), else the string. */
static json_t *field_json(const char *s)
{
	char *end;
	long long i;
	double d;

	if (!*s)
		return json_string(s);
	i = strtoll(s, &end, 10);
	if (!*end)
		return json_integer(i);
	d = strtod(s, &end);
	if (!*end)
		return isfinite(d) ? json_real(d) : json_null();
	return str_json(s);
}

/* A line's fields as an object, null for no line. */
static json_t *fields_json(const struct bisect_log_fields *f)
{
	json_t *o;

	if (!f->n)
		return json_null();
	o = json_object();
	for (size_t i = 0; i < f->n; i++)
		if (json_object_set_new(o, f->key[i], field_json(f->value[i])))
			json_object_set_new(o, "?", json_null());	/* a key not UTF-8 */
	return o;
}

static json_t *num_or_null(double d)
{
	return isfinite(d) ? json_real(d) : json_null();
}

static json_t *config_json(const struct bisect_log_view *v)
{
	const struct bisect_opts *o = &v->opts;

	return json_pack("{s:I, s:s, s:f, s:b, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:b}",
			 "n", (json_int_t)v->n,
			 "strategy", o->strategy == BISECT_BINARY ? "binary" : "probabilistic",
			 "confidence", o->confidence, "find_fix", o->find_fix,
			 "higher_is_worse", o->higher_is_worse, "max_runs", (json_int_t)o->max_runs,
			 "endpoint_min_runs", (json_int_t)o->endpoint_min_runs,
			 "endpoint_max_runs", (json_int_t)o->endpoint_max_runs,
			 "fixed_repeats", (json_int_t)o->fixed_repeats,
			 "step_max_runs", (json_int_t)o->step_max_runs,
			 "check_runs", (json_int_t)o->check_runs,
			 "early_endpoints", o->early_endpoints, "sharp_good", o->sharp_good);
}

static json_t *cand_json(const struct bisect_log_cand *c)
{
	json_t *runs = json_array();

	for (size_t k = 0; k < c->nruns; k++)
		json_array_append_new(runs, json_pack("{s:o, s:s}", "value", num_or_null(c->runs[k].value),
						      "phase", c->runs[k].phase));
	return json_pack("{s:I, s:o, s:o, s:o, s:o, s:I, s:s?, s:o}",
			 "idx", (json_int_t)c->idx, "sha", str_json(c->sha),
			 "name", c->name ? str_json(c->name) : json_null(),
			 "subject", c->subject ? str_json(c->subject) : json_null(), "runs", runs, "skips", (json_int_t)c->skips,
			 "verdict", *c->verdict ? c->verdict : NULL, "median", num_or_null(c->median));
}

/* The bisection as JSON (docs/api.md): config, candidates, the last
 * endpoints/check/posterior/result. */
static json_t *view_json(const struct bisect_log_view *v)
{
	json_t *cands = json_array(), *post = json_array();

	for (size_t i = 0; i < v->ncands; i++)
		json_array_append_new(cands, cand_json(&v->cands[i]));
	for (size_t i = 0; i < v->npost; i++)
		json_array_append_new(post, json_pack("{s:I, s:I, s:o}",
						      "first", (json_int_t)v->post[i].first,
						      "last", (json_int_t)v->post[i].last,
						      "prob", num_or_null(v->post[i].prob)));
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "config", config_json(v),
			 "candidates", cands, "endpoints", fields_json(&v->endpoints),
			 "check", fields_json(&v->check), "posterior", post,
			 "result", fields_json(&v->result));
}

void api_job_bisect_log(struct api *api, struct http_req *req, struct http_resp *resp)
{
	struct buf err = BUF_INIT;
	struct buf b = BUF_INIT;
	struct bisect_log_view v;
	const char *fmt = http_query(req, "format");
	char *log = NULL;
	int r;

	if (fmt && strcmp(fmt, "text") && strcmp(fmt, "json"))
		return api_error(resp, 400, "format must be text or json");
	if ((r = db_bisect_log_get(api->db, req->id, &log, &err)))
		return api_db_error(resp, r, "no bisection log for this job", &err);
	if (!fmt || !strcmp(fmt, "text")) {
		buf_puts(&b, log);
		free(log);
		api_text(resp, 200, &b);
		buf_release(&b);
		return;
	}
	r = bisect_log_read(&v, log, &err);
	free(log);
	if (r)
		api_error(resp, 500, "the bisection log does not read: %s", buf_str(&err));
	else
		api_json_exact(resp, 200, view_json(&v));
	bisect_log_view_free(&v);
	buf_release(&err);
}
