#!/bin/sh
# make bench: every benchmark script in bench/ (each prints its own
# numbers, and for each target a line "target: WHAT: FIGURE: met|NOT met";
# bisect simulate's "goal: ...: met|NOT met" counts as one). At the end, one
# summary: each benchmark's targets, met or not, and a benchmark that printed
# none. Benchmarks report; they do not fail on speed (a script that fails
# does).
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}; export B
rc=0
sum=$(mktemp)
out=$(mktemp)
trap 'rm -f "$sum" "$out"' EXIT
# Arguments: the benchmarks to run (default: all of bench/b_*.sh).
[ $# -gt 0 ] || set -- bench/b_*.sh
for b in "$@"; do
	[ -e "$b" ] || continue
	echo "== $b"
	sh "$b" > "$out" 2>&1 || { rc=1; echo "$b: FAILED (exit status $?)" >> "$sum"; }
	cat "$out"
	if grep -Eq '^(target|goal): ' "$out"; then
		grep -E '^(target|goal): ' "$out" | sed "s|^|${b#bench/}: |" >> "$sum"
	else
		echo "${b#bench/}: no target printed" >> "$sum"
	fi
done
echo "== summary"
cat "$sum"
echo "bench: $(grep -c ': met$' "$sum") met, $(grep -c ': NOT met$' "$sum") not met"
exit $rc
