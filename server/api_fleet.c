/* api_fleet.c - the fleet's endpoints (docs/api.md, "Agents"): agents
 * register, send heartbeats and post gzip'd batches of records with
 * per-agent sequence numbers; GET /api/v1/hosts lists the hosts. A batch is
 * stored in one transaction together with the host's new sequence state,
 * so a record is stored exactly once however often the agent resends it
 * (a lost answer, a killed server).
 */
#define LOG_MODULE "fleet"
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api.h"
#include "db.h"
#include "db_fleet.h"
#include "gzip.h"
#include "ingest.h"
#include "log.h"
#include "token.h"
#include "util.h"

/* A batch inflates to at most this many bytes (413 beyond). */
#define FLEET_MAX_BATCH_BYTES (16u << 20)
/* Longest host name and stream key. */
#define FLEET_MAX_NAME 128
/* Tokens named "agent:HOST" may act for HOST only. */

/* Selector keys of `kcanary canary` (db_canary.h) a label would shadow. */
static const char *const reserved_labels[] = {
	"kernel", "variant", "job", "host", "fs", "status", "since", "workload", NULL,
};

static bool name_ok(const char *s, const char *extra)
{
	size_t n = strlen(s);

	if (!n || n > FLEET_MAX_NAME)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.' || (extra && strchr(extra, c))))
			return false;
	}
	return true;
}

/* The token's scopes (token.h) allow acting for host: 0, or -EPERM after 403. */
static int token_allows_host(struct http_resp *resp, const struct http_req *req, const char *host)
{
	if (token_allows(req->scopes, "agent", host))
		return 0;
	api_error(resp, 403, "token '%s' (scopes: %s) may not act for host '%s'", req->token,
		  req->scopes, host);
	return -EPERM;
}

/* The request body as JSON: an object, or NULL after a 400. An empty body
 * is an empty object when empty_ok. */
static json_t *body_object(struct http_resp *resp, const struct http_req *req, bool empty_ok)
{
	json_error_t jerr;
	json_t *o;

	if (!req->body_len && empty_ok)
		return json_object();
	o = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
	if (!o || !json_is_object(o)) {
		if (o)
			api_error(resp, 400, "request body is not a JSON object");
		else
			api_error(resp, 400, "request body is not JSON: %s at line %d column %d",
				  jerr.text, jerr.line, jerr.column);
		json_decref(o);
		return NULL;
	}
	return o;
}

void api_hosts_list(struct api *api, struct http_req *req, struct http_resp *resp)
{
	struct buf err = BUF_INIT;
	json_t *hosts = NULL;
	int r;

	(void)req;
	if ((r = db_hosts_list(api->db, &hosts, &err))) {
		api_db_error(resp, r, "cannot list hosts", &err);
		return;
	}
	api_json(resp, 200, json_pack("{s:o}", "hosts", hosts));
}

void api_agent_register(struct api *api, struct http_req *req, struct http_resp *resp)
{
	struct buf err = BUF_INIT;
	json_t *body = body_object(resp, req, false), *labels, *v;
	const char *host, *kernel, *boot, *version, *k;
	struct db_host h = { 0 };
	char *labels_text = NULL;
	int r;

	if (!body)
		return;
	host = json_string_value(json_object_get(body, "host"));
	kernel = json_string_value(json_object_get(body, "kernel_release"));
	boot = json_string_value(json_object_get(body, "boot_id"));
	version = json_string_value(json_object_get(body, "agent_version"));
	labels = json_object_get(body, "labels");
	if (!host || !name_ok(host, NULL)) {
		api_error(resp, 400, "register: \"host\" must be 1-%d letters, digits, '_', '-' or '.'",
			  FLEET_MAX_NAME);
		goto out;
	}
	if (!kernel || !*kernel || strlen(kernel) > 256) {
		api_error(resp, 400, "register: \"kernel_release\" must be the host's `uname -r`");
		goto out;
	}
	if (labels && !json_is_object(labels)) {
		api_error(resp, 400, "register: \"labels\" must be an object of strings");
		goto out;
	}
	json_object_foreach(labels, k, v) {
		bool reserved = false;
		for (size_t i = 0; reserved_labels[i]; i++)
			reserved |= !strcmp(k, reserved_labels[i]);
		if (!name_ok(k, NULL) || !json_is_string(v) || reserved) {
			api_error(resp, 400, "register: label '%s' %s", k,
				  reserved ? "is a cohort selector of its own (kernel, host, …): choose another name" :
				  !json_is_string(v) ? "must have a string value" :
				  "must be letters, digits, '_', '-' or '.'");
			goto out;
		}
	}
	if (token_allows_host(resp, req, host))
		goto out;
	labels_text = labels ? json_dumps(labels, JSON_COMPACT | JSON_SORT_KEYS) : xstrdup("{}");
	if ((r = db_host_register(api->db, &h, host, kernel, boot, labels_text, version,
				     *req->token ? req->token : NULL, &err))) {
		api_db_error(resp, r, "cannot register the host", &err);
		goto out;
	}
	log_info("host '%s' registered: kernel %s, next seq %" PRId64, host, kernel, h.next_seq);
	api_json(resp, 200, json_pack("{s:s, s:I, s:I, s:I, s:I}", "host", h.name,
				      "next_seq", (json_int_t)h.next_seq,
				      "acked_seq", (json_int_t)(h.next_seq - 1),
				      "records", (json_int_t)h.records,
				      "duplicates", (json_int_t)h.duplicates));
out:
	db_host_release(&h);
	free(labels_text);
	json_decref(body);
	buf_release(&err);
}

void api_agent_heartbeat(struct api *api, struct http_req *req, struct http_resp *resp)
{
	struct buf err = BUF_INIT;
	json_t *body;
	struct db_host h = { 0 };
	char *text = NULL;
	int r;

	if (token_allows_host(resp, req, req->name) || !(body = body_object(resp, req, true)))
		return;
	text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	r = db_host_heartbeat(api->db, req->name, text, &err);
	if (!r)
		r = db_host_get(api->db, &h, req->name, &err);
	if (r == -ENOENT)
		api_error(resp, 404, "no host '%s': register first (POST /api/v1/agents/register)",
			  req->name);
	else if (r)
		api_db_error(resp, r, "cannot store the heartbeat", &err);
	else
		api_json(resp, 200, json_pack("{s:s, s:I, s:I}", "host", h.name,
					      "next_seq", (json_int_t)h.next_seq,
					      "acked_seq", (json_int_t)(h.next_seq - 1)));
	db_host_release(&h);
	free(text);
	buf_release(&err);
}

/* One line of a batch: {"seq": N, "run": "KEY", "line": "RECORD"}. */
struct batch_line {
	int64_t seq;
	const char *run;     /* borrowed from the batch's pool (parse_batch) */
	const char *line;
	size_t len;
};

/* A stream of the batch being stored. */
struct batch_run {
	const char *key;
	int64_t run_id, line_no;
	struct ingest *in;
};

/* Parse the batch envelope: every line an object with an integer seq >= 1
 * (each one more than the one before), a stream key and the record text.
 * The keys and records are copied, NUL-terminated, into *pool (the caller
 * frees it with *out): each line's object is parsed in ingest's scratch
 * arena and dropped at once, since malloc and free of jansson's objects
 * were about a fifth of the server's time per batch (issue 19 item 3).
 * Both copies fit in the line they came from (it holds both quoted),
 * hence a pool of len + 1 bytes. 0, or -EINVAL with msg. */
static int parse_batch(struct batch_line **out, size_t *n, char **pool, const char *text,
		       size_t len, char *msg, size_t msglen)
{
	struct batch_line *v = NULL;
	size_t nv = 0, cap = 0, lineno = 0;
	const char *p = text, *end = text + len;
	char *store = xmalloc(len + 1), *sp = store;
	int r = 0;

	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		json_error_t jerr;
		json_t *o, *seq, *run, *line;

		lineno++;
		if (l && p[l - 1] == '\r')
			l--;
		if (!l) {
			p = nl ? nl + 1 : end;
			continue;
		}
		ingest_scratch_begin();
		o = json_loadb(p, l, JSON_REJECT_DUPLICATES, &jerr);
		seq = json_object_get(o, "seq");
		run = json_object_get(o, "run");
		line = json_object_get(o, "line");
		if (!o) {
			snprintf(msg, msglen, "batch line %zu is not JSON: %s at column %d", lineno,
				 jerr.text, jerr.column);
		} else if (!json_is_integer(seq) || json_integer_value(seq) < 1) {
			snprintf(msg, msglen, "batch line %zu: \"seq\" must be an integer >= 1", lineno);
		} else if (!json_is_string(run) || !name_ok(json_string_value(run), ":")) {
			snprintf(msg, msglen, "batch line %zu: \"run\" must be a stream key of 1-%d letters,"
				 " digits, '_', '-', '.' or ':'", lineno, FLEET_MAX_NAME);
		} else if (!json_is_string(line)) {
			snprintf(msg, msglen, "batch line %zu: \"line\" must be the record as a string",
				 lineno);
		} else if (nv && json_integer_value(seq) != v[nv - 1].seq + 1) {
			snprintf(msg, msglen, "batch line %zu: seq %" JSON_INTEGER_FORMAT " follows %" PRId64
				 ": a batch holds consecutive sequence numbers", lineno,
				 json_integer_value(seq), v[nv - 1].seq);
		} else {
			size_t rl = strlen(json_string_value(run)), ll = json_string_length(line);
			if (nv == cap) {
				cap = cap ? 2 * cap : 128;
				v = xrealloc(v, cap * sizeof(*v));
			}
			v[nv] = (struct batch_line){ .seq = json_integer_value(seq), .run = sp,
						     .line = sp + rl + 1, .len = ll };
			memcpy(sp, json_string_value(run), rl + 1);
			memcpy(sp + rl + 1, json_string_value(line), ll);
			sp[rl + 1 + ll] = '\0';
			sp += rl + ll + 2;
			nv++;
			json_decref(o);
			ingest_scratch_end();
			p = nl ? nl + 1 : end;
			continue;
		}
		json_decref(o);
		ingest_scratch_end();
		r = -EINVAL;
		break;
	}
	if (r) {
		free(v);
		free(store);
		return r;
	}
	*out = v;
	*n = nv;
	*pool = store;
	return 0;
}

/* What a new run of the stream is: the workload and the params of its
 * first record when that is a hello, plus the host's labels. */
static void run_meta(char **workload, char **params, const struct db_host *h,
		     const struct batch_line *bl)
{
	json_t *rec = json_loadb(bl->line, bl->len, 0, NULL);
	json_t *p = json_loads(h->labels_json ? h->labels_json : "{}", 0, NULL);
	const char *w = NULL, *type = json_string_value(json_object_get(rec, "type"));

	if (!json_is_object(p)) {
		json_decref(p);
		p = json_object();
	}
	if (type && !strcmp(type, "hello")) {
		json_t *kn = json_object_get(rec, "params");
		w = json_string_value(json_object_get(rec, "workload"));
		if (json_is_object(kn))
			json_object_update_missing(p, kn);
	}
	if (!w || !name_ok(w, NULL))
		w = !strncmp(bl->run, "passive", 7) ? "passive" : "unknown";
	*workload = xstrdup(w);
	json_object_set_new(p, "workload", json_string(w));
	*params = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(p);
	json_decref(rec);
}

/* reason: one batch is one transaction: the envelope, the host, each stream's ingest and
 * the commit share one rollback path (out:), so they stay in one function. */
void api_agent_records(struct api *api, struct http_req *req, struct http_resp *resp)
{
	struct buf err = BUF_INIT;
	const char *enc = http_header(req, "Content-Encoding");
	struct buf plain = BUF_INIT;
	struct batch_line *lines = NULL;
	char *pool = NULL;
	struct batch_run *runs = NULL;
	size_t nlines = 0, nruns = 0;
	struct db_host h = { 0 };
	char msg[512];
	const char *text = req->body;
	size_t len = req->body_len;
	int64_t stored = 0, dups = 0, bad = 0, next;
	bool in_tx = false, locked = false;
	int r;

	if (token_allows_host(resp, req, req->name))
		return;
	if (enc && !strcasecmp(enc, "gzip")) {
		r = gzip_inflate(&plain, req->body, req->body_len, FLEET_MAX_BATCH_BYTES, &err);
		if (r == -EFBIG) {
			api_error(resp, 413, "record batch %s (limit %u bytes inflated)", buf_str(&err),
				  FLEET_MAX_BATCH_BYTES);
			goto out;
		}
		if (r) {
			api_error(resp, 400, "record batch: %s", buf_str(&err));
			goto out;
		}
		text = buf_str(&plain);
		len = plain.len;
	} else if (enc && strcasecmp(enc, "identity")) {
		api_error(resp, 400, "Content-Encoding '%s' is not supported: send gzip or identity", enc);
		goto out;
	}
	if (parse_batch(&lines, &nlines, &pool, text, len, msg, sizeof(msg))) {
		api_error(resp, 400, "%s; nothing of this batch was stored", msg);
		goto out;
	}

	/* inflate and envelope above run in parallel; the store, one at a time */
	if (api->shared) {
		pthread_mutex_lock(&api->shared->fleet_write);
		locked = true;
	}
	if ((r = db_begin(api->db, &err))) {
		api_db_error(resp, r, "cannot start storing the batch", &err);
		goto out;
	}
	in_tx = true;
	r = db_host_get(api->db, &h, req->name, &err);
	if (r == -ENOENT) {
		api_error(resp, 404, "no host '%s': register first (POST /api/v1/agents/register)",
			  req->name);
		goto out;
	}
	if (r) {
		api_db_error(resp, r, "cannot read the host", &err);
		goto out;
	}
	if (nlines && lines[0].seq > h.next_seq) {
		char gap[256];
		snprintf(gap, sizeof(gap), "sequence gap: the next record of host '%s' is seq %" PRId64
			 ", this batch starts at %" PRId64 "; nothing of it was stored (resend from %"
			 PRId64 ")", h.name, h.next_seq, lines[0].seq, h.next_seq);
		json_t *e = json_pack("{s:s, s:i, s:I, s:I}", "error", gap, "status", 409,
				      "expected_seq", (json_int_t)h.next_seq,
				      "acked_seq", (json_int_t)(h.next_seq - 1));
		api_json(resp, 409, e);
		goto out;
	}
	next = h.next_seq;
	for (size_t i = 0; i < nlines; i++) {
		struct batch_line *bl = &lines[i];
		struct batch_run *br = NULL;

		if (bl->seq < next) {
			dups++;
			continue;
		}
		for (size_t k = 0; k < nruns && !br; k++)
			if (!strcmp(runs[k].key, bl->run))
				br = &runs[k];
		if (!br) {
			runs = xrealloc(runs, (nruns + 1) * sizeof(*runs));
			br = &runs[nruns++];
			memset(br, 0, sizeof(*br));
			br->key = bl->run;
			r = db_host_run_find(api->db, &br->run_id, &br->line_no, h.id, bl->run, &err);
			if (r == -ENOENT) {
				char *w = NULL, *params = NULL;
				run_meta(&w, &params, &h, bl);
				r = db_host_run_create(api->db, &br->run_id, &h, bl->run, w, params, &err);
				free(w);
				free(params);
			}
			if (!r)
				r = ingest_open_at(&br->in, api->db, br->run_id, br->line_no, &err);
			if (r) {
				api_db_error(resp, r, "cannot find the run of the stream", &err);
				goto out;
			}
		}
		if ((r = ingest_line(br->in, bl->line, bl->len, &err))) {
			api_db_error(resp, r, "cannot store a record", &err);
			goto out;
		}
		next = bl->seq + 1;
		stored++;
	}
	for (size_t k = 0; k < nruns; k++) {
		struct ingest_stats st;
		const char *status = NULL;

		r = ingest_detach(runs[k].in, &st, &err);
		runs[k].in = NULL;
		if (!r) {
			if (st.saw_error)
				status = "failed";
			else if (st.saw_done)
				status = "ok";
			bad += st.bad_lines;
			r = db_host_run_update(api->db, &h, runs[k].key, runs[k].run_id,
					       runs[k].line_no + st.lines, st.records, st.bad_lines,
					       status, st.saw_error ? st.error : NULL, &err);
		}
		if (r) {
			api_db_error(resp, r, "cannot store the batch", &err);
			goto out;
		}
	}
	if ((r = db_host_advance(api->db, h.id, next, stored, dups, &err)) || (r = db_commit(api->db, &err))) {
		api_db_error(resp, r, "cannot store the batch", &err);
		goto out;
	}
	in_tx = false;
	api_json(resp, 200, json_pack("{s:s, s:I, s:I, s:I, s:I, s:I}", "host", h.name,
				      "acked_seq", (json_int_t)(next - 1),
				      "next_seq", (json_int_t)next, "stored", (json_int_t)stored,
				      "duplicates", (json_int_t)dups, "bad_lines", (json_int_t)bad));
out:
	for (size_t k = 0; k < nruns; k++)
		if (runs[k].in)
			ingest_detach(runs[k].in, NULL, NULL);
	if (in_tx)
		db_rollback(api->db);
	if (locked)
		pthread_mutex_unlock(&api->shared->fleet_write);
	free(pool);
	free(lines);
	free(runs);
	db_host_release(&h);
	buf_release(&plain);
	buf_release(&err);
}
