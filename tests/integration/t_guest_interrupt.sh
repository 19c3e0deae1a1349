#!/bin/sh
# t_guest_interrupt.sh - SIGINT to kcanary during a run: the guest is
# destroyed, the run stored as 'interrupted' with what arrived, and the
# scratch disk and socket are removed.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/guest-lib.sh

$KC boot --kernel "$KERNEL" --set rate_mbps=8 --set nfiles=10 --set old_s=2 --set measure_s=900 \
	--watchdog 600s > "$HOME_DIR/out" 2> "$HOME_DIR/err.1" &
pid=$!
name=
i=0
while [ $i -lt 120 ] && [ -z "$name" ]; do
	name=$(grep -o "kcanary-r[0-9]*-p$pid-[0-9a-f]*" "$HOME_DIR/err.1" | head -n 1)
	sleep 0.5
	i=$((i + 1))
done
[ -n "$name" ] || { kill $pid; fail "the guest did not start within 60 s"; }
sleep 2
kill -INT $pid
i=0
while kill -0 $pid 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill -0 $pid 2>/dev/null && { kill -9 $pid; fail "kcanary still runs 10 s after SIGINT"; }
wait $pid
rc=$?
cat "$HOME_DIR/out"
[ $rc = 130 ] || fail "kcanary boot exited $rc after SIGINT, expected 130"
run=$(q "SELECT max(id) FROM runs")
[ "$(q "SELECT status FROM runs WHERE id = $run")" = interrupted ] ||
	fail "run $run: $(q "SELECT status, error FROM runs WHERE id = $run")"
if virsh -q -c qemu:///system list --all --name | grep -qx "$name"; then
	fail "guest $name still exists"
fi
[ ! -e "$HOME_DIR/runs/$run/scratch.img" ] || fail "scratch disk left behind"
[ ! -e "$HOME_DIR/runs/$run/chan.sock" ] || fail "channel socket left behind"
echo "interrupt: run $run stored as interrupted, guest $name destroyed, files removed"
