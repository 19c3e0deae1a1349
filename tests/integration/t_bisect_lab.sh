#!/bin/sh
# t_bisect_lab.sh - `kcanary bisect --hosts all` on a lab of two hosts on
# this machine: the local daemon and a second libvirtd on 127.0.0.1 TCP
# (private_libvirtd, as t_lab_hosts.sh). The candidates are Debian's two
# cloud kernels as in t_bisect_kernels.sh (107a 117a 117b, the `command`
# workload printing the booted kernel's sublevel as the metric), fixed
# strategy, 2 runs per endpoint, a culprit check of 2 (grown to 4) a side.
# Checks: the culprit is the one the one-host bisection finds (117a), runs
# went to both hosts, the endpoint round's runs overlapped in time (started
# and finished in the store) on the two hosts, the check ran on both, each
# progress line names its host, and the log replays to the same result.
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
# shellcheck disable=SC2086
$KC bisect --kernels "$K/107a,$K/117a,$K/117b" --set "$CMD" $BIS --repeats 1 --check-runs 0 \
	>"$HOME_DIR/out.0" 2>"$HOME_DIR/err.0" || fail "one-host bisect: $(tail -5 "$HOME_DIR/err.0")"
grep -A1 "^culprit" "$HOME_DIR/out.0" | grep -q "$K/117a (candidate 1)" ||
	fail "one host: culprit is not 117a: $(cat "$HOME_DIR/out.0")"

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
n=$(q "SELECT count(*) FROM runs WHERE $J")
echo "ok: culprit 117a as on one host; $n runs on local and h2, endpoint runs overlapped; replay same"
