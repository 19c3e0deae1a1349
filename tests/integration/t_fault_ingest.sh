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
$KC status killed > $tmp/status
cat $tmp/status
grep -q "0 running" $tmp/status || fail "a run whose writer was killed is shown as running"
grep -q "now: run" $tmp/status && fail "status shows the killed run as live"
grep -q "interrupted: 1; the newest, run 1: its writer (kcanary ingest, pid" $tmp/status ||
	fail "status does not say the run was interrupted, and why"
st=$(q "SELECT status FROM runs")
[ "$st" = interrupted ] || fail "killed run has status '$st', expected 'interrupted'"
q "SELECT error FROM runs" | grep -q "killed\|stopped" || fail "no reason: $(q 'SELECT error FROM runs')"
[ "$(q "SELECT count(*) FROM samples")" = "$kept" ] || fail "samples lost"
# the same repeat again: stored, not refused as "already stored"
sh tests/fixtures/gen-stream.sh 3.0 120 > $tmp/small.jsonl
$KC ingest --job killed --variant base --fs ext4 --repeat 1 $tmp/small.jsonl > $tmp/out 2>&1 ||
	fail "repeat 1 of an interrupted run refused: $(cat $tmp/out)"
[ "$(q "SELECT status FROM runs WHERE repeat_idx = 1")" = ok ] || fail "re-ingested run not ok"
[ "$(q "SELECT count(*) FROM samples")" = 120 ] || fail "samples after re-ingest: $(q 'SELECT count(*) FROM samples')"
integrity
echo "fault-table: ingest SIGKILL mid-stream|1|1|0"

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
echo "ok: killed ingest shown as interrupted and repeatable; concurrent ingests share one job"
