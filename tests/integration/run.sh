#!/bin/sh
# Integration tests: each tests/integration/t_*.sh runs with $B (build dir)
# set, exits 0 (pass), 77 (skip, with the reason on its last line) or other
# (fail). Prints each test's wall time ("-- NAME: N s (exit RC)") and
# "integration: N passed, N failed, N skipped" (a skip CI
# refuses counts as skipped and failed).
#
# Under CI=true (what .ci/run sets) a skip is a failure unless the test is
# listed with its reason in tests/allowed-skips.txt: CI that passes with no
# guest booted and no browser opened proves nothing.
cd "$(dirname "$0")/../.." || exit 1
. tests/skips-lib.sh
passed=0 failed=0 skipped=0 bad=""
# Arguments: the tests to run (default: all of tests/integration/t_*.sh
# but those tests/integration/soak-only.txt names: `make soak` runs them,
# through tests/fault/run.sh).
if [ $# -eq 0 ]; then
	for t in tests/integration/t_*.sh; do
		grep -qx "${t##*/}" tests/integration/soak-only.txt 2>/dev/null || set -- "$@" "$t"
	done
fi
for t in "$@"; do
	[ -e "$t" ] || continue
	echo "== $t"
	t0=$(date +%s)
	B=${B:-build} timeout 1800 sh "$t"
	rc=$?
	echo "-- ${t##*/}: $(( $(date +%s) - t0 )) s (exit $rc)"
	case $rc in
	0) passed=$((passed + 1)) ;;
	77)
		skipped=$((skipped + 1))
		if [ "${CI:-}" != true ]; then
			echo "SKIP $t"
		elif skip_allowed "${t##*/}"; then
			echo "SKIP $t (allowed: $(skip_reason "${t##*/}"))"
		else
			echo "SKIP $t: not in tests/allowed-skips.txt, a failure under CI=true"
			failed=$((failed + 1)); bad="$bad $t(skipped)"
		fi ;;
	*) failed=$((failed + 1)); bad="$bad $t(rc=$rc)" ;;
	esac
done
echo "integration: $passed passed, $failed failed, $skipped skipped"
[ -z "$bad" ] || { echo "failing:$bad"; exit 1; }
