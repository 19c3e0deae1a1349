#!/bin/sh
# t_guest_watchdog.sh - a guest whose workload outlives the watchdog is
# destroyed; the run is stored as 'timeout' with the samples it sent so far
# and its console tail; nothing is left behind (its guest, its scratch
# volume in the pool).
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/guest-lib.sh

start=$(date +%s)
$KC boot --kernel "$KERNEL" --set rate_mbps=8 --set nfiles=10 --set old_s=2 --set settle_s=1 \
	--set measure_s=900 --watchdog 75s > "$HOME_DIR/out" 2> "$HOME_DIR/err.1"
rc=$?
took=$(( $(date +%s) - start ))
cat "$HOME_DIR/out"
echo "   took $took s"
[ $rc = 1 ] || { cat "$HOME_DIR/err.1"; fail "kcanary boot exited $rc, expected 1"; }
[ $took -lt 120 ] || fail "the watchdog of 75 s took $took s"
run=$(q "SELECT max(id) FROM runs")
[ "$(q "SELECT status FROM runs WHERE id = $run")" = timeout ] ||
	fail "run $run: $(q "SELECT status, error FROM runs WHERE id = $run")"
q "SELECT error FROM runs WHERE id = $run" | grep -q "^watchdog: the guest ran longer than 75 s and was destroyed" ||
	fail "run $run: error is '$(q "SELECT error FROM runs WHERE id = $run")'"
q "SELECT console_tail FROM runs WHERE id = $run" | grep -q "kcanary-init: \[[0-9.]*\] running kcanary-agent run wb-handover" ||
	fail "run $run: console tail lacks the agent start: $(q "SELECT console_tail FROM runs WHERE id = $run" | tail -3)"
n=$(q "SELECT count(*) FROM samples WHERE run_id = $run")
[ "$n" -ge 1 ] || fail "run $run: the samples sent before the watchdog are not stored"
echo "   $n samples kept"
left=$(run_leftovers $run)
[ -z "$left" ] || fail "run $run left behind: $left"
name=$(grep -o "kcanary-r$run-p[0-9]*-[0-9a-f]*" "$HOME_DIR/err.1" | head -n 1)
[ -n "$name" ] || fail "no guest name in kcanary's log"
if virsh -q -c qemu:///system list --all --name | grep -qx "$name"; then
	fail "guest $name still exists"
fi
echo "watchdog: guest $name destroyed, run $run stored as timeout with its console tail"
