#!/bin/sh
# One scratch disk per compare job (issue 35, item 8, the review): host
# only, no guest. The job's cells are sized when it is checked, before
# anything is stored, and every run gets the largest (--dry-run shows it);
# a cell that needs more than the 64 GiB cap, or more than --disk holds,
# refuses the job with the cell, the size and the knobs, and the store
# has no new job. Sizes by hand in tests/unit/test_scratch.c and
# test_agent_check.c: measure_s=10 (the seed's other knobs) writes 10002
# MiB = 9.8 GiB in 1000 files: 12 GiB; measure_s=300, 82502 MiB = 80.6
# GiB: 92 GiB; measure_s=1 fits the 4 GiB floor.
set -eu
B=${B:-build}
KC=$PWD/$B/kcanary
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export KCANARY_HOME=$tmp/home
: > "$tmp/a"
: > "$tmp/b"
K="$tmp/a,$tmp/b"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# a store with one job in it (an ingested run), so "nothing stored" is
# a count that stays, not a store that is missing
printf '%s\n' '{"type":"hello","agent_version":"fixture","kernel_release":"6.12.117","host":"fixture"}' \
	'{"type":"summary","metrics":{"worst_lag_s":1.5}}' '{"type":"done","status":"ok"}' |
	$KC ingest --job before --variant base - > /dev/null
jobs() { sqlite3 "$KCANARY_HOME/kcanary.db" 'SELECT count(*) FROM jobs'; }
[ "$(jobs)" = 1 ] || fail "the ingest stored $(jobs) jobs, not 1"

echo "-- --dry-run: one disk for the job, the largest cell's"
$KC compare --dry-run --kernels "$K" --set measure_s=1,10 > "$tmp/out" 2> "$tmp/err" ||
	fail "dry run exited $?: $(cat "$tmp/err")"
grep -F "scratch disk" "$tmp/out" | sed 's/^/   /'
grep -qxF "  scratch disk: 12 GiB, every run (sized from measure_s=10 fs=ext4's 9.8 GiB written)" \
	"$tmp/out" || fail "dry run: no 12 GiB disk for every run: $(cat "$tmp/out")"
$KC compare --dry-run --kernels "$K" --set measure_s=1,300 --disk 100G > "$tmp/out" 2> "$tmp/err" ||
	fail "dry run --disk 100G exited $?: $(cat "$tmp/err")"
grep -qxF "  scratch disk: 100 GiB, every run (given by name: disk, --disk; the most a cell writes: measure_s=300 fs=ext4's 80.6 GiB)" \
	"$tmp/out" || fail "dry run --disk 100G: $(grep -F scratch "$tmp/out")"

refused() {	# refused EXPECTED-LINE ARGS...: exit 2 with that line, no job stored
	w=$1; shift
	rc=0; $KC compare --kernels "$K" "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
	[ $rc = 2 ] || fail "kcanary compare $* exited $rc, not 2"
	[ "$(head -n 1 "$tmp/err")" = "$w" ] || fail "kcanary compare $* said: $(cat "$tmp/err")"
	[ "$(jobs)" = 1 ] || fail "kcanary compare $* stored a job: $(jobs) jobs"
	echo "refused: $(head -n 1 "$tmp/err")"
}
echo "-- a cell above the cap, a cell above --disk: refused, nothing stored"
refused "kcanary compare: matrix cell 'measure_s=300 fs=ext4': scratch disk: the workload writes up to 80.6 GiB in 1000 files, so its ext4 disk needs 92 GiB, above the 64 GiB a job's disk is sized to by itself: lower rate_mbps, old_s, measure_s (--set measure_s), or give the size by name (--disk 92G)" \
	--set measure_s=10,300
refused "kcanary compare: matrix cell 'measure_s=10 fs=ext4': scratch disk: disk (--disk) 8.0 GiB cannot hold the 9.8 GiB the workload writes in 1000 files (its ext4 disk needs 12 GiB with the filesystem's headroom): give --disk 12G or lower rate_mbps, old_s, measure_s (--set measure_s)" \
	--set measure_s=1,10 --disk 8G
# the job file's line is named, and its disk key read
printf '[job]\nkernels = %s %s\n[matrix]\nmeasure_s = 10 300\n' "$tmp/a" "$tmp/b" > "$tmp/job.ini"
rc=0; $KC compare "$tmp/job.ini" > "$tmp/out" 2> "$tmp/err" || rc=$?
[ $rc = 2 ] && grep -qF "lower rate_mbps, old_s, measure_s ($tmp/job.ini:4: [matrix] measure_s), or give the size by name (--disk 92G)" "$tmp/err" ||
	fail "job file: exit $rc: $(cat "$tmp/err")"
[ "$(jobs)" = 1 ] || fail "the job file stored a job"
printf '[job]\nkernels = %s %s\ndisk = 100G\n[matrix]\nmeasure_s = 10 300\n' "$tmp/a" "$tmp/b" \
	> "$tmp/job.ini"
$KC compare --dry-run "$tmp/job.ini" > "$tmp/out" 2> "$tmp/err" ||
	fail "job file with disk = 100G exited $?: $(cat "$tmp/err")"
grep -qF "scratch disk: 100 GiB, every run (given by name" "$tmp/out" ||
	fail "job file with disk = 100G: $(cat "$tmp/out")"
[ $fails = 0 ] || exit 1
echo "t_compare_disk: ok"
