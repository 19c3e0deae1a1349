/* test_http_out.c - the agent's HTTP ends on lib/: http_out.c's POSTs
 * (lib/fetch.h, lib/gzip.h) against a lib/http.h server on loopback (the
 * bearer token, the gzip'd body as sent, the answer, a refusal's words, no
 * server at all), and metrics.c's /metrics (200, 404, 405 and their
 * texts). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "error.h"
#include "fetch.h"
#include "gzip.h"
#include "http.h"
#include "http_out.h"
#include "metrics.h"
#include "util.h"

/* What the server saw of the last request (one server thread). */
struct seen {
	char auth[128], encoding[32], ctype[64];
	struct buf body;     /* inflated when gzip'd */
};

static void on_post(void *payload, void *state, struct http_req *req, struct http_resp *resp)
{
	struct seen *s = payload;
	const char *v;

	(void)state;
	snprintf(s->auth, sizeof(s->auth), "%s", (v = http_header(req, "Authorization")) ? v : "");
	snprintf(s->encoding, sizeof(s->encoding), "%s",
		 (v = http_header(req, "Content-Encoding")) ? v : "");
	snprintf(s->ctype, sizeof(s->ctype), "%s", (v = http_header(req, "Content-Type")) ? v : "");
	buf_reset(&s->body);
	if (*s->encoding)
		assert_int_equal(gzip_inflate(&s->body, req->body, req->body_len, 1 << 20, NULL), 0);
	else
		buf_append(&s->body, req->body, req->body_len);
	resp->content_type = "application/json";
	if (!strcmp(req->path, "/api/big")) {
		resp->status = 413;
		buf_puts(&resp->body, "{\"error\":\"too large\"}");
		return;
	}
	resp->status = 200;
	buf_printf(&resp->body, "{\"acked_seq\":%zu}", s->body.len);
}

static void test_post_plain_and_gzip(void **state)
{
	struct seen s = { .body = BUF_INIT };
	struct http_opts opts = {
		.listen = "127.0.0.1:0", .threads = 1,
		.handler = { .prefix = "/api", .fn = on_post, .payload = &s },
	};
	struct http_server *srv = NULL;
	struct http_out *h = NULL;
	struct buf err = BUF_INIT;
	json_t *reply = NULL;
	long status = 0;
	char *url;
	const char *body = "{\"seq\":1}\n{\"seq\":2}\n";

	(void)state;
	assert_int_equal(http_server_start(&srv, &opts, NULL), 0);
	url = xasprintf("http://127.0.0.1:%u/", http_server_port(srv));
	assert_int_equal(http_out_new(&h, url, "t0k3n", 5.0), 0);

	assert_int_equal(http_out_post(h, "/api/rec", body, strlen(body), 1, &status, &reply, &err), 0);
	assert_int_equal(status, 200);
	assert_string_equal(s.auth, "Bearer t0k3n");
	assert_string_equal(s.encoding, "gzip");
	assert_string_equal(s.ctype, "application/x-ndjson");
	assert_string_equal(buf_str(&s.body), body);
	assert_int_equal(json_integer_value(json_object_get(reply, "acked_seq")), strlen(body));
	json_decref(reply);

	/* the same handle again: plain JSON */
	assert_int_equal(http_out_post(h, "/api/reg", "{}", 2, 0, &status, &reply, &err), 0);
	assert_int_equal(status, 200);
	assert_string_equal(s.encoding, "");
	assert_string_equal(s.ctype, "application/json");
	assert_string_equal(buf_str(&s.body), "{}");
	json_decref(reply);

	/* a refusal is an answer; err holds its words */
	assert_int_equal(http_out_post(h, "/api/big", "{}", 2, 0, &status, NULL, &err), 0);
	assert_int_equal(status, 413);
	free(url);
	url = xasprintf("POST http://127.0.0.1:%u/api/big: 413 {\"error\":\"too large\"}",
			http_server_port(srv));
	assert_string_equal(err_text(&err), url);

	http_out_free(h);
	http_server_stop(srv);
	buf_release(&s.body);
	buf_release(&err);
	free(url);
}

static void test_post_no_server(void **state)
{
	struct http_out *h = NULL;
	struct buf err = BUF_INIT;
	long status = 7;
	int r;

	(void)state;
	assert_int_equal(http_out_new(&h, "http://127.0.0.1:1", "t", 5.0), 0);
	r = http_out_post(h, "/x", "{}", 2, 0, &status, NULL, &err);
	assert_int_equal(r, -ECONNREFUSED);
	assert_int_equal(status, 0);
	assert_non_null(strstr(err_text(&err), "POST http://127.0.0.1:1/x: "));
	http_out_free(h);
	buf_release(&err);
}

static void test_deflate_round_trip(void **state)
{
	struct buf z = BUF_INIT, back = BUF_INIT, small = BUF_INIT_MAX(8);
	char text[4096];

	(void)state;
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (char)('a' + i % 7);
	assert_int_equal(gzip_deflate(&z, text, sizeof(text), NULL), 0);
	assert_true(z.len > 18 && z.len < sizeof(text));
	assert_int_equal((unsigned char)z.ptr[0], 0x1f);   /* gzip magic */
	assert_int_equal((unsigned char)z.ptr[1], 0x8b);
	assert_int_equal(gzip_inflate(&back, z.ptr, z.len, 1 << 20, NULL), 0);
	assert_int_equal(back.len, sizeof(text));
	assert_memory_equal(back.ptr, text, sizeof(text));
	assert_int_equal(gzip_deflate(&small, text, sizeof(text), NULL), -EFBIG);
	buf_release(&z);
	buf_release(&back);
	buf_release(&small);
}

static void get(unsigned port, const char *path, int post, long *status, struct buf *out)
{
	char *url = xasprintf("http://127.0.0.1:%u%s", port, path);

	buf_reset(out);
	if (post)
		assert_int_equal(fetch_post_empty(out, status, url, 5, NULL), 0);
	else
		assert_int_equal(fetch_get(out, status, url, 5, NULL), 0);
	free(url);
}

static void test_metrics(void **state)
{
	struct metrics *m = NULL;
	struct buf out = BUF_INIT;
	long status = 0;

	(void)state;
	assert_int_equal(metrics_start(&m, "127.0.0.1:notaport", &out), -EINVAL);
	/* the HTTP server's own words reach the daemon's message */
	assert_non_null(strstr(buf_str(&out), "cannot listen on '127.0.0.1:notaport': expected host:port"));
	buf_reset(&out);
	assert_int_equal(metrics_start(&m, "127.0.0.1:0", NULL), 0);
	get(metrics_port(m), "/metrics", 0, &status, &out);
	assert_int_equal(status, 200);
	assert_string_equal(buf_str(&out), "");
	metrics_set(m, "kcanary_agent_up 1\n");
	get(metrics_port(m), "/metrics", 0, &status, &out);
	assert_int_equal(status, 200);
	assert_string_equal(buf_str(&out), "kcanary_agent_up 1\n");
	get(metrics_port(m), "/", 0, &status, &out);
	assert_int_equal(status, 404);
	assert_string_equal(buf_str(&out), "kcanary-agent serves /metrics only\n");
	get(metrics_port(m), "/metrics", 1, &status, &out);
	assert_int_equal(status, 405);
	assert_string_equal(buf_str(&out), "only GET /metrics\n");
	metrics_stop(m);
	buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_post_plain_and_gzip),
		cmocka_unit_test(test_post_no_server),
		cmocka_unit_test(test_deflate_round_trip),
		cmocka_unit_test(test_metrics),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
