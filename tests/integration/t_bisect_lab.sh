#!/bin/sh
# t_bisect_lab.sh - `kcanary bisect --hosts all` on a lab of two hosts on
# this machine: the local daemon and a second libvirtd on 127.0.0.1 TCP
# (private_libvirtd, as t_lab_hosts.sh). The candidates are Debian's two
# cloud kernels as in t_bisect_kernels.sh (107a 117a 117b, the `command`
# workload printing the booted kernel's sublevel as the metric), fixed
# strategy, 2 runs per endpoint, a culprit check of 2 (grown to 4) a side.
# Checks: the culprit is the one the one-host bisection with the same
# options finds (117a) and the log is that one's byte for byte (answers in
# the order the engine asked), runs went to both hosts, the endpoint
# round's runs overlapped in time (started and finished in the store) on
# the two hosts, the check ran on both, progress lines name the host, the
# log replays to the same result; then a bisection during which the second
# daemon is killed: its run is 'infra', run again on local, never an answer.
set -u
. tests/integration/guest-lib.sh

OLD=/boot/vmlinuz-6.12.107+deb12-cloud-amd64
[ -r "$OLD" ] || fail "no second kernel $OLD (linux-image-6.12.107+deb12-cloud-amd64-unsigned)"
K=$HOME_DIR/k
mkdir -p "$K"
ln -s "$OLD" "$K/107a"
ln -s "$KERNEL" "$K/117a"
ln -s "$KERNEL" "$K/117b"
# shellcheck disable=SC2016
CMD='cmd=echo metric sublevel $(uname -r | cut -d. -f3 | cut -d+ -f1)'
BIS="--workload command --metric sublevel --strategy fixed --watchdog 120s --vcpus 1"

echo "-- one host: 107a 117a 117b"
start=$(date +%s)
# shellcheck disable=SC2086
$KC bisect --kernels "$K/107a,$K/117a,$K/117b" --set "$CMD" $BIS --repeats 2 --check-runs 2 \
	>"$HOME_DIR/out.0" 2>"$HOME_DIR/err.0" || fail "one-host bisect: $(tail -5 "$HOME_DIR/err.0")"
echo "   took $(( $(date +%s) - start )) s"
grep -A1 "^culprit" "$HOME_DIR/out.0" | grep -q "$K/117a (candidate 1)" ||
	fail "one host: culprit is not 117a: $(cat "$HOME_DIR/out.0")"
$KC bisect log 1 >"$HOME_DIR/log.0" || fail "bisect log 1"

PORT=${KCANARY_BISECT_LAB_PORT:-16500}
H2DIR=$(mktemp -d /var/tmp/kcbl-h2.XXXXXX)
private_libvirtd "$H2DIR" "$PORT"
KCQ="$PWD/$B/kcanary"
$KCQ lab add local qemu:///system >/dev/null || fail "lab add local"
$KCQ lab add h2 "qemu+tcp://127.0.0.1:$PORT/system" >/dev/null || fail "lab add h2"

echo "-- two hosts: the same bisection with --hosts all"
start=$(date +%s)
# shellcheck disable=SC2086
$KC bisect --kernels "$K/107a,$K/117a,$K/117b" --set "$CMD" $BIS --repeats 2 --check-runs 2 \
	--hosts all --name lab >"$HOME_DIR/out.1" 2>"$HOME_DIR/err.1"
rc=$?
cat "$HOME_DIR/out.1"
[ $rc = 0 ] || fail "bisect --hosts all exited $rc: $(tail -20 "$HOME_DIR/err.1")"
echo "   took $(( $(date +%s) - start )) s"
J="job_id = (SELECT id FROM jobs WHERE name = 'lab')"
grep -A1 "^culprit" "$HOME_DIR/out.1" | grep -q "$K/117a (candidate 1)" ||
	fail "two hosts: culprit is not 117a"
grep -q "^culprit check: parent 0 .*: passed$" "$HOME_DIR/out.1" || fail "the culprit check did not pass"
[ "$(q "SELECT count(DISTINCT lab_host) FROM runs WHERE $J AND status = 'ok'")" = 2 ] ||
	fail "runs not on both hosts: $(q "SELECT id, lab_host, status FROM runs WHERE $J")"
[ "$(q "SELECT count(*) FROM runs WHERE $J AND (lab_host IS NULL OR status != 'ok')")" = 0 ] ||
	fail "runs without a host or not ok: $(q "SELECT id, lab_host, status FROM runs WHERE $J")"
# the endpoint round: 2 pairs (107a, 117b), one a host, at the same time
ep="r.$J AND r.repeat_idx <= 2 AND r.variant_id IN (SELECT id FROM variants v
	WHERE v.job_id = r.job_id AND (v.name LIKE 'k0 %' OR v.name LIKE 'k2 %'))"
[ "$(q "SELECT count(*) || ' ' || count(DISTINCT lab_host) FROM runs r WHERE $ep")" = "4 2" ] ||
	fail "endpoint runs: $(q "SELECT r.id, r.variant_id, r.repeat_idx, r.lab_host FROM runs r WHERE $ep")"
ov=$(q "SELECT count(*) FROM runs a, runs b WHERE a.id IN (SELECT r.id FROM runs r WHERE $ep)
	AND b.id IN (SELECT r.id FROM runs r WHERE $ep) AND a.lab_host < b.lab_host
	AND a.started_at < b.finished_at AND b.started_at < a.finished_at")
[ "${ov:-0}" -ge 1 ] || fail "no endpoint runs on the two hosts overlapped: $(q "SELECT r.id, r.lab_host,
	r.started_at, r.finished_at FROM runs r WHERE $ep")"
q "SELECT 'endpoint run ' || r.id || ' on ' || r.lab_host || ': ' || r.started_at || ' .. ' ||
	r.finished_at FROM runs r WHERE $ep ORDER BY r.id"
# the check's runs (after the search's) went to both hosts as well
chk=$(q "SELECT count(DISTINCT lab_host) FROM runs WHERE $J AND repeat_idx > 4")
[ "$chk" = 2 ] || fail "check runs on $chk host(s): $(q "SELECT id, variant_id, repeat_idx, lab_host FROM runs WHERE $J")"
grep -q "^run [0-9]*/[0-9]* k0 .* on local$" "$HOME_DIR/err.1" || fail "no progress line names local"
grep -q "^run [0-9]*/[0-9]* k[0-9] .* on h2$" "$HOME_DIR/err.1" || fail "no progress line names h2"
$KCQ bisect log "$(q "SELECT id FROM jobs WHERE name = 'lab'")" >"$HOME_DIR/log.1" || fail "bisect log"
$KCQ bisect replay "$HOME_DIR/log.1" >"$HOME_DIR/replay.1" || fail "replay: $(cat "$HOME_DIR/replay.1")"
grep -q "same result" "$HOME_DIR/replay.1" || fail "replay did not reach the same result"
# answers logged in the order the engine asked: the one-host log, byte for byte
cmp "$HOME_DIR/log.0" "$HOME_DIR/log.1" || fail "the two-host log differs from the one-host log:
$(diff "$HOME_DIR/log.0" "$HOME_DIR/log.1" | head -20)"

echo "-- a host that drops mid-run: its run is infra and is run again on local"
# shellcheck disable=SC2086
$KC bisect --kernels "$K/107a,$K/117a,$K/117b" --set "$CMD" $BIS --repeats 1 --check-runs 0 \
	--hosts all --name drop >"$HOME_DIR/out.2" 2>"$HOME_DIR/err.2" &
pid=$!
D="job_id = (SELECT id FROM jobs WHERE name = 'drop')"
i=0
until [ "$(q "SELECT count(*) FROM runs WHERE $D AND lab_host = 'h2' AND status = 'running'
	AND guest_json IS NOT NULL" 2>/dev/null)" = 1 ]; do
	kill -0 $pid 2>/dev/null || fail "the bisection ended before a run on h2 got going: $(tail -5 "$HOME_DIR/err.2")"
	i=$((i + 1))
	[ $i -lt 600 ] || fail "no run on h2 got going"
	sleep 0.5
done
dropped=$(q "SELECT id FROM runs WHERE $D AND lab_host = 'h2' AND status = 'running'")
echo "   killing the second daemon during run $dropped"
sh tools/libvirtd-tcp.sh stop "$H2DIR"
wait $pid
rc=$?
cat "$HOME_DIR/out.2"
[ $rc = 0 ] || fail "bisect with a dropped host exited $rc: $(tail -20 "$HOME_DIR/err.2")"
grep -A1 "^culprit" "$HOME_DIR/out.2" | grep -q "$K/117a (candidate 1)" || fail "drop: culprit is not 117a"
[ "$(q "SELECT status FROM runs WHERE id = $dropped")" = infra ] ||
	fail "the dropped run is $(q "SELECT status, error FROM runs WHERE id = $dropped")"
[ "$(q "SELECT count(*) FROM runs WHERE $D AND status = 'infra' AND lab_host != 'h2'")" = 0 ] ||
	fail "infra runs off h2: $(q "SELECT id, lab_host, status FROM runs WHERE $D")"
v=$(q "SELECT variant_id FROM runs WHERE id = $dropped")
[ "$(q "SELECT count(*) FROM runs WHERE $D AND variant_id = $v AND id > $dropped AND status = 'ok'
	AND lab_host = 'local'")" -ge 1 ] || fail "the dropped run was not run again on local: $(q "SELECT id,
	variant_id, lab_host, status FROM runs WHERE $D")"
# no answer came from the dropped run: the log has one run line per ok run the engine asked for
grep -q "^totals: 3 builds (0 failed), [0-9]* boots, 3 runs with a value, 0 skips" "$HOME_DIR/out.2" ||
	fail "drop: totals: $(grep totals "$HOME_DIR/out.2")"
n=$(q "SELECT count(*) FROM runs WHERE $J")
echo "ok: culprit 117a as on one host, same log; $n runs on local and h2, endpoint runs overlapped;"
echo "    h2 dropped during run $dropped (infra), run again on local, same culprit"
