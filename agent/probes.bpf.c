// SPDX-License-Identifier: GPL-2.0
/* probes.bpf.c - kernel side of probes.h: count cgroup_writeback_by_id()
 * return values and the writeback tracepoints the wb hand-over exercises.
 * CO-RE: field offsets come from the running kernel's BTF at load time. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "probes.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, int);
	__type(value, __u64);
} wb_by_id_ret SEC(".maps");

/* The counters live in an array map, not in global data: libbpf decides
 * whether the kernel supports global data (.bss) by loading a socket
 * filter, and a guest kernel built without CONFIG_NET has none, so libbpf
 * 1.1 skips the .bss map and every program using it fails with EINVAL. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PC_NR);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count_add(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &idx);
	if (v)
		__sync_fetch_and_add(v, n);
}

SEC("kretprobe/cgroup_writeback_by_id")
int BPF_KRETPROBE(wb_by_id_exit, int ret)
{
	__u64 one = 1, *v;

	v = bpf_map_lookup_elem(&wb_by_id_ret, &ret);
	if (v) {
		__sync_fetch_and_add(v, 1);
	} else if (bpf_map_update_elem(&wb_by_id_ret, &ret, &one, BPF_NOEXIST)) {
		/* another CPU inserted it first */
		v = bpf_map_lookup_elem(&wb_by_id_ret, &ret);
		if (v)
			__sync_fetch_and_add(v, 1);
	}
	return 0;
}

/* pause is in ms: the event stores pause * 1000 / HZ
 * (include/trace/events/writeback.h, TRACE_EVENT(balance_dirty_pages)) */
SEC("tracepoint/writeback/balance_dirty_pages")
int bdp(struct trace_event_raw_balance_dirty_pages *ctx)
{
	long pause = ctx->pause;

	count_add(PC_BDP_EVENTS, 1);
	if (pause > 0) {
		__u32 imax = PC_BDP_PAUSE_MS_MAX;
		__u64 *max;

		count_add(PC_BDP_PAUSES, 1);
		count_add(PC_BDP_PAUSE_MS_TOTAL, (__u64)pause);
		/* racy max: a lost update between CPUs only under-reports */
		max = bpf_map_lookup_elem(&counters, &imax);
		if (max && (__u64)pause > *max)
			*max = (__u64)pause;
	}
	return 0;
}

SEC("tracepoint/writeback/flush_foreign")
int flush_foreign(void *ctx)
{
	count_add(PC_FLUSH_FOREIGN, 1);
	return 0;
}

SEC("tracepoint/writeback/inode_switch_wbs")
int inode_switch_wbs(void *ctx)
{
	count_add(PC_INODE_SWITCH_WBS, 1);
	return 0;
}
