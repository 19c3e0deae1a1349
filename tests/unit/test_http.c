/* test_http.c - the HTTP server on its own, with a handler that is not the
 * API's: which paths reach it, each thread's state (made on the thread's
 * first request, freed when the server stops), errors the server answers
 * itself in the handler's format, static files. A real server on
 * 127.0.0.1 port 0, called through libcurl. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <cmocka.h>
#include <curl/curl.h>

#include "error.h"
#include "http.h"
#include "util.h"
#include "testutil.h"

/* What the handler's payload counts: every thread_init and thread_free,
 * and how many thread_inits still fail. */
struct counts {
	pthread_mutex_t lock;
	int inits, frees, fail_inits;
	int served;                /* requests of the states freed */
};

/* A thread's state: the thread that made it. */
struct state {
	pthread_t self;
	int requests;
};

static int t_init(void *payload, void **out, struct buf *err)
{
	struct counts *c = payload;
	struct state *s;

	pthread_mutex_lock(&c->lock);
	if (c->fail_inits) {
		c->fail_inits--;
		pthread_mutex_unlock(&c->lock);
		return err_setf(err, -EIO, "cannot make the state (on purpose)");
	}
	c->inits++;
	pthread_mutex_unlock(&c->lock);
	s = xcalloc(1, sizeof(*s));
	s->self = pthread_self();
	*out = s;
	return 0;
}

static void t_free(void *payload, void *state)
{
	struct counts *c = payload;

	pthread_mutex_lock(&c->lock);
	c->frees++;
	c->served += ((struct state *)state)->requests;
	pthread_mutex_unlock(&c->lock);
	free(state);
}

/* Answers "PATH q=Q n=N" (n: this thread's requests so far), 500 when
 * the state is not the calling thread's own. */
static void t_handle(void *payload, void *state, struct http_req *req, struct http_resp *resp)
{
	struct state *s = state;
	const char *q = http_query(req, "q");

	(void)payload;
	if (!s || !pthread_equal(s->self, pthread_self())) {
		resp->status = 500;
		buf_puts(&resp->body, "state of another thread");
		return;
	}
	if (!strcmp(req->path, "/x/silent"))
		return;
	s->requests++;
	resp->status = 200;
	resp->content_type = "text/plain";
	buf_printf(&resp->body, "%s q=%s n=%d", req->path, q ? q : "", s->requests);
}

static void t_error(void *payload, struct http_resp *resp, int status, const char *msg)
{
	(void)payload;
	resp->status = status;
	resp->content_type = "text/x-test-error";
	buf_printf(&resp->body, "E%d %s", status, msg);
}

struct fx {
	struct tmpdir td;
	struct counts counts;
	struct http_server *srv;
	char base[64];
};

static int fx_setup(void **state)
{
	struct tmpdir *td;
	struct fx *f;
	char *index;
	FILE *fp;

	if (tmpdir_setup((void **)&td))
		return -1;
	f = calloc(1, sizeof(*f));
	f->td = *td;
	free(td);
	pthread_mutex_init(&f->counts.lock, NULL);
	index = xasprintf("%s/index.html", f->td.path);
	assert_non_null(fp = fopen(index, "w"));
	fputs("<!DOCTYPE html><title>page</title>\n", fp);
	fclose(fp);
	free(index);
	*state = f;
	return 0;
}

static void start(struct fx *f, unsigned threads, bool with_error)
{
	struct http_opts opts = {
		.listen = "127.0.0.1:0",
		.web_dir = f->td.path,
		.threads = threads,
		.handler = { .prefix = "/x", .fn = t_handle, .thread_init = t_init,
			     .thread_free = t_free, .error = with_error ? t_error : NULL,
			     .payload = &f->counts },
	};

	assert_int_equal(http_server_start(&f->srv, &opts, NULL), 0);
	snprintf(f->base, sizeof(f->base), "http://127.0.0.1:%u", http_server_port(f->srv));
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	struct tmpdir *td = malloc(sizeof(*td));
	void *p = td;

	http_server_stop(f->srv);
	pthread_mutex_destroy(&f->counts.lock);
	*td = f->td;
	free(f);
	return tmpdir_teardown(&p);
}

struct reply {
	long status;
	char ctype[64];
	struct buf body;
};

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	buf_append(ud, p, size * n);
	return size * n;
}

/* GET (or POST body_len bytes of 'x' when body_len) base + path. */
static void call(struct reply *out, struct fx *f, const char *path, size_t body_len)
{
	CURL *c = curl_easy_init();
	/* a body over the cap waits for "100 Continue", so the refusal
	 * before reading it reaches us before we send it */
	struct curl_slist *hdrs = curl_slist_append(NULL, body_len > HTTP_MAX_BODY_BYTES ?
						    "Expect: 100-continue" : "Expect:");
	char *url = xasprintf("%s%s", f->base, path), *body = NULL;
	const char *ct = NULL;
	CURLcode rc;

	memset(out, 0, sizeof(*out));
	assert_non_null(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &out->body);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	if (body_len) {
		body = xmalloc(body_len);
		memset(body, 'x', body_len);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)body_len);
	}
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK)
		fail_msg("%s: %s", path, curl_easy_strerror(rc));
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
	curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
	snprintf(out->ctype, sizeof(out->ctype), "%s", ct ? ct : "");
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(c);
	free(body);
	free(url);
}

static void expect(struct fx *f, const char *path, long status, const char *body)
{
	struct reply r;

	call(&r, f, path, 0);
	if (r.status != status || strcmp(buf_str(&r.body), body))
		fail_msg("GET %s: %ld '%s', want %ld '%s'", path, r.status, buf_str(&r.body),
			 status, body);
	buf_release(&r.body);
}

/* The prefix itself and paths under "<prefix>/" reach the handler; any
 * other path is a page. */
static void test_prefix_and_pages(void **state)
{
	struct fx *f = *state;

	start(f, 1, true);
	expect(f, "/x", 200, "/x q= n=1");
	expect(f, "/x/a/b?q=1", 200, "/x/a/b q=1 n=2");
	expect(f, "/x/", 200, "/x/ q= n=3");
	expect(f, "/", 200, "<!DOCTYPE html><title>page</title>\n");
	expect(f, "/xy", 404, "no such page '/xy'\n");
}

/* Each thread makes its state once and only its own thread sees it (the
 * handler answers 500 otherwise); the server frees every state it made
 * when it stops, with the requests each one served. */
static void test_thread_state(void **state)
{
	struct fx *f = *state;
	struct reply r;

	start(f, 2, true);
	for (int i = 0; i < 20; i++) {
		call(&r, f, "/x/ok", 0);
		assert_int_equal(r.status, 200);
		assert_non_null(strstr(buf_str(&r.body), "/x/ok q= n="));
		buf_release(&r.body);
	}
	assert_in_range(f->counts.inits, 1, 2);
	http_server_stop(f->srv);
	f->srv = NULL;
	assert_int_equal(f->counts.frees, f->counts.inits);
	assert_int_equal(f->counts.served, 20);
}

/* A failing thread_init is answered 500 with its reason in the handler's
 * error format; the thread's next request tries again. */
static void test_thread_init_fails(void **state)
{
	struct fx *f = *state;
	struct reply r;

	f->counts.fail_inits = 2;
	start(f, 0, true);
	for (int i = 0; i < 2; i++) {
		call(&r, f, "/x/a", 0);
		assert_int_equal(r.status, 500);
		assert_string_equal(r.ctype, "text/x-test-error");
		assert_string_equal(buf_str(&r.body), "E500 cannot make the state (on purpose)");
		buf_release(&r.body);
	}
	expect(f, "/x/a", 200, "/x/a q= n=1");
	assert_int_equal(f->counts.inits, 1);
	/* a handler that gives no answer is a 500 too */
	expect(f, "/x/silent", 500, "E500 the handler gave no answer");
}

/* A body over the cap is refused before it is read, on any path, in the
 * handler's error format when it has one, else as text. */
static void test_body_over_cap(void **state)
{
	struct fx *f = *state;
	const char *want = "request body is larger than the limit of 1048576 bytes";
	struct reply r;
	char *e413 = xasprintf("E413 %s", want), *t413 = xasprintf("%s\n", want);

	start(f, 0, true);
	for (int i = 0; i < 2; i++) {
		call(&r, f, i ? "/index.html" : "/x/up", HTTP_MAX_BODY_BYTES + 1);
		assert_int_equal(r.status, 413);
		assert_string_equal(buf_str(&r.body), e413);
		buf_release(&r.body);
	}
	call(&r, f, "/x/up", HTTP_MAX_BODY_BYTES);
	assert_int_equal(r.status, 200);
	buf_release(&r.body);
	http_server_stop(f->srv);

	start(f, 0, false);
	call(&r, f, "/x/up", HTTP_MAX_BODY_BYTES + 1);
	assert_int_equal(r.status, 413);
	assert_string_equal(r.ctype, "text/plain; charset=utf-8");
	assert_string_equal(buf_str(&r.body), t413);
	buf_release(&r.body);
	free(e413);
	free(t413);
}

/* Without a handler every path is a page; without thread_init the
 * handler's state is NULL. */
static void test_no_handler(void **state)
{
	struct fx *f = *state;
	struct http_opts opts = { .listen = "127.0.0.1:0", .web_dir = f->td.path };

	assert_int_equal(http_server_start(&f->srv, &opts, NULL), 0);
	snprintf(f->base, sizeof(f->base), "http://127.0.0.1:%u", http_server_port(f->srv));
	expect(f, "/x", 404, "no such page '/x'\n");
	http_server_stop(f->srv);

	opts.handler = (struct http_handler){ .prefix = "/x", .fn = t_handle };
	assert_int_equal(http_server_start(&f->srv, &opts, NULL), 0);
	snprintf(f->base, sizeof(f->base), "http://127.0.0.1:%u", http_server_port(f->srv));
	expect(f, "/x", 500, "state of another thread");
}

/* Outside the server: query and headers from the request's lists. */
static void test_lists_without_conn(void **state)
{
	static const char *const q[] = { "a", "1", "b", "", NULL };
	static const char *const h[] = { "Content-Type", "text/plain", NULL };
	struct http_req req = { .method = "GET", .path = "/x", .query = q, .headers = h };
	struct http_resp resp = { .body = BUF_INIT };

	(void)state;
	assert_string_equal(http_query(&req, "a"), "1");
	assert_string_equal(http_query(&req, "b"), "");
	assert_null(http_query(&req, "A"));             /* query keys are exact */
	assert_string_equal(http_header(&req, "content-type"), "text/plain");
	assert_null(http_header(&req, "Accept"));
	req.query = req.headers = NULL;
	assert_null(http_query(&req, "a"));
	assert_null(http_header(&req, "content-type"));
	http_resp_header(&resp, "X-A", "1");
	buf_puts(&resp.body, "body");
	http_resp_release(&resp);
	assert_int_equal(resp.nhdr, 0);
	assert_int_equal(resp.body.len, 0);
}

/* What a raw connection to the server gets for a GET of /x: 1 an answer,
 * 0 the connection closed without one. */
static int raw_get(int fd)
{
	static const char req[] = "GET /x HTTP/1.1\r\nHost: t\r\n\r\n";
	char got[16] = "";
	ssize_t n;

	if (write(fd, req, sizeof(req) - 1) != (ssize_t)(sizeof(req) - 1))
		return 0;
	n = read(fd, got, sizeof(got) - 1);
	return n > 0 && !strncmp(got, "HTTP/1.1 ", 9);
}

/* Connections of one address beyond max_conn_per_ip are refused; without it
 * the default (HTTP_MAX_CONN_PER_IP) lets three through. Seen failing with
 * the option ignored (the third answered). */
static void test_conn_per_ip(void **state)
{
	struct fx *f = *state;
	struct timeval tv = { .tv_sec = 5 };

	for (int round = 0; round < 2; round++) {
		struct http_opts opts = { .listen = "127.0.0.1:0",
			.max_conn_per_ip = round ? 0 : 2,
			.handler = { .prefix = "/x", .fn = t_handle } };
		struct sockaddr_in sa = { .sin_family = AF_INET };
		int fd[3], answered = 0;

		assert_int_equal(http_server_start(&f->srv, &opts, NULL), 0);
		sa.sin_port = htons((uint16_t)http_server_port(f->srv));
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		for (int i = 0; i < 3; i++) {
			fd[i] = socket(AF_INET, SOCK_STREAM, 0);
			assert_true(fd[i] >= 0);
			setsockopt(fd[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
			assert_int_equal(connect(fd[i], (struct sockaddr *)&sa, sizeof(sa)), 0);
			usleep(50 * 1000);	/* accepted in this order */
		}
		for (int i = 0; i < 3; i++)
			answered += raw_get(fd[i]);
		assert_int_equal(answered, round ? 3 : 2);
		for (int i = 0; i < 3; i++)
			close(fd[i]);
		http_server_stop(f->srv);
		f->srv = NULL;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lists_without_conn),
		cmocka_unit_test_setup_teardown(test_prefix_and_pages, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_thread_state, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_thread_init_fails, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_body_over_cap, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_no_handler, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_conn_per_ip, fx_setup, fx_teardown),
	};
	int r;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	r = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return r;
}
