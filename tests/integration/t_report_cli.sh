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
grep -q "expected text, markdown, csv, json or email" $tmp/err
# a reply to the series' thread, for git send-email (#16)
$KC report dying-cgwb --format email --series tests/fixtures/mail/A1-memcg-vmscan-tracepoints-v3/00.eml \
	> $tmp/mail.txt
head -1 $tmp/mail.txt | grep -qx 'Subject: Re: \[PATCH v3 0/2\] mm: memcg: improve vmscan tracepoints'
grep -qx 'In-Reply-To: <20231123193937.11628-1-dev1@example.org>' $tmp/mail.txt
grep -qx 'References: <20231123193937.11628-1-dev1@example.org>' $tmp/mail.txt
grep -qx 'kcanary measured v3 of this series (job .dying-cgwb., 6 runs, 6 ok):' $tmp/mail.txt
# the table as the text report has it, then the environment
sed -n '/^Worst lag/,/^cgroup_writeback/p' $tmp/mail.txt | diff -u tests/fixtures/report/cover.txt -
grep -q '^  base (v6.12.117)     3 runs: kernel 6.12.117, host fixture, accel (not recorded), fs ext4$' $tmp/mail.txt
grep -q 'knobs: measure_s=120 rate_mbps=250 workload=wb-handover$' $tmp/mail.txt
# git mailinfo (what git am and send-email read) takes its headers
printf 'From: kcanary <kcanary@example.invalid>\n' | cat - $tmp/mail.txt >$tmp/mail.eml
git mailinfo -k $tmp/m $tmp/p <$tmp/mail.eml | grep -qx 'Subject: Re: \[PATCH v3 0/2\] mm: memcg: improve vmscan tracepoints'
echo "ok: ingest + report reproduce the cover-letter table"
