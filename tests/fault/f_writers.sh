#!/bin/sh
# Concurrent writers on one store (issue 18, scope 8), host only: a
# `kcanary serve` on loopback takes WRITERS_AGENTS (16; make soak: 64) fleet
# agents (kcanary-agent daemon, real processes, a spool each, half of them
# also running the `command` workload) for WRITERS_S (15; soak: 60) s,
# while at the same time WRITERS_INGESTS (3) CLI loops `kcanary ingest`
# every record stream of tests/fixtures/streams/ (and one of 6,000
# records) into one new job, a CLI `kcanary compare` coordinator carries
# out one job after another (2 variants x 2 repeats on libvirt's
# test:///default: no guest, each run ends at its 1 s watchdog), and CLI
# readers run `kcanary report`, `status` and `jobs` against the same
# store over and over. The server,
# the ingests and the readers start at once on a home with no store yet,
# and `kcanary token create` writes beside them. Checks:
#  - no "database is locked" (nor any SQLITE_BUSY/LOCKED or "busy" text)
#    reaches any command's output or any log, and every command succeeds;
#  - every record arrives exactly once: each agent's own counts (its final
#    stats line) against its host's rows, and each ingested run's records,
#    samples, probe counts and phases against a quiet ingest of the same
#    stream into a store of its own; the new job is one job holding every
#    ingest as one run; every compare job is done with each of its 4
#    planned runs stored once;
#  - serve's job queue never takes a CLI compare's job;
#  - PRAGMA integrity_check is ok.
# Server on a free loopback port (port 0). Bounded: about 40 s (soak: 2 min;
# up to 120 s more on a machine too slow for two compare jobs in WRITERS_S).
# Prints a "fault-table:" line.
set -eu
B=${B:-build}
case $B in /*) ;; *) B=$PWD/$B ;; esac
KC=$B/kcanary AG=$B/kcanary-agent
N=${WRITERS_AGENTS:-16} SECS=${WRITERS_S:-15} NI=${WRITERS_INGESTS:-3}
# WRITERS_GUESTS=1 (tests/integration/t_compare_writers.sh): the compare
# writer is one job of real TCG guests instead (the kernel below, --aa,
# WRITERS_GUEST_REPEAT (1) repeats, 1 vCPU, the short workload, on
# WRITERS_CONNECT, default qemu:///system), and everything else runs until
# it has ended (at least WRITERS_S); each planned run must be ok once
GUESTS=${WRITERS_GUESTS:-0} GREPEAT=${WRITERS_GUEST_REPEAT:-1}
CMP_KERNEL=${KCANARY_TEST_KERNEL:-/boot/vmlinuz-6.12.117+deb12-cloud-amd64}
[ -r "$CMP_KERNEL" ] || { echo "FAIL: no test kernel $CMP_KERNEL (make deps)"; exit 1; }
command -v sqlite3 >/dev/null || { echo "skip: the sqlite3 CLI is missing (make deps)"; exit 77; }
tmp=$(mktemp -d /var/tmp/kc-t-writers.XXXXXX)
spid= apids= lpids=
cleanup() {
	for p in $apids $lpids $spid; do kill -9 $p 2>/dev/null || :; done
	wait 2>/dev/null || :
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
t0=$(date +%s)

# the streams, and what a quiet ingest of each stores (nobody else writing)
mkdir $tmp/streams
cp tests/fixtures/streams/*.jsonl $tmp/streams/
sh tests/fixtures/gen-stream.sh 3.0 3000 > $tmp/streams/gen-3000.jsonl
STATS="SELECT v.name, r.status, r.records, r.bad_lines,
	(SELECT count(*) FROM samples s WHERE s.run_id = r.id),
	(SELECT count(*) FROM probes p WHERE p.run_id = r.id),
	(SELECT count(*) FROM phases p WHERE p.run_id = r.id)
	FROM runs r JOIN variants v ON v.id = r.variant_id JOIN jobs j ON j.id = r.job_id
	WHERE j.name = 'writers' ORDER BY 1"
for f in $tmp/streams/*.jsonl; do
	KCANARY_HOME=$tmp/ref $KC ingest --job writers --variant "$(basename $f .jsonl)" $f > /dev/null ||
		fail "a quiet ingest of $f failed"
done
sqlite3 $tmp/ref/kcanary.db "$STATS" > $tmp/ref.rows

export KCANARY_HOME=$tmp/home
DB=$KCANARY_HOME/kcanary.db
q() { sqlite3 -cmd '.timeout 10000' "$DB" "$1"; }
# the CLI writers: NI loops ingesting every stream into the new job
# 'writers' until $tmp/stop, each ingest's exit status and output kept
ingest_loop() { # k
	while [ ! -e $tmp/stop ]; do
		for f in $tmp/streams/*.jsonl; do
			v=$(basename $f .jsonl)
			if $KC ingest --job writers --variant $v $f >> $tmp/ingest$1.out 2>&1; then
				echo $v >> $tmp/ingested
			else
				echo "ingest $v: exit status $?" >> $tmp/failed
			fi
		done
	done
}
# the CLI compare writer: `kcanary compare` jobs of 2 variants x 2 repeats
# on libvirt's test driver (in-process, no guest: each run ends at its 1 s
# watchdog, stored as 'timeout'), one after another until $tmp/stop: the
# coordinator's own writes (job, runs, guest_json, statuses, console tails)
# beside everything else
compare_loop() {
	c=0
	if [ "$GUESTS" = 1 ]; then
		if $KC compare --name cmpg --kernels "$CMP_KERNEL" --aa --repeat $GREPEAT --seed 1 \
			--vcpus 1 --set rate_mbps=8 --set nfiles=10 --set old_s=4 --set settle_s=1 \
			--set measure_s=8 --watchdog 300s --connect "${WRITERS_CONNECT:-qemu:///system}" \
			-q >> $tmp/compare.out 2>> $tmp/compare.log; then
			echo cmpg >> $tmp/compared
		else
			echo "compare cmpg (guests): exit status $?" >> $tmp/failed
		fi
		: > $tmp/compare.end
		return
	fi
	while [ ! -e $tmp/stop ]; do
		c=$((c + 1))
		if $KC compare --name cmp$c --kernels "$CMP_KERNEL" --aa --repeat 2 --watchdog 1s \
			--connect test:///default -q >> $tmp/compare.out 2>> $tmp/compare.log; then
			echo cmp$c >> $tmp/compared
		else
			echo "compare cmp$c: exit status $?" >> $tmp/failed
		fi
	done
}
# the CLI readers: report, status and jobs (and the fleet job's status)
read_loop() {
	while [ ! -e $tmp/stop ]; do
		for c in "report writers" "status writers" "jobs" "status fleet"; do
			# a store or job not created yet is the one answer
			# a reader may give
			rc=0
			$KC $c >> $tmp/reader.out 2> $tmp/reader.err || rc=$?
			if [ $rc -ne 0 ] && ! grep -q "no job\|no store at" $tmp/reader.err; then
				echo "$c: exit status $rc: $(cat $tmp/reader.err)" >> $tmp/failed
			fi
			cat $tmp/reader.err >> $tmp/reader.log
			echo ok >> $tmp/reads
		done
	done
}
# the server, the CLI writers and the readers start at once on a home
# with no store yet: each may be the one that creates and migrates it
$KC serve --listen 127.0.0.1:0 > $tmp/serve.out 2> $tmp/serve.log &
spid=$!
k=1
while [ $k -le $NI ]; do
	ingest_loop $k &
	lpids="$lpids $!"
	k=$((k + 1))
done
read_loop &
lpids="$lpids $!"
compare_loop &
lpids="$lpids $!"
url=$(sh tools/serve-url.sh $tmp/serve.out $spid) || { cat $tmp/serve.log; fail "serve did not start"; }
$KC token create fleet > $tmp/token 2> $tmp/token.log || fail "token create beside the writers: $(cat $tmp/token.log)"
i=1
while [ $i -le $N ]; do
	if [ $((i % 2)) -eq 0 ]; then
		set -- --workload command --every 3s cgroup=0 dir="$tmp" \
			cmd="for k in 1 2 3 4 5; do echo metric writers_x_s $i.\$k; done"
	else
		set --
	fi
	$AG daemon --server $url --token-file $tmp/token --host-id w-$i --interval 100ms \
		--heartbeat 1s --spool $tmp/agent$i.spool --drain 30s "$@" \
		> $tmp/agent$i.out 2> $tmp/agent$i.log &
	apids="$apids $!"
	i=$((i + 1))
done
sleep $SECS
if [ "$GUESTS" = 1 ]; then
	i=0
	while [ ! -e $tmp/compare.end ] && [ $i -lt 900 ]; do sleep 0.5; i=$((i + 1)); done
	[ -e $tmp/compare.end ] || { touch $tmp/stop; fail "the guest compare did not end in $((SECS + 450)) s"; }
else
	# two compare jobs beside everything else, however slow this
	# machine is (one takes 5 s quiet, 18 s under a CPU and disk hog):
	# the writers keep writing until then, up to 120 s more
	i=0
	while [ "$(cat $tmp/compared $tmp/failed 2>/dev/null | wc -l)" -lt 2 ] && [ $i -lt 240 ]; do
		sleep 0.5; i=$((i + 1))
	done
fi
touch $tmp/stop
for p in $lpids; do wait $p; done
lpids=
for p in $apids; do kill -TERM $p; done
for p in $apids; do wait $p || fail "an agent exited with status $?"; done
apids=
t1=$(date +%s)
kill -TERM $spid; wait $spid || fail "serve exited with status $?"
spid=

# measured first, checked after the fault table's row is printed: a
# busy store seen by a user or a log; each agent's records against its
# host's rows (lost: records an agent produced that the store lacks)
busy=$(grep -i -E -n 'database (table )?is locked|SQLITE_(BUSY|LOCKED)|busy' \
	$tmp/*.out $tmp/*.log $tmp/failed 2>/dev/null | head -5 || true)
total=0 lost=0 bad=
i=1
while [ $i -le $N ]; do
	line=$(grep '^kcanary-agent daemon: stats ' $tmp/agent$i.out | tail -n 1)
	if [ -z "$line" ]; then
		bad="$bad
agent $i printed no stats line: $(tail -3 $tmp/agent$i.log)"
		i=$((i + 1)); continue
	fi
	get() { echo "$line" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }
	produced=$(get produced) samples=$(get samples) pending=$(get pending)
	acked=$(get acked_seq) dropped=$(get dropped) next=$(get next_seq)
	h="(SELECT id FROM hosts WHERE name = 'w-$i')"
	runs="(SELECT run_id FROM host_runs WHERE host_id = $h)"
	set -- $(q "SELECT next_seq, records, (SELECT coalesce(sum(records + bad_lines), 0) FROM runs WHERE id IN $runs),
		(SELECT count(*) FROM samples WHERE run_id IN $runs) FROM hosts WHERE name = 'w-$i'" | tr '|' ' ')
	[ $# = 4 ] || set -- 0 0 0 0
	[ "$2" -lt "$produced" ] && lost=$((lost + produced - $2))
	[ "$pending" -eq 0 ] || bad="$bad
agent $i still has $pending records queued: $line"
	[ "$dropped" -eq 0 ] || bad="$bad
agent $i dropped $dropped records: $line"
	[ "$acked" -eq "$produced" ] || bad="$bad
w-$i: acked seq $acked, produced $produced"
	[ "$1" -eq "$next" ] || bad="$bad
w-$i: the store expects seq $1, the agent $next"
	[ "$2" -eq "$produced" ] || bad="$bad
w-$i: the store counted $2 records, the agent produced $produced"
	[ "$3" -eq "$produced" ] || bad="$bad
w-$i: the host's runs hold $3 records, the agent produced $produced"
	[ "$4" -eq "$samples" ] || bad="$bad
w-$i: $4 sample rows stored, the agent produced $samples samples"
	total=$((total + produced))
	i=$((i + 1))
done
if [ "$GUESTS" = 1 ]; then
	what="a CLI compare of TCG guests" secs=$((t1 - t0))
else
	what="a CLI compare" secs=$SECS
fi
survived=$((N + NI + 2))
[ -z "$busy$bad" ] && [ ! -s $tmp/failed ] || survived=0
echo "fault-table: $N agents + $NI CLI ingests + $what + readers on one store, ${secs}s|$((N + NI + 2))|$survived|$lost"

[ -z "$busy" ] || { echo "$busy"; fail "a busy store reached a user or a log (above)"; }
[ ! -s $tmp/failed ] || fail "a CLI writer or reader failed: $(head -5 $tmp/failed)
compare's stderr (last lines): $(tail -5 $tmp/compare.log 2>/dev/null)"
[ -z "$bad" ] || fail "agents' records against the store:$bad"
# a CLI compare's job is its own: serve's queue, on the same store, never
# carries it out too (it did, between the job's storing and its claim)
! grep -n "job queue: carrying out" $tmp/serve.log ||
	fail "serve's job queue took a CLI compare's job (above)"

# every compare job done, each of its 4 planned runs once (a 'timeout' on
# the test driver), nothing left running
ncmp=$(wc -l < $tmp/compared 2>/dev/null || echo 0)
if [ "$GUESTS" = 1 ]; then
	# the guests' job: done, each of its 2 x GREPEAT planned runs ok once
	want=$((2 * GREPEAT))
	[ "$ncmp" = 1 ] || fail "the guest compare did not succeed: $(tail -5 $tmp/compare.log)"
	got=$(q "SELECT j.status || ' ' || count(r.id) || ' ' || sum(r.status = 'ok') || ' ' ||
		count(DISTINCT r.variant_id || '/' || r.repeat_idx) FROM jobs j JOIN runs r ON r.job_id = j.id
		WHERE j.name = 'cmpg'")
	[ "$got" = "done $want $want $want" ] || fail "guest compare job: $got (want: done, $want runs ok, each once): $(q "SELECT
		r.id, r.status, r.error FROM runs r JOIN jobs j ON j.id = r.job_id WHERE j.name = 'cmpg'")"
	gsamples=$(q "SELECT count(*) FROM samples WHERE run_id IN (SELECT r.id FROM runs r JOIN jobs j
		ON j.id = r.job_id WHERE j.name = 'cmpg')")
	[ "$gsamples" -gt 0 ] || fail "the guest runs stored no sample"
else
[ "$ncmp" -ge 2 ] || fail "only $ncmp compare jobs in $((t1 - t0)) s: $(tail -3 $tmp/compare.log)"
fi
[ "$GUESTS" = 1 ] || for j in $(cat $tmp/compared); do
	got=$(q "SELECT j.status || ' ' || count(r.id) || ' ' || sum(r.status = 'timeout') || ' ' ||
		count(DISTINCT r.variant_id || '/' || r.repeat_idx) FROM jobs j JOIN runs r ON r.job_id = j.id
		WHERE j.name = '$j'")
	[ "$got" = "done 4 4 4" ] || fail "compare job $j: $got (want: done, 4 runs, each once): $(q "SELECT
		r.id, r.status, r.error FROM runs r JOIN jobs j ON j.id = r.job_id WHERE j.name = '$j'")"
done
# every ingest once, whole: one job, one run per ingest, each as the quiet one
[ "$(q "SELECT count(*) FROM jobs WHERE name = 'writers'")" = 1 ] || fail "more than one job 'writers'"
ningest=$(wc -l < $tmp/ingested)
[ "$ningest" -ge $((NI * 2)) ] || fail "only $ningest ingests in ${SECS}s"
q "$STATS" > $tmp/got.rows
sort $tmp/ingested | while read -r v; do grep "^$v|" $tmp/ref.rows; done > $tmp/want.rows
if ! diff $tmp/want.rows $tmp/got.rows > $tmp/rows.diff; then
	head -10 $tmp/rows.diff
	fail "the ingested runs differ from the quiet ingests (< expected, > stored)"
fi
# (a command workload's run may print one metric twice at one t: not those)
dups=$(q "SELECT count(*) FROM (SELECT run_id, metric_id, t_s FROM samples WHERE run_id IN
	(SELECT id FROM runs WHERE cell IN ('', 'workload=passive')) GROUP BY 1, 2, 3 HAVING count(*) > 1)")
[ "$dups" = 0 ] || fail "$dups samples of the passive or ingested runs stored twice"
[ "$(q 'PRAGMA integrity_check')" = ok ] || fail "integrity_check: $(q 'PRAGMA integrity_check')"
reads=$(wc -l < $tmp/reads)
if [ "$GUESTS" = 1 ]; then
	cmpsay="1 compare job of real TCG guests, its $want runs ok once each ($gsamples samples)"
else
	cmpsay="$ncmp compare jobs, each run once"
fi
echo "$N agents: $total records, each stored once; $ningest CLI ingests ($NI at a time)," \
     "each stored whole once; $cmpsay; $reads CLI reads; $((t1 - t0)) s; no busy store seen; integrity_check ok"
echo "ok: concurrent writers and readers on one store: no lock error, every record once"
