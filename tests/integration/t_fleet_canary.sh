#!/bin/sh
# t_fleet_canary.sh - the canary verdict over fleet data: 8 real agents
# (kcanary-agent daemon) stream to kcanary serve, each running the
# `command` workload every second with a script printing `metric x_s V`.
# Four report kernel 6.12.115 (the control), four 6.12.117 (the canary),
# whose script adds 30% to every value: an injected regression.
# `kcanary canary --control kernel=6.12.115 --canary kernel=6.12.117`
# must fail on mean_x_s; an A/A split of the control's hosts by a label
# must pass. Values follow a fixed cycle per run, so the verdicts do not
# depend on chance. About 20 s.
set -eu
RUN_S=${RUN_S:-12}
FLEET_NAME=fleet-canary
. tests/integration/fleet-lib.sh
start_server 0

# The workload: run n of this host prints five values BASE + (3n + k mod 10) / 10.
write_workload

for i in 1 2 3 4 5 6 7 8; do
	if [ $i -le 4 ]; then kernel=6.12.115 base=10; else kernel=6.12.117 base=13; fi
	half=a
	[ $((i % 2)) -eq 0 ] && half=b
	"$AG" daemon --server "$url" --token-file "$tmp/token" --host-id "host-$i" \
		--kernel-release "$kernel" --labels "half=$half" --interval 500ms \
		--workload command --every 1s cgroup=0 dir="$tmp" cmd="sh $tmp/wl.sh $base $tmp/cnt.$i" \
		>"$out/agent$i.out" 2>"$out/agent$i.log" &
	apids="$apids $!"
done
sleep "$RUN_S"
for p in $apids; do kill -TERM "$p"; done
for p in $apids; do wait "$p" || fail "an agent exited with status $?"; done
apids=

runs=$(sqlite3 "$KCANARY_HOME/kcanary.db" "SELECT count(*) FROM runs WHERE cell = 'workload=command' AND status = 'ok'")
echo "$runs workload runs stored"
[ "$runs" -ge 40 ] || fail "only $runs workload runs"

rc=0
"$KC" canary --control kernel=6.12.115 --canary kernel=6.12.117 --metric mean_x_s \
	--job fleet --seed 1 >"$out/regression.txt" 2>&1 || rc=$?
cat "$out/regression.txt"
[ $rc -eq 1 ] || fail "the shifted canary got exit status $rc, expected 1 (fail)"
grep -q "canary verdict: FAIL" "$out/regression.txt" || fail "no FAIL verdict"

rc=0
"$KC" canary --control kernel=6.12.115,half=a --canary kernel=6.12.115,half=b --metric mean_x_s \
	--seed 1 >"$out/aa.txt" 2>&1 || rc=$?
cat "$out/aa.txt"
[ $rc -eq 0 ] || fail "the A/A split got exit status $rc, expected 0 (pass)"

# per host: 4 against 4 hosts is too few for p < 0.02: NODATA, no pass
rc=0
"$KC" canary --control kernel=6.12.115 --canary kernel=6.12.117 --metric mean_x_s \
	--per-host --seed 1 >"$out/per-host.txt" 2>&1 || rc=$?
cat "$out/per-host.txt"
# exactly "no verdict" (4), with the reason: any other non-zero exit (a
# crash, a usage error, a store it cannot read) is not this outcome
[ $rc -eq 4 ] || fail "4 hosts against 4 with --per-host: exit $rc, expected 4 (no verdict: NODATA)"
grep -q "^canary verdict: NO VERDICT (1 of 1 metrics have no data" "$out/per-host.txt" ||
	fail "--per-host: no 'NO VERDICT' line naming the metrics without data"
grep -Eq "^mean_x_s +nodata +4/4 " "$out/per-host.txt" || fail "--per-host: mean_x_s is not NODATA with 4/4 hosts"
echo "fleet canary: regression fails, A/A passes, per-host with 4+4 hosts does not pass (exit $rc)"
