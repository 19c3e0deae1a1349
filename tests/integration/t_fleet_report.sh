#!/bin/sh
# t_fleet_report.sh - the fleet's own data is usable (issue 35 item 6): two
# real fleet agents (kcanary-agent daemon --host-id f1/f2, loopback, no
# guest) stream passive records into `kcanary serve`, then stop; their runs
# stay 'running' (the hosts live on) and carry samples but no summary.
#   1. `kcanary report fleet` (the fleet job's metric, dirty_pages) gives
#      each host's run a value: the median of its dirty_pages samples,
#      checked against the median awk takes of the raw sample rows
#      (sqlite3 CLI), and says so in its title; `--metric dirty_pages` and
#      `--metric writeback_pages` work;
#   2. `kcanary status fleet` says each host is streaming and when its last
#      record came, not "booting";
#   3. what the web pages read: the job's metric has samples (job.html's
#      curves), /runs gives the same medians (its strip plot and runs
#      table), the run's first sample metric with a direction is
#      dirty_pages (run.html's first curve when the job's has none);
#   4. a store made before (fleet job metric worst_lag_s, no
#      last_record_at) is brought there by its migration.
# Bounded: about 15 s.
set -eu
command -v sqlite3 >/dev/null || { echo "skip: the sqlite3 CLI is missing (make deps)"; exit 77; }
command -v curl >/dev/null || { echo "skip: curl is missing"; exit 77; }

FLEET_NAME=fleet-report
. tests/integration/fleet-lib.sh
db=$KCANARY_HOME/kcanary.db
q() { sqlite3 -cmd '.timeout 5000' "$db" "$1"; }

start_server 0
for h in f1 f2; do
	"$AG" daemon --server "$url" --token-file "$tmp/token" --host-id "$h" --interval 0.1s \
		--heartbeat 1s >"$out/agent-$h.out" 2>"$out/agent-$h.log" &
	apids="$apids $!"
done
# until each host has stored 20 dirty_pages samples (at most 20 s)
n=0
for _ in $(seq 100); do
	n=$(q "SELECT coalesce(min(c), 0) FROM (SELECT count(*) AS c FROM samples s
		JOIN metrics m ON m.id = s.metric_id JOIN runs r ON r.id = s.run_id
		WHERE m.name = 'dirty_pages' GROUP BY r.host HAVING r.host IN ('f1', 'f2'))
		WHERE (SELECT count(DISTINCT host) FROM runs) = 2")
	[ "$n" -ge 20 ] && break
	sleep 0.2
done
[ "$n" -ge 20 ] || fail "the agents stored only $n dirty_pages samples each in 20 s"
for p in $apids; do kill -TERM "$p"; done
for p in $apids; do wait "$p" || fail "an agent exited with status $?"; done
apids=
[ "$(q "SELECT count(*) FROM runs WHERE cell = 'workload=passive' AND status = 'running'")" = 2 ] ||
	fail "the passive runs are not both 'running': $(q "SELECT id, host, status FROM runs")"

# the median of a host's samples of metric, by awk over the raw rows
median() { # host metric
	q "SELECT s.value FROM samples s JOIN metrics m ON m.id = s.metric_id
	   JOIN runs r ON r.id = s.run_id WHERE r.host = '$1' AND m.name = '$2'
	   ORDER BY s.value" |
	awk '{ v[NR] = $1 } END { if (!NR) exit 1
		printf "%.6f\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
run_of() { q "SELECT id FROM runs WHERE host = '$1' AND cell = 'workload=passive'"; }

echo "-- 1. report"
"$KC" report fleet >"$out/report.txt" 2>&1 || { cat "$out/report.txt"; fail "kcanary report fleet exited $?"; }
cat "$out/report.txt"
grep -q "^dirty_pages, median of each host boot's samples (passive):" "$out/report.txt" ||
	fail "the report does not say its values are medians of dirty_pages samples"
grep -q "each value: the median of all the dirty_pages samples of one host's boot so far" \
	"$out/report.txt" || fail "the report has no line saying what each value is"
if grep -Eq ' (running|-) *$| running ' "$out/report.txt"; then
	fail "a run of the report has no value"
fi
"$KC" report fleet --format json >"$out/report.json" || fail "kcanary report fleet --format json"
for h in f1 f2; do
	want=$(median "$h" dirty_pages) || fail "no dirty_pages samples of $h"
	got=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
for c in r["cells"]:
    for g in c.get("variants", c.get("groups", [])):
        for x in g["runs"]:
            if x.get("host") == sys.argv[2]:
                print("%.6f %s" % (x["value"], x.get("value_is")))' "$out/report.json" "$h")
	[ "$got" = "$want median of samples" ] ||
		fail "$h: the report's value is '$got', the median of its samples $want"
	echo "   $h: report $got; awk's median of its samples $want"
done
for m in dirty_pages writeback_pages; do
	"$KC" report fleet --metric "$m" >"$out/report-$m.txt" 2>&1 ||
		{ cat "$out/report-$m.txt"; fail "kcanary report fleet --metric $m exited $?"; }
	grep -q "^$m, median of each host boot's samples" "$out/report-$m.txt" ||
		fail "--metric $m: $(head -5 "$out/report-$m.txt")"
done
echo "   --metric dirty_pages and --metric writeback_pages: a value per host"

echo "-- 2. status"
"$KC" status fleet >"$out/status.txt" || fail "kcanary status fleet exited $?"
cat "$out/status.txt"
! grep -q booting "$out/status.txt" || fail "status says a fleet host is booting"
grep -q "^  now: 2 hosts streaming passive records:" "$out/status.txt" || fail "status does not count the streaming hosts"
for h in f1 f2; do
	grep -Eq "^    run [0-9]+ $h \([^)]*\): streaming since [0-9T:-]+Z, last record [0-9]+ s ago$" \
		"$out/status.txt" || fail "status has no streaming line for $h"
done

echo "-- 3. what the web pages read"
api() { curl -sf "${url%/}/api/v1/$1" || fail "GET $1"; }
job=$(q "SELECT id FROM jobs WHERE name = 'fleet'")
api "jobs/$job" >"$out/job.json"
python3 - "$out/job.json" <<'PY' || fail "the fleet job's metric: $(head -c 300 "$out/job.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["metric"] == "dirty_pages" and j["unit"] == "pages", j["metric"]
PY
curve=$(api "jobs/$job/samples?metric=dirty_pages&max_points=240" |
	python3 -c 'import json, sys; d = json.load(sys.stdin); print(sum(len(r["v"]) for r in d["runs"]))')
[ "$curve" -gt 0 ] || fail "the job page's curves (dirty_pages samples) are empty"
api "jobs/$job/runs" >"$out/runs.json"
for h in f1 f2; do
	want=$(median "$h" dirty_pages)
	got=$(python3 -c 'import json, sys
for x in json.load(open(sys.argv[1]))["runs"]:
    if x["host"] == sys.argv[2]:
        print("%.6f %s" % (x["value"], x["value_source"]))' "$out/runs.json" "$h")
	[ "$got" = "$want median of samples" ] || fail "$h: /runs says '$got', the median is $want"
done
api "runs/$(run_of f1)" >"$out/run.json"
python3 - "$out/run.json" <<'PY' || fail "the run page's metrics: $(head -c 600 "$out/run.json")"
import json, sys
m = {x["name"]: x for x in json.load(open(sys.argv[1]))["sample_metrics"]}
assert m["dirty_pages"]["better"] == "lower" and m["dirty_pages"]["unit"] == "pages", m
# run.js opens on the first metric with a direction when the job's has no
# samples: not bdp_pause_max_s (no unit, no direction, all zeros here)
assert [x for x in m if m[x]["better"]][0] == "dirty_pages", m
PY
echo "   job metric dirty_pages with $curve curve points; /runs' values are the medians"

echo "-- 4. a store from before: its fleet job's metric was worst_lag_s"
kill -TERM "$spid"
wait "$spid" 2>/dev/null || :
spid=
q "UPDATE jobs SET metric = 'worst_lag_s' WHERE name = 'fleet';
   ALTER TABLE host_runs DROP COLUMN last_record_at;
   DELETE FROM kc_migrations WHERE name LIKE '023_fleet%';
   PRAGMA user_version = 22;"
"$KC" report fleet >"$out/report-old.txt" 2>&1 || { cat "$out/report-old.txt"; fail "report of the old store exited $?"; }
grep -q "^dirty_pages, median of each host boot's samples" "$out/report-old.txt" ||
	fail "the old store's fleet job was not migrated: $(head -5 "$out/report-old.txt")"
"$KC" status fleet | grep -q "streaming since .*, no record stamped yet$" ||
	fail "status of a stream stored before last_record_at: $("$KC" status fleet)"
echo "fleet report: each host's value is the median of its samples (awk agrees)," \
     "status says streaming, the web's data is there, an old store migrates"
