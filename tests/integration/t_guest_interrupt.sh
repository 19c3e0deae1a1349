#!/bin/sh
# t_guest_interrupt.sh - SIGINT to kcanary boot during a run: the guest is
# destroyed, the run stored as 'interrupted' with what arrived, and its
# scratch volume is deleted from the pool. Then SIGTERM to a running compare
# (docs/guests.md: "SIGINT/SIGTERM: destroyed, interrupted"): exit 130 with the
# resume command, its guest destroyed, the run 'interrupted', the runs not
# started still pending, the job resumable.
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
# the check below sees a live run's guest and scratch volume (so its
# empty answer after the interrupt means they went)
live=$(run_leftovers "$(q "SELECT max(id) FROM runs")")
echo "$live" | grep -q "^scratch volume $name-scratch.img$" && echo "$live" | grep -qx "guest $name" ||
	{ kill $pid; fail "the leftover check does not see the running guest $name: '$live'"; }
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
left=$(run_leftovers $run)
[ -z "$left" ] || fail "run $run left behind: $left"
echo "interrupt: run $run stored as interrupted, guest $name destroyed, files removed"

echo "-- SIGTERM to a running compare"
$KC compare --name term-it --kernels "$KERNEL" --aa --repeat 1 --seed 1 --set rate_mbps=8 \
	--set nfiles=10 --set old_s=2 --set measure_s=900 --watchdog 600s > "$HOME_DIR/out.2" 2> "$HOME_DIR/err.2" &
pid=$!
job=
i=0
while [ $i -lt 240 ]; do
	job=$(q "SELECT job_id FROM runs r JOIN jobs j ON j.id = r.job_id WHERE j.name = 'term-it'
		 AND r.status = 'running' AND (SELECT count(*) FROM samples s WHERE s.run_id = r.id) >= 1" 2>/dev/null)
	[ -n "$job" ] && break
	kill -0 $pid 2>/dev/null || fail "compare ended before its first run sent a sample: $(tail -5 "$HOME_DIR/err.2")"
	sleep 0.5
	i=$((i + 1))
done
[ -n "$job" ] || { kill -9 $pid; fail "the compare's first run sent no sample within 120 s"; }
run=$(q "SELECT id FROM runs WHERE job_id = $job AND status = 'running'")
name=$(grep -o "kcanary-r$run-p$pid-[0-9a-f]*" "$HOME_DIR/err.2" | head -n 1)
[ -n "$name" ] || fail "no guest name of run $run in kcanary's log"
kill -TERM $pid
i=0
while kill -0 $pid 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill -0 $pid 2>/dev/null && { kill -9 $pid; fail "kcanary compare still runs 10 s after SIGTERM"; }
wait $pid
rc=$?
[ $rc = 130 ] || { tail -5 "$HOME_DIR/err.2"; fail "kcanary compare exited $rc after SIGTERM, expected 130"; }
grep -q "kcanary resume $job\$" "$HOME_DIR/err.2" || fail "compare did not say how to resume: $(tail -3 "$HOME_DIR/err.2")"
[ "$(q "SELECT status FROM runs WHERE id = $run")" = interrupted ] ||
	fail "run $run: $(q "SELECT status, error FROM runs WHERE id = $run")"
[ "$(q "SELECT count(*) FROM samples WHERE run_id = $run")" -ge 1 ] || fail "run $run kept no samples"
[ "$(q "SELECT group_concat(DISTINCT status) FROM runs WHERE job_id = $job AND id != $run")" = pending ] ||
	fail "the runs not started are not all pending: $(q "SELECT id, status FROM runs WHERE job_id = $job")"
st=$(q "SELECT status FROM jobs WHERE id = $job")
[ "$st" = interrupted ] || fail "job $job is '$st' after SIGTERM, expected interrupted"
if virsh -q -c qemu:///system list --all --name | grep -qx "$name"; then
	fail "guest $name still exists after SIGTERM"
fi
echo "SIGTERM: compare exited 130, run $run interrupted, guest $name destroyed, job $job $st"
