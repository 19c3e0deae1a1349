#!/bin/sh
# t_compare_auto.sh - compare --repeat auto on Debian's prebuilt 6.12 cloud
# kernel in real TCG guests: mode=removed against the mode=alive control
# (--by mode), on the -ENOENT count of cgroup_writeback_by_id
# (wb_by_id_enoent; rate_mbps=48 pod_max=192M so that the pod throttles
# under TCG, as tests/fixtures/streams/guest-*.jsonl were recorded). The
# coordinator is killed (SIGKILL) during a run of block 2, which it stored
# after looking at block 1; 'kcanary resume' carries the sequential job on.
# It must stop with a difference in fewer runs than --repeat 5 takes (10),
# and say so.
set -u
. tests/integration/guest-lib.sh

KCQ="$PWD/$B/kcanary"
$KCQ compare --name auto-it --kernels "$KERNEL" --set mode=removed,alive --by mode \
	--baseline alive --metric wb_by_id_enoent --repeat auto:5 --seed 1 $SHORT \
	--set rate_mbps=48 --set pod_max=192M --watchdog 300s \
	>"$HOME_DIR/out.1" 2>"$HOME_DIR/err.1" &
pid=$!
# block 1 is 2 runs (seq 1, 2); block 2 is stored only after its look
[ "$(q "SELECT count(*) FROM runs" 2>/dev/null || echo 0)" -le 2 ] || fail "more than block 1 stored at the start"
wait_run_going $pid "$HOME_DIR/err.1" "r.seq >= 3"
nruns=$(q "SELECT count(*) FROM runs")
[ "$nruns" = 4 ] || fail "block 2 not stored whole before it ran: $nruns runs ($(q 'SELECT seq, status FROM runs'))"
grep -q "repeat auto: 0 of 1 comparison decided after 1 block: block 2 (2 runs)" "$HOME_DIR/err.1" ||
	fail "no look after block 1: $(grep 'repeat auto' "$HOME_DIR/err.1")"
kill -9 $pid
wait $pid 2>/dev/null
killed=$(q "SELECT id FROM runs WHERE status = 'running'")
[ -n "$killed" ] || fail "no run was running at the kill"

$KCQ resume auto-it >"$HOME_DIR/out.2" 2>"$HOME_DIR/err.2" || fail "resume: $(tail -5 "$HOME_DIR/err.2")"
grep -q "1 interrupted run rescheduled" "$HOME_DIR/err.2" || fail "resume said: $(head -3 "$HOME_DIR/err.2")"
[ "$(q "SELECT status FROM jobs")" = done ] || fail "job not done: $(q 'SELECT status, error FROM jobs')"
[ "$(q "SELECT status FROM runs WHERE id = $killed")" = interrupted ] || fail "killed run not interrupted"
ok=$(q "SELECT count(*) FROM runs WHERE status = 'ok'")
[ "$ok" -lt 10 ] || fail "$ok runs: no fewer than --repeat 5's 10"
[ "$(q "SELECT count(*) FROM runs WHERE status NOT IN ('ok', 'interrupted')")" = 0 ] ||
	fail "runs neither ok nor interrupted: $(q "SELECT seq, status, error FROM runs")"
blocks=$(( ok / 2 ))
[ $((blocks * 2)) = "$ok" ] || fail "$ok ok runs is no whole number of blocks"
# removed counts -ENOENT, alive none
[ "$(q "SELECT count(*) FROM runs r JOIN run_summary s ON s.run_id = r.id
	WHERE r.status = 'ok' AND s.metric = 'wb_by_id_enoent' AND r.cell LIKE '%mode=alive%' AND s.value = 0")" = "$blocks" ] ||
	fail "alive runs with -ENOENT: $(q "SELECT r.cell, s.value FROM runs r JOIN run_summary s ON s.run_id = r.id WHERE s.metric = 'wb_by_id_enoent'")"
want="mode=removed vs mode=alive: stop: difference after $blocks blocks (e="
grep -qF "$want" "$HOME_DIR/out.2" || fail "report does not say '$want': $(cat "$HOME_DIR/out.2")"
grep -q "repeat auto: 1 of 1 comparison decided after $blocks blocks" "$HOME_DIR/err.2" ||
	fail "resume's last look not said: $(grep 'repeat auto' "$HOME_DIR/err.2")"
$KCQ report auto-it --format json >"$HOME_DIR/report.json" || fail "report --format json"
python3 - "$HOME_DIR/report.json" "$blocks" <<'PY' || fail "JSON sequential object: $(cat "$HOME_DIR/report.json" | head -50)"
import json, sys
r = json.load(open(sys.argv[1]))["sequential"]
c = r["comparisons"][0]
assert r["max_blocks"] == 5 and r["blocks"] == int(sys.argv[2]), r
assert c["decision"] == "difference" and c["blocks"] == int(sys.argv[2]) and c["evalue"] >= 20, c
assert c["value"] == "removed" and c["baseline"] == "alive", c
PY
cat "$HOME_DIR/out.2"
echo "ok: repeat auto stopped with a difference after $blocks blocks ($ok runs < 10), resumed across a SIGKILL in block 2"
