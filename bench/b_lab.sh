#!/bin/sh
# Lab hosts (issue 14): the same 8-run compare (2 variants x 4 repeats,
# 1-vCPU guests, wb-handover scaled down for TCG) on two hosts and on one,
# as wall times and their ratio (one run each; on a 2-core machine expect
# >= 1.6x), and the bytes each job uploaded into the hosts' pools (the
# second job uses the same kernel and initramfs: 0). The two hosts are the
# local daemon and a second libvirtd on 127.0.0.1 TCP in its own
# namespaces (tools/libvirtd-tcp.sh). Needs root, the Debian cloud kernel
# and a libvirt daemon; reports and exits 0 otherwise.
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
PORT=${KCANARY_BENCH_LAB_PORT:-18530}
KERNEL=${KCANARY_BENCH_KERNEL:-/boot/vmlinuz-6.12.117+deb12-cloud-amd64}
if [ "$(id -u)" != 0 ] || [ ! -r "$KERNEL" ]; then
	echo "lab: skipped (needs root and $KERNEL; run 'make deps')"
	exit 0
fi
sh tools/libvirtd-up.sh -q || { echo "lab: skipped (no libvirt daemon)"; exit 0; }
tmp=$(mktemp -d /var/tmp/kcbench-lab.XXXXXX)
trap 'sh tools/libvirtd-tcp.sh stop "$tmp/h2"; rm -rf "$tmp"' EXIT
export KCANARY_HOME=$tmp/home KCANARY_AGENT=$PWD/$B/kcanary-agent
mkdir -p "$KCANARY_HOME" "$tmp/h2"
sh tools/libvirtd-tcp.sh start "$tmp/h2" "$PORT" "$KCANARY_HOME" 2>/dev/null ||
	{ echo "lab: skipped (the second libvirtd did not start)"; exit 0; }
KC="$B/kcanary"
$KC lab add local qemu:///system >/dev/null && $KC lab add h2 "qemu+tcp://127.0.0.1:$PORT/system" >/dev/null
SHORT="--set rate_mbps=8 --set nfiles=10 --set old_s=4 --set settle_s=1 --set measure_s=8"
q() { sqlite3 -batch -noheader "$KCANARY_HOME/kcanary.db" "$@"; }
job() {  # job NAME HOSTS: wall seconds on stdout
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	$KC compare --name "$1" --kernels "$KERNEL" --aa --repeat 4 --seed 1 --vcpus 1 $SHORT \
		--hosts "$2" -q >"$tmp/$1.out" 2>"$tmp/$1.err" || { tail -5 "$tmp/$1.err" >&2; return 1; }
	echo "$(date +%s.%N) $t0" | awk '{ printf "%.1f\n", $1 - $2 }'
}
sent() {
	q "SELECT coalesce(sum(json_extract(guest_json, '$.uploaded_bytes')), 0) FROM runs r
	   JOIN jobs j ON j.id = r.job_id WHERE j.name = '$1'"
}
ok() { q "SELECT count(*) FROM runs r JOIN jobs j ON j.id = r.job_id WHERE j.name = '$1' AND r.status = 'ok'"; }
two=$(job two local,h2) || { echo "lab: the two-host job failed"; exit 1; }
one=$(job one local) || { echo "lab: the one-host job failed"; exit 1; }
echo "lab: 8 runs (2 variants x 4 repeats, 1 vCPU, TCG): one host ${one} s, two hosts ${two} s," \
	"speedup $(echo "$one $two" | awk '{ printf "%.2f", $1 / $2 }')x" \
	"(ok runs: $(ok one) and $(ok two))"
echo "lab: bytes uploaded: first job (two hosts) $(sent two), second job (same kernel) $(sent one)"
# two hosts of one 1-vCPU guest each on this machine's 2 cores: the same
# 8 runs should take at most 1/1.5 of one host's time
echo "$one $two" | awk '{ s = $1 / $2; printf "target: 8 runs on two lab hosts >= 1.5x as fast as on one: %.2fx (%.1f s vs %.1f s): %s\n", s, $2, $1, (s >= 1.5 ? "met" : "NOT met") }'
