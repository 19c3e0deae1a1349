/* fleet_cg.c - the server's side of fleet batches without a socket, for an
 * instruction count of what a batch costs the server:
 *
 *   valgrind --tool=callgrind --toggle-collect=api_handle \
 *       build/bench/fleet_cg /tmp/cg.db 200 100
 *
 * (issue 19 item 3: 20,000 records, about 51,000 instructions a record
 * in the first envelope form, 35,000 in form 2). BATCHES gzip'd batches of
 * RECORDS records of one host, posted through api_handle() into a store
 * at DB, as fuzz_fleet.c does. FLEET_FORM=line sends the first envelope
 * form (each record as a string), else form 2 (each record an object).
 *
 *   fleet_cg DB BATCHES RECORDS     (DB: a new store's path)
 *
 * Exit 1 when an answer is not 200 or the store does not hold every
 * record once.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "store/db.h"
#include "store/db_tokens.h"
#include "store/db_internal.h"
#include "store/db_fleet.h"
#include "gzip.h"
#include "http.h"
#include "api/token.h"
#include "util.h"

static void batch(struct buf *out, int b, int records, int form)
{
	buf_reset(out);
	for (int i = 0; i < records; i++) {
		int64_t seq = (int64_t)b * records + i + 1;
		if (form == 2)
			buf_printf(out, "{\"seq\":%" PRId64 ",\"run\":\"passive:b\",\"record\":"
				   "{\"type\":\"sample\",\"t\":%" PRId64 ".0,\"metric\":\"dirty_pages\","
				   "\"value\":%d}}\n", seq, seq, (int)((seq * 7919) % 100000));
		else
			buf_printf(out, "{\"seq\":%" PRId64 ",\"run\":\"passive:b\",\"line\":"
				   "\"{\\\"type\\\":\\\"sample\\\",\\\"t\\\":%" PRId64 ".0,"
				   "\\\"metric\\\":\\\"dirty_pages\\\",\\\"value\\\":%d}\"}\n", seq, seq,
				   (int)((seq * 7919) % 100000));
	}
}

int main(int argc, char **argv)
{
	struct api_shared shared = { 0 };
	struct api *api = NULL;
	struct db_host h = { 0 };
	struct buf text = BUF_INIT;
	char hash[TOKEN_HASH_HEX + 1];
	const char *headers[] = { "Authorization", "Bearer cg-agent", "Content-Encoding", "gzip", NULL };
	const char *query[] = { NULL };
	int batches, records, form, bad = 0;
	int64_t stored;

	if (argc != 4) {
		fprintf(stderr, "usage: fleet_cg DB BATCHES RECORDS\n");
		return 2;
	}
	batches = atoi(argv[2]);
	records = atoi(argv[3]);
	form = getenv("FLEET_FORM") && !strcmp(getenv("FLEET_FORM"), "line") ? 1 : 2;
	if (api_shared_init(&shared, argv[1], NULL) || api_thread_init(&shared, (void **)&api, NULL))
		return 1;
	token_hash(hash, "cg-agent");
	if (db_token_add(api->db, "agent:h1", hash, "agent:h1", NULL) ||
	    db_host_register(api->db, &h, "h1", "6.12", "b", "{}", "cg", "agent:h1", NULL))
		return 1;
	db_host_release(&h);
	for (int b = 0; b < batches; b++) {
		struct http_resp resp = { 0 };
		struct buf z = BUF_INIT;
		batch(&text, b, records, form);
		if (gzip_deflate(&z, text.ptr, text.len, NULL))
			return 1;
		struct http_req req = { .method = "POST", .path = "/api/v1/agents/h1/records",
					.body = z.ptr, .body_len = z.len, .query = query,
					.headers = headers };
		api_handle(api, &req, &resp);
		if (resp.status != 200 && !bad++)
			fprintf(stderr, "fleet_cg: batch %d: %d %s\n", b, resp.status, buf_str(&resp.body));
		http_resp_release(&resp);
		buf_release(&z);
	}
	if (db_query_int64(api->db, &stored, "SELECT count(*) FROM samples", NULL, NULL))
		return 1;
	printf("form=%d batches=%d records=%d stored=%" PRId64 "\n", form, batches, records, stored);
	buf_release(&text);
	api_thread_free(&shared, api);
	api_shared_release(&shared);
	return bad || stored != (int64_t)batches * records;
}
