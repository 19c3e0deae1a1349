#!/bin/sh
# Ingest throughput: kcanary ingest of a 1,000,000-record stream, against
# sqlite3's own .import of the same rows as CSV into an equivalent table
# (the samples table with its index). Target (issue 19): <= 1.6x the
# .import time. synchronous is a setting of the connection, not of the
# file, so the baseline sets it in the session that imports (journal_mode
# WAL is kept in the file), as kcanary's own connection does (db.c).
set -eu
B=${B:-build}
N=${N:-1000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk -v n="$N" 'BEGIN {
	print "{\"type\":\"hello\",\"agent_version\":\"bench\"}"
	for (i = 1; i <= n; i++)
		printf "{\"type\":\"sample\",\"t\":%d.0,\"metric\":\"lag_s\",\"value\":%.3f}\n", i, (i % 977) / 10
	print "{\"type\":\"done\",\"status\":\"ok\"}"
}' > "$tmp/stream.jsonl"
awk -v n="$N" 'BEGIN { for (i = 1; i <= n; i++) printf "1,1,%d.0,%.3f\n", i, (i % 977) / 10 }' > "$tmp/rows.csv"

now() { date +%s.%N; }
t0=$(now)
KCANARY_HOME=$tmp/home "$B/kcanary" ingest --job bench --variant base "$tmp/stream.jsonl" > "$tmp/out"
t1=$(now)
cat "$tmp/out"

# the same rows into an equivalent table, by sqlite3 itself
sqlite3 "$tmp/import.db" >/dev/null <<SQL
PRAGMA journal_mode = WAL;
CREATE TABLE samples (run_id INTEGER NOT NULL, metric_id INTEGER NOT NULL,
	t_s REAL NOT NULL, value REAL NOT NULL);
CREATE INDEX samples_run ON samples(run_id, metric_id, t_s);
SQL
t2=$(now)
sqlite3 "$tmp/import.db" -cmd 'PRAGMA synchronous = NORMAL;' -cmd '.mode csv' \
	".import $tmp/rows.csv samples"
t3=$(now)
awk -v n="$N" -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" 'BEGIN {
	ki = b - a; si = d - c
	printf "ingest: %d records in %.2f s = %.0f records/s (kcanary ingest)\n", n + 2, ki, (n + 2) / ki
	printf "import: %d rows in %.2f s = %.0f rows/s (sqlite3 .import, CSV)\n", n, si, n / si
	printf "ratio: kcanary ingest takes %.2fx the time of sqlite3 .import (target <= 1.6x): %s\n",
		ki / si, (ki / si <= 1.6 ? "met" : "NOT met")
}'
