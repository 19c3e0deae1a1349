/* spool.c - see spool.h: the queue of unacknowledged records, in memory
 * and in a bounded append-only file. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_MODULE "spool"
#include "json_num.h"
#include "log.h"
#include "spool.h"
#include "util.h"

struct entry {
	int64_t seq;
	char *run;
	char *line;
	size_t len;        /* of line */
	size_t env_len;    /* of its envelope text */
	bool as_record;    /* line is a JSON object: sent as "record" (form 2) */
};

struct spool {
	char *path, *seq_path;
	int fd;                   /* spool file, O_APPEND; -1 when memory only */
	uint64_t max_bytes;
	struct entry *v;
	size_t head, n, cap;      /* queue is v[head .. n) */
	uint64_t pending_bytes;
	uint64_t file_bytes;      /* bytes in the file, acknowledged ones included */
	int64_t next_seq, reserved_seq, acked_seq;
	int64_t queued, dropped, renumbered;
	int64_t load_dropped_lines;    /* of the file, in load() */
	uint64_t load_dropped_bytes;
};

/* How envelope() text starts (either form). */
#define ENV_START "{\"seq\":"
/* Deepest record sent as an object; the server's parser stops at 2048
 * levels (jansson's JSON_PARSER_MAX_DEPTH), the envelope adds one. */
#define RECORD_MAX_DEPTH 64

static bool shallow(const json_t *v, int depth)
{
	const char *k;
	json_t *x;
	size_t i;

	if (depth > RECORD_MAX_DEPTH)
		return false;
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, x)
			if (!shallow(x, depth + 1))
				return false;
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			if (!shallow(x, depth + 1))
				return false;
	}
	return true;
}

/* Whether line (len bytes) can travel as form 2's "record": a JSON object,
 * no key twice, not deep, as the server's parser of the envelope takes it. */
static bool line_is_record(const char *line, size_t len)
{
	json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	bool ok = json_is_object(o) && shallow(o, 0);

	json_decref(o);
	return ok;
}

/*
 * The envelope of e (docs/api.md, "Batches"): form 2, {"seq": N, "run":
 * "KEY", "record": RECORD} with the record's own text in place (it is a
 * JSON object, line_is_record()), so the server parses each record once;
 * a line that is not one goes in the first form, as the string "line",
 * which the server keeps raw.
 */
static char *envelope(const struct entry *e, size_t *len)
{
	json_t *o = NULL;
	char *s = NULL, *run;

	if (!e->as_record) {
		o = json_pack("{s:I, s:s, s:s%}", "seq", (json_int_t)e->seq, "run", e->run,
			      "line", e->line, e->len);
		s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
		json_decref(o);
	} else if ((o = json_string(e->run)) && (run = json_dumps(o, JSON_ENCODE_ANY))) {
		struct buf b = BUF_INIT;
		buf_printf(&b, "{\"seq\":%" PRId64 ",\"run\":%s,\"record\":", e->seq, run);
		buf_append(&b, e->line, e->len);
		buf_append(&b, "}", 1);
		s = buf_detach(&b);
		free(run);
		json_decref(o);
	} else {
		json_decref(o);
	}
	if (s && len)
		*len = strlen(s);
	return s;
}

/* PATH.seq: "<reserved> <acked>\n" (tmp + rename; fsync'd when sync). */
static int write_state(struct spool *s, bool sync)
{
	char *tmp = xasprintf("%s.tmp", s->seq_path);
	char text[64];
	int fd, r = 0;

	snprintf(text, sizeof(text), "%" PRId64 " %" PRId64 "\n", s->reserved_seq, s->acked_seq);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write_all(fd, text, strlen(text)) || (sync && fsync(fd)) ||
	    rename(tmp, s->seq_path))
		r = -errno;
	if (fd >= 0)
		close(fd);
	if (r)
		log_err("cannot write the sequence state '%s': %s", s->seq_path, strerror(-r));
	free(tmp);
	return r;
}

/* Keep next_seq below the reservation in PATH.seq, written (and synced)
 * before a number beyond the last reservation is used. */
static int reserve(struct spool *s)
{
	if (!s->seq_path || s->next_seq < s->reserved_seq)
		return 0;
	s->reserved_seq = s->next_seq + SPOOL_SEQ_BLOCK;
	return write_state(s, true);
}

/* Rewrite the file with the queue only. */
static int rewrite(struct spool *s)
{
	char *tmp;
	int fd, r = 0;
	uint64_t bytes = 0;

	if (s->fd < 0)
		return 0;
	tmp = xasprintf("%s.tmp", s->path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		r = -errno;
	for (size_t i = s->head; !r && i < s->n; i++) {
		size_t len;
		char *env = envelope(&s->v[i], &len);
		if (!env) {
			r = -ENOMEM;
			break;
		}
		env[len] = '\0';
		r = write_all(fd, env, len);
		if (!r)
			r = write_all(fd, "\n", 1);
		bytes += len + 1;
		free(env);
	}
	if (!r && rename(tmp, s->path))
		r = -errno;
	if (fd >= 0)
		close(fd);
	if (r) {
		log_err("cannot rewrite the spool '%s': %s", s->path, strerror(-r));
		unlink(tmp);
		free(tmp);
		return r;
	}
	free(tmp);
	close(s->fd);
	s->fd = open(s->path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (s->fd < 0)
		return -errno;
	s->file_bytes = bytes;
	return 0;
}

static void entry_free(struct entry *e)
{
	free(e->run);
	free(e->line);
}

/* Append e to the in-memory queue (takes its strings). */
static void enqueue(struct spool *s, struct entry *e)
{
	if (s->n == s->cap) {
		if (s->head) {   /* slide the queue to the front */
			memmove(s->v, s->v + s->head, (s->n - s->head) * sizeof(*s->v));
			s->n -= s->head;
			s->head = 0;
		}
		if (s->n == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 1024;
			s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
		}
	}
	s->v[s->n++] = *e;
	s->pending_bytes += e->env_len + 1;
}

/* Read the spool file back into the queue. A line that is not an
 * envelope, or whose seq is not above the last one kept (a duplicate or a
 * line out of order), is dropped and counted; every intact envelope after
 * it is kept, so damage in the middle loses only what it covers. Numbers
 * may then jump (the damaged lines held them): spool_batch stops a batch at
 * the jump and the server's 409 heals it, as for spool_drop_first. */
static int load(struct spool *s)
{
	char *text = NULL, *p, *nl;
	size_t len = 0;
	int r = read_file(&text, &len, s->path, 0);

	if (r == -ENOENT)
		return 0;
	if (r)
		return r;
	for (p = text; p < text + len; p = nl + 1) {
		json_t *o;
		json_int_t seq;
		const char *run, *line;
		size_t llen;

		nl = memchr(p, '\n', (size_t)(text + len - p));
		if (!nl) {
			/* a torn last line: the record was never acknowledged
			 * and its number never sent whole; renumbering heals */
			s->load_dropped_lines++;
			s->load_dropped_bytes += (uint64_t)(text + len - p);
			break;
		}
		o = json_loadb(p, (size_t)(nl - p), 0, NULL);
		if (!o) {
			/* garbage without a newline of its own runs into the
			 * next envelope: resync on the envelope's start */
			char *q = memmem(p + 1, (size_t)(nl - p - 1), ENV_START, strlen(ENV_START));
			if (q) {
				s->load_dropped_lines++;
				s->load_dropped_bytes += (uint64_t)(q - p);
				nl = q - 1;   /* the loop goes on at q */
				continue;
			}
		}
		json_t *rec = json_object_get(o, "record");
		char *rtext = NULL;
		line = NULL;
		llen = 0;
		if (o && json_is_object(rec) && !json_unpack(o, "{s:I, s:s}", "seq", &seq, "run", &run)) {
			line = rtext = json_dumps_exact(rec, JSON_COMPACT);
			llen = line ? strlen(line) : 0;
		} else if (!o || json_unpack(o, "{s:I, s:s, s:s%}", "seq", &seq, "run", &run, "line",
					     &line, &llen)) {
			line = NULL;   /* neither form */
		}
		if (!line || seq < 1 || (s->n > s->head && seq <= s->v[s->n - 1].seq)) {
			s->load_dropped_lines++;
			s->load_dropped_bytes += (uint64_t)(nl - p) + 1;
			free(rtext);
			json_decref(o);
			continue;
		}
		if (seq <= s->acked_seq) {   /* stored already: its ack came before we stopped */
			free(rtext);
			json_decref(o);
			continue;
		}
		struct entry e = { .seq = seq, .run = xstrdup(run), .line = xstrndup(line, llen),
				   .len = llen, .as_record = rtext || line_is_record(line, llen) };
		free(envelope(&e, &e.env_len));
		enqueue(s, &e);
		free(rtext);
		json_decref(o);
	}
	free(text);
	if (s->load_dropped_lines)
		log_warn("spool '%s': dropped %" PRId64 " damaged or out-of-order lines (%" PRIu64
			 " bytes); kept the %zu intact records around them", s->path,
			 s->load_dropped_lines, s->load_dropped_bytes, s->n - s->head);
	if (s->n > s->head)
		s->next_seq = s->v[s->n - 1].seq + 1;
	return 0;
}

int spool_open(struct spool **out, const char *path, uint64_t max_bytes)
{
	struct spool *s = xcalloc(1, sizeof(*s));
	char *text = NULL;
	size_t len;
	int r;

	s->fd = -1;
	s->max_bytes = max_bytes;
	s->next_seq = 1;
	if (path) {
		s->path = xstrdup(path);
		s->seq_path = xasprintf("%s.seq", path);
		if (read_file(&text, &len, s->seq_path, 64) == 0) {
			char *end;
			s->reserved_seq = strtoll(text, &end, 10);
			s->acked_seq = strtoll(end, NULL, 10);
			if (s->reserved_seq > s->next_seq)
				s->next_seq = s->reserved_seq;
		}
		free(text);
		if ((r = load(s)))
			goto fail;
		if (s->n > s->head && s->v[s->n - 1].seq + 1 > s->next_seq)
			s->next_seq = s->v[s->n - 1].seq + 1;
		/* start a fresh file holding the queue (drops torn lines) */
		s->fd = open(s->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
		if (s->fd < 0) {
			r = -errno;
			goto fail;
		}
		if ((r = rewrite(s)) || (r = reserve(s)))
			goto fail;
		if (s->n > s->head)
			log_info("spool '%s': %zu records from before (seq %" PRId64 "..%" PRId64 ")",
				 s->path, s->n - s->head, s->v[s->head].seq, s->v[s->n - 1].seq);
	}
	if (s->n > s->head)
		s->acked_seq = s->v[s->head].seq - 1;
	*out = s;
	return 0;
fail:
	log_err("cannot open the spool '%s': %s", path, strerror(-r));
	spool_close(s);
	return r;
}

void spool_close(struct spool *s)
{
	if (!s)
		return;
	for (size_t i = s->head; i < s->n; i++)
		entry_free(&s->v[i]);
	free(s->v);
	if (s->fd >= 0)
		close(s->fd);
	free(s->path);
	free(s->seq_path);
	free(s);
}

int spool_push(struct spool *s, const char *run, const char *line, size_t len)
{
	struct entry e = { .seq = s->next_seq, .run = (char *)run, .line = (char *)line, .len = len,
			   .as_record = line_is_record(line, len) };
	char *env;
	int r;

	env = envelope(&e, &e.env_len);
	if (!env)
		return -EINVAL;
	if (s->pending_bytes + e.env_len + 1 > s->max_bytes) {
		free(env);
		s->dropped++;
		return -ENOSPC;
	}
	if (s->fd >= 0) {
		env[e.env_len] = '\n';   /* json_dumps left room: its NUL */
		r = write_all(s->fd, env, e.env_len + 1);
		if (r) {
			free(env);
			log_err("cannot append to the spool '%s': %s", s->path, strerror(-r));
			return r;
		}
		s->file_bytes += e.env_len + 1;
	}
	free(env);
	e.run = xstrdup(run);
	e.line = xstrndup(line, len);
	enqueue(s, &e);
	s->next_seq++;
	s->queued++;
	return reserve(s);
}

int spool_batch(struct spool *s, char **out, size_t *len, size_t *n, size_t max_records,
		size_t max_bytes)
{
	struct buf b = BUF_INIT;
	size_t k = 0;

	for (size_t i = s->head; i < s->n && k < max_records; i++, k++) {
		size_t elen;
		char *env;

		if (k && b.len + s->v[i].env_len + 1 > max_bytes)
			break;
		if (k && s->v[i].seq != s->v[i - 1].seq + 1)
			break;   /* a hole load() left: a batch is consecutive */
		env = envelope(&s->v[i], &elen);
		if (!env) {
			buf_release(&b);
			return -ENOMEM;
		}
		buf_append(&b, env, elen);
		buf_append(&b, "\n", 1);
		free(env);
	}
	*n = k;
	*len = b.len;
	*out = b.ptr ? buf_detach(&b) : xstrdup("");
	return 0;
}

/* Drop queued records up to seq; rewrite or truncate the file when worth it. */
static int drop_through(struct spool *s, int64_t seq)
{
	while (s->head < s->n && s->v[s->head].seq <= seq) {
		s->pending_bytes -= s->v[s->head].env_len + 1;
		entry_free(&s->v[s->head]);
		s->head++;
	}
	if (s->head == s->n) {
		s->head = s->n = 0;
		s->pending_bytes = 0;
		if (s->fd >= 0 && s->file_bytes) {
			if (ftruncate(s->fd, 0))
				return -errno;
			s->file_bytes = 0;
		}
		return 0;
	}
	if (s->fd >= 0 && s->file_bytes > 2 * s->pending_bytes + (1u << 20))
		return rewrite(s);
	return 0;
}

int spool_ack(struct spool *s, int64_t acked_seq)
{
	int r = drop_through(s, acked_seq);

	if (r || acked_seq <= s->acked_seq)
		return r;
	s->acked_seq = acked_seq;
	/* so a restart does not resend what the server has (it would drop it) */
	return s->seq_path ? write_state(s, false) : 0;
}

/* The server's word on what it has, which may be less than we thought
 * (a store that was reset): kept in PATH.seq at once. */
static int set_acked(struct spool *s, int64_t acked_seq)
{
	if (acked_seq == s->acked_seq)
		return 0;
	s->acked_seq = acked_seq;
	return s->seq_path ? write_state(s, false) : 0;
}

int spool_expect(struct spool *s, int64_t expected_seq)
{
	int r;

	if (expected_seq < 1)
		return -EINVAL;
	if ((r = drop_through(s, expected_seq - 1)))
		return r;
	/* the acked mark, then what is left renumbered when the queue starts
	 * above what the server has */
	return spool_rebase(s, expected_seq);
}

int spool_rebase(struct spool *s, int64_t expected_seq)
{
	int r;

	/* the state first: a crash before the rewrite leaves the old numbers
	 * with a lower acked mark, which a 409 renumbers again */
	if ((r = set_acked(s, expected_seq - 1)))
		return r;
	if (s->head == s->n) {
		s->next_seq = expected_seq;
		return reserve(s);
	}
	if (s->v[s->head].seq == expected_seq)
		return 0;
	log_warn("renumbering %zu queued records from seq %" PRId64 " to %" PRId64
		 " (the server has no record at or above %" PRId64 ")", s->n - s->head,
		 s->v[s->head].seq, expected_seq, expected_seq);
	for (size_t i = s->head; i < s->n; i++) {
		s->pending_bytes -= s->v[i].env_len;
		s->v[i].seq = expected_seq + (int64_t)(i - s->head);
		free(envelope(&s->v[i], &s->v[i].env_len));
		s->pending_bytes += s->v[i].env_len;
		s->renumbered++;
	}
	s->next_seq = s->v[s->n - 1].seq + 1;
	if ((r = rewrite(s)))
		return r;
	return reserve(s);
}

int spool_drop_first(struct spool *s)
{
	if (s->head == s->n)
		return 0;
	s->dropped++;
	return drop_through(s, s->v[s->head].seq);
}

void spool_stats(const struct spool *s, struct spool_stats *out)
{
	out->queued = s->queued;
	out->dropped = s->dropped;
	out->acked_seq = s->acked_seq;
	out->next_seq = s->next_seq;
	out->pending = (int64_t)(s->n - s->head);
	out->pending_bytes = s->pending_bytes;
	out->renumbered = s->renumbered;
	out->load_dropped_lines = s->load_dropped_lines;
	out->load_dropped_bytes = s->load_dropped_bytes;
}
