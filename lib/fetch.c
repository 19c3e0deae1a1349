/* fetch.c - see fetch.h: libcurl's one user in both binaries. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

#include "error.h"
#include "fetch.h"
#include "util.h"

struct sink {
	struct buf *out;
	bool full;
};

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct sink *s = ud;

	if (buf_append(s->out, p, size * n)) {
		s->full = true;
		return 0;
	}
	return size * n;
}

static int fetch(struct buf *out, long *status_out, const char *url, long timeout_s, bool post,
		 struct buf *err)
{
	CURL *c = curl_easy_init();
	char curl_err[CURL_ERROR_SIZE] = "";
	struct sink s = { out, false };
	long status = 0;
	CURLcode rc;

	*status_out = 0;
	if (!c)
		return err_setf(err, -ENOMEM, "cannot start libcurl");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, timeout_s < 20 ? timeout_s : 20L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_USERAGENT, "kcanary");
	if (post) {
		curl_easy_setopt(c, CURLOPT_POST, 1L);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, 0L);
	}
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	if (s.full)
		return err_setf(err, -EFBIG, "the answer from '%s' is larger than %zu bytes", url,
				out->max_bytes);
	if (rc != CURLE_OK)
		return err_setf(err, -EIO, "%s", *curl_err ? curl_err : curl_easy_strerror(rc));
	*status_out = status;
	return 0;
}

int fetch_get(struct buf *out, long *status_out, const char *url, long timeout_s,
	      struct buf *err)
{
	return fetch(out, status_out, url, timeout_s, false, err);
}

int fetch_post_empty(struct buf *out, long *status_out, const char *url, long timeout_s,
		     struct buf *err)
{
	return fetch(out, status_out, url, timeout_s, true, err);
}

struct fetch {
	CURL *c;
};

struct fetch *fetch_new(void)
{
	static int curl_ready;
	struct fetch *f;

	if (!curl_ready) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		curl_ready = 1;
	}
	f = xcalloc(1, sizeof(*f));
	f->c = curl_easy_init();
	if (!f->c) {
		free(f);
		return NULL;
	}
	return f;
}

void fetch_free(struct fetch *f)
{
	if (!f)
		return;
	curl_easy_cleanup(f->c);
	free(f);
}

int fetch_post(struct fetch *f, const struct fetch_post_req *req, struct buf *out,
	       long *status_out, struct buf *err)
{
	struct curl_slist *hdrs = NULL;
	char curl_err[CURL_ERROR_SIZE] = "";
	struct sink s = { out, false };
	CURLcode rc;
	int r = 0;

	*status_out = 0;
	for (const char *const *h = req->headers; h && *h; h++)
		hdrs = curl_slist_append(hdrs, *h);
	/* the body goes at once, not after a "100 Continue" */
	hdrs = curl_slist_append(hdrs, "Expect:");
	/* reset keeps the connection: the next request to the host reuses it */
	curl_easy_reset(f->c);
	curl_easy_setopt(f->c, CURLOPT_URL, req->url);
	curl_easy_setopt(f->c, CURLOPT_POST, 1L);
	curl_easy_setopt(f->c, CURLOPT_POSTFIELDS, req->body);
	curl_easy_setopt(f->c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->len);
	curl_easy_setopt(f->c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(f->c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(f->c, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(f->c, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(f->c, CURLOPT_TIMEOUT_MS, req->timeout_ms);
	curl_easy_setopt(f->c, CURLOPT_CONNECTTIMEOUT_MS, req->timeout_ms);
	curl_easy_setopt(f->c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(f->c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(f->c, CURLOPT_USERAGENT, req->user_agent ? req->user_agent : "kcanary");
	rc = curl_easy_perform(f->c);
	if (s.full) {
		r = err_setf(err, -EFBIG, "the answer from '%s' is larger than %zu bytes", req->url,
			     out->max_bytes);
	} else if (rc != CURLE_OK) {
		r = rc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT :
		    rc == CURLE_COULDNT_CONNECT ? -ECONNREFUSED : -EIO;
		err_setf(err, r, "%s", *curl_err ? curl_err : curl_easy_strerror(rc));
	} else {
		curl_easy_getinfo(f->c, CURLINFO_RESPONSE_CODE, status_out);
	}
	curl_slist_free_all(hdrs);
	return r;
}

char *fetch_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	struct buf b = BUF_INIT;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p)) {
			buf_append(&b, p, 1);
		} else {
			char e[3] = { '%', hex[*p >> 4], hex[*p & 15] };
			buf_append(&b, e, 3);
		}
	}
	return b.ptr ? buf_detach(&b) : xstrdup("");
}
