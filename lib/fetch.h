/* fetch.h - HTTP GETs through libcurl: fetch.c is the server's only file
 * including <curl/curl.h> (the Prometheus source and the public-inbox
 * client both go through here). */
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

/* fetch_escape - s percent-encoded for a URL's path or query (RFC 3986:
 * everything but ALPHA DIGIT - . _ ~). Caller frees. */
char *fetch_escape(const char *s);

#endif
