/* ingest.c - parse agent records (jansson) and store them (db_writer).
 * The record contract is docs/records.md; see ingest.h. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "guest/ingest.h"
#include "json_num.h"
#include "util.h"
#include "store/db_runs.h"
#include "store/db_writer.h"

#define XSTR_(x) #x
#define XSTR(x) XSTR_(x)
#define INGEST_MAX_LINE_TEXT 1048576   /* INGEST_MAX_LINE, spelled for messages */
_Static_assert(INGEST_MAX_LINE == INGEST_MAX_LINE_TEXT, "INGEST_MAX_LINE_TEXT");

/*
 * A per-thread bump arena for the objects jansson builds while one line is
 * parsed and stored (issue 19, CLI ingest within 1.6x of sqlite3's
 * .import): a sample record is about eight small allocations (the object,
 * its hashtable, keys, strings, reals), and malloc/free were about 8% of
 * an ingest's CPU time under perf. jansson takes its allocator from
 * json_set_alloc_funcs() (process-wide, "Custom memory allocation" in its
 * manual), so ours falls back to malloc/free for every thread and every
 * time no line is being parsed; free() of an arena pointer is a no-op and
 * the arena is reset after the line's json_decref(). Nothing parsed from a
 * line outlives ingest_line(): its strings are stored (SQLite copies
 * them, SQLITE_STATIC only lasts to the step) before the decref.
 */
#define ARENA_BYTES 65536
struct arena {
	char *base;
	size_t used;
	bool active;
};
static __thread struct arena line_arena;

static void *arena_malloc(size_t size)
{
	struct arena *a = &line_arena;
	size_t n = (size + 15) & ~(size_t)15;

	if (a->active && n <= ARENA_BYTES - a->used) {
		void *p = a->base + a->used;
		a->used += n;
		return p;
	}
	return malloc(size);
}

static void arena_free(void *p)
{
	const struct arena *a = &line_arena;

	if (a->base && (char *)p >= a->base && (char *)p < a->base + ARENA_BYTES)
		return;
	free(p);
}

static pthread_once_t arena_once = PTHREAD_ONCE_INIT;
static pthread_key_t arena_key;	/* frees a thread's arena when it exits */

static void arena_install(void)
{
	if (pthread_key_create(&arena_key, free) == 0)
		json_set_alloc_funcs(arena_malloc, arena_free);
}

/* Start a scope: allocations go to this thread's arena, after what an
 * enclosing scope holds, until arena_leave() with what this returned; so
 * scopes nest (api_fleet.c's envelope around the record ingest_record()
 * stores), and leaving one gives back only the bytes it took. */
struct arena_mark {
	size_t used;
	bool active;
};

static struct arena_mark arena_enter(void)
{
	struct arena *a = &line_arena;
	struct arena_mark m;

	pthread_once(&arena_once, arena_install);
	if (!a->base) {
		a->base = xmalloc(ARENA_BYTES);
		pthread_setspecific(arena_key, a->base);
	}
	m = (struct arena_mark){ .used = a->active ? a->used : 0, .active = a->active };
	if (!a->active)
		a->used = 0;
	a->active = true;
	return m;
}

static void arena_leave(struct arena_mark m)
{
	line_arena.active = m.active;
	line_arena.used = m.used;
}

static __thread struct arena_mark scratch_mark;

void ingest_scratch_begin(void)
{
	scratch_mark = arena_enter();
}

void ingest_scratch_end(void)
{
	arena_leave(scratch_mark);
}

/* Allocations that outlive the line (the order checks' map, in->series)
 * go to malloc: set paused, then back as it was (the line's objects stay). */
static bool arena_pause(void)
{
	bool was = line_arena.active;

	line_arena.active = false;
	return was;
}

static void arena_resume(bool was)
{
	line_arena.active = was;
}

bool ingest_scratch_pause(void)
{
	return arena_pause();
}

void ingest_scratch_resume(bool was)
{
	arena_resume(was);
}

struct ingest {
	struct db *db;
	struct db_writer *w;
	struct ingest_stats st;
	struct buf partial;      /* bytes after the last newline */
	int64_t batch;           /* records in the open transaction */
	int64_t line_base;       /* lines of the run stored before this ingest */
	bool failed;             /* a store error happened: stop writing */
	struct buf store_err;    /* what it was, said again by every later call */
	bool check_order;        /* a whole stream: hello once, nothing after done, ... */
	bool live;               /* ingest_feed() commits before it returns */
	json_t *series;          /* "s:METRIC" -> last t; "p:NAME' key 'KEY" -> [t, count] */
	int64_t hello_line, done_line;
	uint64_t raw_bytes;      /* raw text kept, for the refusal bound */
};

/* The stream stopped at a store error: say it (again) in err. */
static int stopped(struct ingest *in, struct buf *err)
{
	return err_setf(err, -EIO, "%s", buf_str(&in->store_err));
}

int ingest_open(struct ingest **out, struct db *db, int64_t run_id, struct buf *err)
{
	struct ingest *in = xcalloc(1, sizeof(*in));
	int r;

	in->db = db;
	in->check_order = true;
	in->series = json_object();
	if ((r = db_writer_open(&in->w, db, run_id, err)))
		goto fail;
	if ((r = db_run_set_status(db, run_id, "running", NULL, err)))
		goto fail;
	*out = in;
	return 0;
fail:
	db_writer_close(in->w);
	json_decref(in->series);
	free(in);
	return r;
}

int ingest_open_at(struct ingest **out, struct db *db, int64_t run_id, int64_t line_no,
		   struct buf *err)
{
	struct ingest *in = xcalloc(1, sizeof(*in));
	int r;

	in->db = db;
	in->line_base = line_no;
	if ((r = db_writer_open(&in->w, db, run_id, err))) {
		free(in);
		return r;
	}
	*out = in;
	return 0;
}

/* The end of in, whichever way the stream ends: its counts to stats_out
 * (may be NULL), its writer closed, in freed. Returns r. */
static int release(struct ingest *in, struct ingest_stats *stats_out, int r)
{
	if (stats_out)
		*stats_out = in->st;
	db_writer_close(in->w);
	json_decref(in->series);
	buf_release(&in->partial);
	buf_release(&in->store_err);
	free(in);
	return r;
}

int ingest_detach(struct ingest *in, struct ingest_stats *stats_out, struct buf *err)
{
	int r = 0;

	if (!in)
		return 0;
	if (in->partial.len)
		r = ingest_line(in, in->partial.ptr, in->partial.len, err);
	if (!r)
		r = ingest_flush(in, err);
	return release(in, stats_out, r);
}

const struct ingest_stats *ingest_stats(const struct ingest *in)
{
	return &in->st;
}

/* A number that is a finite double (jansson rejects NaN/Inf text already;
 * this also catches a real that overflowed to inf). */
static bool get_num(json_t *o, const char *key, double *out)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_number(v))
		return false;
	*out = json_number_value(v);
	return isfinite(*out);
}

static const char *get_str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* Line number of the line being processed, in the run. */
static int64_t line_no(const struct ingest *in)
{
	return in->line_base + in->st.lines;
}

/* Past the bound of what is not records: refuse the rest of the stream. */
static void maybe_refuse(struct ingest *in)
{
	if (in->st.refused || !in->check_order)
		return;
	if ((in->st.bad_lines > INGEST_MAX_BAD_LINES && in->st.bad_lines > in->st.records) ||
	    in->raw_bytes > INGEST_MAX_RAW_BYTES) {
		in->st.refused = true;
		in->st.saw_error = true;
		snprintf(in->st.error, sizeof(in->st.error),
			 "line %" PRId64 ": not a record stream: %" PRId64 " of its %" PRId64
			 " lines were not records (%" PRIu64 " KiB kept raw); the rest was refused",
			 line_no(in), in->st.bad_lines, in->st.lines, in->raw_bytes >> 10);
	}
}

/* Store one bad line; reason is copied by sqlite. */
static int keep_raw(struct ingest *in, const char *reason, const char *line, size_t len)
{
	int r;

	in->st.bad_lines++;
	if (in->st.n_bad_shown < INGEST_BAD_SHOWN)
		snprintf(in->st.bad_shown[in->st.n_bad_shown++], sizeof(in->st.bad_shown[0]),
			 "line %" PRId64 ": %s", line_no(in), reason);
	if (len > 65536)
		len = 65536;   /* a raw line is evidence, not data: keep its head */
	in->raw_bytes += len;
	r = db_writer_raw(in->w, line_no(in), reason, line, len, &in->store_err);
	maybe_refuse(in);
	return r;
}

/*
 * The order a whole stream keeps for a sample or probe of series key at
 * time t (and cumulative count, probes; count < 0 for a sample): 0 in
 * order (remembered), 1 out of order with why.
 */
static int check_series(struct ingest *in, const char *key, double t, json_int_t count,
			bool is_probe, struct buf *why)
{
	json_t *prev;

	if (!in->check_order)
		return 0;
	if (is_probe && count < 0) {
		buf_printf(why, "probe count %" JSON_INTEGER_FORMAT " is negative (counts are"
			   " cumulative)", count);
		return 1;
	}
	prev = json_object_get(in->series, key);
	if (prev) {
		double pt = json_real_value(is_probe ? json_array_get(prev, 0) : prev);
		json_int_t pc = is_probe ? json_integer_value(json_array_get(prev, 1)) : 0;
		if (t < pt) {
			buf_printf(why, "%s t %g of '%s' goes back from t %g", is_probe ? "probe" : "sample",
				   t, key + 2, pt);
			return 1;
		}
		if (is_probe && count < pc) {
			buf_printf(why, "probe count %" JSON_INTEGER_FORMAT " of '%s' falls from %"
				   JSON_INTEGER_FORMAT " (counts are cumulative)", count, key + 2, pc);
			return 1;
		}
	} else if (json_object_size(in->series) >= INGEST_MAX_SERIES) {
		return 0;   /* memory stays bounded: further series go unchecked */
	}
	/* the map outlives the line: not in the line's arena */
	bool was = arena_pause();
	json_object_set_new(in->series, key,
			    is_probe ? json_pack("[f, I]", t, count) : json_real(t));
	arena_resume(was);
	return 0;
}

static int store_summary(struct ingest *in, json_t *rec, struct buf *why)
{
	json_t *metrics = json_object_get(rec, "metrics");
	json_t *probes = json_object_get(rec, "probes");
	const char *k;
	json_t *v;
	int r;

	if (!json_is_object(metrics)) {
		buf_puts(why, "summary without a \"metrics\" object");
		return 1;
	}
	json_object_foreach(metrics, k, v) {
		double d;
		if (!json_is_number(v) || !isfinite(d = json_number_value(v))) {
			if (!why->len)
				buf_printf(why, "summary metric '%s' is not a finite number", k);
			continue;
		}
		r = db_writer_summary(in->w, k, d, &in->store_err);
		if (r && r != -EEXIST)
			return r;
	}
	/* optional final probe counts, as [{"name":…,"key":…,"count":…}, …]
	 * (what kcanary-agent sends) or {"name": {"key": count, …}, …} */
	if (json_is_array(probes)) {
		size_t i;
		json_array_foreach(probes, i, v) {
			const char *name = get_str(v, "name");
			json_t *key = json_object_get(v, "key"), *count = json_object_get(v, "count");
			char keybuf[32];
			const char *ks = json_string_value(key);
			if (json_is_integer(key)) {
				snprintf(keybuf, sizeof(keybuf), "%" JSON_INTEGER_FORMAT,
					 json_integer_value(key));
				ks = keybuf;
			}
			if (!name || !json_is_integer(count))
				continue;
			if ((r = db_writer_probe(in->w, NAN, name, ks ? ks : "", json_integer_value(count), &in->store_err)))
				return r;
			in->st.probes++;
		}
	} else if (json_is_object(probes)) {
		const char *pk;
		json_t *pv;
		json_object_foreach(probes, k, v) {
			if (!json_is_object(v))
				continue;
			json_object_foreach(v, pk, pv) {
				if (!json_is_integer(pv))
					continue;
				if ((r = db_writer_probe(in->w, NAN, k, pk, json_integer_value(pv), &in->store_err)))
					return r;
				in->st.probes++;
			}
		}
	}
	return why->len ? 1 : 0;
}

/* The record's text, owned by the caller (free()): the line it came in
 * as, or (a record that came parsed, ingest_record) jansson's compact
 * writing of it, every real as the same double (json_num.h). Allocated
 * with malloc even inside the arena, so that free() may take it. */
static char *record_text(json_t *rec, const char *line, size_t len)
{
	char *s;
	bool was;

	if (line)
		return xstrndup(line, len);
	was = arena_pause();
	s = json_dumps_exact(rec, JSON_COMPACT | JSON_ENCODE_ANY);
	arena_resume(was);
	return s ? s : xstrdup("(a record jansson cannot write)");
}

/* A "sample" record: as store_record(). */
static int store_sample(struct ingest *in, json_t *rec, struct buf *why)
{
	const char *name = get_str(rec, "metric");
	double t, value;

	if (!get_num(rec, "t", &t) || !name || !get_num(rec, "value", &value)) {
		buf_puts(why, "sample needs a number t, a string metric and a finite number value");
		return 1;
	}
	if (in->check_order) {   /* the key costs a malloc: only when checked */
		char *key = xasprintf("s:%s", name);
		int bad = check_series(in, key, t, 0, false, why);
		free(key);
		if (bad)
			return 1;
	}
	in->st.samples++;
	return db_writer_sample(in->w, t, name, value, &in->store_err);
}

/* A "probe" record (its key a string or an integer): as store_record(). */
static int store_probe(struct ingest *in, json_t *rec, struct buf *why)
{
	json_t *key = json_object_get(rec, "key");
	json_t *count = json_object_get(rec, "count");
	char keybuf[32];
	const char *keystr = "";
	const char *name = get_str(rec, "name");
	double t;

	if (json_is_string(key)) {
		keystr = json_string_value(key);
	} else if (json_is_integer(key)) {
		snprintf(keybuf, sizeof(keybuf), "%" JSON_INTEGER_FORMAT, json_integer_value(key));
		keystr = keybuf;
	}
	if (!get_num(rec, "t", &t) || !name || !json_is_integer(count)) {
		buf_puts(why, "probe needs a number t, a string name and an integer count");
		return 1;
	}
	if (in->check_order) {
		char *skey = xasprintf("p:%s' key '%s", name, keystr);
		int bad = check_series(in, skey, t, json_integer_value(count), true, why);
		free(skey);
		if (bad)
			return 1;
	}
	in->st.probes++;
	return db_writer_probe(in->w, t, name, keystr, json_integer_value(count), &in->store_err);
}

/*
 * Store one parsed record. Returns 0 (stored), 1 (contract broken: why
 * says how; the caller keeps the line raw) or a negative store error.
 * line (len bytes) is its text, or NULL for a record that came parsed.
 * One branch per record type of docs/records.md, each with the order
 * checks that type has (hello once, t not going back, nothing after done).
 */
static int store_record(struct ingest *in, json_t *rec, const char *line,
			size_t len, struct buf *why)
{
	const char *type = get_str(rec, "type");
	double t;
	const char *name;

	if (!type) {
		buf_puts(why, "record has no \"type\" string");
		return 1;
	}
	if (in->check_order && in->done_line) {
		buf_printf(why, "a record after \"done\" (line %" PRId64 ")", in->done_line);
		return 1;
	}
	if (!strcmp(type, "sample"))
		return store_sample(in, rec, why);
	if (!strcmp(type, "probe"))
		return store_probe(in, rec, why);
	if (!strcmp(type, "phase")) {
		name = get_str(rec, "name");
		if (!get_num(rec, "t", &t) || !name) {
			buf_puts(why, "phase needs a number t and a string name");
			return 1;
		}
		return db_writer_phase(in->w, t, name, &in->store_err);
	}
	if (!strcmp(type, "hello") && in->check_order && in->hello_line) {
		buf_printf(why, "a second \"hello\" (the first was line %" PRId64 ")", in->hello_line);
		return 1;
	}
	if (!strcmp(type, "hello")) {
		in->hello_line = line_no(in);
		char *js = record_text(rec, line, len);
		int r = db_writer_hello(in->w, get_str(rec, "kernel_release"),
					get_str(rec, "agent_version"), get_str(rec, "host"), js, &in->store_err);
		free(js);
		in->st.saw_hello = true;
		if (!get_num(rec, "mkfs_s", &in->st.hello_mkfs_s) || !(in->st.hello_mkfs_s >= 0))
			in->st.hello_mkfs_s = 0;
		return r;
	}
	if (!strcmp(type, "summary"))
		return store_summary(in, rec, why);
	if (!strcmp(type, "metric")) {
		const char *unit = get_str(rec, "unit"), *better = get_str(rec, "better");

		name = get_str(rec, "name");
		if (!name || (better && strcmp(better, "higher") && strcmp(better, "lower"))) {
			buf_puts(why, "metric needs a string name and better, when given, \"higher\" or \"lower\"");
			return 1;
		}
		return db_writer_metric_def(in->w, name, unit, better, &in->store_err);
	}
	if (!strcmp(type, "done")) {
		const char *status = get_str(rec, "status");
		in->st.saw_done = true;
		in->done_line = line_no(in);
		if (status && strcmp(status, "ok") && !in->st.saw_error) {
			in->st.saw_error = true;
			snprintf(in->st.error, sizeof(in->st.error),
				 "agent finished with status '%s'", status);
		}
		return 0;
	}
	if (!strcmp(type, "error")) {
		const char *msg = get_str(rec, "message");
		if (!in->st.saw_error) {
			in->st.saw_error = true;
			snprintf(in->st.error, sizeof(in->st.error), "%s",
				 msg ? msg : "agent error without a message");
		}
		return db_writer_note(in->w, NAN, "error", msg ? msg : "", &in->store_err);
	}
	if (!strcmp(type, "probes_unavailable") || !strcmp(type, "note")) {
		const char *msg = get_str(rec, "message");
		char *js = NULL;
		if (!msg)
			msg = js = record_text(rec, line, len);
		double tt = NAN;
		get_num(rec, "t", &tt);
		int r = db_writer_note(in->w, tt, type, msg, &in->store_err);
		free(js);
		return r;
	}
	buf_printf(why, "unknown record type '%.64s'", type);
	return 1;
}

static int maybe_commit(struct ingest *in, struct buf *err)
{
	if (in->batch < INGEST_BATCH)
		return 0;
	return ingest_flush(in, err);
}

/*
 * The end of storing one line (ingest_line, ingest_record): r >= 0 commits
 * the batch once it is INGEST_BATCH lines; r < 0 rolls the open batch
 * back, stops this ingest (in->failed) and says which line, keeping the
 * text in in->store_err. Returns 0 or the negative errno.
 */
static int line_done(struct ingest *in, int r, struct buf *err)
{
	if (r >= 0)
		return maybe_commit(in, err);
	err_wrapf(&in->store_err, r, "cannot store line %" PRId64, in->st.lines);
	db_writer_rollback(in->w);
	in->failed = true;
	return err_setf(err, r, "%s", buf_str(&in->store_err));
}

int ingest_line(struct ingest *in, const char *line, size_t len, struct buf *err)
{
	struct buf why = BUF_INIT;
	json_error_t jerr;
	json_t *rec = NULL;
	struct arena_mark m = { 0 };
	bool in_arena = false;
	int r;

	if (in->failed)
		return stopped(in, err);
	if (len && line[len - 1] == '\r')
		len--;
	in->st.lines++;
	if (in->st.refused) {   /* counted, not stored */
		in->st.refused_lines++;
		in->st.refused_bytes += len + 1;
		return 0;
	}
	/* blank lines carry nothing and are not errors */
	size_t i = 0;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i == len)
		return 0;
	if ((r = db_writer_begin(in->w, &in->store_err)))
		return line_done(in, r, err);
	in->batch++;
	if (len > INGEST_MAX_LINE) {
		r = keep_raw(in, "line longer than the " XSTR(INGEST_MAX_LINE_TEXT) "-byte cap"
			     " (its first 64 KiB kept)", line, len);
		goto done;
	}
	m = arena_enter();
	in_arena = true;
	rec = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!rec) {
		buf_printf(&why, "not JSON: %s at column %d", jerr.text, jerr.column);
		r = keep_raw(in, buf_str(&why), line, len);
		goto done;
	}
	if (!json_is_object(rec)) {
		r = keep_raw(in, "not a JSON object", line, len);
		goto done;
	}
	r = store_record(in, rec, line, len, &why);
	if (r == 1) {
		r = keep_raw(in, buf_str(&why), line, len);
	} else if (r == 0) {
		in->st.records++;
	}
done:
	json_decref(rec);
	if (in_arena)
		arena_leave(m);
	buf_release(&why);
	return line_done(in, r, err);
}

int ingest_record(struct ingest *in, json_t *rec, struct buf *err)
{
	struct buf why = BUF_INIT;
	struct arena_mark m;
	char *text = NULL;
	int r;

	if (in->failed)
		return stopped(in, err);
	in->st.lines++;
	if (in->st.refused) {   /* counted, not stored */
		text = record_text(rec, NULL, 0);
		in->st.refused_lines++;
		in->st.refused_bytes += strlen(text) + 1;
		free(text);
		return 0;
	}
	if ((r = db_writer_begin(in->w, &in->store_err)))
		return line_done(in, r, err);
	in->batch++;
	m = arena_enter();
	if (!json_is_object(rec)) {
		text = record_text(rec, NULL, 0);
		r = keep_raw(in, "not a JSON object", text, strlen(text));
	} else if ((r = store_record(in, rec, NULL, 0, &why)) == 1) {
		text = record_text(rec, NULL, 0);
		r = keep_raw(in, buf_str(&why), text, strlen(text));
	} else if (r == 0) {
		in->st.records++;
	}
	arena_leave(m);
	free(text);
	buf_release(&why);
	return line_done(in, r, err);
}

int ingest_feed(struct ingest *in, const char *data, size_t len, struct buf *err)
{
	const char *p = data, *end = data + len;
	int r;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl) {
			/* keep the tail; cap it so a stream without newlines cannot grow
			 * without bound (the excess is dropped, the line stored cut) */
			size_t n = (size_t)(end - p);
			if (in->partial.len + n > INGEST_MAX_LINE + 1)
				n = in->partial.len > INGEST_MAX_LINE + 1 ? 0
				    : INGEST_MAX_LINE + 1 - in->partial.len;
			buf_append(&in->partial, p, n);
			break;
		}
		if (in->partial.len) {
			size_t room = in->partial.len > INGEST_MAX_LINE + 1 ? 0 :
				INGEST_MAX_LINE + 1 - in->partial.len;
			size_t n = (size_t)(nl - p);
			buf_append(&in->partial, p, n < room ? n : room);
			r = ingest_line(in, in->partial.ptr, in->partial.len, err);
			buf_reset(&in->partial);
		} else {
			r = ingest_line(in, p, (size_t)(nl - p), err);
		}
		if (r)
			return r;
		p = nl + 1;
	}
	return in->live ? ingest_flush(in, err) : 0;
}

void ingest_set_live(struct ingest *in)
{
	in->live = true;
}

int ingest_flush(struct ingest *in, struct buf *err)
{
	int r;

	if (in->failed)
		return stopped(in, err);
	in->batch = 0;
	if ((r = db_writer_commit(in->w, &in->store_err))) {
		err_wrapf(&in->store_err, r, "cannot commit the records before line %" PRId64,
			  in->st.lines + 1);
		in->failed = true;
		return err_setf(err, r, "%s", buf_str(&in->store_err));
	}
	return 0;
}

int ingest_close(struct ingest *in, struct ingest_stats *stats_out, struct buf *err)
{
	int r = 0;

	if (!in)
		return 0;
	if (!in->failed && in->partial.len) {
		/* a last line without its newline: stored if it is a whole record,
		 * kept raw as truncated otherwise */
		struct buf tail = in->partial;
		json_t *probe = json_loadb(tail.ptr, tail.len, 0, NULL);
		if (probe) {
			json_decref(probe);
			r = ingest_line(in, tail.ptr, tail.len, err);
		} else if (!(r = db_writer_begin(in->w, err))) {
			in->st.lines++;
			if ((r = keep_raw(in, "truncated line at end of stream", tail.ptr, tail.len)))
				err_setf(err, r, "%s", buf_str(&in->store_err));
		}
		buf_reset(&in->partial);
	}
	if (!in->failed && !r)
		r = ingest_flush(in, err);
	const char *status = in->st.saw_error ? "failed" :
			     in->st.saw_done ? "ok" : "incomplete";
	snprintf(in->st.status, sizeof(in->st.status), "%s", status);
	if (!in->failed && !r) {
		r = db_writer_finish(in->w, status, in->st.saw_error ? in->st.error : NULL,
				     in->st.records, in->st.bad_lines, err);
	}
	if (in->failed && !r)
		r = stopped(in, err);
	return release(in, stats_out, r);
}
