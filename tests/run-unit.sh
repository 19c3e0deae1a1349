#!/bin/sh
# Run each cmocka test binary under a timeout; print one closing line
# "unit: N passed, N failed" (N counts test cases, from cmocka's output).
# Exits non-zero when any binary fails or times out.
passed=0 failed=0 bad=""
out=$(mktemp)
for t in "$@"; do
	echo "== $t"
	timeout 300 "$t" >"$out" 2>&1
	rc=$?
	cat "$out"
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | awk '{s+=$1} END {print s+0}')
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | awk '{s+=$1} END {print s+0}')
	passed=$((passed + p))
	failed=$((failed + f))
	if [ $rc -ne 0 ]; then
		[ "$f" -eq 0 ] && failed=$((failed + 1))
		bad="$bad $t(rc=$rc)"
	fi
done
rm -f "$out"
echo "unit: $passed passed, $failed failed"
if [ -n "$bad" ]; then
	echo "failing:$bad"
	exit 1
fi
