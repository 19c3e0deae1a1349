/* http_out.c - see http_out.h: lib/fetch.h's kept-alive POSTs (the
 * connection is reused between requests) with a bearer token, bodies
 * gzip'd by lib/gzip.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_MODULE "http_out"
#include "error.h"
#include "fetch.h"
#include "gzip.h"
#include "http_out.h"
#include "log.h"
#include "util.h"

/* Largest answer read; the server's answers to agents are small. */
#define HTTP_OUT_MAX_REPLY (1u << 20)

struct http_out {
	struct fetch *f;
	char *server;
	char *auth;          /* "Authorization: Bearer TOKEN" */
	long timeout_ms;
};

int http_out_new(struct http_out **out, const char *server, const char *token, double timeout_s)
{
	struct http_out *h;
	size_t n = strlen(server);

	h = xcalloc(1, sizeof(*h));
	h->f = fetch_new();
	if (!h->f) {
		free(h);
		return -ENOMEM;
	}
	while (n && server[n - 1] == '/')
		n--;
	h->server = xstrndup(server, n);
	h->auth = xasprintf("Authorization: Bearer %s", token);
	h->timeout_ms = (long)(timeout_s * 1000.0);
	*out = h;
	return 0;
}

void http_out_free(struct http_out *h)
{
	if (!h)
		return;
	fetch_free(h->f);
	free(h->auth);
	free(h->server);
	free(h);
}

int http_out_post(struct http_out *h, const char *path, const char *body, size_t len,
		  int gzip, long *status, json_t **reply, struct buf *err)
{
	struct buf resp = BUF_INIT_MAX(HTTP_OUT_MAX_REPLY), z = BUF_INIT;
	const char *hdrs[] = {
		h->auth,
		gzip ? "Content-Encoding: gzip" : "Content-Type: application/json",
		gzip ? "Content-Type: application/x-ndjson" : NULL,
		NULL,
	};
	struct fetch_post_req req = {
		.url = NULL, .body = body, .len = len, .headers = hdrs,
		.timeout_ms = h->timeout_ms, .user_agent = "kcanary-agent",
	};
	char *url = xasprintf("%s%s", h->server, path);
	int r;

	if (reply)
		*reply = NULL;
	req.url = url;
	if (gzip) {
		if ((r = gzip_deflate(&z, body, len, NULL))) {
			err_wrapf(err, r, "cannot gzip the batch");
			goto out;
		}
		req.body = z.ptr;
		req.len = z.len;
	}
	if ((r = fetch_post(h->f, &req, &resp, status, err))) {
		err_wrapf(err, r, "POST %s", url);
		goto out;
	}
	if (reply && resp.len)
		*reply = json_loadb(resp.ptr, resp.len, 0, NULL);
	if (*status >= 400 && err) {      /* an answer, but a refusal: its words */
		buf_reset(err);
		buf_printf(err, "POST %s: %ld %.300s", url, *status, resp.len ? buf_str(&resp) : "");
	}
out:
	buf_release(&resp);
	buf_release(&z);
	free(url);
	return r;
}
