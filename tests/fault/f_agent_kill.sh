#!/bin/sh
# The fleet agent SIGKILLed at random moments while it sends (issue 18):
# FAULT_KILLS times (3; make soak: 20) an agent with a spool is started and
# killed -9 after 0.3-1.5 s, a last one drains and stops on SIGTERM. The
# server then holds every sequence number once: records = next_seq - 1 and
# no sample of the passive stream stored twice; integrity_check is ok.
# Meanwhile a CLI ingest per kill writes the same store: none fails.
# Port 18330. Prints a "fault-table:" line.
set -eu
B=${B:-build}
case $B in /*) ;; *) B=$PWD/$B ;; esac
KC=$B/kcanary AG=$B/kcanary-agent
tmp=$(mktemp -d /var/tmp/kc-t-akill.XXXXXX)
spid= apid=
cleanup() {
	[ -n "$apid" ] && kill -9 $apid 2>/dev/null
	[ -n "$spid" ] && kill -9 $spid 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -5 $tmp/agent.log 2>/dev/null; exit 1; }
export KCANARY_HOME=$tmp/home
mkdir -p $KCANARY_HOME
DB=$KCANARY_HOME/kcanary.db
q() { sqlite3 -cmd '.timeout 5000' "$DB" "$1"; }
$KC token create fleet > $tmp/token 2>/dev/null
$KC serve --listen 127.0.0.1:18330 > $tmp/serve.out 2>$tmp/serve.log &
spid=$!
url=$(sh tools/serve-url.sh $tmp/serve.out $spid) || fail "serve did not start"
agent() {
	$AG daemon --server $url --token-file $tmp/token --host-id akill-$$ --interval 0.1s \
		--heartbeat 1s --spool $tmp/spool > $tmp/agent.out 2>>$tmp/agent.log &
	apid=$!
}
kills=${FAULT_KILLS:-3}
# the CLI writes the same store meanwhile: no "busy" may reach its user
sh tests/fixtures/gen-stream.sh 3.0 3000 > $tmp/stream.jsonl
ipids=
for i in $(seq $kills); do
	agent
	$KC ingest --job cli --variant v$i $tmp/stream.jsonl > $tmp/ingest$i.out 2>&1 &
	ipids="$ipids $!"
	sleep $(awk -v s=$$ -v i=$i 'BEGIN { srand(s + i); printf "%.2f", 0.3 + 1.2 * rand() }')
	kill -9 $apid; wait $apid 2>/dev/null || true; apid=
done
for p in $ipids; do wait $p || fail "a CLI ingest beside the server failed: $(cat $tmp/ingest*.out)"; done
[ "$(q "SELECT count(*) FROM runs r JOIN jobs j ON j.id = r.job_id WHERE j.name = 'cli' AND r.status = 'ok'")" = $kills ] ||
	fail "the CLI's runs are not all stored"
agent
sleep 2
kill -TERM $apid; wait $apid || true; apid=
cat $tmp/agent.out
pending=$(sed -n 's/.* pending=\([0-9]*\).*/\1/p' $tmp/agent.out)
[ "$pending" = 0 ] || fail "the last agent still holds $pending records"
records=$(q "SELECT records FROM hosts")
next=$(q "SELECT next_seq FROM hosts")
dups=$(q "SELECT count(*) FROM (SELECT run_id, metric_id, t_s FROM samples GROUP BY 1, 2, 3 HAVING count(*) > 1)")
echo "after $kills kills: server stored $records records, next_seq $next, $dups samples stored twice, $(q 'SELECT duplicates FROM hosts') resent and dropped"
# the row, measured before the checks: sequence numbers the agents gave
# out (next_seq - 1) and the server does not hold
lost=$((next - 1 - records))
echo "fault-table: agent daemon SIGKILL while sending|$kills|$([ $lost = 0 ] && [ "$dups" = 0 ] && echo $kills || echo 0)|$lost"
[ "$records" -gt 0 ] || fail "nothing stored"
[ "$next" = $((records + 1)) ] || fail "records $records but next_seq $next: a number stored twice or skipped"
[ "$dups" = 0 ] || fail "$dups samples stored twice"
[ "$(q 'PRAGMA integrity_check')" = ok ] || fail "integrity_check"
kill -TERM $spid; wait $spid || true; spid=
echo "ok: an agent killed $kills times while sending: every record stored once"
