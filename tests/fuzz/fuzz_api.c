/* fuzz_api.c - libFuzzer target: one HTTP request, as bytes, through the
 * API's router and handlers (api_handle(), api.h) against a real
 * in-memory store, with no socket: the way http.c hands a request over.
 *
 * Input: "METHOD PATH[?QUERY]\n", then up to 8 "Name: value\n" header
 * lines, an empty line, then the body (the rest). The store holds a job
 * with runs, a registered host 'h1', a token 'ci' (secret "fuzz-ci",
 * scope admin) and an agent token 'agent:h1' (secret "fuzz-agent", scope
 * agent:h1), so a corpus that sends
 * "Authorization: Bearer fuzz-ci" reaches the routes that change state.
 *
 * Any input must give an answer: status 100-599, a content type, a JSON
 * body when the content type says JSON, and no crash, leak or sanitizer
 * report. The store is rebuilt every RESET inputs so every input costs
 * about the same. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "store/db.h"
#include "store/db_runs.h"
#include "store/db_tokens.h"
#include "store/db_fleet.h"
#include "http.h"
#include "guest/ingest.h"
#include "api/token.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RESET 256
#define MAX_HDR 8
#define MAX_QUERY 8

#define EXPECT(cond) do { if (!(cond)) { fprintf(stderr, "fuzz_api: broken: %s\n", #cond); abort(); } } while (0)

static struct api_shared shared;
static struct api *api;

static void add_token(struct db *db, const char *name, const char *secret, const char *scopes)
{
	char hash[TOKEN_HASH_HEX + 1];

	token_hash(hash, secret);
	EXPECT(db_token_add(db, name, hash, scopes, NULL) == 0);
}

/* A fresh store: one compare job with two finished runs, host h1, tokens. */
static void setup(void)
{
	static const char rec[] =
		"{\"type\":\"hello\",\"agent_version\":\"f\",\"kernel_release\":\"6.12\",\"host\":\"h\"}\n"
		"{\"type\":\"sample\",\"t\":1.0,\"metric\":\"lag_s\",\"value\":0.5}\n"
		"{\"type\":\"probe\",\"t\":1.0,\"name\":\"p\",\"key\":\"-2\",\"count\":3}\n"
		"{\"type\":\"done\",\"status\":\"ok\"}\n";
	struct db_host h = { 0 };
	int64_t job, variant, run;
	struct ingest *in;

	if (api)
		api_thread_free(&shared, api);
	api_shared_release(&shared);
	EXPECT(api_shared_init(&shared, ":memory:", NULL) == 0);
	EXPECT(api_thread_init(&shared, (void **)&api, NULL) == 0);
	EXPECT(db_job_create(api->db, &job, "fuzzjob", "compare", "{\"job\":{\"name\":\"fuzzjob\"}}", NULL) == 0);
	EXPECT(db_variant_get(api->db, &variant, job, "base", NULL) == 0);
	for (int i = 0; i < 2; i++) {
		EXPECT(db_run_create(api->db, &run, job, variant, "", i + 1, NULL, NULL, NULL) == 0);
		EXPECT(ingest_open(&in, api->db, run, NULL) == 0);
		EXPECT(ingest_feed(in, rec, sizeof(rec) - 1, NULL) == 0);
		EXPECT(ingest_close(in, NULL, NULL) == 0);
	}
	add_token(api->db, "ci", "fuzz-ci", "admin");
	add_token(api->db, "agent:h1", "fuzz-agent", "agent:h1");
	EXPECT(db_host_register(api->db, &h, "h1", "6.12", "boot-1", "{}", "f", "ci", NULL) == 0);
	db_host_release(&h);
}

/* Split "k=v&k2=v2" (in place) into list (key, value, …, NULL). */
static void split_query(char *q, const char **list)
{
	int n = 0;

	while (q && *q && n < 2 * MAX_QUERY) {
		char *amp = strchr(q, '&'), *eq;

		if (amp)
			*amp = '\0';
		eq = strchr(q, '=');
		if (eq)
			*eq = '\0';
		list[n++] = q;
		list[n++] = eq ? eq + 1 : "";
		q = amp ? amp + 1 : NULL;
	}
	list[n] = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned inputs;
	const char *query[2 * MAX_QUERY + 1] = { NULL }, *headers[2 * MAX_HDR + 1] = { NULL };
	struct http_req req = { .method = "", .path = "", .body = "" };
	struct http_resp resp = { 0 };
	char *copy = malloc(size + 1), *p, *end, *nl, *sp, *q;
	int nh = 0;

	if (!api || ++inputs % RESET == 0)
		setup();
	memcpy(copy, data, size);
	copy[size] = '\0';
	end = copy + size;
	/* request line */
	p = copy;
	nl = memchr(p, '\n', (size_t)(end - p));
	if (nl)
		*nl = '\0';
	sp = strchr(p, ' ');
	if (sp) {
		*sp = '\0';
		req.method = p;
		req.path = sp + 1;
	} else {
		req.method = p;
	}
	if ((q = strchr(req.path, '?'))) {
		*q = '\0';
		split_query(q + 1, query);
	}
	p = nl ? nl + 1 : end;
	/* headers up to an empty line */
	while (p < end && nh < MAX_HDR) {
		char *colon;

		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl)
			*nl = '\0';
		if (!*p) {
			p = nl ? nl + 1 : end;
			break;
		}
		colon = strchr(p, ':');
		if (colon) {
			*colon = '\0';
			headers[2 * nh] = p;
			headers[2 * nh + 1] = colon[1] == ' ' ? colon + 2 : colon + 1;
			nh++;
		}
		p = nl ? nl + 1 : end;
	}
	headers[2 * nh] = NULL;
	req.body = p;
	req.body_len = (size_t)(end - p);
	req.query = query;
	req.headers = headers;

	/* http.c only hands over /api paths and bodies it accepted */
	if (!strncmp(req.path, "/api/", 5) && req.body_len <= HTTP_MAX_BODY_BYTES) {
		api_handle(api, &req, &resp);
		EXPECT(resp.status >= 100 && resp.status <= 599);
		EXPECT(resp.content_type != NULL);
		if (!strncmp(resp.content_type, "application/json", 16) && strcmp(req.method, "HEAD")) {
			json_t *v = json_loadb(resp.body.ptr ? resp.body.ptr : "", resp.body.len, 0, NULL);
			if (!v)
				fprintf(stderr, "fuzz_api: %d answer is not JSON: %.*s\n", resp.status,
					(int)resp.body.len, resp.body.ptr ? resp.body.ptr : "");
			EXPECT(v != NULL);
			json_decref(v);
		}
		http_resp_release(&resp);
	}
	free(copy);
	return 0;
}
