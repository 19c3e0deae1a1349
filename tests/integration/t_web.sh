#!/bin/sh
# t_web.sh - the pages in a real browser: kcanary serve on a free loopback
# port over a fixture store (tests/fixtures/web-job.sh), driven by Debian's
# chromium through playwright-core (tests/web/check.js, pinned by
# tests/web/package-lock.json and installed with npm ci). Screenshots land
# in $B/test-output/web/.
set -eu
B=${B:-build}
top=$PWD
KC=$top/$B/kcanary
out=$top/$B/test-output/web
[ -x /usr/bin/chromium ] || { echo "skip: /usr/bin/chromium is missing (make deps installs chromium)"; exit 77; }
command -v node >/dev/null && command -v npm >/dev/null ||
	{ echo "skip: node and npm are needed for the browser test (make deps)"; exit 77; }
command -v sqlite3 >/dev/null || { echo "skip: the sqlite3 CLI is missing"; exit 77; }

tmp=$(mktemp -d)
pid=
cleanup() {
	rc=$?
	[ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || :; }
	rm -rf "$tmp"
	exit $rc
}
trap cleanup EXIT
rm -rf "$out"
mkdir -p "$out"

if ! (cd tests/web && npm ci --no-audit --no-fund --loglevel=error) >"$out/npm.log" 2>&1; then
	cat "$out/npm.log"
	echo "skip: 'npm ci' in tests/web failed (is the npm registry reachable?)"
	exit 77
fi

export KCANARY_HOME=$tmp/home
sh tests/fixtures/web-job.sh "$KC" "$tmp/streams"
# bisections (jobs 2, 3, 4): from real simulated logs, a culprit found past
# three commits that do not build and a range split only by a skip; and
# endpoints that do not differ (no culprit)
sh tests/fixtures/web-bisect.sh "$KC" "$tmp/bisect" 7 "bisect fixture-good..fixture-bad"
sh tests/fixtures/web-bisect.sh "$KC" "$tmp/bisect" 4 "bisect fixture range"
sh tests/fixtures/web-bisect.sh "$KC" "$tmp/bisect" tests/fixtures/bisect-no-difference.log \
	"bisect fixture no difference"

: >"$tmp/serve.out"   # exists before the server's child opens it
"$KC" serve --no-exec --listen 127.0.0.1:0 >"$tmp/serve.out" 2>"$out/serve.log" &
pid=$!
url=$(sh tools/serve-url.sh "$tmp/serve.out" $pid) ||
	{ echo "FAIL: kcanary serve did not say where it listens"; cat "$out/serve.log"; exit 1; }
echo "serving $url"

# a submitted job: pending, nothing run yet (job 5)
token=$("$KC" token create web-test 2>/dev/null)
printf '[job]\nname = submitted\ntree = /src/linux\nbase = v6.12.117\nrepeat = 2\n[matrix]\nfs = ext4 xfs\n' |
	curl -sf -H "Authorization: Bearer $token" --data-binary @- "$url/api/v1/jobs" >/dev/null ||
	{ echo "FAIL: POST /api/v1/jobs with a token"; exit 1; }

# a job with a stored axis (job 6): two variants x two vm.dirty_ratio
# values, compared (its spec's by, as compare --by stores it) along the sysctl
for v in base patched; do
	for r in 5 40; do
		"$KC" ingest --job stored-by --variant $v --param workload=wb-handover \
			--param sysctl.vm.dirty_ratio=$r "$tmp/streams/lag-85.3.jsonl" >/dev/null
	done
done
sqlite3 "$KCANARY_HOME/kcanary.db" \
	"UPDATE jobs SET spec_json = '{\"by\":\"sysctl.vm.dirty_ratio\"}' WHERE name = 'stored-by'"
# ... whose runs had the host's own userland (--rootfs host): not reproducible
hh=$(printf 'fio 3.33-1\n' | sha256sum | cut -c1-64)
hshort=$(echo "$hh" | cut -c1-12)
sqlite3 "$KCANARY_HOME/kcanary.db" \
	"INSERT INTO rootfs_images (hash, spec, packages, path) VALUES ('$hh', 'host', 'fio 3.33-1', '/');
	 UPDATE runs SET rootfs_hash = '$hh' WHERE job_id = (SELECT id FROM jobs WHERE name = 'stored-by')"
[ "$(sqlite3 "$KCANARY_HOME/kcanary.db" "SELECT id FROM jobs WHERE name = 'stored-by'")" = 6 ] ||
	{ echo "FAIL: the stored-by fixture job is not job 6"; exit 1; }

# a job on two lab hosts (job 7): kvm1 (stored by `lab add`, never
# checked) ran 4 runs of each variant, the default host local 4 of each;
# the runs' hosts go in through `ingest --lab-host`. One of kvm1's runs
# is then running (no writer, so nothing reaps it): 3 + 4 on kvm1.
"$KC" lab add kvm1 qemu+tcp://127.0.0.1:18201/system --slots 2 >/dev/null
for pair in kvm1:85.3:30.5 kvm1:52.1:22.0 kvm1:46.9:1.2 kvm1:41.7:1.0 \
	    local:1.2:0.8 local:1.1:0.9 local:1.2:0.9 local:1.1:0.8; do
	h=${pair%%:*} rest=${pair#*:}
	b=${rest%%:*} p=${rest##*:}
	for vp in "base $b" "patched $p"; do
		set -- $vp
		"$KC" ingest --job two-hosts --variant $1 --lab-host "$h" --param workload=wb-handover \
			"$tmp/streams/lag-$2.jsonl" >/dev/null
	done
done
[ "$(sqlite3 "$KCANARY_HOME/kcanary.db" "SELECT id FROM jobs WHERE name = 'two-hosts'")" = 7 ] ||
	{ echo "FAIL: the two-hosts fixture job is not job 7"; exit 1; }
sqlite3 "$KCANARY_HOME/kcanary.db" "UPDATE runs SET status = 'running', writer = NULL
	WHERE id = (SELECT max(id) FROM runs WHERE job_id = 7 AND lab_host = 'kvm1')"

# a --repeat auto job decided after 3 blocks: the page gives the stop line's
# answer, not "3 runs against 3 cannot reach p < 0.05" (issue 19)
for pair in 85.3:1.0 46.9:1.2 52.1:1.2; do
	b=${pair%%:*} p=${pair##*:}
	"$KC" ingest --job sequential --variant base --fs ext4 --param workload=wb-handover \
		"$tmp/streams/lag-$b.jsonl" >/dev/null
	"$KC" ingest --job sequential --variant "+ v6 2/3" --fs ext4 --param workload=wb-handover \
		"$tmp/streams/lag-$p.jsonl" >/dev/null
done
sqlite3 "$KCANARY_HOME/kcanary.db" \
	"UPDATE jobs SET spec_json = '{\"repeat\":\"auto:3\"}' WHERE name = 'sequential'"
[ "$(sqlite3 "$KCANARY_HOME/kcanary.db" "SELECT id FROM jobs WHERE name = 'sequential'")" = 8 ] ||
	{ echo "FAIL: the sequential fixture job is not job 8"; exit 1; }

# a regression (job 9): 4 runs of "+ worse" each above every base run on
# a lower-is-better metric: p = 2/70 = 0.029 (Mann-Whitney, exact), shown
# as worse, in the bad colour
for pair in 1.0:46.9 1.2:52.1 1.0:85.3 1.2:41.7; do
	b=${pair%%:*} p=${pair##*:}
	"$KC" ingest --job regression --variant base --param workload=wb-handover \
		"$tmp/streams/lag-$b.jsonl" >/dev/null
	"$KC" ingest --job regression --variant "+ worse" --param workload=wb-handover \
		"$tmp/streams/lag-$p.jsonl" >/dev/null
done
[ "$(sqlite3 "$KCANARY_HOME/kcanary.db" "SELECT id FROM jobs WHERE name = 'regression'")" = 9 ] ||
	{ echo "FAIL: the regression fixture job is not job 9"; exit 1; }

# a run with six probe series (job 10): the run page's probe chart names
# every one in its legend (it dropped the legend above four series)
awk '{ print } /"type":"probe"/ { for (k = 3; k <= 7; k++) { l = $0; sub(/"key":"-2"/, "\"key\":\"-" k "\"", l)
	match(l, /"count":[0-9]+/); c = substr(l, RSTART + 8, RLENGTH - 8) * (k - 1)
	sub(/"count":[0-9]+/, "\"count\":" c, l); print l } }' "$tmp/streams/lag-85.3.jsonl" >"$tmp/probes6.jsonl"
"$KC" ingest --job many-probes --variant base --param workload=wb-handover "$tmp/probes6.jsonl" >/dev/null
probe_run=$(sqlite3 "$KCANARY_HOME/kcanary.db" "SELECT max(id) FROM runs WHERE job_id = 10")
[ -n "$probe_run" ] || { echo "FAIL: the many-probes fixture job is not job 10"; exit 1; }

# a finished job none of whose runs ran (job 11: every run skipped, as when
# each variant's kernel failed; set by hand, a compare needs a build): the
# jobs list says "no result", not a plain "done"
for v in base "+ v6 2"; do
	"$KC" ingest --job all-skipped --variant "$v" --param workload=wb-handover \
		"$tmp/streams/lag-85.3.jsonl" >/dev/null
done
sqlite3 "$KCANARY_HOME/kcanary.db" "UPDATE runs SET status = 'skipped', error = 'not run: no kernel'
	WHERE job_id = 11; UPDATE jobs SET status = 'done' WHERE id = 11 AND name = 'all-skipped'"
[ "$(sqlite3 "$KCANARY_HOME/kcanary.db" "SELECT name FROM jobs WHERE id = 11")" = all-skipped ] ||
	{ echo "FAIL: the all-skipped fixture job is not job 11"; exit 1; }

cat >"$tmp/expect.json" <<JSON
{"job": "web-fixture", "job_id": 1, "runs": 12, "variants": 2, "run_id": 1,
 "numbers": ["85.3s", "46.9s", "52.1s", "1.0s", "1.2s", "30.5s", "22.0s", "41.7s", "-97.7%"],
 "filter": {"dim": "fs", "value": "xfs", "runs": 6},
 "strip_medians": {"variant": ["52.1s", "1.2s", "30.5s", "0.9s"], "fs": ["52.1s", "30.5s", "1.2s", "0.9s"]},
 "console": "Linux version 6.12.117 (fixture)",
 "overhead": "overhead: median 37.6 s of 160.0 s wall per run (24%, 12 runs): image 0.1 s, upload 0.2 s, create 0.3 s, boot 30.0 s, mkfs 3.0 s, teardown 4.0 s; workload 122.4 s",
 "run_overhead": "37.6 s of 160.0 s",
 "pending_id": 5,
 "stored_by": {"job_id": 6, "by": "sysctl.vm.dirty_ratio", "runs": 4,
   "legend": "sysctl.vm.dirty_ratio=5|sysctl.vm.dirty_ratio=40",
   "sysctl_legend": "vm.dirty_ratio=5|vm.dirty_ratio=40",
   "mark": "rootfs: host (not reproducible): the guests ran the host's own userland (dpkg package list sha256 $hshort)"},
 "bisect": [
  {"job_id": 2, "log": "$tmp/bisect/bisect fixture-good..fixture-bad.log",
   "cands": "$tmp/bisect/bisect fixture-good..fixture-bad.cands", "wall": "2 h 13 min 42 s",
   "shot": "bisect.png"},
  {"job_id": 3, "log": "$tmp/bisect/bisect fixture range.log",
   "cands": "$tmp/bisect/bisect fixture range.cands", "wall": "2 h 13 min 42 s",
   "shot": "bisect-range.png"},
  {"job_id": 4, "log": "$tmp/bisect/bisect fixture no difference.log",
   "cands": "$tmp/bisect/bisect fixture no difference.cands", "wall": "2 h 13 min 42 s",
   "shot": "bisect-none.png"}],
 "lab": {"job_id": 7, "hosts": ["kvm1", "local"],
   "p_line": "p: van Elteren, stratified by lab host (kvm1: 4+3 runs, local: 4+4)",
   "progress": {"kvm1": {"done": 7, "running": 1, "state": "unknown", "slots": "2"},
                "local": {"done": 8, "running": 0, "state": "–", "slots": "–"}}},
 "regression": {"job_id": 9, "start": "+ worse is higher than base (worse): median ",
   "p": "p = 0.029"},
 "sequential": {"job_id": 8,
   "line": "+ v6 2/3 vs base: stop: difference after 3 blocks (e=1.2e3 >= 20) (anytime-valid test, 3 of at most 3 blocks run)."},
 "probes": {"run_id": $probe_run, "series": ["cgroup_writeback_by_id = -2", "cgroup_writeback_by_id = -3",
   "cgroup_writeback_by_id = -4", "cgroup_writeback_by_id = -5", "cgroup_writeback_by_id = -6",
   "cgroup_writeback_by_id = -7"]},
 "kcanary": "$KC", "db": "$KCANARY_HOME/kcanary.db",
 "live": {"cmd": ["$KC", "ingest", "--job", "web-fixture", "--variant", "+ v6 2/3",
   "--fs", "xfs", "--param", "workload=wb-handover", "--param", "rate_mbps=250",
   "--param", "measure_s=120", "$tmp/streams/lag-0.9.jsonl"]}}
JSON
node tests/web/check.js "$url" "$out" "$tmp/expect.json"
echo "screenshots: $(cd "$out" && ls *.png | tr '\n' ' ')"
