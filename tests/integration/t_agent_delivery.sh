#!/bin/sh
# t_agent_delivery.sh - how the fleet agent delivers when the way to the
# server is not clear (docs/canary-and-fleet.md, "Delivery"), against a real `kcanary serve`
# behind limit-proxy.py (a proxy doing what a gateway or nginx's
# client_max_body_size does; the server alone never refuses a batch of
# the agent's size):
#   0. a token the server refuses (401): the agent stops at start, saying so;
#   1. the gateway answers 503: the agent retries with exponential
#      back-off, 0.5 s doubling, +-20% jitter (the gaps between its
#      attempts, as the proxy saw them);
#   2. the agent is SIGKILLed with every record still in its --spool, and
#      a new agent on the same spool is started behind a body limit:
#   3. each batch refused as too large (413) is followed by one of half as
#      many records, until one fits; the first batch stored starts at seq
#      1 (the killed agent's spool was kept), and after SIGTERM the server
#      holds every record the killed agent had queued, each once.
# No guest, no libvirt: no integration lock needed.
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
case $B in /*) ;; *) B=$PWD/$B ;; esac
KC=$B/kcanary AG=$B/kcanary-agent
T=$(mktemp -d) || exit 1
spid= ppid_= apid=
cleanup() {
	for p in $apid $ppid_ $spid; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -5 "$T/agent.log" 2>/dev/null; exit 1; }
command -v python3 >/dev/null || fail "no python3 (make deps installs it with b4)"
export KCANARY_HOME=$T/home
mkdir -p "$KCANARY_HOME"
q() { sqlite3 -cmd '.timeout 5000' "$KCANARY_HOME/kcanary.db" "$1"; }

$KC token create fleet > "$T/token" 2>/dev/null || fail "token create"
$KC serve --listen 127.0.0.1:0 > "$T/serve.out" 2> "$T/serve.log" &
spid=$!
url=$(sh tools/serve-url.sh "$T/serve.out" $spid) || fail "serve did not start: $(cat "$T/serve.log")"
# 0. a token the server refuses does not heal by retrying: the agent stops
# at start (exit 1) and says why, in the server's words
echo kct_not-a-token > "$T/bad"
timeout 20 $AG daemon --server "$url" --token-file "$T/bad" --host-id bad --interval 0.1s \
	> "$T/bad.out" 2>&1
rc=$?
[ $rc = 1 ] || fail "an agent whose token is refused exited $rc (124: still retrying after 20 s): $(tail -3 "$T/bad.out")"
grep -q "the server refused the token in '$T/bad' (HTTP 401 from $url: .*)" "$T/bad.out" ||
	fail "the refused agent's words: $(tail -3 "$T/bad.out")"
echo "refused token: the agent stopped at start: $(grep refused "$T/bad.out")"
echo 503 > "$T/mode"
python3 tests/integration/limit-proxy.py "$url" "$T/mode" "$T/proxy.log" > "$T/proxy.out" 2>&1 &
ppid_=$!
for _ in $(seq 50); do
	port=$(sed -n 's/^listening on //p' "$T/proxy.out")
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || fail "limit-proxy did not start: $(cat "$T/proxy.out")"
agent() {
	$AG daemon --server "http://127.0.0.1:$port" --token-file "$T/token" --host-id dlv \
		--interval 0.1s --heartbeat 1s --spool "$T/spool" > "$T/agent.out" 2>> "$T/agent.log" &
	apid=$!
}

echo "-- 1. the gateway is down (503) for 10 s"
agent
sleep 10
kill -9 $apid; wait $apid 2>/dev/null; apid=
echo "   attempts (t, records, first seq, last seq, bytes, status):"
sed 's/^/     /' "$T/proxy.log"
# gap k (k = 1, 2, ...) should be 0.5 * 2^(k-1) s +-20%; 0.1 s of slack below,
# 0.25 s above (the agent's wake-ups and the proxy's own time on a busy host)
awk '{ t[NR] = $1; s[NR] = $6 } END {
	if (NR < 5) { print "only " NR " attempts in 10 s"; exit 1 }
	for (k = 1; k <= 4; k++) {
		if (s[k] != 503) { print "attempt " k " got " s[k] ", not 503"; exit 1 }
		g = t[k + 1] - t[k]; want = 0.5 * 2 ^ (k - 1)
		if (g < 0.8 * want - 0.1 || g > 1.2 * want + 0.25) {
			printf "gap %d is %.2f s, back-off says %.2f s +-20%%\n", k, g, want; exit 1 }
		printf "   gap %d: %.2f s (%.2f s +-20%%)\n", k, g, want
	} }' "$T/proxy.log" || fail "the retries do not back off as docs/canary-and-fleet.md says"
queued=$(tail -n 1 "$T/proxy.log" | awk '{ print $4 }')
[ "$queued" -gt 50 ] || fail "the killed agent had only $queued records queued"
[ "$(q "SELECT records FROM hosts WHERE name = 'dlv'")" = 0 ] || fail "records got through a gateway that was down"
echo "   SIGKILLed with seq 1..$queued (at least) in its spool, none stored"

echo "-- 2. a new agent on the same spool, behind a 3000-byte body limit"
: > "$T/proxy.log"
echo "limit 3000" > "$T/mode"
agent
sleep 6
kill -TERM $apid; wait $apid; apid=
cat "$T/agent.out"
echo "   batches (t, records, first seq, last seq, bytes, status):"
head -n 12 "$T/proxy.log" | sed 's/^/     /'
awk -v q="$queued" '
	prev413 && $2 != int(n / 2) { printf "after a 413 of %d records came %d, not %d\n", n, $2, int(n / 2); bad = 1; exit }
	{ prev413 = ($6 == 413); n = $2 }
	$6 == 413 { refused++ }
	$6 == 200 && !first { first = $3 }
	END {
		if (bad) exit 1
		if (!refused) { print "no batch was refused as too large"; exit 1 }
		if (first != 1) { print "the first stored batch starts at seq " first ", not 1: the spool was lost"; exit 1 }
		printf "   %d refused as too large, each followed by half as many; first stored batch from seq 1\n", refused
	}' "$T/proxy.log" || fail "413 is not answered by halving"
pending=$(sed -n 's/.* pending=\([0-9]*\).*/\1/p' "$T/agent.out")
[ "$pending" = 0 ] || fail "the agent still holds $pending records after its drain"
records=$(q "SELECT records FROM hosts WHERE name = 'dlv'")
next=$(q "SELECT next_seq FROM hosts WHERE name = 'dlv'")
[ "$next" = $((records + 1)) ] || fail "records $records but next_seq $next: a number stored twice or skipped"
[ "$records" -ge "$queued" ] || fail "the server holds $records records, the killed agent had queued $queued"
dups=$(q "SELECT count(*) FROM (SELECT run_id, metric_id, t_s FROM samples GROUP BY 1, 2, 3 HAVING count(*) > 1)")
[ "$dups" = 0 ] || fail "$dups samples stored twice"
echo "delivery: back-off 0.5 s doubling, 413 halved, a SIGKILLed agent's spool ($queued records) stored once"
