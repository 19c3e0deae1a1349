#!/bin/sh
# Integration tests: each tests/integration/t_*.sh runs with $B (build dir)
# set, exits 0 (pass), 77 (skip, with the reason on its last line) or other
# (fail). Prints "integration: N passed, N failed, N skipped".
cd "$(dirname "$0")/../.." || exit 1
passed=0 failed=0 skipped=0 bad=""
for t in tests/integration/t_*.sh; do
	[ -e "$t" ] || continue
	echo "== $t"
	B=${B:-build} timeout 1800 sh "$t"
	rc=$?
	case $rc in
	0) passed=$((passed + 1)) ;;
	77) skipped=$((skipped + 1)); echo "SKIP $t" ;;
	*) failed=$((failed + 1)); bad="$bad $t(rc=$rc)" ;;
	esac
done
echo "integration: $passed passed, $failed failed, $skipped skipped"
[ -z "$bad" ] || { echo "failing:$bad"; exit 1; }
