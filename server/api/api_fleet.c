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

#include "api/api_fleet.h"
#include "api/api_reply.h"
#include "store/db.h"
#include "store/db_fleet.h"
#include "gzip.h"
#include "guest/ingest.h"
#include "log.h"
#include "api/token.h"
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

/* A host as /hosts lists it: labels ({} when not an object or array's
 * text) and heartbeat (null likewise) parsed. */
static json_t *host_obj(const struct db_host_row *h)
{
	json_t *l = h->labels_json ? json_loads(h->labels_json, 0, NULL) : NULL;
	json_t *hb = h->heartbeat_json ? json_loads(h->heartbeat_json, 0, NULL) : NULL;

	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:I, s:I, s:o}",
		"name", api_str_or_null(h->name), "kernel_release", api_str_or_null(h->kernel_release),
		"boot_id", api_str_or_null(h->boot_id), "labels", l ? l : json_object(),
		"agent_version", api_str_or_null(h->agent_version), "token", api_str_or_null(h->token),
		"first_seen", api_str_or_null(h->first_seen), "last_seen", api_str_or_null(h->last_seen),
		"next_seq", (json_int_t)h->next_seq, "records", (json_int_t)h->records,
		"duplicates", (json_int_t)h->duplicates, "runs", (json_int_t)h->runs,
		"heartbeat", hb ? hb : json_null());
}

void api_hosts_list(struct api *api, struct http_req *req, struct http_resp *resp)
{
	struct buf err = BUF_INIT;
	struct db_host_row *h = NULL;
	json_t *hosts;
	size_t n = 0;
	int r;

	(void)req;
	if ((r = db_hosts_list(api->db, &h, &n, &err))) {
		api_db_error(resp, r, "cannot list hosts", &err);
		return;
	}
	hosts = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(hosts, host_obj(&h[i]));
	db_host_rows_free(h, n);
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

/*
 * One line of a batch, as parsed: {"seq": N, "run": "KEY", "record": {…}}
 * (the record as an object: agents since issue 19 item 3), or the first
 * form, {"seq": N, "run": "KEY", "line": "RECORD"} (the record as a string,
 * which deployed agents still send). Everything is borrowed from the
 * line's parsed object.
 */
struct envelope {
	json_int_t seq;
	const char *run;
	json_t *record;      /* the record, form 2; NULL in form 1 */
	const char *line;    /* the record's text, form 1 */
	size_t len;
};

/* A stream of the batch being stored. */
struct batch_run {
	char *key;
	int64_t run_id, line_no;
	struct ingest *in;
};

/* What one batch's storing has come to. */
struct batch {
	struct db_host h;
	struct batch_run *runs;
	size_t nruns;
	int64_t next, stored, dups;
};

/* Line lineno (p, l bytes) of a batch as an envelope: *o gets its parsed
 * object (the caller decrefs it, also after an error), e what it says.
 * prev_seq is the line before's seq, 0 for the first. 0, or -EINVAL with
 * msg naming the line and the field. One jansson parse for envelope and
 * record: parsing each record a second time from a string was about 56%
 * of the server's instructions per batch (issue 19 item 3). */
static int parse_envelope(struct envelope *e, json_t **o, const char *p, size_t l, size_t lineno,
			  json_int_t prev_seq, char *msg, size_t msglen)
{
	json_error_t jerr;
	json_t *seq, *run, *line, *rec;

	*o = json_loadb(p, l, JSON_REJECT_DUPLICATES, &jerr);
	seq = json_object_get(*o, "seq");
	run = json_object_get(*o, "run");
	line = json_object_get(*o, "line");
	rec = json_object_get(*o, "record");
	if (!*o)
		snprintf(msg, msglen, "batch line %zu is not JSON: %s at column %d", lineno,
			 jerr.text, jerr.column);
	else if (!json_is_integer(seq) || json_integer_value(seq) < 1)
		snprintf(msg, msglen, "batch line %zu: \"seq\" must be an integer >= 1", lineno);
	else if (!json_is_string(run) || !name_ok(json_string_value(run), ":"))
		snprintf(msg, msglen, "batch line %zu: \"run\" must be a stream key of 1-%d letters,"
			 " digits, '_', '-', '.' or ':'", lineno, FLEET_MAX_NAME);
	else if (rec && (line || !json_is_object(rec)))
		snprintf(msg, msglen, "batch line %zu: \"record\" must be the record as a JSON object,"
			 " without a \"line\" beside it", lineno);
	else if (!rec && !json_is_string(line))
		snprintf(msg, msglen, "batch line %zu: needs \"record\", the record as an object (or"
			 " \"line\", the record as a string)", lineno);
	else if (prev_seq && json_integer_value(seq) != prev_seq + 1)
		snprintf(msg, msglen, "batch line %zu: seq %" JSON_INTEGER_FORMAT " follows %"
			 JSON_INTEGER_FORMAT ": a batch holds consecutive sequence numbers", lineno,
			 json_integer_value(seq), prev_seq);
	else {
		*e = (struct envelope){ .seq = json_integer_value(seq), .run = json_string_value(run),
					.record = rec, .line = json_string_value(line),
					.len = json_string_length(line) };
		return 0;
	}
	return -EINVAL;
}

/* What a new run of the stream is: the workload and the params of its
 * first record when that is a hello, plus the host's labels. */
static void run_meta(char **workload, char **params, const struct db_host *h,
		     const struct envelope *e)
{
	json_t *rec = e->record ? json_incref(e->record) : json_loadb(e->line, e->len, 0, NULL);
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
		w = !strncmp(e->run, "passive", 7) ? "passive" : "unknown";
	*workload = xstrdup(w);
	json_object_set_new(p, "workload", json_string(w));
	*params = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(p);
	json_decref(rec);
}

/* The batch's stream e->run: found in b, else found or made in the store
 * and opened for ingest (inside the caller's transaction). Runs outside
 * the scratch arena: what it builds outlives the line. 0 or the store's
 * error with err. */
static int batch_run(struct batch_run **out, struct api *api, struct batch *b,
		     const struct envelope *e, struct buf *err)
{
	struct batch_run *br;
	bool was;
	int r;

	for (size_t k = 0; k < b->nruns; k++)
		if (!strcmp(b->runs[k].key, e->run)) {
			*out = &b->runs[k];
			return 0;
		}
	was = ingest_scratch_pause();
	b->runs = xrealloc(b->runs, (b->nruns + 1) * sizeof(*b->runs));
	br = &b->runs[b->nruns++];
	memset(br, 0, sizeof(*br));
	br->key = xstrdup(e->run);
	r = db_host_run_find(api->db, &br->run_id, &br->line_no, b->h.id, br->key, err);
	if (r == -ENOENT) {
		char *w = NULL, *params = NULL;
		run_meta(&w, &params, &b->h, e);
		r = db_host_run_create(api->db, &br->run_id, &b->h, br->key, w, params, err);
		free(w);
		free(params);
	}
	if (!r)
		r = ingest_open_at(&br->in, api->db, br->run_id, br->line_no, err);
	ingest_scratch_resume(was);
	*out = br;
	return r;
}

/* Store one envelope's record unless the host has it (a duplicate). 0 or
 * the store's error with err. */
static int store_envelope(struct api *api, struct batch *b, const struct envelope *e,
			  struct buf *err)
{
	struct batch_run *br;
	int r;

	if (e->seq < b->next) {
		b->dups++;
		return 0;
	}
	if ((r = batch_run(&br, api, b, e, err)))
		return r;
	r = e->record ? ingest_record(br->in, e->record, err) : ingest_line(br->in, e->line, e->len, err);
	if (r)
		return r;
	b->next = e->seq + 1;
	b->stored++;
	return 0;
}

/* Each stream's counters and status into the store. 0 or the store's error. */
static int finish_runs(struct api *api, struct batch *b, int64_t *bad, struct buf *err)
{
	for (size_t k = 0; k < b->nruns; k++) {
		struct ingest_stats st;
		const char *status = NULL;
		int r = ingest_detach(b->runs[k].in, &st, err);

		b->runs[k].in = NULL;
		if (!r) {
			if (st.saw_error)
				status = "failed";
			else if (st.saw_done)
				status = "ok";
			*bad += st.bad_lines;
			r = db_host_run_update(api->db, &b->h, b->runs[k].key, b->runs[k].run_id,
					       b->runs[k].line_no + st.lines, st.records, st.bad_lines,
					       status, st.saw_error ? st.error : NULL, err);
		}
		if (r)
			return r;
	}
	return 0;
}

/* Inflate a gzip'd body into plain (413/400 answered on failure): 0 or -1. */
static int batch_text(const char **text, size_t *len, struct buf *plain, struct http_resp *resp,
		      const struct http_req *req)
{
	struct buf err = BUF_INIT;
	const char *enc = http_header(req, "Content-Encoding");
	int r = 0;

	*text = req->body;
	*len = req->body_len;
	if (enc && !strcasecmp(enc, "gzip")) {
		r = gzip_inflate(plain, req->body, req->body_len, FLEET_MAX_BATCH_BYTES, &err);
		if (r == -EFBIG)
			api_error(resp, 413, "record batch %s (limit %u bytes inflated)", buf_str(&err),
				  FLEET_MAX_BATCH_BYTES);
		else if (r)
			api_error(resp, 400, "record batch: %s", buf_str(&err));
		*text = buf_str(plain);
		*len = plain->len;
	} else if (enc && strcasecmp(enc, "identity")) {
		api_error(resp, 400, "Content-Encoding '%s' is not supported: send gzip or identity", enc);
		r = -EINVAL;
	}
	buf_release(&err);
	return r ? -1 : 0;
}

/* reason: one batch is one transaction: the host, each line's envelope and
 * record, each stream's counters and the commit share one rollback path
 * (out:), so that a malformed envelope on any line, a gap or a store error
 * leaves nothing of the batch stored. Each line is parsed (envelope and
 * record at once) and stored in turn, so a batch needs no more memory than
 * one line's objects beside its text. */
void api_agent_records(struct api *api, struct http_req *req, struct http_resp *resp)
{
	struct buf err = BUF_INIT, plain = BUF_INIT;
	struct batch b = { 0 };
	char msg[512];
	const char *text, *p, *end;
	size_t len, lineno = 0;
	json_int_t prev = 0, first = 0;
	int64_t bad = 0;
	bool in_tx = false, locked = false, envelope_bad = false, gap = false;
	int r;

	if (token_allows_host(resp, req, req->name) || batch_text(&text, &len, &plain, resp, req))
		goto out;

	/* inflating runs in parallel; parsing and storing, one batch at a time */
	if (api->shared) {
		pthread_mutex_lock(&api->shared->fleet_write);
		locked = true;
	}
	if ((r = db_begin(api->db, &err))) {
		api_db_error(resp, r, "cannot start storing the batch", &err);
		goto out;
	}
	in_tx = true;
	r = db_host_get(api->db, &b.h, req->name, &err);
	if (r == -ENOENT) {
		api_error(resp, 404, "no host '%s': register first (POST /api/v1/agents/register)",
			  req->name);
		goto out;
	}
	if (r) {
		api_db_error(resp, r, "cannot read the host", &err);
		goto out;
	}
	b.next = b.h.next_seq;
	for (p = text, end = text + len; p < end && !r; ) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct envelope e;
		json_t *o = NULL;

		lineno++;
		if (l && p[l - 1] == '\r')
			l--;
		if (l) {
			ingest_scratch_begin();
			r = parse_envelope(&e, &o, p, l, lineno, prev, msg, sizeof(msg));
			envelope_bad = r != 0;
			gap = !r && !prev && e.seq > b.h.next_seq;
			if (!r && !prev)
				first = e.seq;
			if (!r && !gap)
				r = store_envelope(api, &b, &e, &err);
			if (!r)
				prev = e.seq;
			json_decref(o);
			ingest_scratch_end();
		}
		p = nl ? nl + 1 : end;
		if (gap)
			break;
	}
	if (envelope_bad) {
		api_error(resp, 400, "%s; nothing of this batch was stored", msg);
		goto out;
	}
	if (gap) {
		char gmsg[256];
		snprintf(gmsg, sizeof(gmsg), "sequence gap: the next record of host '%s' is seq %" PRId64
			 ", this batch starts at %" JSON_INTEGER_FORMAT "; nothing of it was stored"
			 " (resend from %" PRId64 ")", b.h.name, b.h.next_seq, first, b.h.next_seq);
		api_json(resp, 409, json_pack("{s:s, s:i, s:I, s:I}", "error", gmsg, "status", 409,
					      "expected_seq", (json_int_t)b.h.next_seq,
					      "acked_seq", (json_int_t)(b.h.next_seq - 1)));
		goto out;
	}
	if (r || (r = finish_runs(api, &b, &bad, &err)) ||
	    (r = db_host_advance(api->db, b.h.id, b.next, b.stored, b.dups, &err)) ||
	    (r = db_commit(api->db, &err))) {
		api_db_error(resp, r, "cannot store the batch", &err);
		goto out;
	}
	in_tx = false;
	api_json(resp, 200, json_pack("{s:s, s:I, s:I, s:I, s:I, s:I}", "host", b.h.name,
				      "acked_seq", (json_int_t)(b.next - 1),
				      "next_seq", (json_int_t)b.next, "stored", (json_int_t)b.stored,
				      "duplicates", (json_int_t)b.dups, "bad_lines", (json_int_t)bad));
out:
	for (size_t k = 0; k < b.nruns; k++) {
		if (b.runs[k].in)
			ingest_detach(b.runs[k].in, NULL, NULL);
		free(b.runs[k].key);
	}
	if (in_tx)
		db_rollback(api->db);
	if (locked)
		pthread_mutex_unlock(&api->shared->fleet_write);
	free(b.runs);
	db_host_release(&b.h);
	buf_release(&plain);
	buf_release(&err);
}
