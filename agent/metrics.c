/* metrics.c - see metrics.h: libmicrohttpd serving one text buffer. */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <microhttpd.h>

#define LOG_MODULE "metrics"
#include "log.h"
#include "metrics.h"
#include "util.h"

struct metrics {
	struct MHD_Daemon *d;
	pthread_mutex_t lock;
	char *text;
	unsigned port;
};

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, const char *ctype,
			      const char *body)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (status == 405)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	struct metrics *m = cls;
	enum MHD_Result ret;
	char *text;

	(void)version;
	(void)upload_data;
	if (!*con_cls) {   /* first call of the request: headers only */
		*con_cls = m;
		return MHD_YES;
	}
	*upload_data_size = 0;   /* a body is ignored */
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return answer(c, 405, "text/plain; charset=utf-8", "only GET /metrics\n");
	if (strcmp(url, "/metrics"))
		return answer(c, 404, "text/plain; charset=utf-8", "kcanary-agent serves /metrics only\n");
	pthread_mutex_lock(&m->lock);
	text = xstrdup(m->text ? m->text : "");
	pthread_mutex_unlock(&m->lock);
	ret = answer(c, 200, "text/plain; version=0.0.4; charset=utf-8", text);
	free(text);
	return ret;
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

int metrics_start(struct metrics **out, const char *listen)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai = NULL;
	char host[128], *port, *end;
	struct metrics *m;
	const union MHD_DaemonInfo *info;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;

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
	if (ai->ai_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	m = xcalloc(1, sizeof(*m));
	pthread_mutex_init(&m->lock, NULL);
	m->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, m,
				MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, m,
				MHD_OPTION_SOCK_ADDR, ai->ai_addr,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
				MHD_OPTION_END);
	freeaddrinfo(ai);
	if (!m->d) {
		int r = errno ? -errno : -EADDRINUSE;
		pthread_mutex_destroy(&m->lock);
		free(m);
		return r;
	}
	info = MHD_get_daemon_info(m->d, MHD_DAEMON_INFO_BIND_PORT);
	m->port = info ? info->port : 0;
	*out = m;
	return 0;
}

unsigned metrics_port(const struct metrics *m)
{
	return m->port;
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
	MHD_stop_daemon(m->d);
	pthread_mutex_destroy(&m->lock);
	free(m->text);
	free(m);
}
