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
# compare: every name of the report (by, metric) checked before anything
# is stored, the same in --dry-run as in the run (issue 35: a typo in --by
# ran the whole job, --dry-run took --metric worst_lagg)
2|by (--by) 'mod': the job has no axis 'mod': expected one of variant, fs, host, mode|compare --dry-run --by mod --set mode=removed,alive --kernels @IMG,@IMG
2|by (--by) 'mod': the job has no axis 'mod'|compare --by mod --set mode=removed,alive --kernels @IMG,@IMG
2|by (--by) 'variant,fss': the job has no axis 'fss'|compare --dry-run --by variant,fss --kernels @IMG,@IMG
0|report: compared along sysctl|compare --dry-run --by sysctl --sysctl vm.dirty_ratio=5,40 --kernels @IMG
0|report: compared along vm.dirty_ratio|compare --dry-run --by vm.dirty_ratio --sysctl vm.dirty_ratio=5,40 --kernels @IMG
2|baseline (--baseline) 'alvie' is not a value of axis 'mode': expected one of 'removed', 'alive'|compare --dry-run --by mode --baseline alvie --set mode=removed,alive --kernels @IMG
0|report: compared along mode, baseline mode=alive|compare --dry-run --by mode --baseline mode=alive --set mode=removed,alive --kernels @IMG
2|baseline (--baseline) 'btrfs' is not a value of axis 'fs': expected one of 'ext4', 'xfs'|compare --dry-run --by fs --baseline btrfs --fs ext4,xfs --kernels @IMG
2|unknown metric 'worst_lagg' for workload 'wb-handover': expected one of|compare --dry-run --metric worst_lagg --kernels @IMG,@IMG
2|unknown metric 'worst_lag_s' for workload 'fio': expected fio:JOB:DIR:bw|compare --dry-run --workload fio --metric worst_lag_s --kernels @IMG,@IMG
0|report: compared along variant|compare --dry-run --workload fio --metric fio:kc:write:bw --kernels @IMG,@IMG
0|report: compared along variant|compare --dry-run --workload fio --kernels @IMG,@IMG
2|repeat auto decides on the job's metric, and workload 'fio' names its own|compare --dry-run --workload fio --repeat auto --kernels @IMG,@IMG
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
# report of an unfinished job says so, with its pending and running runs
# (a stored run, then one pending and one running, as a killed compare
# leaves them), and stops saying so once they are done
U=$tmp/unfinished
mkdir -p "$U"
KCANARY_HOME=$U $KC ingest --job j1 --variant base tests/fuzz/ingest/seed-stream.jsonl > /dev/null 2>&1 &&
sqlite3 "$U/kcanary.db" "INSERT INTO runs (job_id, variant_id, status, repeat_idx)
	SELECT job_id, variant_id, 'pending', 2 FROM runs WHERE id = 1;
	INSERT INTO runs (job_id, variant_id, status, repeat_idx)
	SELECT job_id, variant_id, 'running', 3 FROM runs WHERE id = 1;
	UPDATE jobs SET status = 'running'" ||
	{ echo "FAIL: cannot set up the unfinished job"; fails=$((fails + 1)); }
rows=$((rows + 2))
KCANARY_HOME=$U $KC report j1 > "$tmp/out" 2>&1
grep -qF "job 'j1' is unfinished (running): 1 of 3 runs pending, 1 running" "$tmp/out" ||
	{ echo "FAIL: report of a running job does not say it is unfinished:"; head -n 3 "$tmp/out"; fails=$((fails + 1)); }
sqlite3 "$U/kcanary.db" "UPDATE runs SET status = 'ok'; UPDATE jobs SET status = 'done'"
KCANARY_HOME=$U $KC report j1 > "$tmp/out" 2>&1
! grep -qF "unfinished" "$tmp/out" ||
	{ echo "FAIL: report of a finished job says it is unfinished"; fails=$((fails + 1)); }
# token --help names every route the API checks a token on (server/api/api.c's
# table, routes not OPEN, {job} and {host} as JOB and HOST)
for ep in $(grep -v '", *OPEN,' server/api/api.c | sed -n 's/^[[:space:]]*{ "\(POST\|GET\|PUT\|DELETE\)", *"\([^"]*\)", *[A-Z]*, .*/\1:\2/p' |
		sed 's/{job}/JOB/; s/{host}/HOST/; s/{id}/ID/'); do
	rows=$((rows + 1))
	neps=$((${neps:-0} + 1))
	$KC token --help 2>&1 | grep -qF -- "${ep%%:*} ${ep#*:} " ||
		{ echo "FAIL: token --help does not name ${ep%%:*} ${ep#*:}"; fails=$((fails + 1)); }
done
[ "${neps:-0}" -ge 5 ] || { echo "FAIL: found ${neps:-0} token routes in server/api/api.c"; fails=$((fails + 1)); }
# every file a --help names (a word ending in .md, .sh, .ini, .txt, not
# a placeholder like JOB.ini) exists in the tree
for c in ingest token report compare serve jobs status; do
	for f in $($KC $c --help 2>&1 | grep -o '[A-Za-z0-9_./-]*\.\(md\|sh\|ini\|txt\)\b' | sort -u); do
		case ${f##*/} in [A-Z_]*.ini) continue ;; esac
		rows=$((rows + 1))
		[ -e "$f" ] ||
			{ echo "FAIL: '$c --help' points to '$f', not in the tree"; fails=$((fails + 1)); }
	done
done
# no row stored a job (each stopped before storing, or was a dry run)
n=$(sqlite3 "$KCANARY_HOME/kcanary.db" 'SELECT count(*) FROM jobs' 2>/dev/null || echo 0)
[ "$n" = 0 ] || { echo "FAIL: the rows stored $n jobs"; fails=$((fails + 1)); }
echo "cli mistakes: $rows rows, $fails failed"
[ $fails = 0 ]
