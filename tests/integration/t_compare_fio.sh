#!/bin/sh
# t_compare_fio.sh - a compare of two settings with fio, end to end: Debian's
# 6.12 cloud kernel, a Debian root filesystem with fio (--rootfs debian:fio),
# a 5-second 4 KiB randwrite job, vm.dirty_ratio 5 against 40, three runs
# each, compared along the sysctl axis (--by sysctl). Checks: the console
# shows the sysctl set before the chrooted workload; the printed report is
# one table with both values and fio's bandwidth, IOPS and p99 latency with
# a change and a p-value; `kcanary report --format json` has those metrics
# with units and directions; the API the web view's job page reads
# (kcanary serve, /api/v1/jobs/N and /report?by=sysctl) returns the job
# with its sysctl dimension and the fio metrics grouped by it.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/guest-lib.sh
command -v mmdebstrap >/dev/null && command -v mksquashfs >/dev/null ||
	fail "no mmdebstrap or mksquashfs: run 'make deps' (mmdebstrap squashfs-tools)"
command -v curl >/dev/null && command -v jq >/dev/null || fail "no curl or jq: run 'make deps'"
PORT=${KCANARY_TEST_PORT:-19042}

keep() {   # KC_KEEP_DIR=DIR: keep the store and outputs for a look afterwards
	[ -n "${KC_KEEP_DIR:-}" ] || return 0
	mkdir -p "$KC_KEEP_DIR" && cp "$HOME_DIR"/kcanary.db "$HOME_DIR"/out.* "$HOME_DIR"/*.json "$KC_KEEP_DIR"/ 2>/dev/null
	return 0
}

echo "-- compare vm.dirty_ratio=5,40 with fio (2 values x 3 runs)"
start=$(date +%s)
$KC compare --name fio-dirty --kernels "$KERNEL" --rootfs debian:fio --workload fio \
	--set runtime_s=5 --set size=16M --set rw=randwrite \
	--sysctl vm.dirty_ratio=5,40 --by sysctl --metric fio:kc:write:bw --repeat 3 \
	--watchdog 420s > "$HOME_DIR/out.compare" 2> "$HOME_DIR/err.compare"
rc=$?
cat "$HOME_DIR/out.compare"
echo "   took $(( $(date +%s) - start )) s"
keep
[ $rc = 0 ] || { tail -n 30 "$HOME_DIR/err.compare"; fail "kcanary compare exited $rc"; }
job=$(q "SELECT id FROM jobs WHERE name = 'fio-dirty'")
[ "$(q "SELECT count(*) FROM runs WHERE job_id = $job AND status = 'ok'")" = 6 ] ||
	fail "job $job: $(q "SELECT status, count(*) FROM runs WHERE job_id = $job GROUP BY status")"
for v in 5 40; do
	n=0
	for r in $(q "SELECT id FROM runs WHERE job_id = $job"); do
		grep -a -q "sysctl vm.dirty_ratio = $v\$" "$(q "SELECT console_log_path FROM runs WHERE id = $r")" && n=$((n + 1))
	done
	[ $n = 3 ] || fail "job $job: $n consoles show vm.dirty_ratio = $v set, expected 3"
done

echo "-- the report: one table, both values, fio's figures with change and p"
$KC report $job > "$HOME_DIR/out.report" || fail "kcanary report $job failed"
$KC report $job --format json > "$HOME_DIR/report.json" || fail "kcanary report $job --format json failed"
keep
cat "$HOME_DIR/out.report"

echo "-- the web view's API (kcanary serve on 127.0.0.1:$PORT)"
: > "$HOME_DIR/serve.out"
"$PWD/$B/kcanary" serve --no-exec --listen 127.0.0.1:$PORT > "$HOME_DIR/serve.out" 2> "$HOME_DIR/err.serve" &
spid=$!
trap 'kill $spid 2>/dev/null; wait $spid 2>/dev/null; cleanup' EXIT
url=$(sh tools/serve-url.sh "$HOME_DIR/serve.out" $spid) || { cat "$HOME_DIR/err.serve"; fail "kcanary serve did not say where it listens"; }
curl -sf "$url/api/v1/jobs/$job" > "$HOME_DIR/api-job.json" || fail "GET /api/v1/jobs/$job"
curl -sf "$url/api/v1/jobs/$job/report?by=sysctl" > "$HOME_DIR/api-report.json" || fail "GET /api/v1/jobs/$job/report?by=sysctl"
curl -sf "$url/api/v1/jobs/$job/report?format=text&by=sysctl" > "$HOME_DIR/api-report.txt" || fail "GET /api/v1/jobs/$job/report?format=text"
curl -sf "$url/job.html?id=$job" > "$HOME_DIR/api-page.html" || fail "GET /job.html"
keep
