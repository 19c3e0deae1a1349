/* metrics.c - see metrics.h: lib/http.h's server on one thread, its
 * handler answering every path from one text buffer. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "metrics.h"
#include "util.h"

struct metrics {
	struct http_server *srv;
	pthread_mutex_t lock;
	char *text;
};

static void text_answer(struct http_resp *resp, int status, const char *ctype, const char *body)
{
	resp->status = status;
	resp->content_type = ctype;
	buf_puts(&resp->body, body);
}

/* http_handler_fn for every path ("" prefix): GET /metrics, else 404/405. */
static void on_request(void *payload, void *state, struct http_req *req, struct http_resp *resp)
{
	struct metrics *m = payload;

	(void)state;
	if (strcmp(req->method, "GET") && strcmp(req->method, "HEAD")) {
		http_resp_header(resp, "Allow", "GET, HEAD");
		text_answer(resp, 405, "text/plain; charset=utf-8", "only GET /metrics\n");
		return;
	}
	if (strcmp(req->path, "/metrics")) {
		text_answer(resp, 404, "text/plain; charset=utf-8",
			    "kcanary-agent serves /metrics only\n");
		return;
	}
	pthread_mutex_lock(&m->lock);
	text_answer(resp, 200, "text/plain; version=0.0.4; charset=utf-8", m->text ? m->text : "");
	pthread_mutex_unlock(&m->lock);
}

int metrics_start(struct metrics **out, const char *listen, struct buf *err)
{
	struct metrics *m = xcalloc(1, sizeof(*m));
	struct http_opts opts = {
		.listen = listen,
		.threads = 1,
		/* "": every path is the handler's (all paths begin with '/') */
		.handler = { .prefix = "", .fn = on_request, .payload = m },
	};
	int r;

	pthread_mutex_init(&m->lock, NULL);
	if ((r = http_server_start(&m->srv, &opts, err))) {
		pthread_mutex_destroy(&m->lock);
		free(m);
		return r;
	}
	*out = m;
	return 0;
}

unsigned metrics_port(const struct metrics *m)
{
	return http_server_port(m->srv);
}

void metrics_set(struct metrics *m, const char *text)
{
	char *copy = xstrdup(text), *old;

	pthread_mutex_lock(&m->lock);
	old = m->text;
	m->text = copy;
	pthread_mutex_unlock(&m->lock);
	free(old);
}

void metrics_stop(struct metrics *m)
{
	if (!m)
		return;
	http_server_stop(m->srv);
	pthread_mutex_destroy(&m->lock);
	free(m->text);
	free(m);
}
