/* spool.h - the daemon's queue of records not yet acknowledged by the
 * server, numbered with the agent's sequence numbers 1, 2, 3, … and kept
 * in a bounded file on disk, so that nothing is lost while the server is
 * unreachable or the agent restarts, and nothing is stored twice (the
 * server drops sequence numbers it already has).
 *
 * Each queued record is an envelope {"seq": N, "run": "KEY", "record":
 * RECORD} (form 2: the record, a JSON object, in place; a line that is not
 * one goes as the first form's string, "line": "TEXT"): the wire format of
 * POST /api/v1/agents/{host}/records (docs/api.md). spool_open() reads
 * either form back (a spool an older agent wrote). The spool file holds the envelopes of the queue, one per
 * line, appended as records are queued and rewritten when acknowledged
 * ones make up half of it (truncated when all are). Next to it,
 * PATH.seq holds "<reserved> <acked>": a reservation of sequence numbers
 * (blocks of SPOOL_SEQ_BLOCK, written with fsync before a number past it
 * is used), so a restarted agent never reuses one, even with an empty
 * spool; and the highest number acknowledged, so it does not resend those
 * (were it lost, the server would drop them as duplicates). Without a path
 * the queue lives in memory only.
 *
 * The bound (max_bytes, of envelope text) is on the queue: a record that
 * would pass it is dropped and counted, not queued, and gets no number
 * (so the numbers stay contiguous). One thread.
 */
#ifndef KC_SPOOL_H
#define KC_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#define SPOOL_SEQ_BLOCK 100000

struct spool;

struct spool_stats {
	int64_t queued;        /* records numbered in this process */
	int64_t dropped;       /* records refused: the queue was full */
	int64_t acked_seq;     /* highest sequence number the server stored */
	int64_t next_seq;      /* number of the next record queued */
	int64_t pending;       /* records queued, not acknowledged */
	uint64_t pending_bytes;
	int64_t renumbered;    /* records renumbered after a 409 */
	int64_t load_dropped_lines;   /* spool file lines spool_open could not use */
	uint64_t load_dropped_bytes;  /* and their bytes */
};

/*
 * spool_open - open (or create) the spool at path (NULL: memory only) with
 * a bound of max_bytes. Envelopes already in the file are queued again,
 * in order; next_seq continues after them and after the reservation.
 * Returns 0 or -errno (a file that cannot be read or written; a line
 * that is not an envelope is skipped with a warning).
 */
int spool_open(struct spool **out, const char *path, uint64_t max_bytes);
void spool_close(struct spool *s);

/* spool_push - queue one record (line, len bytes, no newline) of stream
 * run. 0, -ENOSPC (dropped: the queue is full) or -errno (the file). */
int spool_push(struct spool *s, const char *run, const char *line, size_t len);

/*
 * spool_batch - the first queued envelopes (at most max_records, and
 * max_bytes of text unless the first alone is larger), newline-separated,
 * in a new string (*out, caller frees); *n gets their count. *n 0 when
 * the queue is empty.
 */
int spool_batch(struct spool *s, char **out, size_t *len, size_t *n, size_t max_records,
		size_t max_bytes);

/* spool_ack - the server stored every record up to acked_seq: drop them. */
int spool_ack(struct spool *s, int64_t acked_seq);

/*
 * spool_expect - the server answered that the next record it will store is
 * expected_seq (a 409, or a registration). Queued records below it are
 * stored already and dropped; when the queue starts above it (numbers the
 * server never got: an agent that lost its spool), the queue is renumbered
 * from expected_seq, which is safe because the server stores nothing at or
 * above its expected number. A queue that is empty takes next_seq up to
 * expected_seq.
 */
int spool_expect(struct spool *s, int64_t expected_seq);

/*
 * spool_rebase - number the whole queue from first_seq on, whatever it had:
 * for a memory-only queue whose numbers were given before the agent knew
 * the server's (its first registration), so none of them can be stored.
 */
int spool_rebase(struct spool *s, int64_t first_seq);

/*
 * spool_drop_first - drop the first queued record without the server
 * having it (it refused it: too large), counted in dropped. The hole it
 * leaves is healed like any gap: the server's 409 renumbers the queue.
 */
int spool_drop_first(struct spool *s);

void spool_stats(const struct spool *s, struct spool_stats *out);

#endif
