/* http.h - kcanary serve's HTTP server: libmicrohttpd behind a small
 * request/response pair. http.c is the only file that includes
 * <microhttpd.h>, and it knows no handler: the caller gives it one
 * (struct http_handler: a callback, per-thread state, an opaque payload,
 * the way libmicrohttpd itself takes `cls`). cmd_serve.c gives it the API's
 * (api.h); static files come from a web directory. The agent's /metrics
 * (agent/metrics.c) is a handler of every path on one thread.
 *
 * The server runs a pool of threads (libmicrohttpd's own). Each thread
 * makes its own state on its first handled request (the API's: its own
 * store connection, db.h: one connection per thread), so a slow request (a
 * report of a thousand runs) does not hold up the others.
 */
#ifndef KC_HTTP_H
#define KC_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* Threads serving requests unless http_opts.threads says otherwise. */
#define HTTP_DEFAULT_THREADS 4

/* Largest request body accepted; a bigger one gets 413, in the handler's
 * error format (http_handler.error). */
#define HTTP_MAX_BODY_BYTES (1u << 20)
/* Connections one client address may hold at once (more are refused at
 * accept), and how long an idle connection is kept (s): so one client
 * holding connections open cannot starve the others. */
#define HTTP_MAX_CONN_PER_IP 64
/* Bytes of a too-large chunked body read and dropped before its 413. */
#define HTTP_MAX_DRAIN_BYTES (16u << 20)
#define HTTP_IDLE_TIMEOUT_S 15

struct http_server;

/* One request as handlers see it. Everything is borrowed for the duration
 * of the handler call. */
struct http_req {
	const char *method;        /* "GET", "POST", … */
	const char *path;          /* URL path, without the query string */
	const char *body;          /* request body, NUL-terminated ("" if none) */
	size_t body_len;
	int64_t id;                /* the {id} captured by the route, or 0 */
	const char *name;          /* the {host} captured by the route, or NULL */
	char token[128];           /* name of the bearer token checked, or "" */
	char scopes[256];          /* its scopes (token.h), or "" */
	void *conn;                /* opaque: for http_query()/http_header() */
	/* Without a connection (conn NULL: a unit test or a fuzz target
	 * calling a handler directly) http_query() and http_header() read
	 * these instead: key, value, key, value, …, NULL; NULL for none. */
	const char *const *query;
	const char *const *headers;
};

#define HTTP_MAX_HEADERS 4

/* The handler's answer. status 0 means "not handled" (the server answers
 * 500). body is owned by the response and freed by the server;
 * content_type is borrowed (a string literal). Extra headers: values are
 * owned (heap strings), names are literals. */
struct http_resp {
	int status;
	const char *content_type;
	struct buf body;
	const char *hdr_name[HTTP_MAX_HEADERS];
	char *hdr_value[HTTP_MAX_HEADERS];
	int nhdr;
};

/* Value of the query parameter key (borrowed), or NULL. */
const char *http_query(const struct http_req *req, const char *key);
/* Value of the request header key, case-insensitive (borrowed), or NULL. */
const char *http_header(const struct http_req *req, const char *key);
/* How many times the request carries header key (a repeated Authorization
 * is refused rather than its first copy taken). */
int http_header_count(const struct http_req *req, const char *key);
/* Add a response header; value is copied. At most HTTP_MAX_HEADERS. */
void http_resp_header(struct http_resp *resp, const char *name, const char *value);
/* Free what resp owns (body, header values); it stays usable, empty.
 * For callers that run a handler without the server (the server frees
 * its own responses). */
void http_resp_release(struct http_resp *resp);

/*
 * The handler of the requests under http_handler.prefix. payload is
 * http_handler.payload; state is the calling thread's own, made by
 * thread_init (NULL when there is no thread_init). req is borrowed for the
 * call; the handler fills resp (status 0 is answered 500). Called on any of
 * the server's threads, several at once: what payload points to is shared
 * by them and needs its own lock.
 */
typedef void http_handler_fn(void *payload, void *state, struct http_req *req,
			     struct http_resp *resp);

/*
 * Make the calling server thread's state in *out, on the thread's first
 * request under the prefix. Returns 0, or a negative errno with the reason
 * in err: that request is answered 500 with err's text (logged once) and
 * the thread's next request tries again.
 */
typedef int http_thread_init_fn(void *payload, void **out, struct buf *err);

/* Free a state thread_init made: when its thread ends, at the latest in
 * http_server_stop(). */
typedef void http_thread_free_fn(void *payload, void *state);

/* Write the answer to a request the server refuses itself (413 body too
 * large, 500 thread_init failed) with status and the message msg, in the
 * handler's own format (the API's JSON errors). */
typedef void http_error_fn(void *payload, struct http_resp *resp, int status,
			   const char *msg);

/* The one upper layer the server calls. Everything is borrowed: payload
 * must stay valid until http_server_stop() returns. */
struct http_handler {
	const char *prefix;        /* "/api": that path and those under "/api/"; "": every path */
	http_handler_fn *fn;       /* NULL: no handler, every path is a page */
	http_thread_init_fn *thread_init;  /* NULL: state is NULL */
	http_thread_free_fn *thread_free;  /* NULL: nothing to free */
	http_error_fn *error;      /* NULL: errors as text/plain */
	void *payload;
};

struct http_opts {
	const char *listen;        /* "127.0.0.1:8080", "[::1]:0", "0.0.0.0:80"; NULL: 127.0.0.1:8080 */
	const char *web_dir;       /* static files (GET, HEAD) outside the prefix; NULL: none */
	unsigned threads;          /* 0: HTTP_DEFAULT_THREADS */
	unsigned max_conn_per_ip;  /* 0: HTTP_MAX_CONN_PER_IP (a benchmark's agents share one address) */
	struct http_handler handler;
};

/*
 * http_server_start - bind and start serving on libmicrohttpd's threads.
 * Port 0 binds a free port; http_server_port() tells which. *out is set
 * only on success; stop with http_server_stop(). Returns 0, -EINVAL
 * (listen address not "host:port" with a numeric host), -EADDRINUSE or
 * -EACCES (cannot bind), or -ENOMEM/-EAGAIN (no thread-local key), with
 * the reason, naming the address, in err (may be NULL).
 */
int http_server_start(struct http_server **out, const struct http_opts *opts,
		      struct buf *err);

/* The bound TCP port. */
unsigned http_server_port(const struct http_server *srv);

/* Stop serving (in-flight requests finish, each thread's state is freed
 * with thread_free), free srv. NULL is allowed. */
void http_server_stop(struct http_server *srv);

#endif
