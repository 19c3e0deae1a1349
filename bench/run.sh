#!/bin/sh
# make bench: every benchmark script in bench/ (each prints its own
# numbers). Benchmarks report; they do not fail on speed.
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}; export B
rc=0
for b in bench/b_*.sh; do
	[ -e "$b" ] || continue
	echo "== $b"
	sh "$b" || rc=1
done
exit $rc
