#!/bin/sh
# Faults in `kcanary ingest` (issue 18), each injected for real and the
# store checked after it with PRAGMA integrity_check:
#  - an ingest SIGKILLed mid-stream: the run is shown as 'interrupted' with
#    the reason (never as live), the batches it committed are kept, and the
#    same repeat can be ingested again;
#  - 10 concurrent `ingest --job NEW`: one job of that name, 10 runs.
# Prints one "fault-table:" line per fault for `make test`'s table.
set -eu
B=${B:-build}
case $B in /*) ;; *) B=$PWD/$B ;; esac
KC=$B/kcanary
tmp=$(mktemp -d /var/tmp/kc-t-ingest.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT
export KCANARY_HOME=$tmp/home
mkdir -p $KCANARY_HOME
DB=$KCANARY_HOME/kcanary.db
fail() { echo "FAIL: $*"; exit 1; }
q() { sqlite3 -cmd '.timeout 5000' "$DB" "$1"; }
integrity() { [ "$(q 'PRAGMA integrity_check')" = ok ] || fail "integrity_check: $(q 'PRAGMA integrity_check')"; }

# --- a killed ingest -------------------------------------------------------
# 30,000 samples: one batch of 20,000 records commits, then the writer dies
sh tests/fixtures/gen-stream.sh 3.0 15000 nodone > $tmp/big.jsonl
mkfifo $tmp/fifo
$KC ingest --job killed --variant base --fs ext4 --repeat 1 $tmp/fifo > $tmp/out 2>&1 &
pid=$!
exec 3<>$tmp/fifo   # read-write: the open does not wait for the reader
cat $tmp/big.jsonl >&3
# wait for the first batch to be committed, then SIGKILL the writer
for i in $(seq 100); do
	n=$(q "SELECT count(*) FROM samples" 2>/dev/null || echo 0)
	[ "${n:-0}" -gt 0 ] && break
	sleep 0.1
done
[ "${n:-0}" -gt 0 ] || fail "no batch committed before the kill"
kill -9 $pid; wait $pid 2>/dev/null || true; pid=
exec 3>&-
kept=$(q "SELECT count(*) FROM samples")
integrity
# the row, measured before the checks: samples committed before the kill
# and gone after the store's own recovery (status reaps the dead writer)
$KC status killed > $tmp/status
lost=$((kept - $(q "SELECT count(*) FROM samples")))
echo "fault-table: ingest SIGKILL mid-stream|1|$([ $lost = 0 ] && echo 1 || echo 0)|$lost"
cat $tmp/status
grep -q "0 running" $tmp/status || fail "a run whose writer was killed is shown as running"
grep -q "now: run" $tmp/status && fail "status shows the killed run as live"
grep -q "interrupted: 1; the newest, run 1: its writer (kcanary ingest, pid" $tmp/status ||
	fail "status does not say the run was interrupted, and why"
st=$(q "SELECT status FROM runs")
[ "$st" = interrupted ] || fail "killed run has status '$st', expected 'interrupted'"
q "SELECT error FROM runs" | grep -q "killed\|stopped" || fail "no reason: $(q 'SELECT error FROM runs')"
[ "$lost" = 0 ] || fail "$lost samples committed before the kill were lost"
# the same repeat again: stored, not refused as "already stored"
sh tests/fixtures/gen-stream.sh 3.0 120 > $tmp/small.jsonl
$KC ingest --job killed --variant base --fs ext4 --repeat 1 $tmp/small.jsonl > $tmp/out 2>&1 ||
	fail "repeat 1 of an interrupted run refused: $(cat $tmp/out)"
[ "$(q "SELECT status FROM runs WHERE repeat_idx = 1")" = ok ] || fail "re-ingested run not ok"
[ "$(q "SELECT count(*) FROM samples")" = 120 ] || fail "samples after re-ingest: $(q 'SELECT count(*) FROM samples')"
integrity

# --- concurrent ingest --job NEW ------------------------------------------
# (the store exists already: the first open's migrations would serialize them)
pids=
for i in $(seq 10); do
	$KC ingest --job racing --variant v$i --fs ext4 $tmp/small.jsonl > $tmp/race$i 2>&1 &
	pids="$pids $!"
done
bad=0
for p in $pids; do wait $p || bad=$((bad + 1)); done
[ $bad = 0 ] || fail "$bad concurrent ingests failed: $(cat $tmp/race*)"
njobs=$(q "SELECT count(*) FROM jobs WHERE name = 'racing'")
nruns=$(q "SELECT count(*) FROM runs r JOIN jobs j ON j.id = r.job_id WHERE j.name = 'racing'")
[ "$njobs" = 1 ] || fail "10 concurrent ingests made $njobs jobs named 'racing'"
[ "$nruns" = 10 ] || fail "expected 10 runs in 'racing', got $nruns"
integrity
echo "fault-table: concurrent ingest --job NEW|10|10|0"

# --- records that break the stream's order ---------------------------------
cat > $tmp/order.jsonl <<'EOS'
{"type":"hello","agent_version":"t","kernel_release":"6.12.117","host":"t"}
{"type":"sample","t":1.0,"metric":"lag_s","value":0.5}
{"type":"sample","t":2.0,"metric":"lag_s","value":0.6}
{"type":"hello","agent_version":"t","kernel_release":"6.1","host":"other"}
{"type":"sample","t":1.5,"metric":"lag_s","value":9.0}
{"type":"probe","t":1.0,"name":"cgroup_writeback_by_id","key":"-2","count":10}
{"type":"probe","t":2.0,"name":"cgroup_writeback_by_id","key":"-2","count":4}
{"type":"probe","t":3.0,"name":"cgroup_writeback_by_id","key":"0","count":-1}
{"type":"summary","metrics":{"worst_lag_s":0.6}}
{"type":"done","status":"ok"}
{"type":"sample","t":3.0,"metric":"lag_s","value":7.0}
EOS
$KC ingest --job order --variant base $tmp/order.jsonl > $tmp/out 2>$tmp/err || fail "ingest failed: $(cat $tmp/err)"
cat $tmp/err
rid=$(q "SELECT r.id FROM runs r JOIN jobs j ON j.id = r.job_id WHERE j.name = 'order'")
[ "$(q "SELECT count(*) FROM samples WHERE run_id = $rid")" = 2 ] || fail "samples out of order stored"
[ "$(q "SELECT count(*) FROM probes WHERE run_id = $rid")" = 1 ] || fail "falling or negative counts stored"
[ "$(q "SELECT kernel_release FROM runs WHERE id = $rid")" = 6.12.117 ] || fail "a second hello replaced the first"
for want in "4|a second \"hello\"" "5|sample t 1.5 of 'lag_s' goes back" "7|falls from 10" "8|negative" "11|after \"done\""; do
	line=${want%%|*} text=${want#*|}
	q "SELECT reason FROM raw_lines WHERE run_id = $rid AND line_no = $line" | grep -qF "$text" ||
		fail "line $line: no reason with '$text': $(q "SELECT line_no, reason FROM raw_lines WHERE run_id = $rid")"
	grep -q "line $line: " $tmp/err || fail "ingest did not name line $line on stderr"
done
integrity
echo "fault-table: stream order (2nd hello, t back, counts fall/negative, after done)|5|5|0"

# --- garbage and one huge line: bounded store, the run failed with the reason
before=$(stat -c %s $DB 2>/dev/null || echo 0)
head -c 96M /dev/urandom | base64 -w 1000 > $tmp/garbage   # 128 MiB, 130k lines
/usr/bin/time -f %M -o $tmp/rss $KC ingest --job hostile --variant base $tmp/garbage > $tmp/out 2>$tmp/err &&
	fail "128 MiB of garbage ingested with exit 0"
cat $tmp/err
rss=$(tail -n 1 $tmp/rss)
q "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
after=$(stat -c %s $DB)
grew=$(( (after - before) / 1024 ))
echo "garbage: store grew ${grew} KiB, peak RSS $((rss / 1024)) MiB"
# the bounds docs/records.md and docs/reliability.md state
[ $grew -lt 1024 ] || fail "128 MiB of garbage grew the store by $grew KiB, not under 1 MiB"
[ $rss -lt 32768 ] || fail "peak RSS $rss KiB for a garbage stream, not under 32 MiB"
[ "$(q "SELECT r.status FROM runs r JOIN jobs j ON j.id = r.job_id WHERE j.name = 'hostile'")" = failed ] ||
	fail "a garbage stream's run is not failed"
q "SELECT r.error FROM runs r JOIN jobs j ON j.id = r.job_id WHERE j.name = 'hostile'" | grep -q "not a record stream" ||
	fail "no reason for the garbage run"
grep -q "line [0-9]*: " $tmp/err || fail "ingest did not name the line where it gave up"
{ sh tests/fixtures/gen-stream.sh 2.0 10 nodone; head -c 100M /dev/zero | tr '\0' a; echo;
  echo '{"type":"done","status":"ok"}'; } > $tmp/long
$KC ingest --job longline --variant base $tmp/long > $tmp/out 2>$tmp/err || fail "a long line failed the ingest: $(cat $tmp/err)"
grep -q "line 23: line longer than the 1048576-byte cap" $tmp/err || fail "the long line is not named: $(cat $tmp/err)"
[ "$(q "SELECT r.status FROM runs r JOIN jobs j ON j.id = r.job_id WHERE j.name = 'longline'")" = ok ] ||
	fail "records after a long line were lost"
integrity
echo "fault-table: hostile stream (128 MiB garbage, one 100 MiB line)|2|2|0"
echo "ok: killed ingest shown as interrupted and repeatable; concurrent ingests share one job; hostile streams bounded"
