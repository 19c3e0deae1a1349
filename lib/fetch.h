/* fetch.h - HTTP requests through libcurl: fetch.c is the only file of
 * either binary including <curl/curl.h> (the server's Prometheus source
 * and public-inbox client, the agent's sender: agent/http_out.c). */
#ifndef KC_FETCH_H
#define KC_FETCH_H

#include <stddef.h>

#include "util.h"

/*
 * fetch_get - GET url (http:// or https://, redirects followed) and append
 * the body to out, whatever the status; *status_out gets the HTTP status
 * (0 when there was no answer). timeout_s bounds the whole transfer; the
 * body is bounded by out's byte cap (BUF_INIT_MAX). Returns 0 when the
 * server answered (any status: the caller judges it), -EIO when it did
 * not (err: curl's words: "Could not resolve host", "Connection refused"),
 * -EFBIG when the body passes out's cap.
 */
int fetch_get(struct buf *out, long *status_out, const char *url, long timeout_s,
	      struct buf *err);

/* fetch_post_empty - as fetch_get, a POST with an empty body (what
 * public-inbox asks for a search's mbox, so that crawlers do not). */
int fetch_post_empty(struct buf *out, long *status_out, const char *url, long timeout_s,
		     struct buf *err);

/*
 * A kept-alive handle for a series of POSTs from one thread (the agent's
 * sender): libcurl's easy handle, whose connection to a host is reused
 * from one request to the next. fetch_new() returns NULL only when
 * libcurl cannot start; free with fetch_free() (NULL is fine). Not shared
 * between threads: one per thread.
 */
struct fetch;
struct fetch *fetch_new(void);
void fetch_free(struct fetch *f);

/* One POST's request: body (len bytes, borrowed, may hold NULs), extra
 * headers ("Name: value", NULL-terminated list; borrowed; NULL for none),
 * timeout_ms bounding the whole request and its connect each (0: no
 * bound), user_agent (NULL: "kcanary"). No redirects are followed. */
struct fetch_post_req {
	const char *url;
	const void *body;
	size_t len;
	const char *const *headers;
	long timeout_ms;
	const char *user_agent;
};

/*
 * fetch_post - POST req on f and append the answer's body to out, whatever
 * the status; *status_out gets the HTTP status (0 without an answer).
 * Returns 0 when the server answered (any status: the caller judges it),
 * -ECONNREFUSED (no connection), -ETIMEDOUT (req->timeout_ms ran out) or
 * -EIO (anything else) when it did not, err then in curl's words
 * ("Failed to connect to 127.0.0.1 port 1: Connection refused"), and
 * -EFBIG when the answer passes out's cap.
 */
int fetch_post(struct fetch *f, const struct fetch_post_req *req, struct buf *out,
	       long *status_out, struct buf *err);

/* fetch_escape - s percent-encoded for a URL's path or query (RFC 3986:
 * everything but ALPHA DIGIT - . _ ~). Caller frees. */
char *fetch_escape(const char *s);

#endif
