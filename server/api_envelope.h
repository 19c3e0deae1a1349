/* api_envelope.h - one line of a fleet record batch (docs/api.md,
 * "Batches"): {"seq": N, "run": "KEY", "line": "RECORD"}, and the reader
 * of the form the agent writes, without jansson (api_fleet.c's
 * parse_batch() falls back to jansson for any other form).
 */
#ifndef KC_API_ENVELOPE_H
#define KC_API_ENVELOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest stream key (api_fleet.c's FLEET_MAX_NAME). */
#define API_ENVELOPE_MAX_RUN 128

struct api_envelope {
	int64_t seq;
	const char *run;     /* NUL-terminated, borrowed (the caller's pool) */
	const char *line;    /* the record, unescaped, NUL-terminated, borrowed */
	size_t len;          /* of line */
};

/*
 * api_envelope_fast - read the l bytes at p (one line, no newline) when
 * they are the envelope exactly as the agent writes it (agent/spool.c:
 * jansson's compact dump in packing order), {"seq":N,"run":"KEY","line":
 * "TEXT"}, without building jansson objects: each record was parsed twice
 * before, once as this envelope and once as the record (ingest_line), the
 * two 56% of the server's instructions under callgrind (issue 19 item 3).
 * Only what is surely the same as jansson's reading is taken: N digits
 * without a leading zero (at most 18), a KEY of 1-API_ENVELOPE_MAX_RUN
 * letters, digits, '_', '-', '.' or ':', and TEXT of printable ASCII with
 * the escapes \" \\ \/ \b \f \n \r \t. Anything else (spaces, another key
 * order, \u escapes, bytes < 0x20 or >= 0x80, more after the '}') returns
 * false, for json_loadb() to read (and say what is wrong).
 * On true, *out points into sp, where KEY NUL TEXT NUL were written (TEXT
 * unescaped); sp needs room for l bytes, and is scribbled on when false is
 * returned. fuzz_fleet checks every true against jansson's reading.
 */
bool api_envelope_fast(struct api_envelope *out, char *sp, const char *p, size_t l);

#endif
