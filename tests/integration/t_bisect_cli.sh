#!/bin/sh
# kcanary bisect through the CLI: a simulated bisection writes its log,
# `bisect replay` reproduces it without measuring, a tampered log is caught,
# and the real bisection says truthfully that it is not available yet.
set -eu
B=${B:-build}
KC=$PWD/$B/kcanary
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

$KC bisect simulate --commits 200 --trials 1 --seed 5 --history flaky \
	--strategy prob-check --skip-rate 0.05 --log $tmp/b.log > $tmp/sim.txt
grep -q '^probabilistic + check' $tmp/sim.txt
head -2 $tmp/b.log | grep -q '^kcanary-bisect-log 1$'
$KC bisect replay $tmp/b.log > $tmp/replay.txt
grep -q 'without measuring: same result' $tmp/replay.txt
grep -Eq '^(found|range): ' $tmp/replay.txt
grep -q '^culprit check: parent' $tmp/replay.txt
# the table lists the endpoints with their sides
grep -Eq '^ +0 +[0-9]+ good ' $tmp/replay.txt
grep -Eq '^ +199 +[0-9]+ bad ' $tmp/replay.txt

# change every search run's value: the replay must notice
sed 's/\(phase=search value=\)[0-9.e+-]*/\1 1.0/' $tmp/b.log | sed 's/value= /value=/' > $tmp/bad.log
if $KC bisect replay $tmp/bad.log 2>$tmp/err; then
	echo "replay of a tampered log succeeded"; exit 1
fi
grep -Eq 'diverges|different result|log ends' $tmp/err

# the real bisection needs the build/guest pipeline
if $KC bisect --repo /nonexistent --good a --bad b 2>$tmp/err; then
	echo "real bisect claimed to work"; exit 1
fi
grep -q 'not available yet: needs the build/guest pipeline (issue 6)' $tmp/err
$KC bisect --help | grep -q 'not available yet'
$KC help | grep -q '^  bisect '
echo "ok: bisect simulate, replay (and tamper detection), not-yet message"
