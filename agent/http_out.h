/* http_out.h - the daemon's requests to `kcanary serve` (docs/api.md,
 * "Agents"): JSON POSTs and gzip'd record batches with a bearer token.
 * lib/fetch.h (libcurl) and lib/gzip.h (zlib) behind three calls. One
 * struct http_out per thread.
 */
#ifndef KC_HTTP_OUT_H
#define KC_HTTP_OUT_H

#include <jansson.h>
#include <stddef.h>

#include "util.h"

struct http_out;

/*
 * http_out_new - requests to server (base URL, "http://127.0.0.1:8080",
 * a trailing slash is fine) with "Authorization: Bearer token".
 * timeout_s bounds each request (connect included). Free with
 * http_out_free(). Returns 0 or -ENOMEM.
 */
int http_out_new(struct http_out **out, const char *server, const char *token, double timeout_s);
void http_out_free(struct http_out *h);

/*
 * http_out_post - POST body (len bytes) to server + path; gzip set sends it
 * deflated with "Content-Encoding: gzip" (RFC 1952). *status gets the HTTP
 * status and *reply (may be NULL) the answer parsed as JSON, or NULL when
 * it is not JSON (caller decrefs). Returns 0 when an answer came (any
 * status), or -ECONNREFUSED / -ETIMEDOUT / -EIO when none did; err
 * (error.h; may be NULL) then says why, as curl put it. For an answer
 * with a status of 400 or more err holds it ("POST URL: 413 ..."), for
 * the caller's message.
 */
int http_out_post(struct http_out *h, const char *path, const char *body, size_t len,
		  int gzip, long *status, json_t **reply, struct buf *err);

#endif
