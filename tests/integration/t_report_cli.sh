#!/bin/sh
# kcanary ingest of recorded streams, then kcanary report, reproduces the
# cover-letter table (tests/fixtures/report/cover.txt) through the CLI.
set -eu
B=${B:-build}
KC=$PWD/$B/kcanary
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export KCANARY_HOME=$tmp/home
P="--fs ext4 --param workload=wb-handover --param rate_mbps=250 --param measure_s=120"
S=tests/fixtures/streams
for pair in "85.3 1.0" "46.9 1.2" "52.1 1.2"; do
	set -- $pair
	$KC ingest --job dying-cgwb --variant "base (v6.12.117)" $P $S/lag-$1.jsonl >/dev/null
	$KC ingest --job dying-cgwb --variant "+ v6 2/3" $P - < $S/lag-$2.jsonl >/dev/null
done
$KC report dying-cgwb > $tmp/got.txt
diff -u tests/fixtures/report/cover.txt $tmp/got.txt
# a stored run is never replaced
if $KC ingest --job dying-cgwb --variant "+ v6 2/3" --repeat 1 $P $S/lag-1.0.jsonl 2>$tmp/err; then
	echo "FAIL: re-ingesting repeat 1 succeeded"; exit 1
fi
grep -q "never replaced" $tmp/err
# bad input is named
if $KC report nosuchjob 2>$tmp/err; then echo "FAIL: unknown job accepted"; exit 1; fi
grep -q "no job 'nosuchjob'" $tmp/err
$KC report dying-cgwb --format yaml 2>$tmp/err && { echo "FAIL: bad format accepted"; exit 1; }
grep -q "expected text, markdown, csv or json" $tmp/err
echo "ok: ingest + report reproduce the cover-letter table"
