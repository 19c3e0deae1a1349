#!/bin/sh
# kcanary canary through the CLI: a fleet's record streams are ingested
# (tests/fixtures/gen-canary-stream.sh, known summary values), then canary
# cohorts with a shifted worst lag, a doubled spread at the same median and
# foreign-flush misses on a critical probe fail; an A/A split of one
# kernel's hosts passes; weights give marginal; NODATA is named.
set -eu
B=${B:-build}
KC=$PWD/$B/kcanary
GEN=tests/fixtures/gen-canary-stream.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export KCANARY_HOME=$tmp/home

host() {	# host KERNEL NAME WORST MEAN PROBE RACK
	sh $GEN "$1" "$2" "$3" "$4" "$5" > $tmp/s.jsonl
	$KC ingest --job fleet --variant "$1" --param rack="$6" $tmp/s.jsonl >/dev/null
}
# control: 24 hosts on 6.12.115, worst lag evenly 1.20..1.40 s, racks a/b
i=0
while [ $i -lt 24 ]; do
	w=$(awk -v i=$i 'BEGIN { printf "%.4f", 1.20 + 0.2 * i / 23 }')
	m=$(awk -v i=$i 'BEGIN { printf "%.4f", 0.40 + 0.1 * i / 23 }')
	host 6.12.115+deb12-cloud-amd64 c$i $w $m 0 $([ $((i % 2)) -eq 0 ] && echo a || echo b)
	i=$((i + 1))
done
# canaries, 12 hosts each: 6.12.117 worst lag x3; 6.12.118 twice the
# spread around the same median; 6.12.119 same lag, foreign-flush misses
j=0
while [ $j -lt 12 ]; do
	w=$(awk -v j=$j 'BEGIN { printf "%.4f", 1.20 + 0.2 * j / 11 }')
	m=$(awk -v j=$j 'BEGIN { printf "%.4f", 0.40 + 0.1 * j / 11 }')
	host 6.12.117+deb12-cloud-amd64 s$j $(awk -v w=$w 'BEGIN { print 3 * w }') $m 0 a
	host 6.12.118+deb12-cloud-amd64 w$j $(awk -v w=$w 'BEGIN { printf "%.4f", 1.3 + 2 * (w - 1.3) }') $m 0 a
	host 6.12.119+deb12-cloud-amd64 p$j $w $m $((5 + j)) a
	j=$((j + 1))
done

expect() {	# expect STATUS NAME -- kcanary canary args...
	want=$1 name=$2
	shift 3
	set +e
	$KC canary "$@" > $tmp/out 2> $tmp/err
	rc=$?
	set -e
	if [ $rc -ne $want ]; then
		echo "FAIL: $name: exit $rc, expected $want"; cat $tmp/out $tmp/err; exit 1
	fi
}
has() {	# has FILE PATTERN
	grep -q -- "$2" "$1" || { echo "FAIL: '$2' not in $1:"; cat "$1"; exit 1; }
}

# median shift: worst_lag_s high -> fail (exit 1)
expect 1 shift -- --control kernel=6.12.115 --canary kernel=6.12.117
has $tmp/out "canary verdict: FAIL"
has $tmp/out "control: kernel=6.12.115 (24 runs)"
grep -E '^worst_lag_s +high +24/12 ' $tmp/out >/dev/null || { echo "FAIL: shift row"; cat $tmp/out; exit 1; }
grep -E '^mean_lag_s +pass ' $tmp/out >/dev/null || { echo "FAIL: mean row"; cat $tmp/out; exit 1; }
has $tmp/out "canary higher: shift +200.0% of the control median"
# weights: worst (fails) 1, mean (passes) 3 -> score 75, marginal (exit 3)
expect 3 weights -- --control kernel=6.12.115 --canary kernel=6.12.117 \
	--metric worst_lag_s --metric mean_lag_s,weight=3
has $tmp/out "canary verdict: MARGINAL (score 75.0 >= marginal threshold 75"
# doubled spread at the same median -> spread -> fail
expect 1 spread -- --control kernel=6.12.115 --canary kernel=6.12.118 --metric worst_lag_s
grep -E '^worst_lag_s +spread +24/12 +1\.3 +1\.3 ' $tmp/out >/dev/null ||
	{ echo "FAIL: spread row"; cat $tmp/out; exit 1; }
has $tmp/out "canary more spread out"
# ... which the location test alone lets through
expect 0 spread-off -- --control kernel=6.12.115 --canary kernel=6.12.118 --metric worst_lag_s \
	--no-spread
# foreign-flush misses on a critical probe fail the verdict
expect 1 critical -- --control kernel=6.12.115 --canary kernel=6.12.119 \
	--metric worst_lag_s --metric mean_lag_s --metric 'probe:cgroup_writeback_by_id:-2,critical'
has $tmp/out "critical metric 'probe:cgroup_writeback_by_id:-2' is high"
# A/A: one kernel's hosts split by rack pass, every metric
expect 0 aa -- --control kernel=6.12.115,rack=a --canary kernel=6.12.115,rack=b
has $tmp/out "canary verdict: PASS (score 100.0 >= pass threshold 95)"
# JSON
expect 1 json -- --control kernel=6.12.115 --canary kernel=6.12.117 --metric worst_lag_s \
	--format json
has $tmp/out '"result": "fail"'
has $tmp/out '"class": "high"'
has $tmp/out '"n_canary": 12'
# NODATA: a selector matching no runs names the kernels there are (exit 4)
expect 4 nodata -- --control kernel=6.12.115 --canary kernel=6.13
has $tmp/err "--canary 'kernel=6.13' matches no runs (NODATA): no verdict"
has $tmp/err "kernels in the store: 6.12.115+deb12-cloud-amd64, 6.12.117+deb12-cloud-amd64"
# one canary host is too few to judge: NODATA, ignored -> no verdict (4);
# pass rule -> pass
expect 4 too-few -- --control kernel=6.12.115 --canary kernel=6.12.117,host=s0 --metric worst_lag_s
has $tmp/out "canary has 1 value, fewer than 5 (min_n)"
has $tmp/out "canary verdict: NO VERDICT (1 of 1 metrics have no data"
expect 0 too-few-pass -- --control kernel=6.12.115 --canary kernel=6.12.117,host=s0 \
	--metric worst_lag_s,nodata=pass
# --window: runs that finished in the last hour; age the canary's runs
expect 1 window -- --control kernel=6.12.115 --canary kernel=6.12.117 --window 1h
if command -v sqlite3 >/dev/null; then	# DEB_PKGS has it
	sqlite3 "$KCANARY_HOME/kcanary.db" \
		"UPDATE runs SET finished_at = '2000-01-01T00:00:00Z' WHERE host LIKE 's%'"
	expect 4 window-old -- --control kernel=6.12.115 --canary kernel=6.12.117 --window 1h
	has $tmp/err "(only runs since "
fi
# --per-host: 6.12.120 runs on 7 hosts, one of which ran 8 times and
# stalled every time; per run that is most of the cohort, per host one of 7
for j in 0 1 2 3 4 5; do
	host 6.12.120 n$j $(awk -v j=$j 'BEGIN { printf "%.4f", 1.20 + 0.04 * j }') 0.45 0 a
done
for r in 1 2 3 4 5 6 7 8; do
	host 6.12.120 n6 20 0.45 0 a
done
expect 1 per-run -- --control kernel=6.12.115 --canary kernel=6.12.120 --metric worst_lag_s
has $tmp/out "canary:  kernel=6.12.120 (14 runs)"
expect 0 per-host -- --control kernel=6.12.115 --canary kernel=6.12.120 --metric worst_lag_s \
	--per-host
has $tmp/out "canary:  kernel=6.12.120 (14 runs on 7 hosts)"
grep -E '^worst_lag_s +pass +24/7 ' $tmp/out >/dev/null || { echo "FAIL: per-host row"; cat $tmp/out; exit 1; }
# bad input is named
expect 2 bad-selector -- --control kernel --canary kernel=6.12.117
has $tmp/err "selector 'kernel': expected KEY=VALUE"
expect 2 overlap -- --control kernel=6.12.115 --canary rack=a
has $tmp/err "share 12 of their runs"
expect 2 bad-option -- --control kernel=6.12.115 --canary kernel=6.12.117 --metric worst_lag_s,loud
has $tmp/err "bad option 'loud'"
expect 2 bad-window -- --control kernel=6.12.115 --canary kernel=6.12.117 --window soon
has $tmp/err "--window 'soon': expected a duration"
$KC canary --help | grep -q "Exit status: 0 pass, 1 fail" || { echo "FAIL: --help"; exit 1; }
# the simulator: 3 runs per cohort are too few to judge (NO VERDICT in
# every trial), which catches nothing; at 10 runs something is caught
$KC canary simulate --trials 20 --seed 1 --runs 3,10 > $tmp/sim.txt
grep -Eq '^ +3 +0\.0% +0\.0% +0\.0% +0\.0%$' $tmp/sim.txt ||
	{ cat $tmp/sim.txt; echo "FAIL: canary simulate counts NO VERDICT at 3 runs as caught"; exit 1; }
grep -E '^ +10 ' $tmp/sim.txt | grep -Eqv '% +0\.0% +0\.0% +0\.0%$' ||
	{ cat $tmp/sim.txt; echo "FAIL: canary simulate catches nothing at 10 runs"; exit 1; }
echo "ok: canary verdicts from ingested fleet streams (shift, spread, critical probe, A/A, NODATA)"
