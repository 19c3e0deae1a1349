#!/bin/sh
# t_libvirtd_restart.sh - the libvirt daemon restarted under a running
# guest (issue 18): a compare of 2 runs (--aa, 1 repeat, 1-vCPU TCG guests)
# on a private libvirtd (tools/libvirtd-tcp.sh: its own namespaces and
# /var/lib/libvirt, 127.0.0.1 TCP); while a run is under way with samples
# the daemon is SIGKILLed and started again (its QEMU keeps running, as
# under `systemctl restart libvirtd`). That run is stored as 'infra' (never
# a result) and run again; the job ends 'done' with each planned run ok
# exactly once; nothing is left on the host: no domain, no QEMU, no scratch
# volume in pool 'kcanary', no channel socket. Prints a "fault-table:" line
# (tests/fault/run.sh shows it under `make soak`). Port 18530.
set -u
. tests/integration/guest-lib.sh

PORT=${KCANARY_RESTART_TEST_PORT:-18530}
LDIR=$(mktemp -d /var/tmp/kc-restart.XXXXXX)
private_libvirtd "$LDIR" "$PORT"
J="job_id = (SELECT id FROM jobs WHERE name = 'restart')"
$KC compare --name restart --kernels "$KERNEL" --aa --repeat 1 --seed 1 --vcpus 1 $SHORT \
	--watchdog 300s --connect "$URI" >"$HOME_DIR/out.1" 2>"$HOME_DIR/err.1" &
pid=$!
wait_run_going $pid "$HOME_DIR/err.1" "r.$J"
hit=$(q "SELECT id FROM runs WHERE $J AND status = 'running'")
dom=$(virsh -q -c "$URI" list --name | grep "^kcanary-r$hit-")
echo "-- restarting libvirtd during run $hit (domain $dom)"
sh tools/libvirtd-tcp.sh restart "$LDIR" "$PORT" || fail "libvirtd did not come back"
i=0
while kill -0 $pid 2>/dev/null && [ $i -lt 1200 ]; do sleep 0.5; i=$((i + 1)); done
kill -0 $pid 2>/dev/null && { kill -9 $pid; fail "compare still runs 600 s after the restart"; }
wait $pid
rc=$?
cat "$HOME_DIR/out.1"
[ $rc = 0 ] || fail "compare exited $rc: $(tail -20 "$HOME_DIR/err.1")"

[ "$(q "SELECT status FROM jobs WHERE name = 'restart'")" = done ] ||
	fail "job not done: $(q "SELECT status, error FROM jobs")"
[ "$(q "SELECT status FROM runs WHERE id = $hit")" = infra ] ||
	fail "the run the restart hit is $(q "SELECT status, error FROM runs WHERE id = $hit")"
ok=$(q "SELECT count(*) FROM runs WHERE $J AND status = 'ok'")
[ "$ok" = 2 ] || fail "not 2 ok runs: $(q "SELECT id, repeat_idx, status, error FROM runs")"
[ "$(q "SELECT count(*) FROM runs WHERE $J")" = 3 ] ||
	fail "expected 3 runs (2 + the infra one): $(q "SELECT id, repeat_idx, status, error FROM runs")"
[ "$(q "SELECT group_concat(n) FROM (SELECT count(*) n FROM runs WHERE $J AND status = 'ok'
	GROUP BY variant_id)")" = "1,1" ] || fail "not 1 ok run per variant"
[ "$(q "SELECT count(*) FROM runs r WHERE r.$J AND r.status = 'ok'
	AND (SELECT count(*) FROM samples s WHERE s.run_id = r.id) > 0")" = 2 ] || fail "an ok run has no samples"
# nothing left on the host
left=$(virsh -q -c "$URI" list --all --name | grep -c "^kcanary-" || true)
[ "$left" = 0 ] || fail "$left domains left on the host: $(virsh -q -c "$URI" list --all --name)"
vols=$(virsh -q -c "$URI" vol-list kcanary | grep -c -- "-scratch" || true)
[ "$vols" = 0 ] || fail "$vols scratch volumes left in pool kcanary: $(virsh -q -c "$URI" vol-list kcanary)"
tini=$(pgrep -P "$(cat "$LDIR/pid")" | head -n 1)
qemus=$(ps -o comm= --ppid "$tini" | grep -c qemu || true)
[ "$qemus" = 0 ] || fail "$qemus QEMU processes left in the daemon's namespace"
socks=$(find "$HOME_DIR/runs" -name '*.sock' | wc -l)
[ "$socks" = 0 ] || fail "$socks sockets left under $HOME_DIR/runs"
grep -q "infra" "$HOME_DIR/err.1" || fail "the infra run was not said: $(tail -5 "$HOME_DIR/err.1")"
echo "fault-table: libvirtd SIGKILLed and restarted mid-run (TCG guests)|1|1|$((2 - ok))"
echo "ok: run $hit hit by the restart is infra, run again; 2 runs ok once each; nothing left on the host"
