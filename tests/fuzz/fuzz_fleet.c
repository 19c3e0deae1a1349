/* fuzz_fleet.c - libFuzzer target: an agent's record batch (the envelope
 * of api_fleet.c: one {"seq","run","record"} object a line, each "record"
 * a record of the agent's stream as an object, or the first form's
 * {"seq","run","line"} with the record as a string; the corpus has both,
 * obj-* the second form) posted to POST /api/v1/agents/h1/records
 * through api_handle() against a real in-memory store, no socket.
 *
 * Each input is posted three ways: gzip'd (zlib here, the agent's way),
 * then as it is (Content-Encoding: identity), then its raw bytes claiming
 * to be gzip (gzip.c's inflate on junk, truncated and bomb-shaped data).
 * Must hold: no crash, leak or sanitizer report; every answer is 200,
 * 400, 409 or 413 with a JSON body; the gzip'd and the plain post of the
 * same batch get the same status (the second one's records are all
 * duplicates then, so a 200 stays a 200); gzip_inflate() gives back
 * exactly the bytes that were compressed. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "api/api.h"
#include "store/db.h"
#include "store/db_tokens.h"
#include "store/db_fleet.h"
#include "gzip.h"
#include "http.h"
#include "api/token.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RESET 256
#define EXPECT(cond) do { if (!(cond)) { fprintf(stderr, "fuzz_fleet: broken: %s\n", #cond); abort(); } } while (0)

static struct api_shared shared;
static struct api *api;

static void setup(void)
{
	char hash[TOKEN_HASH_HEX + 1];
	struct db_host h = { 0 };

	if (api)
		api_thread_free(&shared, api);
	api_shared_release(&shared);
	EXPECT(api_shared_init(&shared, ":memory:", NULL) == 0);
	EXPECT(api_thread_init(&shared, (void **)&api, NULL) == 0);
	token_hash(hash, "fuzz-agent");
	EXPECT(db_token_add(api->db, "agent:h1", hash, "agent:h1", NULL) == 0);
	EXPECT(db_host_register(api->db, &h, "h1", "6.12", "boot-1", "{}", "f", "agent:h1", NULL) == 0);
	db_host_release(&h);
}

/* gzip (RFC 1952) of data into a malloc'd buffer; its length in *out_len. */
static unsigned char *gzip(const uint8_t *data, size_t size, size_t *out_len)
{
	z_stream z = { 0 };
	size_t cap = compressBound(size) + 64;
	unsigned char *out = malloc(cap);

	EXPECT(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
	z.next_in = (unsigned char *)data;
	z.avail_in = (uInt)size;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	EXPECT(deflate(&z, Z_FINISH) == Z_STREAM_END);
	*out_len = z.total_out;
	deflateEnd(&z);
	return out;
}

/* Post body with Content-Encoding enc; the answer's status. */
static int post(const void *body, size_t len, const char *enc)
{
	const char *headers[] = { "Authorization", "Bearer fuzz-agent", "Content-Encoding", enc, NULL };
	const char *query[] = { NULL };
	char *copy = malloc(len + 1);
	struct http_req req = { .method = "POST", .path = "/api/v1/agents/h1/records",
				.body = copy, .body_len = len, .query = query, .headers = headers };
	struct http_resp resp = { 0 };
	json_t *v;
	int status;

	memcpy(copy, body, len);
	copy[len] = '\0';
	api_handle(api, &req, &resp);
	status = resp.status;
	v = json_loadb(resp.body.ptr ? resp.body.ptr : "", resp.body.len, 0, NULL);
	if (!v || (status != 200 && status != 400 && status != 409 && status != 413))
		fprintf(stderr, "fuzz_fleet: %s post answered %d: %.*s\n", enc, status,
			(int)resp.body.len, resp.body.ptr ? resp.body.ptr : "");
	EXPECT(v != NULL);
	EXPECT(status == 200 || status == 400 || status == 409 || status == 413);
	json_decref(v);
	http_resp_release(&resp);
	free(copy);
	return status;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned inputs;
	struct buf back = BUF_INIT;
	unsigned char *z;
	size_t zlen;
	int s1, s2;

	if (size > HTTP_MAX_BODY_BYTES)
		return 0;
	if (!api || ++inputs % RESET == 0)
		setup();
	z = gzip(data, size, &zlen);
	EXPECT(gzip_inflate(&back, z, zlen, size + 1, NULL) == 0);
	EXPECT(back.len == size && (!size || !memcmp(back.ptr, data, size)));
	buf_release(&back);
	s1 = post(z, zlen, "gzip");
	s2 = post(data, size, "identity");
	if (s1 != s2)
		fprintf(stderr, "fuzz_fleet: gzip'd batch answered %d, the same batch plain %d\n", s1, s2);
	EXPECT(s1 == s2);
	post(data, size, "gzip");
	free(z);
	return 0;
}
