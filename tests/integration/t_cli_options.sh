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
for c in compare "compare simulate" bisect "bisect simulate" canary "canary simulate" report serve \
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
# a knob value the agent refuses names the job file's line, or --set
: > $tmp/bzImage
printf '[job]\nname = t\nkernels = %s\n\n[workload]\nnfiles = lots\n[matrix]\nmode = removed dead\n' \
	"$tmp/bzImage" > $tmp/job.ini
want() {	# want EXPECTED-FIRST-LINE ARGS...
	w=$1; shift
	rc=0; $KC compare "$@" >/dev/null 2>$tmp/err || rc=$?
	[ $rc = 2 ] && [ "$(head -n 1 $tmp/err)" = "$w" ] ||
		{ echo "FAIL: kcanary compare $* (exit $rc) said: $(head -n 1 $tmp/err)"; fails=$((fails + 1)); }
}
want "kcanary compare: $tmp/job.ini:6: [workload] nfiles: knob 'nfiles': 'lots' is not a whole number (expected 0, 1, 2, ...)" $tmp/job.ini
want "kcanary compare: $tmp/job.ini:8: [matrix] mode: knob 'mode': 'dead' is not a choice (expected one of: removed, alive, fresh)" \
	$tmp/job.ini --set nfiles=4
want "kcanary compare: --set nfiles: knob 'nfiles': '-1' is not a whole number (expected 0, 1, 2, ...)" \
	$tmp/job.ini --set nfiles=-1
# --repeat auto[:MAX] and --margin: a bad cap or margin, or nothing to compare
want "kcanary compare: 'repeat' must be a whole number >= 1, auto or auto:MAX with a cap MAX of 3 to 1000 blocks, not 'auto:0'" \
	--kernels "$tmp/bzImage" --aa --repeat auto:0
want "kcanary compare: 'repeat' must be a whole number >= 1, auto or auto:MAX with a cap MAX of 3 to 1000 blocks, not 'auto:x'" \
	--kernels "$tmp/bzImage" --aa --repeat auto:x
want "kcanary compare: 'margin' must be a percentage above 0 and below 100, such as 5%, not '-3%'" \
	--kernels "$tmp/bzImage" --aa --repeat auto --margin -3%
want "kcanary compare: repeat auto stops when every comparison is decided: give two variants or more, or compare along an axis of the matrix (by, --by)" \
	--kernels "$tmp/bzImage" --repeat auto
[ ! -e "$KCANARY_HOME/kcanary.db" ] || { echo "FAIL: a refused job was stored"; fails=$((fails + 1)); }
[ $fails = 0 ] || exit 1
echo "ok: unknown options, missing values and bad knobs are named the same way by every command"
