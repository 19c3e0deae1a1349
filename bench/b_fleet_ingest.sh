#!/bin/sh
# Fleet ingest over HTTP (issue 19, item 3): AGENTS (64) concurrent agents
# on loopback post gzip'd batches of RECORDS (100) records for HOSTS hosts
# to `kcanary serve` (bench/fleet_load.c: the agent's own sender,
# agent/http_out.c), BATCHES batches per host; then the store is read to
# check that every record was stored once. Target: >= 100,000 records/s
# (10,000 hosts x 100 records every 10 s). Beside it: `kcanary ingest` of a
# stream of the same number of records into a fresh store, in the same run,
# and the ratio of the two rates.
#
# Prints records/s stored, p50/p99 request latency, the server's peak RSS
# (VmHWM of /proc/PID/status) and CPU seconds (utime + stime of
# /proc/PID/stat, over the whole server life: registration included), and
# the count check. The machine is shared: CPU seconds per 100k records is
# the figure that noise does not inflate much.
#
#   B=build sh bench/b_fleet_ingest.sh   (AGENTS= HOSTS= BATCHES= RECORDS=
#                                         THREADS= PORT= to change the load;
#                                         FLEET_FORM=line: records as strings,
#                                         the envelope of agents before form 2)
set -eu
B=${B:-build}
AGENTS=${AGENTS:-64}
HOSTS=${HOSTS:-640}
BATCHES=${BATCHES:-16}
RECORDS=${RECORDS:-100}
THREADS=${THREADS:-4}
PORT=${PORT:-0}
top=$PWD
[ -x "$B/bench/fleet_load" ] || make -s "$B/bench/fleet_load"
tmp=$(mktemp -d "${BENCH_TMP:-/var/tmp}/kc-fleet-bench.XXXXXX")
spid=
cleanup() {
	[ -z "$spid" ] || kill "$spid" 2>/dev/null || :
	wait 2>/dev/null || :
	rm -rf "$tmp"
}
trap cleanup EXIT
export KCANARY_HOME=$tmp/home
mkdir -p "$KCANARY_HOME"
"$B/kcanary" token create bench 2>/dev/null >"$tmp/token"
# all agents come from 127.0.0.1: allow them all, and slack for reconnects
"$B/kcanary" serve --listen "127.0.0.1:$PORT" --threads "$THREADS" \
	--max-conn-per-ip $((AGENTS * 2)) \
	>"$tmp/serve.out" 2>"$tmp/serve.log" &
spid=$!
url=$(sh tools/serve-url.sh "$tmp/serve.out" $spid) || { cat "$tmp/serve.log"; exit 1; }

hz=$(getconf CLK_TCK)
cpu_s() { awk -v hz="$hz" '{ print ($14 + $15) / hz }' "/proc/$1/stat"; }
if ! "$B/bench/fleet_load" "$url" "$(cat "$tmp/token")" "$KCANARY_HOME/kcanary.db" \
	"$AGENTS" "$HOSTS" "$BATCHES" "$RECORDS" >"$tmp/load.out"; then
	cat "$tmp/load.out" "$tmp/serve.log" | tail -n 20
	echo "fleet ingest: FAILED (a request failed or the store check did not hold)"
	exit 1
fi
hwm_kb=$(awk '/^VmHWM:/ { print $2 }' "/proc/$spid/status")
srv_cpu=$(cpu_s $spid)
kill "$spid"
wait "$spid" 2>/dev/null || :
spid=

# the CLI's own rate on as many records, same machine, same run
n=$((HOSTS * BATCHES * RECORDS))
awk -v n="$n" 'BEGIN {
	print "{\"type\":\"hello\",\"agent_version\":\"bench\"}"
	for (i = 1; i < n; i++)
		printf "{\"type\":\"sample\",\"t\":%d.0,\"metric\":\"dirty_pages\",\"value\":%d}\n", i, (i * 7919) % 100000
}' >"$tmp/stream.jsonl"
KCANARY_HOME=$tmp/cli /usr/bin/time -f "%e %U %S" -o "$tmp/cli.t" "$B/kcanary" ingest \
	--job bench --variant base "$tmp/stream.jsonl" >/dev/null

cat "$tmp/load.out"
set -- $(cat "$tmp/cli.t")
# key=value pairs of fleet_load's first line, as awk variables
vars=$(head -n 1 "$tmp/load.out" | tr ' ' '\n' | sed 's/^/-v /' | tr '\n' ' ')
# shellcheck disable=SC2086
awk $vars -v hwm="$hwm_kb" -v cpu="$srv_cpu" -v cw="$1" -v cu="$2" -v cs="$3" -v n="$n" \
	-v thr="$THREADS" -v once="$(sed -n 's/.*stored_once=\([A-Za-z]*\).*/\1/p' "$tmp/load.out")" 'BEGIN {
	cli = n / cw
	printf "fleet: %d records from %d agents (%d hosts, %d batches of %d, envelope form %d) in %.2f s = %.0f records/s stored (serve --threads %d)\n",
		records, agents, hosts, batches, records / batches, form, wall_s, rate, thr
	printf "fleet: request latency p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", p50_ms, p99_ms, max_ms
	printf "fleet: server peak RSS %.1f MiB (VmHWM), server CPU %.2f s = %.2f s per 100k records\n",
		hwm / 1024, cpu, cpu / records * 100000
	printf "fleet: every record stored once: %s\n", once
	printf "target: fleet ingest over HTTP >= 100000 records/s: %.0f records/s: %s\n", rate, (rate >= 100000 ? "met" : "NOT met")
	printf "fleet: kcanary ingest of %d records: %.2f s = %.0f records/s (%.2f s CPU); fleet/CLI rate %.2f\n",
		n, cw, cli, cu + cs, rate / cli
}'
