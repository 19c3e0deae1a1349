/* http.c - the only file that includes <microhttpd.h>: the daemon, request
 * bodies (capped), per-request state, static files from web/, and the
 * hand-off of /api/ requests to api.c. See http.h.
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

#include "api.h"
#include "db.h"
#include "http.h"
#include "log.h"
#include "util.h"

/* Static files larger than this are not served (uPlot is ~50 KiB). */
#define HTTP_MAX_STATIC_BYTES (8u << 20)

struct http_server {
	struct MHD_Daemon *d;
	struct api_shared shared;
	pthread_key_t api_key;     /* each server thread's struct api */
	bool have_key;
	char *db_path;
	char *web_dir;
	unsigned port;
};

/* A server thread's handler state, made on its first request: its own
 * store connection. Freed when libmicrohttpd ends the thread. */
static struct api *thread_api(struct http_server *srv)
{
	struct api *api = pthread_getspecific(srv->api_key);

	if (api)
		return api;
	api = xcalloc(1, sizeof(*api));
	api->shared = &srv->shared;
	if (db_open(&api->db, srv->db_path)) {
		free(api);
		return NULL;
	}
	pthread_setspecific(srv->api_key, api);
	return api;
}

static void thread_api_free(void *p)
{
	struct api *api = p;

	db_close(api->db);
	free(api);
}

/* Per-request state: allocated on the first callback of a request, freed
 * in the completion callback however the request ended. */
struct http_conn {
	struct buf body;
	int too_large;
};

const char *http_query(const struct http_req *req, const char *key)
{
	return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, key);
}

const char *http_header(const struct http_req *req, const char *key)
{
	return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, key);
}

void http_resp_header(struct http_resp *resp, const char *name, const char *value)
{
	if (resp->nhdr >= HTTP_MAX_HEADERS)
		return;
	resp->hdr_name[resp->nhdr] = name;
	resp->hdr_value[resp->nhdr] = xstrdup(value);
	resp->nhdr++;
}

static void resp_release(struct http_resp *resp)
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
		resp_release(resp);
		return MHD_NO;
	}
	if (resp->content_type)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, resp->content_type);
	for (int i = 0; i < resp->nhdr; i++)
		MHD_add_response_header(r, resp->hdr_name[i], resp->hdr_value[i]);
	ret = MHD_queue_response(c, resp->status ? (unsigned)resp->status : 500, r);
	MHD_destroy_response(r);
	resp_release(resp);
	return ret;
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
	*upload_data_size = 0;
	if (hc->too_large) {
		api_error(&resp, 413, "request body is larger than the limit of %u bytes",
			  HTTP_MAX_BODY_BYTES);
		return send_resp(c, &resp);
	}

	req = (struct http_req){
		.method = method,
		.path = url,
		.body = buf_str(&hc->body),
		.body_len = hc->body.len,
		.conn = c,
	};
	if (!strncmp(url, "/api/", 5) || !strcmp(url, "/api")) {
		struct api *api = thread_api(srv);
		if (api)
			api_handle(api, &req, &resp);
		else
			api_error(&resp, 500, "cannot open the store '%s'", srv->db_path);
		http_resp_header(&resp, "Cache-Control", "no-store");
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
	log_warn("libmicrohttpd: %s", msg);
}

/* Parse "host:port" or "[v6]:port" with a numeric host. */
static int parse_listen(struct sockaddr_storage *out, socklen_t *len_out,
			const char *listen)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai = NULL;
	char host[128], *port, *end;
	int r = -EINVAL;

	if (strlen(listen) >= sizeof(host))
		return -EINVAL;
	strcpy(host, listen);
	port = strrchr(host, ':');
	if (!port || port == host)
		return -EINVAL;
	*port++ = '\0';
	if (!*port || strtoul(port, &end, 10) > 65535 || *end)
		return -EINVAL;
	if (host[0] == '[') {
		size_t n = strlen(host);
		if (host[n - 1] != ']')
			return -EINVAL;
		host[n - 1] = '\0';
		memmove(host, host + 1, n - 1);
	}
	if (getaddrinfo(host, port, &hints, &ai) || !ai)
		return -EINVAL;
	if (ai->ai_addrlen <= sizeof(*out)) {
		memcpy(out, ai->ai_addr, ai->ai_addrlen);
		*len_out = ai->ai_addrlen;
		r = 0;
	}
	freeaddrinfo(ai);
	return r;
}

int http_server_start(struct http_server **out, const struct http_opts *opts)
{
	const char *listen = opts->listen ? opts->listen : "127.0.0.1:8080";
	struct http_server *srv = xcalloc(1, sizeof(*srv));
	struct db *db = NULL;
	struct sockaddr_storage sa;
	socklen_t salen = 0;
	const union MHD_DaemonInfo *info;
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
	unsigned threads = opts->threads ? opts->threads : HTTP_DEFAULT_THREADS;
	int r;

	api_shared_init(&srv->shared);
	if ((r = parse_listen(&sa, &salen, listen))) {
		log_err("cannot listen on '%s': expected host:port with a numeric host, "
			"as in 127.0.0.1:8080 or [::1]:8080", listen);
		goto fail;
	}
	if (sa.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* open (and migrate) the store once here, so a bad store fails the
	 * start rather than every request; the threads open their own */
	if ((r = db_open(&db, opts->db_path)))
		goto fail;
	db_close(db);
	if ((r = -pthread_key_create(&srv->api_key, thread_api_free)))
		goto fail;
	srv->have_key = true;
	srv->db_path = xstrdup(opts->db_path);
	if (opts->web_dir)
		srv->web_dir = xstrdup(opts->web_dir);
	srv->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, srv,
				  MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, srv,
				  MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				  MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60,
				  MHD_OPTION_THREAD_POOL_SIZE, threads,
				  MHD_OPTION_END);
	if (!srv->d) {
		r = errno ? -errno : -EADDRINUSE;
		log_err("cannot listen on '%s': %s", listen, strerror(-r));
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
	/* joins the pool's threads; their struct api go with them */
	if (srv->d)
		MHD_stop_daemon(srv->d);
	if (srv->have_key)
		pthread_key_delete(srv->api_key);
	api_shared_release(&srv->shared);
	free(srv->db_path);
	free(srv->web_dir);
	free(srv);
}
