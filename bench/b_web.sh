#!/bin/sh
# bench/b_web.sh - how long the comparison page of a big job takes to load
# its data from a warm `kcanary serve`: a job of 1,000 runs x 120 lag
# samples (2 variants x 2 filesystems x 250 repeats), the five requests
# job.html makes (job, runs, curves at max_points=240, report text and
# json), timed end to end with curl. Target: under 1 s.
# Prints the best and median warm load time, and the first (cold) load.
set -eu
B=${B:-build}
KC=$PWD/$B/kcanary
RUNS=${RUNS:-1000}
SAMPLES=${SAMPLES:-120}
TRIES=${TRIES:-5}
tmp=$(mktemp -d)
pid=
cleanup() {
	rc=$?
	[ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || :; }
	rm -rf "$tmp"
	exit $rc
}
trap cleanup EXIT
export KCANARY_HOME=${KEEP_HOME:-$tmp/home}   # KEEP_HOME: keep the store (profiling)
"$KC" token list >/dev/null          # creates the store at the newest schema
db=$KCANARY_HOME/kcanary.db

# Rows as schema/001 defines them, generated in SQL: run r of variant
# r % 2, fs by (r / 2) % 2; lag a triangle peaking at a per-run worst
# value (base ~20-80 s, patched ~1 s), with a summary and probe counts.
sqlite3 "$db" <<SQL
BEGIN;
INSERT INTO jobs (id, name, kind, status, metric) VALUES (1, 'bench-1000', 'compare', 'done', 'worst_lag_s');
INSERT INTO variants (id, job_id, idx, name, status) VALUES (1, 1, 0, 'base', 'ok'), (2, 1, 1, '+ v6 2/3', 'ok');
WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i + 1 < $RUNS)
INSERT INTO runs (id, job_id, variant_id, seq, repeat_idx, fs, cell, params_json, status, accel)
SELECT i + 1, 1, 1 + i % 2, i + 1, 1 + i / 4, CASE (i / 2) % 2 WHEN 0 THEN 'ext4' ELSE 'xfs' END,
       'fs=' || CASE (i / 2) % 2 WHEN 0 THEN 'ext4' ELSE 'xfs' END || ' rate_mbps=250',
       '{"rate_mbps":"250"}', 'ok', 'tcg' FROM r;
INSERT INTO run_summary (run_id, metric, value)
SELECT id, 'worst_lag_s', CASE variant_id WHEN 1 THEN 20 + (id * 37 % 60) ELSE 0.8 + (id % 5) / 10.0 END FROM runs;
WITH RECURSIVE t(s) AS (SELECT 1 UNION ALL SELECT s + 1 FROM t WHERE s < $SAMPLES)
INSERT INTO samples (run_id, metric_id, t_s, value)
SELECT r.id, (SELECT id FROM metrics WHERE name = 'lag_s'), t.s,
       w.value * (CASE WHEN t.s <= $SAMPLES / 2 THEN t.s ELSE $SAMPLES - t.s END) / ($SAMPLES / 2.0)
FROM runs r JOIN run_summary w ON w.run_id = r.id, t;
INSERT INTO probes (run_id, t_s, name, key, count)
SELECT id, NULL, 'cgroup_writeback_by_id', '-2', CASE variant_id WHEN 1 THEN 900 ELSE 0 END FROM runs;
COMMIT;
SQL

"$KC" serve --no-exec --listen 127.0.0.1:0 >"$tmp/serve.out" 2>"$tmp/serve.err" &
pid=$!
url=$(sh tools/serve-url.sh "$tmp/serve.out" $pid) ||
	{ cat "$tmp/serve.err"; echo "web: kcanary serve did not start"; exit 1; }

load() {
	for p in "" /runs "/samples?metric=lag_s&max_points=240" "/report?format=text" /report; do
		curl -sf -o "$tmp/body" "$url/api/v1/jobs/1$p" || { echo "web: GET $p failed"; exit 1; }
		size=$((size + $(wc -c < "$tmp/body")))
	done
}
size=0
t0=$(date +%s.%N)
load                                     # cold: builds the report once
t1=$(date +%s.%N)
cold=$(echo "$t1 - $t0" | bc -l)
times=""
for _ in $(seq "$TRIES"); do
	size=0
	t0=$(date +%s.%N)
	load
	t1=$(date +%s.%N)
	times="$times $(echo "$t1 - $t0" | bc -l)"
done
echo "$times" | tr ' ' '\n' | sed '/^$/d' | sort -n | awk -v runs="$RUNS" -v samples="$SAMPLES" -v bytes="$size" -v cold="$cold" '
	{ t[NR] = $1 }
	END { printf "web: comparison page data, %d runs x %d samples (%.1f MiB of JSON and text) from a warm server: best %.3f s, median %.3f s (target < 1 s); first load, building the report: %.1f s\n",
		runs, samples, bytes / 1048576, t[1], t[int((NR + 1) / 2)], cold
	      printf "target: warm comparison page data < 1 s (median): %.3f s (%.2fx the target): %s\n",
		t[int((NR + 1) / 2)], t[int((NR + 1) / 2)] / 1.0, (t[int((NR + 1) / 2)] < 1 ? "met" : "NOT met") }'
