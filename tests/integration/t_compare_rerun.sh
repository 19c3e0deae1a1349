#!/bin/sh
# t_compare_rerun.sh - `kcanary rerun JOB` (docs/compare.md: "the same spec and run
# order again") on libvirt's test:///default driver, so no guest boots and
# it needs neither root nor the integration lock: every run is a watchdog
# timeout after 1 s, which is all a rerun's order needs. A compare of 2
# variants (--aa) x 3 repeats with a random seed, then its rerun: a new job
# with the same spec and seed, every run done again in the same order
# (seq -> variant, cell, repeat), the first job untouched; a rerun of a job
# that is no compare (made by ingest) and of no job exit 2, naming it.
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
KC=$PWD/$B/kcanary
KERNEL=${KCANARY_TEST_KERNEL:-/boot/vmlinuz-6.12.117+deb12-cloud-amd64}
export KCANARY_AGENT=$PWD/$B/kcanary-agent
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
export KCANARY_HOME=$T/home
mkdir -p "$KCANARY_HOME"
fail() { echo "FAIL: $*"; exit 1; }
q() { sqlite3 -batch -noheader "$KCANARY_HOME/kcanary.db" "$@"; }
[ -r "$KERNEL" ] || fail "no test kernel $KERNEL: run 'make deps'"

$KC compare --name rr --connect test:///default --kernels "$KERNEL" --aa --repeat 3 \
	--set measure_s=1 --set old_s=0 --set settle_s=0 --watchdog 1s > "$T/out.1" 2> "$T/err.1" ||
	{ tail -5 "$T/err.1"; fail "compare exited $?"; }
[ "$(q "SELECT count(*) FROM runs WHERE job_id = 1 AND status = 'timeout'")" = 6 ] ||
	fail "job 1: $(q "SELECT seq, status, error FROM runs WHERE job_id = 1")"
order() {	# the job's runs in run order: seq variant cell repeat
	q "SELECT r.seq || ' ' || v.name || ' ' || r.cell || ' r' || r.repeat_idx FROM runs r
	   JOIN variants v ON v.id = r.variant_id WHERE r.job_id = $1 ORDER BY r.seq"
}
order 1 > "$T/order.1"
# the seed shuffled the blocks: the order is not the variants' own
[ "$(q "SELECT count(DISTINCT seed) FROM jobs WHERE id = 1 AND seed != 0")" = 1 ] || fail "job 1 has no seed"
before=$(q "SELECT group_concat(id || status || finished_at, ',') FROM runs WHERE job_id = 1")

$KC rerun 1 > "$T/out.2" 2> "$T/err.2" || { tail -5 "$T/err.2"; fail "rerun 1 exited $?"; }
grep -q "^job 2 stored as a rerun of '1'$" "$T/err.2" || fail "rerun did not say the new job: $(head -3 "$T/err.2")"
[ "$(q "SELECT count(*) FROM jobs")" = 2 ] || fail "rerun made $(q "SELECT count(*) FROM jobs") jobs, expected 2"
[ "$(q "SELECT (SELECT spec_json || seed FROM jobs WHERE id = 1) = (SELECT spec_json || seed FROM jobs WHERE id = 2)")" = 1 ] ||
	fail "job 2's spec or seed differ from job 1's: $(q "SELECT id, seed, spec_json FROM jobs")"
order 2 > "$T/order.2"
cmp -s "$T/order.1" "$T/order.2" || { diff "$T/order.1" "$T/order.2"; fail "job 2's run order differs from job 1's"; }
[ "$(q "SELECT count(*) FROM runs WHERE job_id = 2 AND status = 'timeout'")" = 6 ] ||
	fail "job 2's runs were not all run: $(q "SELECT seq, status FROM runs WHERE job_id = 2")"
[ "$(q "SELECT group_concat(id || status || finished_at, ',') FROM runs WHERE job_id = 1")" = "$before" ] ||
	fail "the rerun changed job 1's runs"
grep -q "^job 2$" "$T/out.2" || fail "rerun printed no report of job 2: $(head -3 "$T/out.2")"

# what rerun refuses: a job no compare made, a job that is not there
sh tests/fixtures/gen-stream.sh 3.0 10 > "$T/s.jsonl"
$KC ingest --job ingested --variant v "$T/s.jsonl" > /dev/null 2>&1 || fail "ingest failed"
$KC rerun ingested > "$T/out.3" 2> "$T/err.3"
rc=$?
[ $rc = 2 ] || fail "rerun of an ingested job exited $rc, expected 2"
grep -q "job 'ingested' is not a compare job" "$T/err.3" || fail "rerun of an ingested job: $(cat "$T/err.3")"
$KC rerun 99 > "$T/out.4" 2> "$T/err.4"
rc=$?
[ $rc != 0 ] || fail "rerun of no job exited 0"
grep -q "99" "$T/err.4" || fail "rerun of no job does not name it: $(cat "$T/err.4")"
echo "rerun: job 2 has job 1's spec, seed and run order, every run done again; job 1 untouched"
