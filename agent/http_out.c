/* http_out.c - see http_out.h: libcurl's easy interface, one handle kept
 * alive between requests (the connection is reused), zlib's deflate. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>
#include <zlib.h>

#define LOG_MODULE "http_out"
#include "error.h"
#include "http_out.h"
#include "log.h"
#include "util.h"

/* Largest answer read; the server's answers to agents are small. */
#define HTTP_OUT_MAX_REPLY (1u << 20)

struct http_out {
	CURL *c;
	char *server;
	struct curl_slist *auth;
	long timeout_ms;
};

int http_out_new(struct http_out **out, const char *server, const char *token, double timeout_s)
{
	static int curl_ready;
	struct http_out *h;
	char *hdr;
	size_t n = strlen(server);

	if (!curl_ready) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		curl_ready = 1;
	}
	h = xcalloc(1, sizeof(*h));
	h->c = curl_easy_init();
	if (!h->c) {
		free(h);
		return -ENOMEM;
	}
	while (n && server[n - 1] == '/')
		n--;
	h->server = xstrndup(server, n);
	hdr = xasprintf("Authorization: Bearer %s", token);
	h->auth = curl_slist_append(NULL, hdr);
	free(hdr);
	h->timeout_ms = (long)(timeout_s * 1000.0);
	*out = h;
	return 0;
}

void http_out_free(struct http_out *h)
{
	if (!h)
		return;
	curl_easy_cleanup(h->c);
	curl_slist_free_all(h->auth);
	free(h->server);
	free(h);
}

int gzip_deflate(unsigned char **out, size_t *out_len, const char *body, size_t len)
{
	z_stream zs;
	uLong bound;
	unsigned char *dst;
	int zr;

	memset(&zs, 0, sizeof(zs));
	/* 16 + MAX_WBITS: a gzip header and trailer (RFC 1952) */
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	bound = deflateBound(&zs, (uLong)len) + 32;
	dst = xmalloc(bound);
	zs.next_in = (unsigned char *)body;
	zs.avail_in = (uInt)len;
	zs.next_out = dst;
	zs.avail_out = (uInt)bound;
	zr = deflate(&zs, Z_FINISH);
	if (zr != Z_STREAM_END) {
		deflateEnd(&zs);
		free(dst);
		return -ENOMEM;
	}
	*out_len = zs.total_out;
	*out = dst;
	deflateEnd(&zs);
	return 0;
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct buf *b = ud;

	if (buf_append(b, p, size * n))
		return 0;   /* over HTTP_OUT_MAX_REPLY: curl fails the transfer */
	return size * n;
}

int http_out_post(struct http_out *h, const char *path, const char *body, size_t len,
		  int gzip, long *status, json_t **reply, struct buf *err)
{
	struct curl_slist *hdrs = NULL;
	struct buf resp = BUF_INIT_MAX(HTTP_OUT_MAX_REPLY);
	char curl_err[CURL_ERROR_SIZE] = "";
	unsigned char *z = NULL;
	size_t zlen = 0;
	char *url = xasprintf("%s%s", h->server, path);
	CURLcode rc;
	int r = 0;

	if (reply)
		*reply = NULL;
	for (struct curl_slist *s = h->auth; s; s = s->next)
		hdrs = curl_slist_append(hdrs, s->data);
	hdrs = curl_slist_append(hdrs, "Expect:");
	if (gzip) {
		if ((r = gzip_deflate(&z, &zlen, body, len))) {
			err_setf(err, r, "cannot gzip the batch");
			goto out;
		}
		hdrs = curl_slist_append(hdrs, "Content-Encoding: gzip");
		hdrs = curl_slist_append(hdrs, "Content-Type: application/x-ndjson");
	} else {
		hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	}
	curl_easy_reset(h->c);
	curl_easy_setopt(h->c, CURLOPT_URL, url);
	curl_easy_setopt(h->c, CURLOPT_POST, 1L);
	curl_easy_setopt(h->c, CURLOPT_POSTFIELDS, gzip ? (const char *)z : body);
	curl_easy_setopt(h->c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(gzip ? zlen : len));
	curl_easy_setopt(h->c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h->c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h->c, CURLOPT_WRITEDATA, &resp);
	curl_easy_setopt(h->c, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(h->c, CURLOPT_TIMEOUT_MS, h->timeout_ms);
	curl_easy_setopt(h->c, CURLOPT_CONNECTTIMEOUT_MS, h->timeout_ms);
	curl_easy_setopt(h->c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h->c, CURLOPT_USERAGENT, "kcanary-agent");
	rc = curl_easy_perform(h->c);
	if (rc != CURLE_OK) {
		r = rc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT :
		    rc == CURLE_COULDNT_CONNECT ? -ECONNREFUSED : -EIO;
		err_setf(err, r, "POST %s: %s", url, *curl_err ? curl_err : curl_easy_strerror(rc));
		goto out;
	}
	curl_easy_getinfo(h->c, CURLINFO_RESPONSE_CODE, status);
	if (reply && resp.len)
		*reply = json_loadb(resp.ptr, resp.len, 0, NULL);
	if (*status >= 400 && err) {      /* an answer, but a refusal: its words */
		buf_reset(err);
		buf_printf(err, "POST %s: %ld %.300s", url, *status, resp.len ? buf_str(&resp) : "");
	}
out:
	curl_slist_free_all(hdrs);
	buf_release(&resp);
	free(z);
	free(url);
	return r;
}
