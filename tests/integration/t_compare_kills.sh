#!/bin/sh
# t_compare_kills.sh - the coordinator SIGKILLed again and again (issue
# 18): a compare of 2 variants x 2 repeats (4 planned runs, 1-vCPU TCG
# guests) on a private libvirtd (tools/libvirtd-tcp.sh, 127.0.0.1 TCP, its
# own pool); `kcanary compare` and then each `kcanary resume` is SIGKILLed
# at a random point (KILLS times, default 3; 20 under `make soak`), then
# one last resume finishes the job. Afterwards: the job is done, each
# planned run ok exactly once, every other run 'interrupted', no sample
# stored before a kill is lost, PRAGMA integrity_check is ok, and nothing
# is left on the host: no domain, no QEMU, no scratch volume in pool
# 'kcanary'. Prints a "fault-table:" line. Port 18531.
set -u
. tests/integration/guest-lib.sh

KILLS=${KILLS:-3}
PORT=${KCANARY_KILLS_TEST_PORT:-18531}
LDIR=$(mktemp -d /var/tmp/kc-kills.XXXXXX)
KCQ="$PWD/$B/kcanary"
private_libvirtd "$LDIR" "$PORT"
# the samples of every run after each kill: none may be missing at the end
snap=$HOME_DIR/snap
: > "$snap"
seed=${KILLS_SEED:-$$}
echo "-- $KILLS kills, random points from seed $seed"
k=0 resumes=0
set -- compare --name kills --kernels "$KERNEL" --aa --repeat 2 --seed 1 --vcpus 1 $SHORT \
	--watchdog 300s --connect "$URI"
while [ $k -lt "$KILLS" ]; do
	# a random point: 0.5 to 30 s into this coordinator's life
	ms=$(awk -v s="$seed" -v k="$k" 'BEGIN { srand(s); for (i = 0; i <= k; i++) x = rand()
		printf "%d", 500 + x * 29500 }')
	$KCQ "$@" >"$HOME_DIR/out.$k" 2>"$HOME_DIR/err.$k" &
	pid=$!
	t=0
	while [ $t -lt "$ms" ] && kill -0 $pid 2>/dev/null; do sleep 0.1; t=$((t + 100)); done
	if ! kill -0 $pid 2>/dev/null; then
		wait $pid
		echo "-- coordinator $k ended by itself after $t ms (rc $?): the job is done before $KILLS kills"
		break
	fi
	kill -9 $pid
	wait $pid 2>/dev/null
	k=$((k + 1))
	q "SELECT r.id, (SELECT count(*) FROM samples s WHERE s.run_id = r.id) FROM runs r" >> "$snap"
	echo "-- kill $k after $ms ms: $(q "SELECT group_concat(status || ':' || n) FROM (SELECT status,
		count(*) n FROM runs GROUP BY status)")"
	set -- resume kills --connect "$URI"
	resumes=$((resumes + 1))
done
# a kill that never landed tests nothing: at least one must have
[ "$k" -ge 1 ] || fail "no kill landed: the first coordinator ended by itself ($(tail -3 "$HOME_DIR/err.0"))"
$KCQ resume kills --connect "$URI" >"$HOME_DIR/out.end" 2>"$HOME_DIR/err.end" ||
	[ "$(q "SELECT status FROM jobs WHERE name = 'kills'")" = done ] ||
	fail "the last resume: $(tail -5 "$HOME_DIR/err.end")"
# the fault table's row, measured before any check below can stop the
# test: kills made; kills survived (the job done with its 4 runs ok once
# each); samples stored before a kill and gone at the end
lost=0
while read -r line; do
	id=${line%%|*} n=${line#*|}
	now=$(q "SELECT count(*) FROM samples WHERE run_id = $id")
	[ "$now" -ge "$n" ] || { echo "run $id: $n samples after a kill, $now at the end"; lost=$((lost + n - now)); }
done < "$snap"
survived=0
[ "$(q "SELECT j.status || ' ' || count(DISTINCT r.variant_id || '/' || r.repeat_idx) || ' ' || count(*)
	FROM jobs j JOIN runs r ON r.job_id = j.id AND r.status = 'ok' WHERE j.name = 'kills'")" = "done 4 4" ] &&
	survived=$k
echo "fault-table: coordinator SIGKILLed at random points, resumed (TCG guests)|$k|$survived|$lost"

[ "$(q "PRAGMA integrity_check")" = ok ] || fail "integrity_check: $(q "PRAGMA integrity_check")"
[ "$(q "SELECT status FROM jobs WHERE name = 'kills'")" = done ] ||
	fail "job not done: $(q "SELECT status, error FROM jobs")"
ok=$(q "SELECT count(*) FROM runs WHERE status = 'ok'")
[ "$ok" = 4 ] || fail "not 4 ok runs: $(q "SELECT id, variant_id, repeat_idx, status, error FROM runs")"
[ "$(q "SELECT group_concat(n) FROM (SELECT count(*) n FROM runs WHERE status = 'ok'
	GROUP BY variant_id)")" = "2,2" ] || fail "not 2 ok runs per variant"
other=$(q "SELECT count(*) FROM runs WHERE status NOT IN ('ok', 'interrupted')")
[ "$other" = 0 ] || fail "runs neither ok nor interrupted: $(q "SELECT id, status, error FROM runs
	WHERE status NOT IN ('ok', 'interrupted')")"
[ "$(q "SELECT count(*) FROM runs r WHERE r.status = 'ok'
	AND (SELECT count(*) FROM samples s WHERE s.run_id = r.id) > 0")" = 4 ] || fail "an ok run has no samples"
[ "$lost" = 0 ] || fail "$lost samples stored before a kill are gone"
left=$(virsh -q -c "$URI" list --all --name | grep -c "^kcanary-" || true)
[ "$left" = 0 ] || fail "$left domains left on the host: $(virsh -q -c "$URI" list --all --name)"
vols=$(virsh -q -c "$URI" vol-list kcanary | grep -c -- "-scratch" || true)
[ "$vols" = 0 ] || fail "$vols scratch volumes left in pool kcanary: $(virsh -q -c "$URI" vol-list kcanary)"
tini=$(pgrep -P "$(cat "$LDIR/pid")" | head -n 1)
qemus=$(ps -o comm= --ppid "$tini" | grep -c qemu || true)
[ "$qemus" = 0 ] || fail "$qemus QEMU processes left in the daemon's namespace"
intr=$(q "SELECT count(*) FROM runs WHERE status = 'interrupted'")
echo "ok: $k kills, $resumes resumes: 4 runs ok once each, $intr interrupted runs kept, nothing left on the host"
