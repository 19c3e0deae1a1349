/* http.c - the only file that includes <microhttpd.h>: the daemon, request
 * bodies (capped), per-request and per-thread state, static files from
 * web/, and the hand-off of the handler's requests to its callback (the
 * API's, given by cmd_serve.c). Includes no handler's header. See http.h.
 */
#define LOG_MODULE "http"
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <microhttpd.h>

#include "error.h"
#include "http.h"
#include "log.h"
#include "util.h"

/* Static files larger than this are not served (uPlot is ~50 KiB). */
#define HTTP_MAX_STATIC_BYTES (8u << 20)

struct http_server {
	struct MHD_Daemon *d;
	struct http_handler h;     /* borrowed from http_opts */
	pthread_key_t thread_key;  /* each server thread's struct http_thread */
	bool have_key;
	char *web_dir;
	unsigned port;
};

/* A server thread's handler state, made by h.thread_init on the thread's
 * first handled request and freed by h.thread_free when libmicrohttpd
 * ends the thread (a pthread key destructor). */
struct http_thread {
	struct http_server *srv;
	void *state;
};

static void thread_state_free(void *p)
{
	struct http_thread *t = p;

	if (t->srv->h.thread_free)
		t->srv->h.thread_free(t->srv->h.payload, t->state);
	free(t);
}

/* The calling thread's state in *out (NULL without a thread_init).
 * Returns 0 or thread_init's error, its reason in err. */
static int thread_state(struct http_server *srv, void **out, struct buf *err)
{
	struct http_thread *t = pthread_getspecific(srv->thread_key);
	void *state = NULL;
	int r;

	if (!t) {
		if (srv->h.thread_init && (r = srv->h.thread_init(srv->h.payload, &state, err)))
			return r;
		t = xcalloc(1, sizeof(*t));
		t->srv = srv;
		t->state = state;
		pthread_setspecific(srv->thread_key, t);
	}
	*out = t->state;
	return 0;
}

/* Per-request state: allocated on the first callback of a request, freed
 * in the completion callback however the request ended. */
struct http_conn {
	struct buf body;
	int too_large;
	size_t drained;     /* body bytes read and dropped after the cap */
};

/* The value of key in a key, value, …, NULL list (borrowed), or NULL. */
static const char *pair_lookup(const char *const *kv, const char *key, bool nocase)
{
	for (; kv && kv[0] && kv[1]; kv += 2)
		if (nocase ? !strcasecmp(kv[0], key) : !strcmp(kv[0], key))
			return kv[1];
	return NULL;
}

const char *http_query(const struct http_req *req, const char *key)
{
	if (!req->conn)
		return pair_lookup(req->query, key, false);
	return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, key);
}

const char *http_header(const struct http_req *req, const char *key)
{
	if (!req->conn)
		return pair_lookup(req->headers, key, true);
	return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, key);
}

struct count_ctx {
	const char *key;
	int n;
};

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
				    const char *value)
{
	struct count_ctx *c = cls;

	(void)kind;
	(void)value;
	if (key && !strcasecmp(key, c->key))
		c->n++;
	return MHD_YES;
}

int http_header_count(const struct http_req *req, const char *key)
{
	struct count_ctx c = { key, 0 };

	if (!req->conn) {
		for (const char *const *kv = req->headers; kv && kv[0] && kv[1]; kv += 2)
			c.n += !strcasecmp(kv[0], key);
		return c.n;
	}
	MHD_get_connection_values(req->conn, MHD_HEADER_KIND, count_header, &c);
	return c.n;
}

void http_resp_header(struct http_resp *resp, const char *name, const char *value)
{
	if (resp->nhdr >= HTTP_MAX_HEADERS)
		return;
	resp->hdr_name[resp->nhdr] = name;
	resp->hdr_value[resp->nhdr] = xstrdup(value);
	resp->nhdr++;
}

void http_resp_release(struct http_resp *resp)
{
	buf_release(&resp->body);
	for (int i = 0; i < resp->nhdr; i++)
		free(resp->hdr_value[i]);
	resp->nhdr = 0;
}

static enum MHD_Result send_resp(struct MHD_Connection *c, struct http_resp *resp)
{
	struct MHD_Response *r;
	size_t len = resp->body.len;
	char *body = buf_detach(&resp->body);
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		http_resp_release(resp);
		return MHD_NO;
	}
	if (resp->content_type)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, resp->content_type);
	/* every answer: no content sniffing, never framed by another site
	 * (the old header and CSP's frame-ancestors, for old and new browsers) */
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Content-Security-Policy", "frame-ancestors 'none'");
	for (int i = 0; i < resp->nhdr; i++)
		MHD_add_response_header(r, resp->hdr_name[i], resp->hdr_value[i]);
	ret = MHD_queue_response(c, resp->status ? (unsigned)resp->status : 500, r);
	MHD_destroy_response(r);
	http_resp_release(resp);
	return ret;
}

/* An error the server answers itself, in the handler's format when it
 * has one. */
static void refuse(struct http_server *srv, struct http_resp *resp, int status,
		   const char *msg)
{
	buf_reset(&resp->body);
	if (srv->h.error) {
		srv->h.error(srv->h.payload, resp, status, msg);
		return;
	}
	resp->status = status;
	resp->content_type = "text/plain; charset=utf-8";
	buf_printf(&resp->body, "%s\n", msg);
}

/* Is path the handler's: its prefix itself or a path under "<prefix>/"? */
static bool is_handler_path(const struct http_server *srv, const char *path)
{
	size_t n;

	if (!srv->h.fn || !srv->h.prefix)
		return false;
	n = strlen(srv->h.prefix);
	return !strncmp(path, srv->h.prefix, n) && (path[n] == '\0' || path[n] == '/');
}

/* Hand req to the handler, with the calling thread's state. */
static void handle(struct http_server *srv, struct http_req *req, struct http_resp *resp)
{
	struct buf err = BUF_INIT;
	void *state;

	if (thread_state(srv, &state, &err)) {
		log_err("%s %s: %s", req->method, req->path, err_text(&err));
		refuse(srv, resp, 500, err_text(&err));
	} else {
		srv->h.fn(srv->h.payload, state, req, resp);
		if (!resp->status)
			refuse(srv, resp, 500, "the handler gave no answer");
	}
	/* answers of the handler are live data */
	http_resp_header(resp, "Cache-Control", "no-store");
	buf_release(&err);
}

static const char *content_type_of(const char *path)
{
	static const struct { const char *ext, *type; } types[] = {
		{ ".html", "text/html; charset=utf-8" },
		{ ".js", "text/javascript; charset=utf-8" },
		{ ".css", "text/css; charset=utf-8" },
		{ ".svg", "image/svg+xml" },
		{ ".png", "image/png" },
		{ ".ico", "image/x-icon" },
		{ ".json", "application/json" },
		{ ".txt", "text/plain; charset=utf-8" },
		{ "LICENSE", "text/plain; charset=utf-8" },
	};
	size_t n = strlen(path);

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		size_t e = strlen(types[i].ext);
		if (n >= e && !strcmp(path + n - e, types[i].ext))
			return types[i].type;
	}
	return "application/octet-stream";
}

/* GET a file under web_dir. Paths with "..", hidden files or anything but
 * a regular file are 404: the web dir is all that is ever served. */
static void serve_static(struct http_server *srv, const char *path, struct http_resp *resp)
{
	char *file = NULL, *data = NULL;
	size_t len = 0;
	struct stat st;
	int r;

	if (!srv->web_dir || strstr(path, "/.") || strstr(path, "..") || path[0] != '/')
		goto not_found;
	if (!strcmp(path, "/"))
		path = "/index.html";
	file = xasprintf("%s%s", srv->web_dir, path);
	if (stat(file, &st) || !S_ISREG(st.st_mode))
		goto not_found;
	if ((r = read_file(&data, &len, file, HTTP_MAX_STATIC_BYTES))) {
		log_warn("cannot read '%s': %s", file, strerror(-r));
		goto not_found;
	}
	resp->status = 200;
	resp->content_type = content_type_of(path);
	resp->body.ptr = data;
	resp->body.len = len;
	resp->body.cap = len + 1;
	/* The pages poll the API for live data; the files themselves only
	 * change with a new kcanary, so a short cache is enough. */
	http_resp_header(resp, "Cache-Control", "no-cache");
	free(file);
	return;
not_found:
	free(file);
	resp->status = 404;
	resp->content_type = "text/plain; charset=utf-8";
	buf_printf(&resp->body, "no such page '%s'\n", path);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct http_server *srv = cls;
	struct http_conn *hc = *con_cls;
	struct http_resp resp = { .body = BUF_INIT };
	struct http_req req;

	(void)version;
	if (!hc) {
		const char *cl;

		hc = xcalloc(1, sizeof(*hc));
		hc->body.max_bytes = HTTP_MAX_BODY_BYTES;
		*con_cls = hc;
		/* Refuse a declared oversized body before reading it. */
		cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						 MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl && strtoull(cl, NULL, 10) > HTTP_MAX_BODY_BYTES)
			hc->too_large = 1;
		else
			return MHD_YES;
	}
	if (*upload_data_size && !hc->too_large) {
		if (buf_append(&hc->body, upload_data, *upload_data_size))
			hc->too_large = 1;
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (*upload_data_size && hc->drained + *upload_data_size <= HTTP_MAX_DRAIN_BYTES) {
		/* over the cap, mid-body (chunked: no length said so up front):
		 * read and drop the rest, so the client gets its 413 rather than a
		 * connection closed under it; past the drain bound it gets the 413
		 * at once */
		hc->drained += *upload_data_size;
		*upload_data_size = 0;
		return MHD_YES;
	}
	*upload_data_size = 0;
	if (hc->too_large) {
		char msg[128];

		snprintf(msg, sizeof(msg), "request body is larger than the limit of %u bytes",
			 HTTP_MAX_BODY_BYTES);
		refuse(srv, &resp, 413, msg);
		return send_resp(c, &resp);
	}

	req = (struct http_req){
		.method = method,
		.path = url,
		.body = buf_str(&hc->body),
		.body_len = hc->body.len,
		.conn = c,
	};
	if (is_handler_path(srv, url)) {
		handle(srv, &req, &resp);
	} else if (!strcmp(method, "GET") || !strcmp(method, "HEAD")) {
		serve_static(srv, url, &resp);
	} else {
		resp.status = 405;
		resp.content_type = "text/plain; charset=utf-8";
		http_resp_header(&resp, "Allow", "GET, HEAD");
		buf_printf(&resp.body, "method '%s' is not allowed on pages\n", method);
	}
	log_debug("%s %s -> %d", method, url, resp.status);
	return send_resp(c, &resp);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct http_conn *hc = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (!hc)
		return;
	buf_release(&hc->body);
	free(hc);
	*con_cls = NULL;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	size_t n;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	/* "Failed to bind to port 0": the port it was given apart from the
	 * address (always 0 with MHD_OPTION_SOCK_ADDR); http_server_start's
	 * error names the address and port instead */
	if (!strncmp(msg, "Failed to bind to port", 22))
		return;
	log_warn("libmicrohttpd: %s", msg);
}

int http_server_start(struct http_server **out, const struct http_opts *opts,
		      struct buf *err)
{
	const char *listen = opts->listen ? opts->listen : "127.0.0.1:8080";
	struct http_server *srv = xcalloc(1, sizeof(*srv));
	struct sockaddr_storage sa;
	socklen_t salen = 0;
	const union MHD_DaemonInfo *info;
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
	unsigned threads = opts->threads ? opts->threads : HTTP_DEFAULT_THREADS;
	int r;

	srv->h = opts->handler;
	if ((r = parse_listen(&sa, &salen, listen))) {
		err_setf(err, r, "cannot listen on '%s': expected host:port with a numeric host, "
			 "as in 127.0.0.1:8080 or [::1]:8080", listen);
		goto fail;
	}
	if (sa.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if ((r = -pthread_key_create(&srv->thread_key, thread_state_free))) {
		err_setf(err, r, "cannot make the server threads' key: %s", strerror(-r));
		goto fail;
	}
	srv->have_key = true;
	if (opts->web_dir)
		srv->web_dir = xstrdup(opts->web_dir);
	errno = 0;
	srv->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, srv,
				  MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, srv,
				  MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				  MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
				  /* a client that holds connections open (idle, or
				   * slow-loris headers) takes at most its share and
				   * loses them when idle: everyone else is served */
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_IDLE_TIMEOUT_S,
				  MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				  opts->max_conn_per_ip ? opts->max_conn_per_ip : (unsigned)HTTP_MAX_CONN_PER_IP,
				  /* one thread: no pool (libmicrohttpd warns of a
				   * pool of 1), the option list ends here */
				  threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, threads,
				  MHD_OPTION_END);
	if (!srv->d) {
		r = errno ? -errno : -EADDRINUSE;
		err_setf(err, r, "cannot listen on '%s': %s%s", listen, strerror(-r),
			 r == -EADDRINUSE ? " (another process is listening on that port)" : "");
		goto fail;
	}
	info = MHD_get_daemon_info(srv->d, MHD_DAEMON_INFO_BIND_PORT);
	srv->port = info ? info->port : 0;
	*out = srv;
	return 0;
fail:
	http_server_stop(srv);
	return r;
}

unsigned http_server_port(const struct http_server *srv)
{
	return srv->port;
}

void http_server_stop(struct http_server *srv)
{
	if (!srv)
		return;
	/* joins the pool's threads; their states go with them
	 * (thread_state_free, the key's destructor) */
	if (srv->d)
		MHD_stop_daemon(srv->d);
	if (srv->have_key)
		pthread_key_delete(srv->thread_key);
	free(srv->web_dir);
	free(srv);
}
