/* api_state.h - the API's state (api_state.c): what the server's threads
 * share (the store's path, the report cache behind a lock, the job dirs)
 * and each thread's struct api (its own store connection), which every
 * handler gets. The router (api.h) and the handlers (api_jobs.h, …) both
 * include this; it includes none of them.
 */
#ifndef KC_API_STATE_H
#define KC_API_STATE_H

#include <pthread.h>
#include <stddef.h>

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

/* A handler: fills resp; req->id is the {id} of the route (api.c's
 * table; each handler file's header declares its own). */
typedef void api_fn(struct api *api, struct http_req *req, struct http_resp *resp);

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
