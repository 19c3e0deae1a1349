#!/bin/sh
# A full disk (issue 18): $KCANARY_HOME on a small tmpfs that fills, for
# real, during `kcanary ingest` and under `kcanary serve` taking a fleet
# agent's records. Afterwards PRAGMA integrity_check is ok, every finished
# run keeps all its samples, the error names the store's path and the free
# space, no run is left 'running', and once space is freed the same repeat
# is ingested again and the agent's records arrive exactly once.
# Needs root (mount -t tmpfs); port 18310. Prints "fault-table:" lines.
set -eu
B=${B:-build}
case $B in /*) ;; *) B=$PWD/$B ;; esac
KC=$B/kcanary AG=$B/kcanary-agent
tmp=$(mktemp -d /var/tmp/kc-t-full.XXXXXX)
home=$tmp/home
spid= apid=
cleanup() {
	[ -n "$apid" ] && kill -9 $apid 2>/dev/null
	[ -n "$spid" ] && kill -9 $spid 2>/dev/null
	wait 2>/dev/null
	umount $home 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f $tmp/serve.log ] && tail -5 $tmp/serve.log; exit 1; }
mkdir -p $home
if ! mount -t tmpfs -o size=2m tmpfs $home 2>$tmp/mount.err; then
	echo "SKIP: cannot mount a tmpfs (needs root): $(cat $tmp/mount.err)"; exit 77
fi
export KCANARY_HOME=$home
DB=$home/kcanary.db
q() { sqlite3 -cmd '.timeout 5000' "$DB" "$1"; }
integrity() { [ "$(q 'PRAGMA integrity_check')" = ok ] || fail "integrity_check: $(q 'PRAGMA integrity_check')"; }

# --- ingest into a store that fills ---------------------------------------
# the row, measured whether the part passes or fails: lost is the samples
# the store lacks of the finished run (120) and, once it is ingested again
# with space freed, of the stopped one (60000) (issue 35 item 15)
ROW="disk full during ingest|1" want_next=0
vsamples() { n=$(q "SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run_id JOIN variants v
	ON v.id = r.variant_id WHERE v.name = '$1'" 2>/dev/null) || n=0; echo ${n:-0}; }
lost() { b=$(vsamples base) n=$(vsamples next); l=$(( want_next - n )); echo $(( 120 - b + (l < 0 ? 0 : l) )); }
fail() { [ -n "$ROW" ] && echo "fault-table: $ROW|0|$(lost)"; echo "FAIL: $*"; [ -f $tmp/serve.log ] && tail -5 $tmp/serve.log; exit 1; }
sh tests/fixtures/gen-stream.sh 3.0 120 > $tmp/small.jsonl
sh tests/fixtures/gen-stream.sh 3.0 60000 > $tmp/big.jsonl
$KC ingest --job full --variant base --fs ext4 --repeat 1 $tmp/small.jsonl >/dev/null
if $KC ingest --job full --variant next --fs ext4 --repeat 1 $tmp/big.jsonl > $tmp/out 2>$tmp/err; then
	fail "ingest into a full file system exited 0"
fi
cat $tmp/err
grep -q "the file system of the store '$DB' is full: [0-9]* KiB free of [0-9]* KiB in '$home'" $tmp/err ||
	fail "the error does not name the store and its free space"
grep -q "store error" $tmp/err && fail "the error says only 'store error'"
integrity
[ "$(q "SELECT count(*) FROM runs WHERE status = 'running'")" = 0 ] || fail "a run is left running"
[ "$(q "SELECT r.status FROM runs r JOIN variants v ON v.id = r.variant_id WHERE v.name = 'next'")" = interrupted ] ||
	fail "the run the full disk stopped is not 'interrupted'"
[ "$(q "SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run_id JOIN variants v ON v.id = r.variant_id WHERE v.name = 'base'")" = 120 ] ||
	fail "the finished run lost samples"
$KC status full | grep -q "0 running" || fail "status shows a live run"
# space freed: the same repeat again, stored whole, the first run intact
mount -o remount,size=64m $home
want_next=60000
$KC ingest --job full --variant next --fs ext4 --repeat 1 $tmp/big.jsonl > $tmp/out 2>$tmp/err ||
	fail "re-ingest after freeing space: $(cat $tmp/err)"
[ "$(q "SELECT count(*) FROM samples")" = 60120 ] || fail "samples after resume: $(q 'SELECT count(*) FROM samples')"
[ "$(q "SELECT count(*) FROM runs")" = 2 ] || fail "a run counted twice: $(q 'SELECT id, status FROM runs')"
integrity
echo "fault-table: $ROW|1|$(lost)"
ROW=

# --- the server's disk fills while an agent sends ---------------------------
$KC token create fleet > $tmp/token 2>/dev/null
$KC serve --listen 127.0.0.1:18310 > $tmp/serve.out 2>$tmp/serve.log &
spid=$!
url=$(sh tools/serve-url.sh $tmp/serve.out $spid) || fail "serve did not start"
$AG daemon --server $url --token-file $tmp/token --host-id full-$$ --interval 0.2s \
	--heartbeat 1s --spool $tmp/spool > $tmp/agent.out 2>$tmp/agent.log &
apid=$!
for i in $(seq 100); do
	[ "$(q "SELECT coalesce(sum(records), 0) FROM hosts" 2>/dev/null || echo 0)" -gt 20 ] && break
	sleep 0.1
done
[ "$(q "SELECT sum(records) FROM hosts")" -gt 20 ] || fail "no records arrived: $(cat $tmp/agent.log)"
# fill what is left of the file system
dd if=/dev/zero of=$home/filler bs=64k 2>/dev/null || true
for i in $(seq 100); do
	grep -q "HTTP 507" $tmp/agent.log && break
	sleep 0.1
done
grep -q "HTTP 507" $tmp/agent.log || fail "the agent was not told 507: $(tail -3 $tmp/agent.log)"
sleep 2   # records pile up in the spool
kill -0 $spid || fail "the server died on a full disk"
rm -f $home/filler
# the agent's back-off is at most 30 s; its drain sends what is left
sleep 3
kill -TERM $apid; wait $apid || true; apid=
cat $tmp/agent.out
produced=$(sed -n 's/.* produced=\([0-9]*\).*/\1/p' $tmp/agent.out)
pending=$(sed -n 's/.* pending=\([0-9]*\).*/\1/p' $tmp/agent.out)
dropped=$(sed -n 's/.* dropped=\([0-9]*\).*/\1/p' $tmp/agent.out)
[ -n "$produced" ] || fail "no stats line from the agent"
stored=$(q "SELECT records FROM hosts")
next=$(q "SELECT next_seq FROM hosts")
echo "agent: produced $produced, pending $pending, dropped $dropped; server: stored $stored, next_seq $next"
[ "$pending" = 0 ] || fail "the agent still holds $pending records"
[ "$dropped" = 0 ] || fail "the agent dropped $dropped records"
[ "$stored" = "$produced" ] || fail "the server stored $stored of $produced records"
[ "$next" = $((produced + 1)) ] || fail "next_seq $next after $produced records"
integrity
kill -TERM $spid; wait $spid || true; spid=
echo "fault-table: disk full at the server under an agent|1|1|$((produced - stored))"
echo "ok: a full disk is named with its free space, stops nothing for good and loses nothing"
