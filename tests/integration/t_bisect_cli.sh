#!/bin/sh
# kcanary bisect through the CLI: a simulated bisection writes its log,
# `bisect replay` reproduces it without measuring, a tampered log is caught,
# and the real bisection refuses bad input with a clear message.
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

# the real bisection: bad input is refused before anything is built,
# naming the input (a small history made by git)
g=$tmp/repo
mkdir -p $g
(cd $g && git init -q . && for c in A B C; do echo $c >> f && git add f &&
	git -c user.name=t -c user.email=t@example.org commit -qm $c && git tag $c; done)
if $KC bisect --repo /nonexistent --good a --bad b 2>$tmp/err; then
	echo "bisect of a missing repo succeeded"; exit 1
fi
grep -q "cannot open repository '/nonexistent'" $tmp/err
if $KC bisect --repo $g --good v9 --bad C 2>$tmp/err; then echo "unknown rev accepted"; exit 1; fi
grep -q "unknown revision 'v9'" $tmp/err
if $KC bisect --repo $g --good C --bad A 2>$tmp/err; then echo "reversed range accepted"; exit 1; fi
grep -q "'C' (.*) is not an ancestor of 'A'" $tmp/err
# --find-fix: --bad names the older end
if $KC bisect --find-fix --repo $g --good A --bad C 2>$tmp/err; then echo "find-fix range accepted"; exit 1; fi
grep -q "with --find-fix, --bad names the older end" $tmp/err
if $KC bisect --repo $g --good C --bad C 2>$tmp/err; then echo "empty range accepted"; exit 1; fi
grep -q "same commit" $tmp/err
if $KC bisect --kernels /nonexistent,/x 2>$tmp/err; then echo "missing kernel accepted"; exit 1; fi
grep -q "cannot read kernel image '/nonexistent' (--kernels item 1)" $tmp/err
if $KC bisect --kernels a,b --strategy nope 2>$tmp/err; then echo "bad strategy accepted"; exit 1; fi
grep -q "unknown strategy 'nope'" $tmp/err
# the images after --kernels, as arguments, in order
: > $tmp/img1
if $KC bisect --kernels $tmp/img1 /nonexistent2 --find-fix 2>$tmp/err; then echo "missing kernel accepted"; exit 1; fi
grep -q "cannot read kernel image '/nonexistent2' (--kernels item 2)" $tmp/err
if $KC bisect --repo $g --good A --bad C stray 2>$tmp/err; then echo "stray argument accepted"; exit 1; fi
grep -q "unexpected argument 'stray' (kernel images go after --kernels)" $tmp/err
$KC bisect --help | grep -q -- '--kernels OLD\[,...\] ... NEW'
$KC help | grep -q '^  bisect '
echo "ok: bisect simulate, replay (and tamper detection), bad input of the real bisection"
