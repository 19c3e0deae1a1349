/* api.c - the route table of /api/v1/: path matching, the bearer-token
 * check for state-changing routes, the call down into the route's handler,
 * and the http.h handler cmd_serve.c gives http.c. Each route is
 * documented in docs/api.md.
 */
#define LOG_MODULE "api"
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/api.h"
#include "api/api_bisect.h"
#include "api/api_fleet.h"
#include "api/api_jobs.h"
#include "api/api_lab.h"
#include "api/api_runs.h"
#include "json_num.h"
#include "store/db.h"
#include "store/db_runs.h"
#include "store/db_tokens.h"
#include "error.h"
#include "log.h"
#include "api/token.h"
#include "util.h"

/* What a route needs: nothing (reads), or a token with the scope (token.h):
 * SUBMIT "submit", AGENT "agent:HOST" for the route's {host} (or any host:
 * the register handler checks the host in its body). admin has them all. */
enum api_auth { OPEN, SUBMIT, AGENT };

/*
 * Path segments: "{job}" is a job id or name (resolved like
 * `kcanary report JOB`), "{id}" a positive number, "{host}" a fleet host's
 * name (req->name; api_fleet.c checks it). To add a route: one
 * row here, the handler in an api_*.c file, declared in its api_*.h, and its
 * section in docs/api.md.
 */
static const struct api_route {
	const char *method;
	const char *pattern;
	enum api_auth auth;
	api_fn *fn;
} routes[] = {
	{ "GET",  "/api/v1/metrics",                 OPEN,  api_metrics },
	{ "GET",  "/api/v1/jobs",                    OPEN,  api_jobs_list },
	{ "POST", "/api/v1/jobs",                    SUBMIT, api_jobs_submit },
	{ "GET",  "/api/v1/jobs/{job}",              OPEN,  api_job_get },
	{ "GET",  "/api/v1/jobs/{job}/variants",     OPEN,  api_job_variants },
	{ "GET",  "/api/v1/jobs/{job}/runs",         OPEN,  api_job_runs },
	{ "GET",  "/api/v1/jobs/{job}/samples",      OPEN,  api_job_samples },
	{ "GET",  "/api/v1/jobs/{job}/report",       OPEN,  api_job_report },
	{ "POST", "/api/v1/jobs/{job}/cancel",       SUBMIT, api_job_cancel },
	{ "GET",  "/api/v1/jobs/{job}/bisect-log",   OPEN,  api_job_bisect_log },
	{ "GET",  "/api/v1/runs/{id}",               OPEN,  api_run_get },
	{ "GET",  "/api/v1/runs/{id}/samples",       OPEN,  api_run_samples },
	{ "GET",  "/api/v1/runs/{id}/probes",        OPEN,  api_run_probes },
	{ "GET",  "/api/v1/runs/{id}/console",       OPEN,  api_run_console },
	{ "GET",  "/api/v1/kernels/{id}/build-log",  OPEN,  api_kernel_build_log },
	{ "GET",  "/api/v1/hosts",                   OPEN,  api_hosts_list },
	{ "GET",  "/api/v1/lab",                     OPEN,  api_lab_list },
	{ "POST", "/api/v1/agents/register",         AGENT, api_agent_register },
	{ "POST", "/api/v1/agents/{host}/heartbeat", AGENT, api_agent_heartbeat },
	{ "POST", "/api/v1/agents/{host}/records",   AGENT, api_agent_records },
};

/* Match path against pattern; on a match, *seg points at the text of
 * its one placeholder segment (copied into segbuf). */
static bool match(const char *pattern, const char *path, char *seg, size_t segsz)
{
	while (*pattern && *path) {
		if (*pattern == '{') {
			const char *pend = strchr(pattern, '}');
			size_t n = strcspn(path, "/");
			if (!pend || n == 0 || n >= segsz)
				return false;
			memcpy(seg, path, n);
			seg[n] = '\0';
			if (!strncmp(pattern, "{id}", 4))
				for (size_t i = 0; i < n; i++)
					if (seg[i] < '0' || seg[i] > '9')
						return false;
			pattern = pend + 1;
			path += n;
			continue;
		}
		if (*pattern++ != *path++)
			return false;
	}
	/* a trailing slash is the same resource */
	if (!*pattern && path[0] == '/' && !path[1])
		return true;
	return !*pattern && !*path;
}

/* 0 when the request carries one "Authorization: Bearer <a stored token>"
 * whose scopes allow need (host: the route's {host}, or NULL); the token's
 * name and scopes go to req->token and req->scopes. 401 without a valid
 * token, 403 with one that may not do this. */
static int check_token(struct api *api, struct http_req *req, struct http_resp *resp,
		       enum api_auth need, const char *host)
{
	struct buf err = BUF_INIT;
	char *name = req->token;
	const char *h = http_header(req, "Authorization");
	const char *what = need == SUBMIT ? "submit" : "agent";
	char hash[TOKEN_HASH_HEX + 1];
	int r;

	if (!h || strncasecmp(h, "Bearer ", 7) || !h[7] || strchr(h + 7, ',') ||
	    http_header_count(req, "Authorization") > 1) {
		http_resp_header(resp, "WWW-Authenticate", "Bearer realm=\"kcanary\"");
		api_error(resp, 401, "this endpoint changes state: send one 'Authorization: Bearer"
			  " <token>' header (see 'kcanary token create')");
		return -EACCES;
	}
	token_hash(hash, h + 7);
	r = db_token_find(api->db, name, sizeof(req->token), req->scopes, sizeof(req->scopes), hash,
			  &err);
	if (r == -ENOENT) {
		buf_release(&err);
		http_resp_header(resp, "WWW-Authenticate",
				 "Bearer realm=\"kcanary\", error=\"invalid_token\"");
		api_error(resp, 401, "the bearer token is not one of this store's tokens");
		return -EACCES;
	}
	if (r) {
		api_db_error(resp, r, "cannot check the token", &err);
		return r;
	}
	if (!req->scopes[0]) {   /* made before scopes: what it could do then */
		char dflt[TOKEN_MAX_SCOPES_LEN];
		snprintf(req->scopes, sizeof(req->scopes), "%s",
			 token_default_scopes(name, dflt, sizeof(dflt)));
	}
	if (!token_allows(req->scopes, what, host)) {
		http_resp_header(resp, "WWW-Authenticate",
				 "Bearer realm=\"kcanary\", error=\"insufficient_scope\"");
		api_error(resp, 403, "token '%s' (scopes: %s) may not %s %s: it needs the scope %s%s",
			  name, req->scopes, req->method, req->path,
			  need == SUBMIT ? "submit" : "agent:", need == SUBMIT ? "" : host ? host : "HOST");
		req->token[0] = '\0';
		return -EPERM;
	}
	/* agents post every few seconds: their requests only at debug level */
	if (strncmp(req->path, "/api/v1/agents/", 15))
		log_info("%s %s by token '%s'", req->method, req->path, name);
	else
		log_debug("%s %s by token '%s'", req->method, req->path, name);
	return 0;
}

void api_handle(struct api *api, struct http_req *req, struct http_resp *resp)
{
	struct buf err = BUF_INIT;
	char seg[256], allow[64] = "";
	const struct api_route *hit = NULL;
	int r;

	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		if (!match(routes[i].pattern, req->path, seg, sizeof(seg)))
			continue;
		if (!strcmp(routes[i].method, req->method) ||
		    (!strcmp(req->method, "HEAD") && !strcmp(routes[i].method, "GET"))) {
			hit = &routes[i];
			break;
		}
		snprintf(allow + strlen(allow), sizeof(allow) - strlen(allow), "%s%s",
			 *allow ? ", " : "", routes[i].method);
	}
	if (!hit) {
		if (*allow) {
			http_resp_header(resp, "Allow", allow);
			api_error(resp, 405, "method %s is not allowed on '%s' (allowed: %s)",
				  req->method, req->path, allow);
		} else {
			api_error(resp, 404, "no API endpoint '%s' (see docs/api.md)", req->path);
		}
		return;
	}
	if (hit->auth != OPEN &&
	    check_token(api, req, resp, hit->auth, strstr(hit->pattern, "{host}") ? seg : NULL))
		return;
	req->id = 0;
	req->name = NULL;
	if (strstr(hit->pattern, "{job}")) {
		r = db_job_resolve(api->db, &req->id, seg, &err);
		if (r == -ENOENT) {
			buf_release(&err);
			api_error(resp, 404, "no job '%s' in the store", seg);
			return;
		}
		if (r) {
			api_db_error(resp, r, "cannot look up the job", &err);
			return;
		}
	} else if (strstr(hit->pattern, "{id}")) {
		errno = 0;
		req->id = strtoll(seg, NULL, 10);
		if (errno == ERANGE || req->id < 1) {
			api_error(resp, 404, "no such id '%s': ids are 1 to %lld", seg, LLONG_MAX);
			return;
		}
	} else if (strstr(hit->pattern, "{host}")) {
		req->name = seg;
	}
	hit->fn(api, req, resp);
	if (!resp->status)
		api_error(resp, 500, "the handler of '%s' gave no answer", hit->pattern);
}

static void serve(void *payload, void *state, struct http_req *req, struct http_resp *resp)
{
	(void)payload;
	api_handle(state, req, resp);
}

static void refuse(void *payload, struct http_resp *resp, int status, const char *msg)
{
	(void)payload;
	api_error(resp, status, "%s", msg);
}

struct http_handler api_http_handler(struct api_shared *sh)
{
	return (struct http_handler){
		.prefix = "/api",
		.fn = serve,
		.thread_init = api_thread_init,
		.thread_free = api_thread_free,
		.error = refuse,
		.payload = sh,
	};
}
