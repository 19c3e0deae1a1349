/* test_fleet.c - the fleet endpoints end to end: kcanary's server on
 * 127.0.0.1 port 0 in this process, requests through libcurl as an agent
 * sends them (gzip'd batches of {"seq","run","line"} envelopes). Wrong and
 * agent-bound tokens, duplicates, a gap in sequence numbers, malformed
 * records and envelopes, a 100 MB body, a gzip bomb: each gets its status
 * and a message, and nothing already stored changes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <inttypes.h>
#include <curl/curl.h>
#include <jansson.h>
#include <zlib.h>

#include "store/db.h"
#include "store/db_tokens.h"
#include "store/db_internal.h"
#include "api/api.h"
#include "http.h"
#include "api/token.h"
#include "util.h"
#include "testutil.h"

#define SECRET "kct_fleet-test-secret"
#define SECRET_H2 "kct_fleet-test-secret-for-h2-only"

struct fx {
	struct tmpdir td;
	char *db_path;
	struct api_shared api;     /* the server's handler: the API */
	struct http_server *srv;
	char base[64];
};

static int fx_setup(void **state)
{
	struct tmpdir *td;
	struct fx *f;
	struct db *db = NULL;
	char hash[TOKEN_HASH_HEX + 1];
	struct http_opts opts = { .listen = "127.0.0.1:0" };

	if (tmpdir_setup((void **)&td))
		return -1;
	f = calloc(1, sizeof(*f));
	f->td = *td;
	free(td);
	f->db_path = xasprintf("%s/kc.db", f->td.path);
	assert_int_equal(db_open(&db, f->db_path, NULL), 0);
	token_hash(hash, SECRET);
	assert_int_equal(db_token_add(db, "fleet", hash, NULL, NULL), 0);
	token_hash(hash, SECRET_H2);
	assert_int_equal(db_token_add(db, "agent:h2", hash, NULL, NULL), 0);
	db_close(db);
	assert_int_equal(api_shared_init(&f->api, f->db_path, NULL), 0);
	opts.handler = api_http_handler(&f->api);
	assert_int_equal(http_server_start(&f->srv, &opts, NULL), 0);
	snprintf(f->base, sizeof(f->base), "http://127.0.0.1:%u", http_server_port(f->srv));
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	struct tmpdir *td = malloc(sizeof(*td));
	void *p = td;

	http_server_stop(f->srv);
	api_shared_release(&f->api);
	free(f->db_path);
	*td = f->td;
	free(f);
	return tmpdir_teardown(&p);
}

struct reply {
	long status;
	struct buf body;
	json_t *json;
};

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	buf_append(ud, p, size * n);
	return size * n;
}

static size_t on_read(char *p, size_t size, size_t n, void *ud)
{
	size_t *left = ud, k = size * n < *left ? size * n : *left;

	memset(p, 'x', k);
	*left -= k;
	return k;
}

static void gz(struct buf *out, const char *text, size_t len)
{
	z_stream zs;
	unsigned char chunk[65536];
	int zr;

	memset(&zs, 0, sizeof(zs));
	assert_int_equal(deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_in = (unsigned char *)text;
	zs.avail_in = (uInt)len;
	do {
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		zr = deflate(&zs, Z_FINISH);
		assert_true(zr == Z_OK || zr == Z_STREAM_END);
		buf_append(out, chunk, sizeof(chunk) - zs.avail_out);
	} while (zr != Z_STREAM_END);
	deflateEnd(&zs);
}

/* POST body (len bytes; gzip'd when gzip) to path with token (may be NULL).
 * big > 0 sends that many bytes of 'x' with a Content-Length instead. */
static void post(struct reply *out, struct fx *f, const char *path, const char *token,
		 const char *body, bool gzip, size_t big)
{
	CURL *c = curl_easy_init();
	struct curl_slist *hdrs = NULL;
	struct buf z = BUF_INIT;
	char *url = xasprintf("%s%s", f->base, path), *h;
	CURLcode rc;

	memset(out, 0, sizeof(*out));
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &out->body);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	if (token) {
		h = xasprintf("Authorization: Bearer %s", token);
		hdrs = curl_slist_append(hdrs, h);
		free(h);
	}
	if (big) {
		curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(c, CURLOPT_READDATA, &big);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)big);
		hdrs = curl_slist_append(hdrs, "Content-Encoding: gzip");
		hdrs = curl_slist_append(hdrs, "Expect: 100-continue");
	} else if (gzip) {
		gz(&z, body, strlen(body));
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, z.ptr);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)z.len);
		hdrs = curl_slist_append(hdrs, "Content-Encoding: gzip");
		hdrs = curl_slist_append(hdrs, "Expect:");
	} else {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
		hdrs = curl_slist_append(hdrs, "Expect:");
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK)
		fail_msg("POST %s: %s", path, curl_easy_strerror(rc));
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
	out->json = json_loads(buf_str(&out->body), 0, NULL);
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(c);
	buf_release(&z);
	free(url);
}

static void reply_release(struct reply *r)
{
	buf_release(&r->body);
	json_decref(r->json);
}

static void expect(struct reply *r, long status, const char *needle)
{
	if (r->status != status)
		fail_msg("status %ld, want %ld: %s", r->status, status, buf_str(&r->body));
	if (needle) {
		const char *e = json_string_value(json_object_get(r->json, "error"));
		if (!e || !strstr(e, needle))
			fail_msg("error '%s' does not mention '%s'", e ? e : buf_str(&r->body), needle);
	}
}

static int64_t jint(struct reply *r, const char *key)
{
	json_t *v = json_object_get(r->json, key);
	if (!json_is_integer(v))
		fail_msg("no integer '%s' in %s", key, buf_str(&r->body));
	return json_integer_value(v);
}

/* What must not change when a request is refused. */
struct snap {
	int64_t samples, raw, runs, hosts, next_seq, records, dups, run_records;
};

static void snap(struct fx *f, struct snap *s)
{
	struct db *db = NULL;

	assert_int_equal(db_open(&db, f->db_path, NULL), 0);
	memset(s, 0, sizeof(*s));
	assert_int_equal(db_query_int64(db, &s->samples, "SELECT count(*) FROM samples", NULL, NULL), 0);
	assert_int_equal(db_query_int64(db, &s->raw, "SELECT count(*) FROM raw_lines", NULL, NULL), 0);
	assert_int_equal(db_query_int64(db, &s->runs, "SELECT count(*) FROM runs", NULL, NULL), 0);
	assert_int_equal(db_query_int64(db, &s->hosts, "SELECT count(*) FROM hosts", NULL, NULL), 0);
	assert_int_equal(db_query_int64(db, &s->next_seq, "SELECT coalesce(sum(next_seq), 0) FROM hosts", NULL, NULL), 0);
	assert_int_equal(db_query_int64(db, &s->records, "SELECT coalesce(sum(records), 0) FROM hosts", NULL, NULL), 0);
	assert_int_equal(db_query_int64(db, &s->dups, "SELECT coalesce(sum(duplicates), 0) FROM hosts", NULL, NULL), 0);
	assert_int_equal(db_query_int64(db, &s->run_records,
					"SELECT coalesce(sum(records + bad_lines), 0) FROM runs", NULL, NULL), 0);
	db_close(db);
}

static void assert_unchanged(struct fx *f, const struct snap *before)
{
	struct snap now;

	snap(f, &now);
	assert_memory_equal(&now, before, sizeof(now));
}

/* Envelopes seq from..to of stream run: a hello first when from is 1, then
 * samples of metric x_s with value = seq. */
static char *batch(int from, int to, const char *run)
{
	struct buf b = BUF_INIT;

	for (int s = from; s <= to; s++) {
		if (s == 1)
			buf_printf(&b, "{\"seq\":1,\"run\":\"%s\",\"line\":\"{\\\"type\\\":\\\"hello\\\","
				   "\\\"workload\\\":\\\"command\\\",\\\"kernel_release\\\":\\\"9.9.9\\\","
				   "\\\"host\\\":\\\"uname-name\\\",\\\"params\\\":{\\\"cmd\\\":\\\"x\\\"}}\"}\n", run);
		else
			buf_printf(&b, "{\"seq\":%d,\"run\":\"%s\",\"line\":\"{\\\"type\\\":\\\"sample\\\","
				   "\\\"t\\\":%d.0,\\\"metric\\\":\\\"x_s\\\",\\\"value\\\":%d}\"}\n", s, run, s, s);
	}
	return buf_detach(&b);
}

static void do_register(struct fx *f, const char *host, const char *token)
{
	struct reply r;
	char *body = xasprintf("{\"host\":\"%s\",\"kernel_release\":\"6.12.117\",\"boot_id\":\"b\","
			       "\"labels\":{\"cohort\":\"canary\"},\"agent_version\":\"t\"}", host);

	post(&r, f, "/api/v1/agents/register", token, body, false, 0);
	expect(&r, 200, NULL);
	assert_string_equal(json_string_value(json_object_get(r.json, "host")), host);
	reply_release(&r);
	free(body);
}

static void test_tokens(void **state)
{
	struct fx *f = *state;
	struct reply r;
	struct snap s0;
	const char *reg = "{\"host\":\"h1\",\"kernel_release\":\"6.12.117\"}";

	snap(f, &s0);
	post(&r, f, "/api/v1/agents/register", NULL, reg, false, 0);
	expect(&r, 401, "Authorization: Bearer");
	reply_release(&r);
	post(&r, f, "/api/v1/agents/register", "kct_wrong", reg, false, 0);
	expect(&r, 401, "not one of this store's tokens");
	reply_release(&r);
	post(&r, f, "/api/v1/agents/h1/records", "kct_wrong", "", false, 0);
	expect(&r, 401, "token");
	reply_release(&r);
	/* a token bound to h2 cannot act for h1 */
	post(&r, f, "/api/v1/agents/register", SECRET_H2, reg, false, 0);
	expect(&r, 403, "token 'agent:h2' (scopes: agent:h2) may not act for host 'h1'");
	reply_release(&r);
	assert_unchanged(f, &s0);
	do_register(f, "h2", SECRET_H2);
	/* records for a host never registered */
	char *b = batch(1, 2, "wl:1");
	post(&r, f, "/api/v1/agents/nobody/records", SECRET, b, true, 0);
	expect(&r, 404, "no host 'nobody'");
	reply_release(&r);
	free(b);
	/* bad registrations */
	post(&r, f, "/api/v1/agents/register", SECRET, "{\"host\":\"a b\",\"kernel_release\":\"1\"}", false, 0);
	expect(&r, 400, "\"host\"");
	reply_release(&r);
	post(&r, f, "/api/v1/agents/register", SECRET,
	     "{\"host\":\"h3\",\"kernel_release\":\"1\",\"labels\":{\"kernel\":\"x\"}}", false, 0);
	expect(&r, 400, "label 'kernel'");
	reply_release(&r);
}

static void test_batches(void **state)
{
	struct fx *f = *state;
	struct reply r;
	struct snap s0, s1;
	char *b;

	do_register(f, "h1", SECRET);

	/* seq 1..5: stored */
	b = batch(1, 5, "wl:100");
	post(&r, f, "/api/v1/agents/h1/records", SECRET, b, true, 0);
	expect(&r, 200, NULL);
	assert_int_equal(jint(&r, "stored"), 5);
	assert_int_equal(jint(&r, "duplicates"), 0);
	assert_int_equal(jint(&r, "acked_seq"), 5);
	reply_release(&r);
	snap(f, &s0);
	assert_int_equal(s0.samples, 4);
	assert_int_equal(s0.runs, 1);

	/* the same batch again (the answer was lost): all duplicates */
	post(&r, f, "/api/v1/agents/h1/records", SECRET, b, true, 0);
	expect(&r, 200, NULL);
	assert_int_equal(jint(&r, "stored"), 0);
	assert_int_equal(jint(&r, "duplicates"), 5);
	assert_int_equal(jint(&r, "acked_seq"), 5);
	reply_release(&r);
	free(b);
	snap(f, &s1);
	assert_int_equal(s1.samples, s0.samples);
	assert_int_equal(s1.dups, s0.dups + 5);

	/* a gap: 409 with the expected seq, nothing stored */
	snap(f, &s0);
	b = batch(9, 12, "wl:100");
	post(&r, f, "/api/v1/agents/h1/records", SECRET, b, true, 0);
	expect(&r, 409, "sequence gap");
	assert_int_equal(jint(&r, "expected_seq"), 6);
	reply_release(&r);
	free(b);
	assert_unchanged(f, &s0);

	/* a gap inside a batch: a malformed envelope, 400, nothing stored */
	b = xasprintf("%s%s", "{\"seq\":6,\"run\":\"wl:100\",\"line\":\"{}\"}\n",
		      "{\"seq\":8,\"run\":\"wl:100\",\"line\":\"{}\"}\n");
	post(&r, f, "/api/v1/agents/h1/records", SECRET, b, true, 0);
	expect(&r, 400, "consecutive sequence numbers");
	reply_release(&r);
	free(b);
	assert_unchanged(f, &s0);

	/* an envelope that is not JSON after a good one: 400, neither stored */
	b = xstrdup("{\"seq\":6,\"run\":\"wl:100\",\"line\":\"{}\"}\nnot an envelope\n");
	post(&r, f, "/api/v1/agents/h1/records", SECRET, b, true, 0);
	expect(&r, 400, "batch line 2 is not JSON");
	reply_release(&r);
	free(b);
	/* an envelope without its stream key (sent without gzip: identity) */
	post(&r, f, "/api/v1/agents/h1/records", SECRET, "{\"seq\":6,\"line\":\"{}\"}", false, 0);
	expect(&r, 400, "\"run\" must be a stream key");
	reply_release(&r);
	assert_unchanged(f, &s0);

	/* a malformed record in a good envelope: stored raw, like ingest does */
	b = xstrdup("{\"seq\":6,\"run\":\"wl:100\",\"line\":\"this is not a record\"}\n"
		    "{\"seq\":7,\"run\":\"wl:100\",\"line\":\"{\\\"type\\\":\\\"sample\\\",\\\"t\\\":1}\"}\n");
	post(&r, f, "/api/v1/agents/h1/records", SECRET, b, true, 0);
	expect(&r, 200, NULL);
	assert_int_equal(jint(&r, "stored"), 2);
	assert_int_equal(jint(&r, "bad_lines"), 2);
	assert_int_equal(jint(&r, "acked_seq"), 7);
	reply_release(&r);
	free(b);
	snap(f, &s1);
	assert_int_equal(s1.raw, s0.raw + 2);
	assert_int_equal(s1.samples, s0.samples);

	/* overlap: 5..9 when 1..7 are stored: 3 duplicates, 2 new */
	b = batch(5, 9, "wl:100");
	post(&r, f, "/api/v1/agents/h1/records", SECRET, b, true, 0);
	expect(&r, 200, NULL);
	assert_int_equal(jint(&r, "stored"), 2);
	assert_int_equal(jint(&r, "duplicates"), 3);
	assert_int_equal(jint(&r, "acked_seq"), 9);
	reply_release(&r);
	free(b);

	/* a 100 MB body: 413 before it is read, with a message */
	snap(f, &s0);
	post(&r, f, "/api/v1/agents/h1/records", SECRET, NULL, false, (size_t)100 << 20);
	expect(&r, 413, "larger than the limit");
	reply_release(&r);
	/* a gzip bomb: 100 KiB inflating past the 16 MiB cap */
	char *zeros = xcalloc(1, (17u << 20) + 1);
	memset(zeros, '\n', 17u << 20);
	post(&r, f, "/api/v1/agents/h1/records", SECRET, zeros, true, 0);
	expect(&r, 413, "inflates to more than");
	reply_release(&r);
	free(zeros);
	assert_unchanged(f, &s0);

	/* the run: host and kernel from the registration, labels and knobs
	 * in params, the stored counters */
	struct db *db = NULL;
	int64_t v;
	assert_int_equal(db_open(&db, f->db_path, NULL), 0);
	assert_int_equal(db_query_int64(db, &v, "SELECT count(*) FROM runs WHERE host = 'h1' AND "
					"kernel_release = '6.12.117' AND accel = 'host' AND cell = "
					"'workload=command' AND json_extract(params_json, '$.cohort') = 'canary'"
					" AND json_extract(params_json, '$.cmd') = 'x' AND status = 'running'"
					" AND records + bad_lines = 9", NULL, NULL), 0);
	assert_int_equal(v, 1);
	assert_int_equal(db_query_int64(db, &v, "SELECT next_seq FROM hosts WHERE name = ?", "h1", NULL), 0);
	assert_int_equal(v, 10);
	db_close(db);

	/* done ends the run */
	b = xstrdup("{\"seq\":10,\"run\":\"wl:100\",\"line\":\"{\\\"type\\\":\\\"done\\\",\\\"status\\\":\\\"ok\\\"}\"}\n");
	post(&r, f, "/api/v1/agents/h1/records", SECRET, b, false, 0);
	expect(&r, 200, NULL);
	reply_release(&r);
	free(b);
	assert_int_equal(db_open(&db, f->db_path, NULL), 0);
	assert_int_equal(db_query_int64(db, &v, "SELECT count(*) FROM runs WHERE status = 'ok' AND "
					"finished_at IS NOT NULL", NULL, NULL), 0);
	assert_int_equal(v, 1);
	db_close(db);

	/* registering again keeps the sequence state */
	post(&r, f, "/api/v1/agents/register", SECRET,
	     "{\"host\":\"h1\",\"kernel_release\":\"6.12.118\"}", false, 0);
	expect(&r, 200, NULL);
	assert_int_equal(jint(&r, "next_seq"), 11);
	reply_release(&r);

	/* heartbeat and the hosts list */
	post(&r, f, "/api/v1/agents/h1/heartbeat", SECRET, "{\"pending\":0}", false, 0);
	expect(&r, 200, NULL);
	assert_int_equal(jint(&r, "next_seq"), 11);
	reply_release(&r);
	post(&r, f, "/api/v1/agents/h1/heartbeat", SECRET, "[1]", false, 0);
	expect(&r, 400, "not a JSON object");
	reply_release(&r);
}

/* GET path; the body in out (caller releases). */
static void get(struct buf *out, struct fx *f, const char *path)
{
	CURL *c = curl_easy_init();
	char *url = xasprintf("%s%s", f->base, path);

	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	if (curl_easy_perform(c) != CURLE_OK)
		fail_msg("GET %s failed", path);
	curl_easy_cleanup(c);
	free(url);
}

static int64_t count(struct fx *f, const char *sql)
{
	struct db *db = NULL;
	int64_t n = -1;

	assert_int_equal(db_open(&db, f->db_path, NULL), 0);
	assert_int_equal(db_query_int64(db, &n, sql, NULL, NULL), 0);
	db_close(db);
	return n;
}

/* Envelope form 2 (docs/api.md, "Batches"): each record an object in the
 * envelope, parsed once; the first form (a string) in the same batch
 * still works. Values arrive and are answered exactly: 2435016766 and
 * 12345678901 stay themselves in the store and in GET .../samples (10
 * digits made the latter 1.23456789e10). A form 2 record that breaks the
 * record contract is kept raw as its JSON text; a "record" that is not an
 * object, or one beside a "line", is a malformed envelope (400, nothing
 * stored). The server before form 2 answered 400 to all of it. */
static void test_record_objects(void **state)
{
	struct fx *f = *state;
	struct reply r;
	struct snap s0;
	struct buf body = BUF_INIT;
	int64_t run;
	char *path;

	do_register(f, "h1", SECRET);
	post(&r, f, "/api/v1/agents/h1/records", SECRET,
	     "{\"seq\":1,\"run\":\"wl:7\",\"record\":{\"type\":\"hello\",\"workload\":\"command\"}}\n"
	     "{\"seq\":2,\"run\":\"wl:7\",\"record\":{\"type\":\"sample\",\"t\":1.0,\"metric\":\"b\",\"value\":2435016766}}\n"
	     "{\"seq\":3,\"run\":\"wl:7\",\"line\":\"{\\\"type\\\":\\\"sample\\\",\\\"t\\\":2.0,\\\"metric\\\":\\\"b\\\",\\\"value\\\":12345678901}\"}\n"
	     "{\"seq\":4,\"run\":\"wl:7\",\"record\":{\"type\":\"sample\",\"t\":3.0,\"metric\":\"b\",\"value\":0.1}}\n"
	     "{\"seq\":5,\"run\":\"wl:7\",\"record\":{\"type\":\"sample\",\"t\":4.0,\"metric\":\"b\"}}\n"
	     "{\"seq\":6,\"run\":\"wl:7\",\"record\":{\"type\":\"done\",\"status\":\"ok\"}}\n", true, 0);
	expect(&r, 200, NULL);
	assert_int_equal(jint(&r, "stored"), 6);
	assert_int_equal(jint(&r, "bad_lines"), 1);
	assert_int_equal(jint(&r, "acked_seq"), 6);
	reply_release(&r);
	assert_int_equal(count(f, "SELECT count(*) FROM samples WHERE value = 2435016766"), 1);
	assert_int_equal(count(f, "SELECT count(*) FROM samples WHERE value = 12345678901"), 1);
	assert_int_equal(count(f, "SELECT count(*) FROM samples WHERE value = 0.1"), 1);
	assert_int_equal(count(f, "SELECT count(*) FROM raw_lines WHERE text ="
			       " '{\"type\":\"sample\",\"t\":4.0,\"metric\":\"b\"}'"), 1);
	assert_int_equal(count(f, "SELECT count(*) FROM runs WHERE status = 'ok' AND records = 5"
			       " AND bad_lines = 1"), 1);
	run = count(f, "SELECT run_id FROM host_runs WHERE run_key = 'wl:7'");
	path = xasprintf("/api/v1/runs/%" PRId64 "/samples?metric=b", run);
	get(&body, f, path);
	if (!strstr(buf_str(&body), "2435016766") || !strstr(buf_str(&body), "12345678901") ||
	    !strstr(buf_str(&body), "0.1"))
		fail_msg("samples not exact: %s", buf_str(&body));
	buf_release(&body);
	free(path);

	snap(f, &s0);
	post(&r, f, "/api/v1/agents/h1/records", SECRET,
	     "{\"seq\":7,\"run\":\"wl:7\",\"record\":{\"type\":\"done\"}}\n"
	     "{\"seq\":8,\"run\":\"wl:7\",\"record\":\"{}\"}\n", true, 0);
	expect(&r, 400, "batch line 2: \"record\" must be the record as a JSON object");
	reply_release(&r);
	post(&r, f, "/api/v1/agents/h1/records", SECRET,
	     "{\"seq\":7,\"run\":\"wl:7\",\"record\":{},\"line\":\"{}\"}\n", true, 0);
	expect(&r, 400, "without a \"line\" beside it");
	reply_release(&r);
	post(&r, f, "/api/v1/agents/h1/records", SECRET, "{\"seq\":7,\"run\":\"wl:7\"}\n", true, 0);
	expect(&r, 400, "needs \"record\"");
	reply_release(&r);
	assert_unchanged(f, &s0);
}

static void test_hosts_list(void **state)
{
	struct fx *f = *state;
	CURL *c = curl_easy_init();
	struct buf body = BUF_INIT;
	char *url = xasprintf("%s/api/v1/hosts", f->base);
	json_t *j, *h;
	long status;

	do_register(f, "h9", SECRET);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	assert_int_equal(status, 200);
	j = json_loads(buf_str(&body), 0, NULL);
	h = json_array_get(json_object_get(j, "hosts"), 0);
	assert_string_equal(json_string_value(json_object_get(h, "name")), "h9");
	assert_string_equal(json_string_value(json_object_get(json_object_get(h, "labels"), "cohort")),
			    "canary");
	assert_int_equal(json_integer_value(json_object_get(h, "next_seq")), 1);
	assert_string_equal(json_string_value(json_object_get(h, "token")), "fleet");
	json_decref(j);
	buf_release(&body);
	curl_easy_cleanup(c);
	free(url);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tokens, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_batches, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_hosts_list, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_record_objects, fx_setup, fx_teardown),
	};

	curl_global_init(CURL_GLOBAL_DEFAULT);
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return r;
}
