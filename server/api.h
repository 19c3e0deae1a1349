/* api.h - the JSON API under /api/v1/ (docs/api.md): the route table in
 * api.c, handlers in api_jobs.c (jobs, submit, cancel, report) and
 * api_runs.c (runs, samples, probes, console). Handlers see http.h's
 * request/response, never libmicrohttpd, and reach the store through
 * db_api.h.
 */
#ifndef KC_API_H
#define KC_API_H

#include <jansson.h>

#include "http.h"

struct db;

#include <pthread.h>

struct report_cache;

/* What the server's threads share: built reports, behind a lock. */
struct api_shared {
	pthread_mutex_t lock;
	struct report_cache *reports;   /* api_jobs.c */
};

/* One server thread's handler state: its own store connection (db.h: one
 * connection per thread) and the shared part. */
struct api {
	struct db *db;
	struct api_shared *shared;
};

/* Set up / free the shared part (not any db). */
void api_shared_init(struct api_shared *sh);
void api_shared_release(struct api_shared *sh);

/*
 * api_handle - answer one request whose path starts with /api/: find the
 * route (404 or 405 with a JSON error when none), check the bearer token
 * for routes that change state (401 when missing or wrong), call the
 * handler. Always fills resp.
 */
void api_handle(struct api *api, struct http_req *req, struct http_resp *resp);

/* api_json - answer status with the JSON value v (reference stolen). */
void api_json(struct http_resp *resp, int status, json_t *v);
/* api_error - answer status with {"error": "<message>", "status": N}. */
void api_error(struct http_resp *resp, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* api_text - answer status with text/plain; the buffer is moved into resp. */
void api_text(struct http_resp *resp, int status, struct buf *text);

/* Map a store error to an answer: -ENOENT 404 naming what, else 500. */
void api_db_error(struct http_resp *resp, struct api *api, int r, const char *what);

/*
 * api_query_uint - parse the query parameter key as an unsigned integer
 * in [lo, hi] into *out; *out keeps dflt when the parameter is absent.
 * Returns 0, or -EINVAL after answering 400 naming the parameter.
 */
int api_query_uint(struct http_resp *resp, const struct http_req *req,
		   const char *key, long lo, long hi, long *out);

/* Handlers: fill resp; req->id is the {id} of the route. */
typedef void api_fn(struct api *api, struct http_req *req, struct http_resp *resp);

api_fn api_metrics;
api_fn api_jobs_list;
api_fn api_jobs_submit;
api_fn api_job_get;
api_fn api_job_variants;
api_fn api_job_runs;
api_fn api_job_samples;
api_fn api_job_report;
api_fn api_job_cancel;
api_fn api_job_bisect_log;    /* api_bisect.c */
api_fn api_run_get;
api_fn api_run_samples;
api_fn api_run_probes;
api_fn api_run_console;
api_fn api_kernel_build_log;
/* api_fleet.c: fleet agents and hosts */
api_fn api_hosts_list;
api_fn api_agent_register;
api_fn api_agent_heartbeat;
api_fn api_agent_records;

/* The curves of a job (run_id 0) or of one run: ?metric= (default lag_s),
 * ?max_points= (default 0: every point). In api_jobs.c. */
void api_samples(struct api *api, struct http_req *req, struct http_resp *resp,
		 int64_t job_id, int64_t run_id);

#endif
