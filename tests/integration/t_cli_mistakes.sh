#!/bin/sh
# t_cli_mistakes.sh - typical user mistakes, one table row each: the exit
# status the command documents and a message naming the input (or, for a
# call that is right, a line of its output). No guest, no server: every
# row stops before anything runs (compare --dry-run, or a refusal).
#
# Row: EXIT|EXPECTED TEXT (grep -F, in stdout+stderr)|ARGS (split on
# spaces; @IMG is an empty file, @JOB a job file with two kernels, @TMP
# the test's directory, in the args and the text).
set -u
B=${B:-build}
KC=$PWD/$B/kcanary
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export KCANARY_HOME=$tmp/home
mkdir -p "$KCANARY_HOME"
IMG=$tmp/img
: > "$IMG"
JOB=$tmp/job.ini
printf '[job]\nkernels = %s %s\nrepeat = 2\n' "$IMG" "$IMG" > "$JOB"
printf '[job]\nkernels = /nonexistent %s\n' "$IMG" > "$tmp/nokernel.ini"
printf '[job]\nkernels = %s %s\n' "$tmp" "$IMG" > "$tmp/dirkernel.ini"
fails=0 rows=0

while IFS='|' read -r want text args; do
	case "$want" in ''|'#'*) continue ;; esac
	rows=$((rows + 1))
	args=$(echo "$args" | sed "s|@IMG|$IMG|g; s|@JOB|$JOB|g; s|@TMP|$tmp|g")
	text=$(echo "$text" | sed "s|@TMP|$tmp|g")
	# shellcheck disable=SC2086 # args is a word list on purpose
	rc=0; $KC $args >"$tmp/out" 2>&1 || rc=$?
	if [ "$rc" != "$want" ] || ! grep -qF -- "$text" "$tmp/out"; then
		echo "FAIL: kcanary $args: exit $rc (expected $want), expected '$text' in:"
		sed 's/^/    /' "$tmp/out" | head -n 5
		fails=$((fails + 1))
	fi
done <<'TABLE'
# abbreviated long options (getopt accepts them): the value is the
# option's, never taken for the job file
0|2 variants x 1 cell x 3 repeats|compare --dry-run --kernel @IMG,@IMG
2|unknown workload 'nosuch'|compare --dry-run --work nosuch --kernels @IMG,@IMG
0|2 variants x 1 cell x 4 repeats|compare --dry-run --repe 4 --kernels @IMG,@IMG
0|2 variants x 1 cell x 4 repeats|compare --dry-run --repe=4 @JOB
0|2 variants x 1 cell x 2 repeats|compare --dry-run -q @JOB --fs=xfs
# an ambiguous abbreviation is a usage error naming it, not a job file
2|option '--rep' is ambiguous|compare --dry-run --rep 4 @JOB
2|option '--s' is ambiguous|compare --dry-run --s x --kernels @IMG,@IMG
# report: a threshold no summary value can be worse than
2|--threshold '-5': expected a finite number >= 0|report --threshold -5 1
2|--threshold 'nan': expected a finite number >= 0|report --threshold nan 1
2|--threshold '5x': expected a number|report --threshold 5x 1
# compare: a headline metric no run will have, refused before storing
2|unknown metric 'nosuch' for workload 'wb-handover': expected one of|compare --metric nosuch --kernels @IMG,@IMG
# prebuilt kernels in a job file are checked as --kernels are
2|kernel image '/nonexistent': No such file or directory|compare --dry-run @TMP/nokernel.ini
2|kernel image '/nonexistent': No such file or directory|compare --dry-run --kernels /nonexistent,@IMG
2|kernel image '@TMP': not a regular file|compare --dry-run @TMP/dirkernel.ini
2|kernel image '@TMP': not a regular file|compare --dry-run --kernels @TMP,@IMG
# a home with no store (a typo in --home or $KCANARY_HOME) is an error
# naming it, never an empty list, and creates nothing
1|kcanary jobs: no store at '@TMP/typo/kcanary.db' (--home)|--home @TMP/typo jobs
1|kcanary status: no store at '@TMP/typo/kcanary.db' (--home)|--home @TMP/typo status 1
1|kcanary report: no store at '@TMP/typo/kcanary.db' (--home)|--home @TMP/typo report 1
# every read-only command documents its exit statuses
0|Exit status: 0 listed, 1 no store|jobs --help
0|Exit status: 0 printed, 1 no such job or no store|status --help
0|Exit status: 0 printed, 1 no such job or no store|report --help
2|kcanary jobs: unexpected 'x'|jobs x
TABLE
[ ! -e "$tmp/typo" ] || { echo "FAIL: a read-only command created $tmp/typo"; fails=$((fails + 1)); }
rc=0; KCANARY_HOME=$tmp/typo2 $KC jobs > "$tmp/out" 2>&1 || rc=$?
{ [ $rc = 1 ] && grep -qF "no store at '$tmp/typo2/kcanary.db' (\$KCANARY_HOME)" "$tmp/out" && [ ! -e "$tmp/typo2" ]; } ||
	{ echo "FAIL: KCANARY_HOME=$tmp/typo2 jobs: exit $rc: $(cat "$tmp/out")"; fails=$((fails + 1)); }
# no row stored a job (each stopped before storing, or was a dry run)
n=$(sqlite3 "$KCANARY_HOME/kcanary.db" 'SELECT count(*) FROM jobs' 2>/dev/null || echo 0)
[ "$n" = 0 ] || { echo "FAIL: the rows stored $n jobs"; fails=$((fails + 1)); }
echo "cli mistakes: $rows rows, $fails failed"
[ $fails = 0 ]
