#!/bin/sh
# t_report_names.sh - a report's names follow the job (issue 35, items 4
# and 9), host-only: fio-like runs made by `kcanary ingest` of streams as
# the agent's fio workload writes them (agent/fio.c: fio:JOB:DIR:FIGURE,
# JOB 'kc' without a job file; docs/records.md).
# - a plain `kcanary report` of a fio job shows fio's bandwidth, the metric
#   its runs have, not an empty "Worst lag behind schedule" table;
# - `--metric nosuch` lists the metrics the runs have, not wb-handover's;
# - a job stored with a `by` that is no axis of it (before compare checked
#   it) still reports, along the variants, and says why.
# Numbers by hand: bandwidths 1, 2, 3 MiB/s (base) and 4, 5, 6 MiB/s
# (patched): medians 2.0 and 5.0 MiB/s, +150.0%; every patched run above
# every base run, so the exact two-sided Mann-Whitney p is 2/C(6,3) = 0.10.
set -u
B=${B:-build}
KC=$PWD/$B/kcanary
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export KCANARY_HOME=$tmp/home
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# stream MIB: one fio run of bandwidth MIB MiB/s, as the agent records it
stream() {
	bw=$(($1 * 1048576))
	cat <<EOF
{"type":"hello","agent_version":"fixture","kernel_release":"6.12.117","host":"fixture","workload":"fio"}
{"type":"phase","t":0.0,"name":"fio"}
{"type":"metric","name":"fio:kc:write:bw","unit":"bytes/s","better":"higher"}
{"type":"metric","name":"fio:kc:write:iops","unit":"ops/s","better":"higher"}
{"type":"metric","name":"fio:kc:write:clat_p99","unit":"ns","better":"lower"}
{"type":"sample","t":1.0,"metric":"fio:kc:write:bw","value":$bw}
{"type":"sample","t":2.0,"metric":"fio:kc:write:bw","value":$bw}
{"type":"summary","metrics":{"fio:kc:write:bw":$bw,"fio:kc:write:iops":$(($bw / 4096)),"fio:kc:write:clat_p99":61184}}
{"type":"done","status":"ok"}
EOF
}
P="--fs ext4 --param workload=fio --param rw=randwrite"
for pair in "1 4" "2 5" "3 6"; do
	set -- $pair
	stream $1 | $KC ingest --job fio-j --variant base $P - > /dev/null || fail "ingest base $1"
	stream $2 | $KC ingest --job fio-j --variant "+ v6" $P - > /dev/null || fail "ingest + v6 $2"
done

echo "-- report of a fio job: the metric its runs have"
$KC report fio-j > "$tmp/out" 2> "$tmp/err" || fail "report fio-j exited $?: $(cat "$tmp/err")"
sed 's/^/   /' "$tmp/out" | head -n 6
grep -q "^fio:kc:write:bw (fio, ext4, rw=randwrite):" "$tmp/out" ||
	fail "report fio-j: no fio:kc:write:bw table: $(head -n 2 "$tmp/out")"
grep -q "^  base  *1.0MiB/s  *2.0MiB/s  *3.0MiB/s  *2.0MiB/s *\$" "$tmp/out" ||
	fail "report fio-j: no base row of 1.0 2.0 3.0 MiB/s, median 2.0MiB/s"
grep -q "^  + v6  *4.0MiB/s  *5.0MiB/s  *6.0MiB/s  *5.0MiB/s  *+150.0% (p=0.10, MWU)\$" "$tmp/out" ||
	fail "report fio-j: no + v6 row of 4.0 5.0 6.0 MiB/s, median 5.0MiB/s, +150.0% (p=0.10)"
! grep -qi "lag" "$tmp/out" || fail "report fio-j speaks of lag: $(grep -i lag "$tmp/out" | head -n 2)"
grep -qF "kcanary report: job 'fio-j': metric fio:kc:write:bw: no run has the job's worst_lag_s" "$tmp/err" ||
	fail "report fio-j does not say why it shows fio:kc:write:bw: $(cat "$tmp/err")"
# the JSON (what the web page reads) has the same default
$KC report fio-j --format json 2> /dev/null | grep -q '"metric": *"fio:kc:write:bw"' ||
	fail "report fio-j --format json: metric is not fio:kc:write:bw"

echo "-- --metric nosuch lists what the runs have"
rc=0; $KC report fio-j --metric nosuch > "$tmp/out" 2>&1 || rc=$?
sed 's/^/   /' "$tmp/out"
[ $rc = 1 ] || fail "report --metric nosuch exited $rc, expected 1"
grep -qF "no run of job 'fio-j' has a value of metric 'nosuch': expected one its runs have:" "$tmp/out" ||
	fail "report --metric nosuch: no list of the runs' metrics"
for m in fio:kc:write:bw fio:kc:write:clat_p99 fio:kc:write:iops; do
	grep -qF " $m" "$tmp/out" || fail "report --metric nosuch does not list $m"
done
! grep -q "worst_lag_s" "$tmp/out" || fail "report --metric nosuch suggests wb-handover's worst_lag_s"

echo "-- a job stored with a by that is no axis of it still reports"
$KC ingest --job typo --variant base --fs ext4 --param mode=removed tests/fixtures/streams/lag-1.0.jsonl > /dev/null &&
$KC ingest --job typo --variant "+ v6" --fs ext4 --param mode=removed tests/fixtures/streams/lag-1.2.jsonl > /dev/null &&
sqlite3 "$KCANARY_HOME/kcanary.db" "UPDATE jobs SET spec_json = '{\"by\":\"mod\"}' WHERE name = 'typo'" ||
	fail "cannot set up job 'typo'"
rc=0; $KC report typo > "$tmp/out" 2> "$tmp/err" || rc=$?
sed 's/^/   /' "$tmp/out" "$tmp/err" | head -n 6
[ $rc = 0 ] || fail "report typo (stored by 'mod') exited $rc: $(cat "$tmp/err")"
grep -q "^  + v6  *1.2s  *1.2s" "$tmp/out" || fail "report typo: no row per variant"
grep -qF "compared along variant: the job's by 'mod' is not usable: job 'typo' has no axis 'mod'" "$tmp/err" ||
	fail "report typo does not say why it compares along variant: $(cat "$tmp/err")"
# asked for by the reader, the same axis is the reader's mistake
rc=0; $KC report typo --by mod > "$tmp/out" 2>&1 || rc=$?
[ $rc = 1 ] && grep -qF "job 'typo' has no axis 'mod'" "$tmp/out" ||
	fail "report typo --by mod: exit $rc: $(cat "$tmp/out")"

[ $fails = 0 ] || exit 1
echo "ok: a fio job's report shows fio:kc:write:bw; --metric nosuch lists the runs' metrics; a stored by that is no axis falls back to the variants, said"
