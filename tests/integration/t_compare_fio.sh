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
printf 'kcanary %s\n' "$$" > "$HOME_DIR/marker.txt"
start=$(date +%s)
$KC compare --name fio-dirty --kernels "$KERNEL" --rootfs debian:fio --workload fio \
	--set runtime_s=5 --set size=16M --set rw=randwrite \
	--sysctl vm.dirty_ratio=5,40 --by sysctl --metric fio:kc:write:bw --repeat 3 \
	--files "$HOME_DIR/marker.txt" --watchdog 420s > "$HOME_DIR/out.compare" 2> "$HOME_DIR/err.compare"
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
		tr -d '\r' < "$(q "SELECT console_log_path FROM runs WHERE id = $r")" |
			grep -a -q "sysctl vm.dirty_ratio = $v\$" && n=$((n + 1))
	done
	[ $n = 3 ] || fail "job $job: $n consoles show vm.dirty_ratio = $v set, expected 3"
done

# --files went with the job: every run's image holds the marker
[ "$(q "SELECT count(*) FROM runs u JOIN rootfs_images r ON r.hash = u.rootfs_hash
        WHERE u.job_id = $job AND json_extract(r.files_json, '\$[0].dst') = 'marker.txt'")" = 6 ] ||
	fail "job $job: not every run's root filesystem has --files marker.txt: $(q "SELECT u.id, r.files_json FROM runs u LEFT JOIN rootfs_images r ON r.hash = u.rootfs_hash WHERE u.job_id = $job")"

# table FILE METRIC UNIT_RE: one table for METRIC with both values, the
# second with its change and p-value, values in fio's unit
table() {
	[ "$(grep -c "^$2 (" "$1")" = 1 ] || fail "$1: not one $2 table: $(cat "$1")"
	grep -q "^  vm.dirty_ratio=5  .*[0-9]$3 *\$" "$1" || fail "$1: no vm.dirty_ratio=5 row in $3 for $2"
	grep -q "^  vm.dirty_ratio=40 .*[0-9]$3  *[-+][0-9.]*% (p=[0-9.]*, MWU)\$" "$1" ||
		fail "$1: no vm.dirty_ratio=40 row with change and p for $2"
}
echo "-- the report: one table per fio figure, both values, change and p"
table "$HOME_DIR/out.compare" fio:kc:write:bw 'MiB/s'
for fig in "bw MiB/s bytes/s higher" "iops k ops/s ops/s higher" "clat_p99 [um]s ns lower"; do
	set -- $fig
	m=fio:kc:write:$1
	if [ $1 = iops ]; then re='k ops/s' unit=$4 better=$5; else re=$2 unit=$3 better=$4; fi
	$KC report $job --metric $m > "$HOME_DIR/out.$1" || fail "kcanary report $job --metric $m failed"
	cat "$HOME_DIR/out.$1" | sed -n '1,5p'
	table "$HOME_DIR/out.$1" $m "$re"
	$KC report $job --metric $m --format json > "$HOME_DIR/$1.json" || fail "kcanary report $job --metric $m --format json"
	jq -e --arg m $m --arg u $unit --arg b $better '.by == "sysctl" and .metric == $m and .unit == $u and .better == $b
		and .values == ["vm.dirty_ratio=5", "vm.dirty_ratio=40"] and (.cells | length) == 1
		and ([.cells[0].groups[] | .n] == [3, 3])
		and (.cells[0].groups[1] | (.change_pct | type) == "number" and (.p | type) == "number")' \
		"$HOME_DIR/$1.json" > /dev/null || fail "report --format json for $m: $(jq -c '{by, metric, unit, better, values}' "$HOME_DIR/$1.json")"
done
keep

echo "-- the web view's API (kcanary serve on 127.0.0.1:$PORT)"
: > "$HOME_DIR/serve.out"
"$PWD/$B/kcanary" serve --no-exec --listen 127.0.0.1:$PORT > "$HOME_DIR/serve.out" 2> "$HOME_DIR/err.serve" &
spid=$!
trap 'kill $spid 2>/dev/null; wait $spid 2>/dev/null; cleanup' EXIT
url=$(sh tools/serve-url.sh "$HOME_DIR/serve.out" $spid) || { cat "$HOME_DIR/err.serve"; fail "kcanary serve did not say where it listens"; }
# the job page (web/job.js) reads the job, then the report along ?by=
curl -sf "$url/api/v1/jobs/$job" > "$HOME_DIR/api-job.json" || fail "GET /api/v1/jobs/$job"
jq -e '.name == "fio-dirty" and .status == "done" and .spec.by == "sysctl"
	and (.dimensions["sysctl.vm.dirty_ratio"] | sort) == ["40", "5"]' "$HOME_DIR/api-job.json" > /dev/null ||
	fail "GET /api/v1/jobs/$job: $(jq -c '{name, status, by: .spec.by, dimensions}' "$HOME_DIR/api-job.json")"
for fig in "bw bytes/s" "iops ops/s" "clat_p99 ns"; do
	set -- $fig
	m=fio:kc:write:$1
	curl -sf "$url/api/v1/jobs/$job/report?by=sysctl&metric=$m" > "$HOME_DIR/api-$1.json" || fail "GET .../report?by=sysctl&metric=$m"
	jq -e --arg m $m --arg u $2 '.by == "sysctl" and .metric == $m and .unit == $u
		and ([.cells[0].groups[] | .name] == ["vm.dirty_ratio=5", "vm.dirty_ratio=40"])
		and ([.cells[0].groups[] | .n] == [3, 3])
		and (.cells[0].groups[1].p | type) == "number"' "$HOME_DIR/api-$1.json" > /dev/null ||
		fail "GET .../report?by=sysctl&metric=$m: $(jq -c '{by, metric, unit, groups: [.cells[0].groups[]? | {name, n, p}]}' "$HOME_DIR/api-$1.json")"
done
# the page's copy of the table is kcanary report's, byte for byte
curl -sf "$url/api/v1/jobs/$job/report?format=text&by=sysctl" > "$HOME_DIR/api-report.txt" || fail "GET .../report?format=text&by=sysctl"
$KC report $job --by sysctl > "$HOME_DIR/out.report"
cmp -s "$HOME_DIR/api-report.txt" "$HOME_DIR/out.report" ||
	fail "the web view's report text differs from kcanary report's: $(diff "$HOME_DIR/out.report" "$HOME_DIR/api-report.txt" | head)"
# the page's axis picker offers the job's dimensions with more than one
# value and asks for the report along the chosen key: the same table
dim=$(jq -r '.dimensions | to_entries[] | select(.value | length > 1) | .key' "$HOME_DIR/api-job.json")
[ "$dim" = sysctl.vm.dirty_ratio ] || fail "the page would offer the axes '$dim', expected sysctl.vm.dirty_ratio"
curl -sf "$url/api/v1/jobs/$job/report?format=text&by=$dim" > "$HOME_DIR/api-report-dim.txt" || fail "GET .../report?format=text&by=$dim"
cmp -s "$HOME_DIR/api-report-dim.txt" "$HOME_DIR/out.report" ||
	fail "the report along $dim differs from --by sysctl: $(diff "$HOME_DIR/out.report" "$HOME_DIR/api-report-dim.txt" | head)"
keep
echo "compare fio: vm.dirty_ratio=5,40 x 3 runs under --rootfs debian:fio with --files; one table per fio figure (bw, iops, p99) with change and p; JSON with units and directions; the web view's API groups them by the sysctl"
