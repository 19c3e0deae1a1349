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
# one strategy alone has nothing to judge the goal against; without --log
# no file is written (run in an empty dir to see that)
mkdir $tmp/cwd
(cd $tmp/cwd && $KC bisect simulate --commits 50 --trials 3 --history clean --strategy prob) > $tmp/one.txt
grep -q '^goal: not judged: no fixed-repeat strategy simulated' $tmp/one.txt
# every history states one rule (a target or goal line: what, the ratio
# from this run, met or not), which bench/run.sh's summary counts once;
# the clean history printed two (issue 35 item 16), on mixed disagreeing
$KC bisect simulate --commits 100 --trials 20 --seed 1 > $tmp/all.txt
awk '/^history: /{ if (h) print h, n; h = $2; n = 0 } /^(target|goal): /{ n++ }
	END { print h, n }' $tmp/all.txt > $tmp/rules.txt
[ "$(cat $tmp/rules.txt)" = "$(printf 'clean, 1\nflaky, 1\nmixed, 1')" ] ||
	{ echo "FAIL: rule lines per history (want one each):"; cat $tmp/rules.txt;
	  grep -E '^(history|target|goal): ' $tmp/all.txt; exit 1; }
grep -Eq '^target: .*clean history.*[0-9.]+x: (met|NOT met)$' $tmp/all.txt
[ -z "$(ls -A $tmp/cwd)" ] || { echo "FAIL: simulate without --log wrote: $(ls -A $tmp/cwd)"; exit 1; }
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
$KC bisect --help | grep -q 'default K=3'
$KC bisect --help | grep -q -- '--max-runs caps the search'
$KC bisect --help | grep -q 'converged on an adjacent good/bad pair'
$KC bisect --help | grep -q -- '--hosts all|NAME,NAME|KEY=VALUE runs on lab hosts'

# swapped final verdicts (the result line untouched): the replay notices
awk '/^verdict idx=[0-9]+ final=1 .*verdict=bad$/ && !done { sub(/verdict=bad$/, "verdict=good"); done=1 } { print }' \
	$tmp/b.log > $tmp/swapped.log
# (`! cmd` never stops a set -e script, so each negation says what failed)
if cmp -s $tmp/b.log $tmp/swapped.log; then echo "FAIL: no final bad verdict to swap in the log"; exit 1; fi
if $KC bisect replay $tmp/swapped.log >$tmp/out 2>$tmp/err; then
	echo "replay of swapped final verdicts succeeded"; exit 1
fi
grep -q 'different final verdicts' $tmp/err
# the replay's table names the candidates when the log has '# candidate' lines
{ echo "# candidate 0 - /boot/vmlinuz-old"; echo "# candidate 199 - /boot/vmlinuz-new"; cat $tmp/b.log; } > $tmp/named.log
$KC bisect replay $tmp/named.log > $tmp/replay2.txt
grep -Eq '^ +0 +[0-9]+ good +/boot/vmlinuz-old ' $tmp/replay2.txt
grep -Eq '^ +199 +[0-9]+ bad +/boot/vmlinuz-new ' $tmp/replay2.txt

# usage errors (exit 2) before anything is stored, naming the option
h=$tmp/home
mkdir -p $h
: > $tmp/img2
usage_err() {	# usage_err 'expected message' args...
	want=$1; shift
	set +e; $KC --home $h bisect "$@" >/dev/null 2>$tmp/err; rc=$?; set -e
	[ $rc = 2 ] || { echo "bisect $*: exit $rc, expected 2"; cat $tmp/err; exit 1; }
	grep -q -- "$want" $tmp/err || { echo "bisect $*: expected '$want'"; cat $tmp/err; exit 1; }
}
usage_err "--check-runs 1: the culprit check could never pass" --kernels $tmp/img1 $tmp/img2 --check-runs 1
usage_err "needs --check-runs 2 at least" --kernels $tmp/img1 $tmp/img2 --check-runs 1
usage_err "--fs takes one filesystem" --kernels $tmp/img1 $tmp/img2 --fs ext4,xfs
usage_err "bad value '5,16x' for --endpoint-runs" --kernels $tmp/img1 $tmp/img2 --endpoint-runs 5,16x
usage_err "unknown workload 'nosuch'" --kernels $tmp/img1 $tmp/img2 --workload nosuch
usage_err "knob 'rate_mbps': 'abc'" --kernels $tmp/img1 $tmp/img2 --set rate_mbps=abc
usage_err "unknown metric 'no_such_metric'" --kernels $tmp/img1 $tmp/img2 --metric no_such_metric
grep -q 'worst_lag_s' $tmp/err
# every wb-handover summary metric is known to a fresh store (010_metrics.sql)
for m in $(grep -o 'json_object_set_new(metrics, "[a-z_0-9]*"' agent/wb_handover.c | cut -d'"' -f2); do
	set +e; $KC --home $tmp/fresh-$m bisect --kernels $tmp/img1 $tmp/img2 --metric $m --check-runs 0 \
		>/dev/null 2>$tmp/err; rc=$?; set -e
	[ $rc = 3 ] || { echo "--metric $m on a fresh store: exit $rc, expected 3 (endpoint skip)"; cat $tmp/err; exit 1; }
done
# none of them stored a job
if [ -e $h/kcanary.db ]; then
	n=$(sqlite3 $h/kcanary.db 'SELECT count(*) FROM jobs')
	[ "$n" = 0 ] || { echo "a refused bisection stored $n jobs"; exit 1; }
fi
# --hosts naming no lab host: an error naming it, and no job stored
set +e; $KC --home $tmp/hosts bisect --kernels $tmp/img1 $tmp/img2 --hosts nosuch >/dev/null 2>$tmp/err
rc=$?; set -e
[ $rc = 1 ] && grep -q "no lab host 'nosuch'" $tmp/err || { echo "--hosts nosuch: exit $rc"; cat $tmp/err; exit 1; }
[ "$(sqlite3 $tmp/hosts/kcanary.db 'SELECT count(*) FROM jobs')" = 0 ] || { echo "--hosts nosuch stored a job"; exit 1; }
# --kernels twice appends: the second list's missing image is item 2
if $KC --home $h bisect --kernels $tmp/img1 --kernels /nonexistent3 2>$tmp/err; then echo "missing kernel accepted"; exit 1; fi
grep -q "cannot read kernel image '/nonexistent3' (--kernels item 2)" $tmp/err

# bisect log against a fresh home: says there is no store, creates none
fresh=$tmp/fresh
mkdir -p $fresh
if $KC --home $fresh bisect log 1 2>$tmp/err; then echo "bisect log of an empty home succeeded"; exit 1; fi
grep -q "no store at '$fresh/kcanary.db'" $tmp/err
[ ! -e $fresh/kcanary.db ] || { echo "bisect log created a store"; exit 1; }

# simulate: strict values, the log's path opened before simulating
set +e; $KC bisect simulate --seed -1 >/dev/null 2>$tmp/err; rc=$?; set -e
[ $rc = 2 ] || { echo "FAIL: simulate --seed -1: exit $rc, expected 2"; cat $tmp/err; exit 1; }
grep -q "bad value '-1' for --seed" $tmp/err
# (a million trials would take hours: the timeout fails a late check)
set +e; timeout 20 $KC bisect simulate --trials 1000000 --log /nonexistent/x >/dev/null 2>$tmp/err
rc=$?; set -e
[ $rc = 1 ] || { echo "FAIL: simulate --log /nonexistent/x: exit $rc, expected 1"; cat $tmp/err; exit 1; }
grep -q "cannot write '/nonexistent/x'" $tmp/err
# every strategy at 0% (skips everywhere): no strategy is named "as accurate"
$KC bisect simulate --commits 100 --trials 5 --history clean --skip-rate 0.9 > $tmp/sim9.txt
grep -q 'no fixed-repeat strategy here reaches 95%' $tmp/sim9.txt
if grep -q 'as accurate:' $tmp/sim9.txt; then echo "FAIL: a strategy at 0% named as accurate"; exit 1; fi
# each goal line says what its target measures, not the issue that set it
# (issue 35 item 7: "target: issue 19, clean, ... met")
for h in clean flaky; do
	$KC bisect simulate --commits 100 --trials 20 --seed 1 --history $h > $tmp/goal.txt
	grep -Eq "^target: probabilistic bisection (cost|accuracy and cost), $h history, seed 1: " \
		$tmp/goal.txt || { echo "FAIL: $h goal line:"; grep '^target' $tmp/goal.txt; exit 1; }
	if grep -q 'issue [0-9]' $tmp/goal.txt; then
		echo "FAIL: simulate names an issue: $(grep 'issue [0-9]' $tmp/goal.txt)"; exit 1
	fi
done
$KC help | grep -q '^  bisect '
echo "ok: bisect simulate, replay (and tamper detection), bad input of the real bisection"
