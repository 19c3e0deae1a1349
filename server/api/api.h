/* api.h - the JSON API under /api/v1/ (docs/api.md): the route table in
 * api.c, which calls down into the handlers: api_jobs.c (jobs, submit,
 * cancel, report), api_runs.c (runs, samples, probes, console),
 * api_bisect.c, api_fleet.c and api_lab.c (the lab's hosts), each with its
 * own header. They reach the API's state through api_state.h (each
 * thread's store connection, the report cache), answer through
 * api_reply.h, and never call back up into the router. Handlers see
 * http.h's request/response, never libmicrohttpd. http.c knows none of
 * this: cmd_serve.c hands it api_http_handler().
 */
#ifndef KC_API_H
#define KC_API_H

#include "api/api_reply.h"
#include "api/api_state.h"
#include "http.h"

/*
 * api_http_handler - the handler cmd_serve.c gives http_server_start():
 * paths under /api go to api_handle() with the thread's struct api,
 * errors the server answers itself are api_error()s. sh is borrowed and
 * must outlive the server.
 */
struct http_handler api_http_handler(struct api_shared *sh);

/*
 * api_handle - answer one request whose path starts with /api/: find the
 * route (404 or 405 with a JSON error when none), check the bearer token
 * for routes that change state (401 when missing or wrong), call the
 * handler. Always fills resp. Needs no network: a caller with a struct
 * api (api_thread_init) may pass a req with conn NULL and its query and
 * headers as lists (http.h), as the unit tests do.
 */
void api_handle(struct api *api, struct http_req *req, struct http_resp *resp);

#endif
