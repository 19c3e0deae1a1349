/* api_reply.c - what every route answers with: JSON (plain or with exact
 * reals), an error object, text, a store error, a query parameter
 * (api_reply.h). */
#define LOG_MODULE "api"
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/api_reply.h"
#include "json_num.h"
#include "error.h"
#include "log.h"
#include "util.h"

static void answer_json(struct http_resp *resp, int status, json_t *v, bool exact)
{
	char *s = exact ? json_dumps_exact(v, JSON_COMPACT) :
			  json_dumps(v, JSON_COMPACT | JSON_REAL_PRECISION(10));

	json_decref(v);
	buf_reset(&resp->body);
	resp->status = s ? status : 500;
	resp->content_type = "application/json";
	buf_puts(&resp->body, s ? s : "{\"error\":\"cannot encode the answer\",\"status\":500}");
	buf_puts(&resp->body, "\n");
	free(s);
}

void api_json(struct http_resp *resp, int status, json_t *v)
{
	answer_json(resp, status, v, false);
}

void api_json_exact(struct http_resp *resp, int status, json_t *v)
{
	answer_json(resp, status, v, true);
}

/* Length of the valid UTF-8 sequence (RFC 3629: no overlong forms, no
 * surrogates, at most U+10FFFF) at p, or 0 when it is not one. */
static size_t utf8_seq(const unsigned char *p)
{
	unsigned cp, n, min;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0)
		n = 2, cp = p[0] & 0x1f, min = 0x80;
	else if ((p[0] & 0xf0) == 0xe0)
		n = 3, cp = p[0] & 0x0f, min = 0x800;
	else if ((p[0] & 0xf8) == 0xf0)
		n = 4, cp = p[0] & 0x07, min = 0x10000;
	else
		return 0;
	for (unsigned i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* Replace each byte of s that is not part of valid UTF-8 with '?': an
 * error message quotes the client's bytes (a name, jansson's view of a
 * bad line) and is cut at a fixed size, and jansson refuses to encode
 * a string that is not UTF-8 (found by tests/fuzz/fuzz_fleet.c). */
static void utf8_scrub(char *s)
{
	unsigned char *p = (unsigned char *)s;

	while (*p) {
		size_t n = utf8_seq(p);
		if (n)
			p += n;
		else
			*p++ = '?';
	}
}

void api_error(struct http_resp *resp, int status, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	utf8_scrub(msg);
	api_json(resp, status, json_pack("{s:s, s:i}", "error", msg, "status", status));
}

void api_text(struct http_resp *resp, int status, struct buf *text)
{
	buf_release(&resp->body);
	resp->body = *text;
	*text = (struct buf)BUF_INIT;
	resp->status = status;
	resp->content_type = "text/plain; charset=utf-8";
}

void api_db_error(struct http_resp *resp, int r, const char *what, struct buf *err)
{
	if (r == -ENOENT)
		api_error(resp, 404, "%s", what);
	else if (r == -ENOSPC || r == -EBUSY) {
		/* not the request's fault and not for ever: 507 Insufficient
		 * Storage (RFC 4918) for a full disk, 503 for a store held busy;
		 * an agent keeps its spool and retries */
		log_err("%s: %s", what, err_text(err));
		api_error(resp, r == -ENOSPC ? 507 : 503, "%s: %s", what, err_text(err));
	} else {
		/* the handler is where a store error is handled: logged here, once */
		log_err("%s: %s", what, err_text(err));
		api_error(resp, 500, "store error: %s", err_text(err));
	}
	buf_release(err);
}

int api_query_uint(struct http_resp *resp, const struct http_req *req,
		   const char *key, long lo, long hi, long *out)
{
	const char *s = http_query(req, key);
	char *end;
	long v;

	if (!s)
		return 0;
	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < lo || v > hi) {
		api_error(resp, 400, "query parameter '%s' is '%s': expected an integer in %ld..%ld",
			  key, s, lo, hi);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

