#!/bin/sh
# Ingest throughput: kcanary ingest of a 1,000,000-record stream, against
# sqlite3's own .import of the same rows as CSV into an equivalent table
# (the samples table with its index). Target (issue 19): <= 1.6x the
# .import time. synchronous is a setting of the connection, not of the
# file, so the baseline sets it in the session that imports (journal_mode
# WAL is kept in the file), as kcanary's own connection does (db.c).
#
# The machine is shared (2 cores, other builds and guests), so each side
# runs ROUNDS times (default 3), interleaved, each into a fresh store, and
# the ratio is of the fastest wall time of each: contention only ever adds
# time. The CPU seconds (user + sys) of those runs are printed beside it.
set -eu
B=${B:-build}
N=${N:-1000000}
ROUNDS=${ROUNDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk -v n="$N" 'BEGIN {
	print "{\"type\":\"hello\",\"agent_version\":\"bench\"}"
	for (i = 1; i <= n; i++)
		printf "{\"type\":\"sample\",\"t\":%d.0,\"metric\":\"lag_s\",\"value\":%.3f}\n", i, (i % 977) / 10
	print "{\"type\":\"done\",\"status\":\"ok\"}"
}' > "$tmp/stream.jsonl"
awk -v n="$N" 'BEGIN { for (i = 1; i <= n; i++) printf "1,1,%d.0,%.3f\n", i, (i % 977) / 10 }' > "$tmp/rows.csv"

# timed FILE CMD...: wall and CPU seconds of CMD appended to FILE
timed() {
	out=$1
	shift
	/usr/bin/time -f "%e %U %S" -o "$tmp/t" "$@"
	cat "$tmp/t" >> "$out"
}

r=0
while [ "$r" -lt "$ROUNDS" ]; do
	rm -rf "$tmp/home" "$tmp/import.db"*
	KCANARY_HOME=$tmp/home timed "$tmp/kc.times" "$B/kcanary" ingest --job bench \
		--variant base "$tmp/stream.jsonl" > "$tmp/out"
	# the same rows into an equivalent table, by sqlite3 itself
	sqlite3 "$tmp/import.db" >/dev/null <<SQL
PRAGMA journal_mode = WAL;
CREATE TABLE samples (run_id INTEGER NOT NULL, metric_id INTEGER NOT NULL,
	t_s REAL NOT NULL, value REAL NOT NULL);
CREATE INDEX samples_run ON samples(run_id, metric_id, t_s);
SQL
	timed "$tmp/sq.times" sqlite3 "$tmp/import.db" -cmd 'PRAGMA synchronous = NORMAL;' \
		-cmd '.mode csv' ".import $tmp/rows.csv samples"
	r=$((r + 1))
done
cat "$tmp/out"
# fastest wall time of each side, with that run's CPU seconds
best() { sort -n "$1" | head -n 1; }
set -- $(best "$tmp/kc.times") $(best "$tmp/sq.times")
awk -v n="$N" -v r="$ROUNDS" -v kw="$1" -v ku="$2" -v ks="$3" -v sw="$4" -v su="$5" -v ss="$6" 'BEGIN {
	printf "ingest: %d records in %.2f s = %.0f records/s (kcanary ingest, fastest of %d; %.2f s CPU)\n",
		n + 2, kw, (n + 2) / kw, r, ku + ks
	printf "import: %d rows in %.2f s = %.0f rows/s (sqlite3 .import, CSV, fastest of %d; %.2f s CPU)\n",
		n, sw, n / sw, r, su + ss
	printf "ratio: kcanary ingest takes %.2fx the time of sqlite3 .import (target <= 1.6x): %s; CPU %.2fx\n",
		kw / sw, (kw / sw <= 1.6 ? "met" : "NOT met"), (ku + ks) / (su + ss)
	printf "target: kcanary ingest <= 1.6x the time of sqlite3 .import: %.2fx: %s\n",
		kw / sw, (kw / sw <= 1.6 ? "met" : "NOT met")
}'
