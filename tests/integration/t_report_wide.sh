#!/bin/sh
# t_report_wide.sh - the text table stays within the 80 columns of a mail
# at 6 and 12 repeats (issue 35 item 7e: at 6 it was 100 wide): the runs
# wrap into blocks of columns, the last with the median and the change;
# every run's value is still shown once; markdown keeps one table (the
# viewer scrolls). Runs are ingested from the fuzz seed stream with the
# worst_lag_s values below (no guest).
set -u
B=${B:-build}
KC=$PWD/$B/kcanary
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export KCANARY_HOME=$tmp/home
mkdir -p "$KCANARY_HOME"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

ingest() { # job variant worst_lag_s
	grep -v '"type":"summary"' tests/fuzz/ingest/seed-stream.jsonl |
		sed "s|^{\"type\":\"done\"|{\"type\":\"summary\",\"metrics\":{\"worst_lag_s\":$3,\"mean_lag_s\":0.5}}\n&|" > "$tmp/s.jsonl"
	$KC ingest --job "$1" --variant "$2" "$tmp/s.jsonl" > /dev/null 2>&1 || fail "ingest $1 $2 $3"
}
base="81.5 46.5 52.5 50.5 44.5 45.5 61.5 62.5 63.5 64.5 65.5 66.5"
new="1.5 2.5 3.5 4.5 5.5 6.5 7.5 8.5 9.5 10.5 11.5 12.5"
for n in 6 12; do
	for v in $(echo $base | cut -d' ' -f1-$n); do ingest r$n 'base (v6.12.117)' $v; done
	for v in $(echo $new | cut -d' ' -f1-$n); do ingest r$n '+ v6 2/3' $v; done
	$KC report r$n > "$tmp/t$n" 2>&1 || fail "report r$n: $(cat "$tmp/t$n")"
	awk -v n=$n 'length($0) > 80 { printf "FAIL: %d repeats: %d columns: %s\n", n, length($0), $0; bad = 1 }
		END { exit bad }' "$tmp/t$n" || fails=$((fails + 1))
	# each value once, in its variant's rows (values end in .5: no rounding)
	for v in $(echo $base | cut -d' ' -f1-$n); do
		[ "$(grep '^  base (v6.12.117) ' "$tmp/t$n" | grep -o " ${v}s" | wc -l)" = 1 ] ||
			fail "$n repeats: base's ${v}s not shown once"
	done
	for v in $(echo $new | cut -d' ' -f1-$n); do
		[ "$(grep '^  + v6 2/3 ' "$tmp/t$n" | grep -o " ${v}s" | wc -l)" = 1 ] ||
			fail "$n repeats: + v6 2/3's ${v}s not shown once"
	done
	grep -q "run $n .*median$" "$tmp/t$n" || fail "$n repeats: no block ends with run $n and the median"
	grep -q '^  + v6 2/3 .*%.*MWU' "$tmp/t$n" || fail "$n repeats: no change column"
	$KC report r$n --format markdown > "$tmp/m$n" 2>&1
	grep -q "^| variant | run 1 |.* run $n | median | change |$" "$tmp/m$n" ||
		fail "$n repeats: markdown is not one table: $(head -3 "$tmp/m$n")"
done
[ $fails = 0 ] || cat "$tmp/t6"
echo "report wide: $fails failed"
[ $fails = 0 ]
