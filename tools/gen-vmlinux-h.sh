#!/bin/sh
# gen-vmlinux-h.sh OUT - write the kernel's BTF as C (vmlinux.h) for the
# agent's CO-RE probes. Sources, first that works:
#   1. /sys/kernel/btf/vmlinux (the running kernel; $KCANARY_BTF overrides)
#   2. the .BTF section of a /boot/vmlinuz-* (the guest kernel, e.g.
#      Debian's linux-image-*-cloud-amd64): the bzImage payload is
#      decompressed (zstd, xz or gzip, found by magic as the kernel's
#      scripts/extract-vmlinux does) into an ELF that bpftool can read.
# CO-RE relocates field offsets at load time, so any recent kernel's types
# do. Exits 1 with a message when there is no source: the agent is then
# built without probes (see the Makefile).
set -u
out=$1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

try_btf() {
	bpftool btf dump file "$1" format c >"$tmp/vmlinux.h" 2>/dev/null &&
		grep -q 'struct trace_event_raw_balance_dirty_pages {' "$tmp/vmlinux.h" &&
		mv "$tmp/vmlinux.h" "$out" && echo "vmlinux.h from $2" >&2
}

command -v bpftool >/dev/null 2>&1 || { echo "gen-vmlinux-h: no bpftool" >&2; exit 1; }
src=${KCANARY_BTF:-/sys/kernel/btf/vmlinux}
[ -r "$src" ] && try_btf "$src" "$src" && exit 0

for img in /boot/vmlinuz-*; do
	[ -r "$img" ] || continue
	for fmt in zstd:'\x28\xb5\x2f\xfd' xz:'\xfd\x37\x7a\x58\x5a\x00' gzip:'\x1f\x8b\x08'; do
		tool=${fmt%%:*}
		command -v "$tool" >/dev/null 2>&1 || continue
		for off in $(LC_ALL=C grep -obUaP "${fmt#*:}" "$img" | cut -d: -f1 | head -5); do
			tail -c +$((off + 1)) "$img" | "$tool" -dc >"$tmp/vmlinux" 2>/dev/null
			[ -s "$tmp/vmlinux" ] || continue
			try_btf "$tmp/vmlinux" "$img ($tool payload at $off)" && exit 0
		done
	done
done
echo "gen-vmlinux-h: no kernel BTF found (/sys/kernel/btf/vmlinux, /boot/vmlinuz-*)" >&2
exit 1
