/* bpftrace.h - a bpftrace program beside any workload (the run knob
 * bpftrace=PROGRAM, taken by main.c before the workload's own knobs):
 * started before the workload, once its probes are attached; stopped with
 * SIGINT after it, when bpftrace prints its maps (-f json); each map entry
 * becomes a probe record, name "bpftrace:MAP" (without the @), key the map
 * key as bpftrace prints it ("" for a scalar map, "LOW-HIGH" for a
 * histogram bucket). So the seed's `@ret[(int32)retval] = count()` gives
 * probe bpftrace:ret key -2 with the -ENOENT count. Needs bpftrace (a
 * --rootfs debian:bpftrace guest).
 */
#ifndef KC_BPFTRACE_H
#define KC_BPFTRACE_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct rec_out;
struct bt;

/* One map entry: name "bpftrace:MAP", key, integer value (borrowed). */
typedef void bt_entry_fn(void *ud, const char *name, const char *key, int64_t value);

/*
 * bt_parse - call emit for every integer entry of the map and hist
 * records in bpftrace's -f json output text (one JSON object per line;
 * other record types and blank lines are skipped). Returns the number of
 * entries (non-integer values such as stats() or strings are skipped).
 */
int bt_parse(const char *text, bt_entry_fn *emit, void *ud);

/*
 * bt_start - run `bpftrace -f json -e PROGRAM` with its output in a file
 * of its own, and wait (up to attach_timeout_s) until it says its probes
 * are attached. 0; or -errno with a message in err (error.h) when it
 * cannot start, exits early (its stderr's last line) or does not attach
 * in time.
 */
int bt_start(struct bt **out, const char *program, double attach_timeout_s,
	     struct buf *err);

/*
 * bt_stop - SIGINT bpftrace, wait for its maps (up to 60 s, then SIGKILL),
 * emit each entry as a probe record at time t, and free. Returns the
 * number of entries, or -errno with err. NULL is fine (returns 0).
 */
int bt_stop(struct bt *b, struct rec_out *rec, double t, struct buf *err);

#endif
