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
# but those tests/integration/soak-only.txt names, which `make soak` runs
# through tests/fault/run.sh, and those tests/integration/slow.txt names,
# which `make test-slow` runs: run.sh --slow).
listed() { # FILE NAME: whether FILE lists NAME (first word of a line)
	[ -e "$1" ] && awk -v n="$2" '$1 == n { f = 1 } END { exit !f }' "$1"
}
if [ "${1:-}" = --slow ]; then
	shift
	set -- $(awk '/^t_/ { print "tests/integration/" $1 }' tests/integration/slow.txt)
elif [ $# -eq 0 ]; then
	for t in tests/integration/t_*.sh; do
		listed tests/integration/soak-only.txt "${t##*/}" ||
			listed tests/integration/slow.txt "${t##*/}" || set -- "$@" "$t"
	done
fi
times=$(mktemp)
trap 'rm -f "$times"' EXIT
for t in "$@"; do
	[ -e "$t" ] || continue
	echo "== $t"
	t0=$(date +%s)
	B=${B:-build} timeout 1800 sh "$t"
	rc=$?
	echo "-- ${t##*/}: $(( $(date +%s) - t0 )) s (exit $rc)"
	echo "$(( $(date +%s) - t0 )) ${t##*/}" >> "$times"
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
echo "wall time per test, slowest first (s):"
sort -rn "$times" | awk '{ printf "  %5d  %s\n", $1, $2; s += $1 } END { printf "  %5d  total\n", s }'
echo "integration: $passed passed, $failed failed, $skipped skipped"
[ -z "$bad" ] || { echo "failing:$bad"; exit 1; }
