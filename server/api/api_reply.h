/* api_reply.h - what every route answers with (api_reply.c): JSON (plain
 * or with exact reals), an error object, text, a store error, and a query
 * parameter read or refused. Needs nothing else of the API.
 */
#ifndef KC_API_REPLY_H
#define KC_API_REPLY_H

#include <jansson.h>

#include "http.h"
#include "util.h"

/* api_str_or_null - a text column's value as JSON: the string (copied),
 * or null for NULL; a new reference. */
static inline json_t *api_str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* api_json - answer status with the JSON value v (reference stolen);
 * reals with 10 significant digits (statistics, times). */
void api_json(struct http_resp *resp, int status, json_t *v);
/* api_json_exact - the same, every real with the digits that read back as
 * the same double (json_num.h): for stored data (samples, probe counts),
 * which 10 digits would change (12345678901 -> 1.23456789e10). */
void api_json_exact(struct http_resp *resp, int status, json_t *v);
/* api_error - answer status with {"error": "<message>", "status": N}; bytes
 * of the message that are not valid UTF-8 become '?' (it quotes clients). */
void api_error(struct http_resp *resp, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* api_text - answer status with text/plain; the buffer is moved into resp. */
void api_text(struct http_resp *resp, int status, struct buf *text);

/*
 * api_db_error - answer a store error r: -ENOENT 404 with what, else 500
 * with err's text (logged once, here). Releases err, which the handler's
 * db_* call filled (error.h).
 */
void api_db_error(struct http_resp *resp, int r, const char *what, struct buf *err);

/*
 * api_query_uint - parse the query parameter key as an unsigned integer
 * in [lo, hi] into *out; *out keeps dflt when the parameter is absent.
 * Returns 0, or -EINVAL after answering 400 naming the parameter.
 */
int api_query_uint(struct http_resp *resp, const struct http_req *req,
		   const char *key, long lo, long hi, long *out);

#endif
