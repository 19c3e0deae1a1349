#!/bin/sh
# Every kcanary subcommand refuses an unknown option the same way: exit 2,
# one line naming the command and the option ("kcanary bisect: unrecognized
# option '--bogus'"); a known option without its value names that option.
set -eu
B=${B:-build}
KC=$PWD/$B/kcanary
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export KCANARY_HOME=$tmp/home
fails=0
for c in compare bisect "bisect simulate" canary "canary simulate" report serve \
	 "tree import" build boot "series apply" "series show" status ingest doctor; do
	# shellcheck disable=SC2086 # c is a command and its subcommand
	rc=0; $KC $c --bogus >/dev/null 2>$tmp/err || rc=$?
	first=$(head -n 1 $tmp/err)
	case "$first" in
	"kcanary $c: unrecognized option"*"'--bogus'") ;;
	*) echo "FAIL: kcanary $c --bogus said: $first"; fails=$((fails + 1)) ;;
	esac
	[ $rc = 2 ] || { echo "FAIL: kcanary $c --bogus exited $rc, not 2"; fails=$((fails + 1)); }
done
for c in "bisect --metric" "boot --kernel" "compare --name" "canary --control"; do
	opt=${c#* }
	# shellcheck disable=SC2086
	rc=0; $KC $c >/dev/null 2>$tmp/err || rc=$?
	grep -q "^kcanary ${c%% *}: option '$opt' requires an argument" $tmp/err ||
		{ echo "FAIL: kcanary $c said: $(head -n 1 $tmp/err)"; fails=$((fails + 1)); }
	[ $rc = 2 ] || { echo "FAIL: kcanary $c exited $rc, not 2"; fails=$((fails + 1)); }
done
[ $fails = 0 ] || exit 1
echo "ok: unknown options and missing values are named the same way by every command"
