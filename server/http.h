/* http.h - kcanary serve's HTTP server: libmicrohttpd behind a small
 * request/response pair, so handlers (api.c and the api_*.c files) never
 * see libmicrohttpd. http.c is the only file that includes <microhttpd.h>.
 *
 * The server runs a pool of threads (libmicrohttpd's own); each opens its
 * own store connection on its first API request (db.h: one connection per
 * thread), so a slow request (a report of a thousand runs) does not hold
 * up the others. Handlers share only struct api_shared, behind its lock.
 */
#ifndef KC_HTTP_H
#define KC_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* Threads serving requests unless http_opts.threads says otherwise. */
#define HTTP_DEFAULT_THREADS 4

/* Largest request body accepted; a bigger one gets 413 with a JSON error. */
#define HTTP_MAX_BODY_BYTES (1u << 20)

struct db;
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
	void *conn;                /* opaque: for http_query()/http_header() */
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
/* Add a response header; value is copied. At most HTTP_MAX_HEADERS. */
void http_resp_header(struct http_resp *resp, const char *name, const char *value);

struct http_opts {
	const char *listen;        /* "127.0.0.1:8080", "[::1]:0", "0.0.0.0:80"; NULL: 127.0.0.1:8080 */
	const char *web_dir;       /* static files; NULL: none served */
	const char *db_path;       /* the store; each server thread opens its own connection */
	unsigned threads;          /* 0: HTTP_DEFAULT_THREADS */
};

/*
 * http_server_start - check the store opens, bind, and start serving on
 * libmicrohttpd's threads. Port 0 binds a free port; http_server_port()
 * tells which. *out is set only on success; stop with http_server_stop().
 * Returns 0, -EINVAL (listen address not "host:port" with a numeric host),
 * -EADDRINUSE/-EACCES (cannot bind: the message names the address) or
 * a db_open() error.
 */
int http_server_start(struct http_server **out, const struct http_opts *opts);

/* The bound TCP port. */
unsigned http_server_port(const struct http_server *srv);

/* Stop serving (in-flight requests finish), close the store, free srv.
 * NULL is allowed. */
void http_server_stop(struct http_server *srv);

#endif
