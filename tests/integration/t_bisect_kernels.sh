#!/bin/sh
# t_bisect_kernels.sh - the real `kcanary bisect --kernels` with real TCG
# guests, kept cheap (6 short runs): the candidates are Debian's two cloud
# kernels (6.12.107 and 6.12.117, by symlinks so each is a candidate of its
# own) and the `command` workload prints the booted kernel's sublevel as
# the metric, so the culprit is the first 6.12.117 candidate. Checks the
# culprit, the table, the store (job kind 'bisect', one variant per tested
# candidate, its runs), `bisect log JOB` | `bisect replay`, --find-fix,
# a candidate that is not a kernel (skip, never evidence: the answer is a
# range), an endpoint that cannot be measured, and the API the web view
# reads the log from.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/guest-lib.sh

OLD=/boot/vmlinuz-6.12.107+deb12-cloud-amd64
[ -r "$OLD" ] || skip "no second kernel $OLD (linux-image-6.12.107+deb12-cloud-amd64-unsigned)"
[ -d /lib/modules/6.12.107+deb12-cloud-amd64 ] || skip "no modules for $OLD"
K=$HOME_DIR/k
mkdir -p "$K"
for n in a b; do
	ln -s "$OLD" "$K/107$n"
	ln -s "$KERNEL" "$K/117$n"
done
echo "not a kernel" > "$K/junk"
# shellcheck disable=SC2016
CMD='cmd=echo metric sublevel $(uname -r | cut -d. -f3 | cut -d+ -f1)'
BIS="--workload command --metric sublevel --strategy fixed --repeats 1 --check-runs 0 --watchdog 120s"

echo "-- regression: 107a 117a 117b"
start=$(date +%s)
# shellcheck disable=SC2086
$KC bisect --kernels "$K/107a,$K/117a,$K/117b" --set "$CMD" $BIS \
	> "$HOME_DIR/out.1" 2> "$HOME_DIR/err.1"
rc=$?
cat "$HOME_DIR/out.1"
[ $rc = 0 ] || { tail -n 20 "$HOME_DIR/err.1"; fail "bisect exited $rc"; }
echo "   took $(( $(date +%s) - start )) s"
grep -q "^bisect job 1: found: " "$HOME_DIR/out.1" || fail "no 'found' line"
grep -A1 "^culprit" "$HOME_DIR/out.1" | grep -q "$K/117a (candidate 1)" || fail "culprit is not 117a"
grep -Eq "^  0 +k0 .* 1 +0  good +107$" "$HOME_DIR/out.1" || fail "table row of candidate 0"
grep -Eq "^  1 +k1 .* 1 +0  bad +117$" "$HOME_DIR/out.1" || fail "table row of candidate 1"
grep -q "^totals: 3 builds (0 failed), 3 boots, 3 runs with a value, 0 skips" "$HOME_DIR/out.1" ||
	fail "totals"
[ "$(q "SELECT kind || ' ' || status || ' ' || metric FROM jobs WHERE id = 1")" = "bisect done sublevel" ] ||
	fail "job 1: $(q "SELECT kind, status, metric, error FROM jobs WHERE id = 1")"
[ "$(q "SELECT count(*) FROM variants WHERE job_id = 1 AND status = 'ok'")" = 3 ] || fail "variants"
[ "$(q "SELECT group_concat(v.name || '=' || r.status, ';') FROM runs r JOIN variants v ON v.id = r.variant_id
       WHERE r.job_id = 1 ORDER BY r.id")" = "k0 $K/107a=ok;k2 $K/117b=ok;k1 $K/117a=ok" ] ||
	fail "runs: $(q "SELECT r.id, v.name, r.status FROM runs r JOIN variants v ON v.id = r.variant_id")"
# the metric came from the guest: the sample the script printed
[ "$(q "SELECT group_concat(s.value, ' ') FROM samples s JOIN metrics m ON m.id = s.metric_id
       WHERE m.name = 'sublevel' ORDER BY s.run_id")" = "107.0 117.0 117.0" ] || fail "samples"
$KC bisect log 1 > "$HOME_DIR/log.1" || fail "bisect log 1"
grep -q "^# candidate 1 - k1 $K/117a$" "$HOME_DIR/log.1" || fail "log lacks the candidate names"
[ "$(grep -c '^run ' "$HOME_DIR/log.1")" = 3 ] || fail "log: expected 3 run lines"
$KC bisect replay "$HOME_DIR/log.1" > "$HOME_DIR/replay.1" || fail "replay of job 1's log"
grep -q "same result" "$HOME_DIR/replay.1" || fail "replay did not reach the same result"

echo "-- the web view's source: GET /api/v1/jobs/1/bisect-log is the same log"
$KC serve --listen 127.0.0.1:0 > "$HOME_DIR/serve.out" 2> "$HOME_DIR/serve.err" &
spid=$!
url=$(sh tools/serve-url.sh "$HOME_DIR/serve.out" $spid) || { kill $spid; fail "kcanary serve did not start"; }
curl -s "$url/api/v1/jobs/1/bisect-log" > "$HOME_DIR/api.log"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/api/v1/jobs/99/bisect-log")
kill $spid
wait $spid 2>/dev/null
cmp -s "$HOME_DIR/api.log" "$HOME_DIR/log.1" || fail "the API's bisect log differs from 'bisect log 1'"
[ "$code" = 404 ] || fail "bisect-log of a missing job: HTTP $code"

echo "-- find-fix with a candidate that is not a kernel: 117a junk 107a 107b"
# shellcheck disable=SC2086
$KC bisect --find-fix --kernels "$K/117a" "$K/junk" "$K/107a" "$K/107b" --set "$CMD" $BIS \
	> "$HOME_DIR/out.2" 2> "$HOME_DIR/err.2"
rc=$?
cat "$HOME_DIR/out.2"
[ $rc = 0 ] || { tail -n 20 "$HOME_DIR/err.2"; fail "find-fix bisect exited $rc"; }
grep -q "^bisect job 2: range: " "$HOME_DIR/out.2" || fail "expected a range (the skip is next to the fix)"
grep -A3 "^culprit range" "$HOME_DIR/out.2" | grep -q "$K/junk (candidate 1)" || fail "range lacks junk"
grep -A3 "^culprit range" "$HOME_DIR/out.2" | grep -q "$K/107a (candidate 2)" || fail "range lacks 107a"
grep -Eq "^  1 +k1 .* 0 +1  skip" "$HOME_DIR/out.2" || fail "junk is not a skip"
[ "$(q "SELECT status FROM variants WHERE job_id = 2 AND name = 'k1 $K/junk'")" = build-failed ] ||
	fail "junk variant: $(q "SELECT status, error FROM variants WHERE job_id = 2")"
[ "$(q "SELECT count(*) FROM runs WHERE job_id = 2")" = 3 ] || fail "job 2: expected 3 runs (none for junk)"

echo "-- an endpoint that cannot be measured (no guest is booted)"
# shellcheck disable=SC2086
$KC bisect --kernels "$K/junk,$K/117a" --set "$CMD" $BIS > "$HOME_DIR/out.3" 2> "$HOME_DIR/err.3"
rc=$?
cat "$HOME_DIR/out.3"
[ $rc = 3 ] || fail "endpoint skip: exit $rc, expected 3"
grep -q "^bisect job 3: endpoint-skip: " "$HOME_DIR/out.3" || fail "no endpoint-skip line"
[ "$(q "SELECT count(*) FROM runs WHERE job_id = 3")" = 0 ] || fail "job 3 booted something"

echo "-- runs without the metric: each tried once more, then a skip"
# shellcheck disable=SC2086
$KC bisect --kernels "$K/107a" "$K/117a" --set cmd=true $BIS > "$HOME_DIR/out.6" 2> "$HOME_DIR/err.6"
rc=$?
cat "$HOME_DIR/out.6"
[ $rc = 3 ] || fail "no metric at the old end: exit $rc, expected 3"
grep -q "^bisect job 4: endpoint-skip: " "$HOME_DIR/out.6" || fail "no endpoint-skip line"
grep -q "trying candidate 0 once more" "$HOME_DIR/err.6" || fail "no retry: $(tail -n 5 "$HOME_DIR/err.6")"
[ "$(q "SELECT count(*) || ' ' || group_concat(status) FROM runs WHERE job_id = 4")" = "2 ok,ok" ] ||
	fail "job 4 runs: $(q "SELECT id, status FROM runs WHERE job_id = 4")"

echo "-- bad input"
$KC bisect --kernels "$K/107a" --set "$CMD" 2> "$HOME_DIR/err.4" && fail "one kernel accepted"
grep -q "at least 2 images" "$HOME_DIR/err.4" || fail "one kernel: $(cat "$HOME_DIR/err.4")"
$KC bisect log 3 >/dev/null || fail "job 3 has no log"
$KC bisect log 99 2> "$HOME_DIR/err.5" && fail "log of a missing job"
grep -q "no job '99'" "$HOME_DIR/err.5" || fail "log 99: $(cat "$HOME_DIR/err.5")"
echo "ok"
