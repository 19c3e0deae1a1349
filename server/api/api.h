/* api.h - the JSON API under /api/v1/ (docs/api.md): its state in
 * api_state.c (what the server's threads share, each thread's store
 * connection, the report cache), the route table and the answers every
 * route shares in api.c, handlers in api_jobs.c (jobs, submit, cancel,
 * report), api_runs.c (runs, samples, probes, console), api_bisect.c,
 * api_fleet.c and api_lab.c (the lab's hosts). Handlers see http.h's
 * request/response, never libmicrohttpd, and reach the store through db_api.h. http.c knows none
 * of this: cmd_serve.c hands it api_http_handler().
 */
#ifndef KC_API_H
#define KC_API_H

#include <pthread.h>
#include <jansson.h>

#include "http.h"
#include "util.h"

struct db;
struct report_cache;

/* What the server's threads share: the store's path, built reports behind
 * a lock. Embedded by its owner (cmd_serve.c); api_state.c. */
struct api_shared {
	char *db_path;                  /* owned; NULL: not set up */
	pthread_mutex_t lock;           /* guards reports */
	/* held by a thread while it stores an agent's batch (api_fleet.c): the
	 * store has one writer at a time, and threads waiting here are woken
	 * when it is free rather than polling SQLite's lock (the busy handler
	 * sleeps 1 to 100 ms a try: most of the p99 latency of 64 agents) */
	pthread_mutex_t fleet_write;
	struct report_cache *reports;   /* owned; NULL until the first report */
	char **job_dirs;                /* owned, real paths: where a submitted job's */
	size_t njob_dirs;               /*   kernels and series may be (--job-dir) */
};

/* One server thread's handler state: its own store connection (db.h: one
 * connection per thread) and the shared part (borrowed). */
struct api {
	struct db *db;
	struct api_shared *shared;
};

/*
 * api_shared_init - set up sh for the store at db_path (copied): open it
 * once, applying its migrations, so that a store that cannot be opened
 * fails here rather than on every request. Returns 0, or db_open()'s
 * negative errno with the reason in err; sh is then left as
 * api_shared_release() accepts. Free with api_shared_release(), after the
 * server using it has stopped.
 */
int api_shared_init(struct api_shared *sh, const char *db_path, struct buf *err);

/*
 * api_shared_add_job_dir - let jobs submitted over HTTP name kernel images
 * and series files under dir (kcanary serve --job-dir), after
 * api_shared_init(); a relative name in
 * a job is taken under the first such dir. 0, or -ENOENT/-ENOTDIR with err
 * when dir is not a directory.
 */
int api_shared_add_job_dir(struct api_shared *sh, const char *dir, struct buf *err);

/* Free what sh owns (the report cache, the path, the job dirs). A zeroed sh, or one
 * api_shared_init() failed on, is allowed. */
void api_shared_release(struct api_shared *sh);

/*
 * api_thread_init - http.h's thread_init for the API: the calling thread's
 * struct api (its own store connection) in *out. payload is the struct
 * api_shared. Returns 0, or db_open()'s negative errno with "cannot open
 * the store 'PATH'" in err. Free with api_thread_free().
 */
int api_thread_init(void *payload, void **out, struct buf *err);
/* api_thread_free - close the thread's store connection, free it; NULL
 * allowed. payload is unused. */
void api_thread_free(void *payload, void *state);

/*
 * api_http_handler - the handler cmd_serve.c gives http_server_start():
 * paths under /api go to api_handle() with the thread's struct api,
 * errors the server answers itself are api_error()s. sh is borrowed and
 * must outlive the server.
 */
struct http_handler api_http_handler(struct api_shared *sh);

/*
 * api_handle - answer one request whose path starts with /api/: find the
 * route (404 or 405 with a JSON error when none), check the bearer token
 * for routes that change state (401 when missing or wrong), call the
 * handler. Always fills resp. Needs no network: a caller with a struct
 * api (api_thread_init) may pass a req with conn NULL and its query and
 * headers as lists (http.h), as the unit tests do.
 */
void api_handle(struct api *api, struct http_req *req, struct http_resp *resp);

/* api_json - answer status with the JSON value v (reference stolen);
 * reals with 10 significant digits (statistics, times). */
void api_json(struct http_resp *resp, int status, json_t *v);
/* api_json_exact - the same, every real with the digits that read back as
 * the same double (json_num.h): for stored data (samples, probe counts),
 * which 10 digits would change (12345678901 -> 1.23456789e10). */
void api_json_exact(struct http_resp *resp, int status, json_t *v);
/* api_error - answer status with {"error": "<message>", "status": N}; bytes
 * of the message that are not valid UTF-8 become '?' (it quotes clients). */
void api_error(struct http_resp *resp, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* api_text - answer status with text/plain; the buffer is moved into resp. */
void api_text(struct http_resp *resp, int status, struct buf *text);

/*
 * api_db_error - answer a store error r: -ENOENT 404 with what, else 500
 * with err's text (logged once, here). Releases err, which the handler's
 * db_* call filled (error.h).
 */
void api_db_error(struct http_resp *resp, int r, const char *what, struct buf *err);

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
/* api_lab.c: the lab's libvirt hosts */
api_fn api_lab_list;

/* The curves of a job (run_id 0) or of one run: ?metric= (default lag_s),
 * ?max_points= (default 0: every point). In api_jobs.c. */
void api_samples(struct api *api, struct http_req *req, struct http_resp *resp,
		 int64_t job_id, int64_t run_id);

/*
 * The report cache (api_state.c), shared by the server's threads behind
 * api_shared.lock: built reports by key ("job|format|metric|threshold"),
 * each valid only while the job's fingerprint (db_api_job_fingerprint) is
 * the one it was built at.
 *
 * api_report_cache_get - append the body kept for key at fingerprint fp to
 * out. Returns 0, -ENOENT when none is kept (or it was built at another
 * fingerprint), or buf_append()'s error when out's cap is too small.
 * api_report_cache_put - keep a copy of body for key at fp, replacing the
 * entry for key or else the least recently used one.
 */
int api_report_cache_get(struct api_shared *sh, struct buf *out, const char *key,
			 const char *fp);
void api_report_cache_put(struct api_shared *sh, const char *key, const char *fp,
			  const struct buf *body);

#endif
