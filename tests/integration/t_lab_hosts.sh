#!/bin/sh
# t_lab_hosts.sh - a lab of two hosts on this machine: the local daemon and
# a second libvirtd on 127.0.0.1 TCP (tools/libvirtd-tcp.sh: its own mount
# and PID namespaces, its own /var/lib/libvirt and /run, and a tmpfs over
# this test's $KCANARY_HOME, so a file the coordinator forgot to send over
# the connection fails the run). A compare of 2 variants x 4 repeats with
# 1-vCPU guests runs on both in whole blocks; the second daemon is killed
# mid-run: that run is stored as 'infra', run again on the first host, the
# second host is marked down, and every planned run is done exactly once.
set -u
. tests/integration/guest-lib.sh

PORT=${KCANARY_LAB_TEST_PORT:-18520}
H2DIR=$(mktemp -d /var/tmp/kclab-h2.XXXXXX)
KCQ="$PWD/$B/kcanary"
private_libvirtd "$H2DIR" "$PORT"
$KCQ lab add local qemu:///system >/dev/null || fail "lab add local"
$KCQ lab add h2 "qemu+tcp://127.0.0.1:$PORT/system" --labels site=loop >/dev/null || fail "lab add h2"
$KCQ lab add h2 qemu:///x 2>/dev/null && fail "a second host h2 was added"
$KCQ lab check h2 >"$HOME_DIR/check" || fail "lab check h2: $(cat "$HOME_DIR/check")"
grep -q "^pool: *kcanary (/var/lib/libvirt/kcanary) active" "$HOME_DIR/check" ||
	fail "lab check h2 did not report the pool: $(cat "$HOME_DIR/check")"
grep -q "^versions: *libvirt [0-9]" "$HOME_DIR/check" || fail "lab check h2: no versions"
# h2's own accelerator, asked over its connection: it offers kvm domains
# (this machine's /dev/kvm is PVM) but its CPU has no vmx/svm, so tcg
grep -q "^accelerator: *tcg (the host offers kvm domains but its CPU has no vmx or svm" \
	"$HOME_DIR/check" || fail "lab check h2, accelerator: $(cat "$HOME_DIR/check")"
[ "$(q "SELECT accel FROM lab_hosts WHERE name = 'h2'")" = tcg ] ||
	fail "h2's accelerator stored as $(q "SELECT accel FROM lab_hosts WHERE name = 'h2'")"
# the second daemon cannot see this test's store (nor, later, its images)
inner=$(pgrep -P "$(cat "$H2DIR/pid")" | head -n 1)
[ -n "$inner" ] && [ -e "$HOME_DIR/kcanary.db" ] || fail "no namespace or no store"
[ -z "$(nsenter -t "$inner" -m ls -A "$HOME_DIR")" ] ||
	fail "the second daemon sees the coordinator's files: $(nsenter -t "$inner" -m ls -A "$HOME_DIR")"

# --connect to a daemon that shares no file with the coordinator: one run
# (the first job to reach h2 sends the kernel and the initramfs)
$KCQ boot --connect "qemu+tcp://127.0.0.1:$PORT/system" --kernel "$KERNEL" --vcpus 1 $SHORT \
	--watchdog 240s >"$HOME_DIR/out.0" 2>"$HOME_DIR/err.0" || fail "boot --connect: $(tail -5 "$HOME_DIR/err.0")"
[ "$(q "SELECT status FROM runs WHERE id = 1")" = ok ] || fail "boot on h2: $(q "SELECT status, error FROM runs")"
sent=$(q "SELECT json_extract(guest_json, '$.uploaded_bytes') FROM runs WHERE id = 1")
[ "$sent" -gt 1000000 ] || fail "boot on h2 sent $sent bytes, expected the kernel and initramfs"
J="job_id = (SELECT id FROM jobs WHERE name = 'lab')"

$KCQ compare --name lab --kernels "$KERNEL" --aa --repeat 4 --seed 1 --vcpus 1 $SHORT \
	--hosts all >"$HOME_DIR/out.1" 2>"$HOME_DIR/err.1" &
pid=$!
# wait until h2 has finished a run and the next one there is under way
# with samples, then drop the host
i=0
while :; do
	n=$(q "SELECT count(*) FROM runs r WHERE r.$J AND r.lab_host = 'h2' AND r.status = 'running'
	       AND (SELECT count(*) FROM samples s WHERE s.run_id = r.id) >= 2
	       AND (SELECT count(*) FROM runs o WHERE o.$J AND o.lab_host = 'h2' AND o.status = 'ok') >= 1" \
	       2>/dev/null)
	[ "${n:-0}" -ge 1 ] && break
	kill -0 $pid 2>/dev/null || fail "the job ended before a second run on h2 got going: $(tail -5 "$HOME_DIR/err.1")"
	i=$((i + 1))
	[ $i -lt 900 ] || fail "no run on h2 got going"
	sleep 0.5
done
dropped=$(q "SELECT id FROM runs WHERE lab_host = 'h2' AND status = 'running'")
h2_done_before=$(q "SELECT count(*) FROM runs WHERE lab_host = 'h2' AND status = 'ok'")
echo "-- killing the second daemon during run $dropped ($h2_done_before runs ok on h2 before)"
sh tools/libvirtd-tcp.sh stop "$H2DIR"
wait $pid
rc=$?
cat "$HOME_DIR/out.1"
[ $rc = 0 ] || fail "compare exited $rc: $(tail -20 "$HOME_DIR/err.1")"

[ "$(q "SELECT status FROM jobs WHERE name = 'lab'")" = done ] || fail "job not done"
[ "$(q "SELECT status FROM runs WHERE id = $dropped")" = infra ] ||
	fail "the dropped run is $(q "SELECT status, error FROM runs WHERE id = $dropped")"
[ "$(q "SELECT count(*) FROM runs WHERE $J AND status = 'infra'")" = 1 ] ||
	fail "expected one infra run: $(q "SELECT id, lab_host, status, error FROM runs")"
# every planned run (2 variants x 1 cell x 4 repeats) done exactly once
[ "$(q "SELECT count(*) FROM runs WHERE $J AND status = 'ok'")" = 8 ] ||
	fail "not 8 ok runs: $(q "SELECT id, lab_host, repeat_idx, status, error FROM runs")"
[ "$(q "SELECT count(*) FROM runs WHERE $J")" = 9 ] || fail "expected 9 runs (8 + the infra one)"
[ "$(q "SELECT group_concat(n) FROM (SELECT count(*) n FROM runs WHERE $J AND status = 'ok'
	GROUP BY variant_id)")" = "4,4" ] || fail "not 4 ok runs per variant"
# both hosts ran runs; the rerun of the dropped one went to local
[ "$(q "SELECT count(DISTINCT lab_host) FROM runs WHERE $J AND status = 'ok'")" = 2 ] ||
	fail "ok runs not on both hosts: $(q "SELECT id, lab_host, status FROM runs")"
v=$(q "SELECT variant_id || ' ' || cell FROM runs WHERE id = $dropped")
[ "$(q "SELECT lab_host FROM runs WHERE status = 'ok' AND variant_id || ' ' || cell = '$v'
	AND id > $dropped AND repeat_idx > 4")" = local ] ||
	fail "the dropped run was not run again on local: $(q "SELECT id, lab_host, repeat_idx, status FROM runs")"
# whole blocks: a repeat not touched by the drop ran on one host
bad=$(q "SELECT repeat_idx FROM runs WHERE $J AND repeat_idx <= 4 GROUP BY repeat_idx
	 HAVING count(DISTINCT lab_host) > 1 AND sum(status = 'infra') = 0")
[ -z "$bad" ] || fail "blocks split across hosts: repeats $bad"
# the second job with the same kernel and initramfs sent nothing to h2
[ "$(q "SELECT count(*) || ' ' || sum(json_extract(guest_json, '$.uploaded_bytes'))
	FROM runs WHERE lab_host = 'h2' AND guest_json IS NOT NULL")" = "$(q "SELECT count(*) FROM runs
	WHERE lab_host = 'h2' AND guest_json IS NOT NULL") 0" ] ||
	fail "uploads to h2: $(q "SELECT id, json_extract(guest_json, '$.uploaded_bytes') FROM runs WHERE lab_host = 'h2'")"
[ "$(q "SELECT count(*) FROM runs WHERE lab_host = 'local'
	AND json_extract(guest_json, '$.uploaded_bytes') > 0")" -le 1 ] || fail "local got the same files twice"
# each run records its host's accelerator, and each host's TCG warning is said
[ "$(q "SELECT count(*) FROM runs WHERE $J AND guest_json IS NOT NULL AND accel != 'tcg'")" = 0 ] ||
	fail "runs not on tcg: $(q "SELECT id, lab_host, accel FROM runs WHERE $J")"
grep -q "warning: guests run under TCG.* (lab host h2: .*no vmx or svm" "$HOME_DIR/err.1" ||
	fail "no TCG warning for h2: $(grep warning "$HOME_DIR/err.1")"
grep -q "lab host h2 is down" "$HOME_DIR/err.1" || fail "h2 not said to be down: $(tail -5 "$HOME_DIR/err.1")"
$KCQ lab list >"$HOME_DIR/list"
grep -q "^h2 *down" "$HOME_DIR/list" || fail "lab list: $(cat "$HOME_DIR/list")"
grep -q "^local *up" "$HOME_DIR/list" || fail "lab list: $(cat "$HOME_DIR/list")"
grep -q "runs on lab hosts: .*local [0-9]" "$HOME_DIR/out.1" || fail "the report names no hosts"
# report --by host: one row per lab host
$KCQ report lab --by host >"$HOME_DIR/byhost" 2>&1 || fail "report --by host: $(cat "$HOME_DIR/byhost")"
grep -q "^ *host=local " "$HOME_DIR/byhost" && grep -q "^ *host=h2 " "$HOME_DIR/byhost" ||
	fail "report --by host has no row per host: $(cat "$HOME_DIR/byhost")"
# no scratch volume of this coordinator left on the local host
left=$(virsh -q -c qemu:///system vol-list kcanary 2>/dev/null | grep -c "kcanary-r[0-9]*-p$pid-.*-scratch" || true)
[ "$left" = 0 ] || fail "$left scratch volumes left in the local pool"
echo "ok: 8 runs on local and h2 in blocks; h2 dropped during run $dropped (infra), run again on local; h2 down"
