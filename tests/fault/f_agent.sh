#!/bin/sh
# Faults in the fleet agent (issue 18), injected for real:
#  - the agent daemon SIGKILLed while its workload runs: the workload child
#    and the script's own children die with it (none left re-parented to
#    init beside a restarted daemon's new one);
#  - a workload script's children start with SIGPIPE at its default (the
#    agent ignores it for itself), so `yes | head -1` ends as in a shell.
# Prints "fault-table:" lines for `make test`'s table. No server is needed:
# the daemon runs its workload while it retries the (absent) server.
set -eu
B=${B:-build}
case $B in /*) ;; *) B=$PWD/$B ;; esac
AG=$B/kcanary-agent
tmp=$(mktemp -d /var/tmp/kc-t-agent.XXXXXX)
dpid=
cleanup() {
	[ -n "$dpid" ] && kill -9 $dpid 2>/dev/null
	pkill_marker
	rm -rf "$tmp"
}
# the workload's processes are found by a marker in their command line,
# unique to this test run (never a broad name), matched whole (pgrep -x):
# the daemon's and the script shell's own argv hold the marker too, and
# must not count as the workload's two sleeps having started
marker=31$$
pkill_marker() {
	for p in $(pgrep -fx "sleep $marker" || true); do kill -9 $p 2>/dev/null || true; done
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
echo token > $tmp/token

# --- SIGPIPE in a workload script ------------------------------------------
# bit 12 of SigIgn is SIGPIPE (13): 0 when the script's children take it as default
$AG run command cgroup=0 timeout_s=20 \
	'cmd=echo metric sigpipe_ignored $(( (0x$(grep SigIgn /proc/self/status | cut -f2) >> 12) & 1 ))' \
	--out $tmp/sigpipe.jsonl 2>$tmp/sigpipe.err || fail "workload failed: $(cat $tmp/sigpipe.err)"
grep -q '"metric":"sigpipe_ignored","value":0' $tmp/sigpipe.jsonl ||
	fail "a workload script's child has SIGPIPE ignored: $(grep sigpipe $tmp/sigpipe.jsonl)"
echo "fault-table: workload child's SIGPIPE disposition|1|1|0"

# --- daemon SIGKILLed with its workload running ----------------------------
kills=${FAULT_KILLS:-3}
for i in $(seq $kills); do
	$AG daemon --server http://127.0.0.1:18399 --token-file $tmp/token --host-id fault-$$ \
		--interval 1s --spool $tmp/spool -q --workload command --every 1h cgroup=0 \
		timeout_s=600 "cmd=sleep $marker & sleep $marker; wait" \
		> $tmp/daemon.out 2>&1 &
	dpid=$!
	for j in $(seq 100); do
		[ "$(pgrep -fxc "sleep $marker" || true)" -ge 2 ] && break
		sleep 0.1
	done
	[ "$(pgrep -fxc "sleep $marker" || true)" -ge 2 ] || fail "the workload did not start: $(cat $tmp/daemon.out)"
	kill -9 $dpid; wait $dpid 2>/dev/null || true; dpid=
	for j in $(seq 50); do
		[ "$(pgrep -fxc "sleep $marker" || true)" = 0 ] && break
		sleep 0.1
	done
	left=$(pgrep -fxa "sleep $marker" || true)
	[ -z "$left" ] || fail "after a SIGKILL of the daemon (kill $i) its workload is left running: $left"
done
echo "fault-table: agent daemon SIGKILL with a workload running|$kills|$kills|0"
echo "ok: the workload dies with a killed daemon; scripts get SIGPIPE at its default"
