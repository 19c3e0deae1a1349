#!/bin/sh
# Run each cmocka test binary under a timeout; print one closing line
# "unit: N passed, N failed, N skipped" (N counts test cases, from cmocka's
# output). Exits non-zero when any binary fails or times out, and under
# CI=true when a case skips that tests/allowed-skips.txt does not list as
# "binary:case" (tests/skips-lib.sh). Each binary's wall time is printed
# after its output ("-- NAME: N s").
. tests/skips-lib.sh
passed=0 failed=0 skipped=0 bad=""
out=$(mktemp)
for t in "$@"; do
	echo "== $t"
	t0=$(date +%s)
	timeout 300 "$t" >"$out" 2>&1
	rc=$?
	cat "$out"
	echo "-- ${t##*/}: $(( $(date +%s) - t0 )) s (exit $rc)"
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | awk '{s+=$1} END {print s+0}')
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | awk '{s+=$1} END {print s+0}')
	passed=$((passed + p))
	failed=$((failed + f))
	if [ $rc -ne 0 ]; then
		[ "$f" -eq 0 ] && failed=$((failed + 1))
		bad="$bad $t(rc=$rc)"
	fi
	# cmocka: "[  SKIPPED ] N test(s), listed below:" then one
	# "[  SKIPPED ] case" line per skipped case
	for c in $(sed -n 's/^\[  SKIPPED \] \([A-Za-z_][A-Za-z0-9_]*\)$/\1/p' "$out" | sort -u); do
		skipped=$((skipped + 1))
		name="${t##*/}:$c"
		if [ "${CI:-}" != true ]; then
			echo "SKIP $name"
		elif skip_allowed "$name"; then
			echo "SKIP $name (allowed: $(skip_reason "$name"))"
		else
			echo "SKIP $name: not in tests/allowed-skips.txt, a failure under CI=true"
			failed=$((failed + 1)); bad="$bad $name(skipped)"
		fi
	done
done
rm -f "$out"
echo "unit: $passed passed, $failed failed, $skipped skipped"
if [ -n "$bad" ]; then
	echo "failing:$bad"
	exit 1
fi
