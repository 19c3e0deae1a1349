#!/bin/sh
# t_serve_queue.sh - kcanary serve carries out a submitted compare job
# (POST /api/v1/jobs, a prebuilt kernel, real TCG guests); killed (SIGKILL)
# during a run and started again, it resumes the job: the killed run is
# 'interrupted', a fresh repeat replaces it, and the job ends done.
set -u
. tests/integration/guest-lib.sh
command -v curl >/dev/null || skip "curl missing"
KCQ="$PWD/$B/kcanary"
pid=
stop() { [ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=; }; }
trap 'stop; cleanup' EXIT

start() {
	: >"$HOME_DIR/serve.out"
	$KCQ serve --listen 127.0.0.1:0 --job-dir "$(dirname "$KERNEL")" >"$HOME_DIR/serve.out" 2>>"$HOME_DIR/err.serve" &
	pid=$!
	url=$(sh tools/serve-url.sh "$HOME_DIR/serve.out" $pid) ||
		fail "serve did not start: $(cat "$HOME_DIR/err.serve")"
}
start
token=$($KCQ token create queue-test 2>/dev/null) || fail "token create"
cat >"$HOME_DIR/job.ini" <<EOF2
[job]
name = queued
kernels = $KERNEL
repeat = 2
seed = 3
[workload]
rate_mbps = 8
nfiles = 10
old_s = 4
settle_s = 1
measure_s = 8
[matrix]
fs = ext4
EOF2
curl -sf -H "Authorization: Bearer $token" --data-binary @"$HOME_DIR/job.ini" "$url/api/v1/jobs" \
	>"$HOME_DIR/post.json" || fail "POST /api/v1/jobs"
i=0
while :; do
	n=$(q "SELECT count(*) FROM runs r WHERE r.seq = 1 AND r.status = 'running'
	       AND (SELECT count(*) FROM samples s WHERE s.run_id = r.id) >= 2" 2>/dev/null)
	[ "${n:-0}" = 1 ] && break
	i=$((i + 1)); [ $i -lt 600 ] || fail "the queued job never started a run: $(tail -5 "$HOME_DIR/err.serve")"
	sleep 0.5
done
kill -9 $pid; wait $pid 2>/dev/null; pid=
[ "$(q "SELECT status FROM jobs")" = running ] || fail "job not left running by the killed server"
start
i=0
while [ "$(q "SELECT status FROM jobs")" != done ]; do
	i=$((i + 1)); [ $i -lt 900 ] || fail "resumed job not done: $(q 'SELECT seq, status FROM runs')"
	sleep 0.5
done
[ "$(q "SELECT count(*) FROM runs WHERE status = 'ok'")" = 2 ] || fail "not 2 ok runs: $(q 'SELECT seq, status FROM runs')"
[ "$(q "SELECT status FROM runs WHERE seq = 1")" = interrupted ] || fail "the killed run is not interrupted"
grep -q "resuming" "$HOME_DIR/err.serve" || fail "serve did not say it resumed"
curl -sf "$url/api/v1/jobs/1/report?format=text" | grep -q "Worst lag behind schedule over 8s" || fail "no report"
echo "ok: serve ran a submitted job, was killed mid-run, resumed it at start"
