/* fleet_load.c - the load of bench/b_fleet_ingest.sh: AGENTS threads, each
 * an agent for HOSTS/AGENTS hosts, post gzip'd record batches to `kcanary
 * serve` (docs/api.md, "Agents") with the real agent's sender (agent/
 * http_out.c: lib/fetch.h's kept-alive connection, one per thread, and
 * lib/gzip.h's deflate), then read the store to check that every record
 * was stored once.
 *
 *   fleet_load URL TOKEN DB AGENTS HOSTS BATCHES RECORDS
 *
 * Each host registers, then sends BATCHES batches of RECORDS records (its
 * first record a hello, then samples t = 1, 2, 3, …), round robin over the
 * thread's hosts, as a fleet whose hosts each send a batch every interval.
 * FLEET_FORM=line sends the first envelope form (records as strings).
 * Prints one line "key=value …" on stdout for the script: records sent,
 * wall seconds of the posting phase, records/s, p50/p99/max request
 * latency (ms), and the store check. Exit 1 when a request failed or the
 * check did not hold.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sqlite3.h>

#include "http_out.h"
#include "util.h"

struct load {
	const char *url, *token;
	int agents, hosts, batches, records;
	int form;            /* envelope form: 2 "record" object, 1 "line" string */
};

struct agent {
	const struct load *ld;
	int index;
	pthread_t th;
	double *lat_ms;      /* one per batch posted */
	size_t nlat;
	int failed;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Host h's batch b as envelope lines: seq 1 + b * records, …; record 0 of
 * batch 0 is the stream's hello, the others samples. form 2 (the default,
 * what agents send since issue 19 item 3) carries each record as an object
 * ("record"), form 1 (FLEET_FORM=line: agents deployed before) as a
 * string ("line"). */
static void batch_text(struct buf *out, int h, int b, int records, int form)
{
	buf_reset(out);
	for (int i = 0; i < records; i++) {
		int64_t seq = (int64_t)b * records + i + 1;
		if (seq == 1 && form == 2)
			buf_printf(out, "{\"seq\":1,\"run\":\"passive:boot-%d\",\"record\":"
				   "{\"type\":\"hello\",\"agent_version\":\"bench\"}}\n", h);
		else if (form == 2)
			buf_printf(out, "{\"seq\":%" PRId64 ",\"run\":\"passive:boot-%d\",\"record\":"
				   "{\"type\":\"sample\",\"t\":%" PRId64 ".0,"
				   "\"metric\":\"dirty_pages\",\"value\":%d}}\n",
				   seq, h, seq - 1, (int)((seq * 7919) % 100000));
		else if (seq == 1)
			buf_printf(out, "{\"seq\":1,\"run\":\"passive:boot-%d\",\"line\":"
				   "\"{\\\"type\\\":\\\"hello\\\",\\\"agent_version\\\":\\\"bench\\\"}\"}\n", h);
		else
			buf_printf(out, "{\"seq\":%" PRId64 ",\"run\":\"passive:boot-%d\",\"line\":"
				   "\"{\\\"type\\\":\\\"sample\\\",\\\"t\\\":%" PRId64 ".0,"
				   "\\\"metric\\\":\\\"dirty_pages\\\",\\\"value\\\":%d}\"}\n",
				   seq, h, seq - 1, (int)((seq * 7919) % 100000));
	}
}

/* POST body to path; 0 when the answer was 200. */
static int post(struct http_out *ho, const char *path, const char *body, size_t len, int gzip)
{
	struct buf err = BUF_INIT;
	long status = 0;
	int r = http_out_post(ho, path, body, len, gzip, &status, NULL, &err);

	if (r || status != 200) {
		fprintf(stderr, "fleet_load: POST %s: %s\n", path, buf_str(&err));
		r = -EIO;
	}
	buf_release(&err);
	return r;
}

static void *agent_main(void *p)
{
	struct agent *a = p;
	const struct load *ld = a->ld;
	struct http_out *ho = NULL;
	struct buf body = BUF_INIT;
	char path[128];

	if (http_out_new(&ho, ld->url, ld->token, 60.0)) {
		a->failed = 1;
		return NULL;
	}
	a->lat_ms = xcalloc((size_t)ld->batches * (size_t)ld->hosts / (size_t)ld->agents + 1,
			    sizeof(double));
	for (int b = 0; b < ld->batches && !a->failed; b++) {
		for (int h = a->index; h < ld->hosts; h += ld->agents) {
			double t0;
			batch_text(&body, h, b, ld->records, ld->form);
			snprintf(path, sizeof(path), "/api/v1/agents/bench-%d/records", h);
			t0 = now_s();
			if (post(ho, path, body.ptr, body.len, 1)) {
				a->failed = 1;
				break;
			}
			a->lat_ms[a->nlat++] = (now_s() - t0) * 1000.0;
		}
	}
	buf_release(&body);
	http_out_free(ho);
	return NULL;
}

static int register_hosts(const struct load *ld)
{
	struct http_out *ho = NULL;
	int r = 0;

	if (http_out_new(&ho, ld->url, ld->token, 60.0))
		return -ENOMEM;
	for (int h = 0; h < ld->hosts && !r; h++) {
		char *b = xasprintf("{\"host\":\"bench-%d\",\"kernel_release\":\"6.12.117\","
				    "\"boot_id\":\"boot-%d\",\"agent_version\":\"bench\"}", h, h);
		r = post(ho, "/api/v1/agents/register", b, strlen(b), 0);
		free(b);
	}
	http_out_free(ho);
	return r;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

static int64_t query_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	else
		fprintf(stderr, "fleet_load: %s: %s\n", sql, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return v;
}

/* Every record stored once: per host next_seq, records and no duplicates;
 * the samples of the bench hosts' runs, all of them and each (run, t) once. */
static int check_store(const char *path, const struct load *ld, int64_t *stored)
{
	int64_t per_host = (int64_t)ld->batches * ld->records;
	int64_t want_samples = (per_host - 1) * ld->hosts;
	int64_t hosts_ok, samples, distinct, recs, dups;
	sqlite3 *db = NULL;
	char *sql;
	int ok;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		fprintf(stderr, "fleet_load: cannot open the store '%s': %s\n", path, sqlite3_errmsg(db));
		sqlite3_close(db);
		return -EIO;
	}
	sql = xasprintf("SELECT count(*) FROM hosts WHERE name LIKE 'bench-%%' AND next_seq = %" PRId64
			" AND records = %" PRId64 " AND duplicates = 0", per_host + 1, per_host);
	hosts_ok = query_int(db, sql);
	free(sql);
	recs = query_int(db, "SELECT sum(records) FROM hosts WHERE name LIKE 'bench-%'");
	dups = query_int(db, "SELECT sum(duplicates) FROM hosts WHERE name LIKE 'bench-%'");
	samples = query_int(db, "SELECT count(*) FROM samples WHERE run_id IN (SELECT hr.run_id FROM"
			    " host_runs hr JOIN hosts h ON h.id = hr.host_id WHERE h.name LIKE 'bench-%')");
	distinct = query_int(db, "SELECT count(*) FROM (SELECT DISTINCT run_id, t_s FROM samples WHERE"
			     " run_id IN (SELECT hr.run_id FROM host_runs hr JOIN hosts h ON"
			     " h.id = hr.host_id WHERE h.name LIKE 'bench-%'))");
	sqlite3_close(db);
	ok = hosts_ok == ld->hosts && samples == want_samples && distinct == want_samples &&
	     recs == per_host * ld->hosts && dups == 0;
	printf("check_hosts=%" PRId64 "/%d check_records=%" PRId64 " check_samples=%" PRId64
	       " want_samples=%" PRId64 " check_distinct=%" PRId64 " check_duplicates=%" PRId64
	       " stored_once=%s\n", hosts_ok, ld->hosts, recs, samples, want_samples, distinct, dups,
	       ok ? "yes" : "NO");
	*stored = recs;
	return ok ? 0 : -EIO;
}

int main(int argc, char **argv)
{
	struct load ld;
	struct agent *ag;
	double t0, wall, *all;
	size_t nall = 0;
	int64_t sent, stored = 0;
	int failed = 0;

	if (argc != 8) {
		fprintf(stderr, "usage: fleet_load URL TOKEN DB AGENTS HOSTS BATCHES RECORDS\n");
		return 2;
	}
	ld = (struct load){ .url = argv[1], .token = argv[2], .agents = atoi(argv[4]),
			    .hosts = atoi(argv[5]), .batches = atoi(argv[6]), .records = atoi(argv[7]),
			    .form = getenv("FLEET_FORM") && !strcmp(getenv("FLEET_FORM"), "line") ? 1 : 2 };
	if (ld.agents < 1 || ld.hosts < ld.agents || ld.batches < 1 || ld.records < 1) {
		fprintf(stderr, "fleet_load: need 1 <= AGENTS <= HOSTS, BATCHES >= 1, RECORDS >= 1\n");
		return 2;
	}
	if (register_hosts(&ld))
		return 1;
	ag = xcalloc((size_t)ld.agents, sizeof(*ag));
	t0 = now_s();
	for (int i = 0; i < ld.agents; i++) {
		ag[i] = (struct agent){ .ld = &ld, .index = i };
		if (pthread_create(&ag[i].th, NULL, agent_main, &ag[i])) {
			fprintf(stderr, "fleet_load: cannot start agent thread %d\n", i);
			return 1;
		}
	}
	for (int i = 0; i < ld.agents; i++)
		pthread_join(ag[i].th, NULL);
	wall = now_s() - t0;
	all = xcalloc((size_t)ld.batches * (size_t)ld.hosts + 1, sizeof(double));
	for (int i = 0; i < ld.agents; i++) {
		failed |= ag[i].failed;
		memcpy(all + nall, ag[i].lat_ms, ag[i].nlat * sizeof(double));
		nall += ag[i].nlat;
		free(ag[i].lat_ms);
	}
	qsort(all, nall, sizeof(double), cmp_double);
	sent = (int64_t)ld.batches * ld.records * ld.hosts;
	printf("form=%d agents=%d hosts=%d batches=%zu records=%" PRId64 " wall_s=%.3f rate=%.0f"
	       " p50_ms=%.1f p99_ms=%.1f max_ms=%.1f failed=%d\n", ld.form, ld.agents, ld.hosts, nall, sent,
	       wall, (double)sent / wall, nall ? all[nall / 2] : 0.0,
	       nall ? all[(size_t)((double)(nall - 1) * 0.99)] : 0.0, nall ? all[nall - 1] : 0.0,
	       failed);
	free(all);
	free(ag);
	if (check_store(argv[3], &ld, &stored) || failed)
		return 1;
	return 0;
}
