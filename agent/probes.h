/* probes.h - kernel-side counters the workloads report next to lag,
 * collected by the BPF programs of probes.bpf.c (libbpf CO-RE, skeleton
 * generated at build time; see the Makefile):
 *
 *   cgroup_writeback_by_id  kretprobe: histogram of return values; -2
 *                           (-ENOENT) is a foreign flush that found no wb
 *                           for the memcg (the seed's signal)
 *   balance_dirty_pages     tracepoint writeback:balance_dirty_pages:
 *                           events, pauses (> 0), total and max pause (ms,
 *                           as the tracepoint reports it)
 *   flush_foreign           tracepoint writeback:flush_foreign: count
 *   inode_switch_wbs        tracepoint writeback:inode_switch_wbs: count
 *
 * The shared counter layout lives here so the BPF side and the loader agree.
 * Counts are cumulative from probes_open(). Used from one thread.
 */
#ifndef KC_PROBES_H
#define KC_PROBES_H

#ifndef __bpf__
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"
#endif

/* Indices of the counters in the BPF program's `counters` array. */
enum probe_counter {
	PC_BDP_EVENTS = 0,     /* balance_dirty_pages tracepoint hits */
	PC_BDP_PAUSES,         /* ... with pause > 0 */
	PC_BDP_PAUSE_MS_TOTAL, /* sum of pause, ms */
	PC_BDP_PAUSE_MS_MAX,   /* largest pause, ms */
	PC_FLUSH_FOREIGN,      /* writeback:flush_foreign hits */
	PC_INODE_SWITCH_WBS,   /* writeback:inode_switch_wbs hits */
	PC_NR,
};

#ifndef __bpf__

struct rec_out;
struct probes;

#define PROBES_MAX_RET 32   /* distinct return values kept */

struct probe_snap {
	uint64_t counters[PC_NR];
	int nret;
	int ret_value[PROBES_MAX_RET];       /* sorted ascending */
	uint64_t ret_count[PROBES_MAX_RET];
};

/*
 * probes_open - load and attach what can be attached. *out is set when at
 * least one probe is attached (free with probes_close()). missing (reset
 * first) gets a comma-separated list of the probes that are not attached
 * ("" when everything attached), and whenever it is not empty err
 * (error.h) says why in one line: on a failure, and also on a 0 return
 * with some missing. Returns 0 (possibly with some missing), -ENOTSUP
 * (agent built without BPF support), -ENOENT (no probe could be attached)
 * or another -errno.
 */
int probes_open(struct probes **out, struct buf *missing, struct buf *err);
void probes_close(struct probes *p);

/* probes_snap - read the counters now. 0 or -errno. */
int probes_snap(struct probes *p, struct probe_snap *out);

/* probe_snap_ret - the count of return value v (0 if never seen). */
uint64_t probe_snap_ret(const struct probe_snap *s, int v);

/*
 * probes_emit - write `probe` records at t for every counter (cumulative
 * counts, each return value of cgroup_writeback_by_id seen so far; not
 * PC_BDP_PAUSE_MS_MAX, a maximum, which workloads put in their summary).
 * NULL p is a no-op.
 */
int probes_emit(struct probes *p, struct rec_out *r, double t);

/* The names every probe has in records, for probes_unavailable. */
extern const char probes_all_names[];

#endif
#endif
