#!/bin/sh
# t_report_round.sh - one rounding rule for every report form (issue 35
# item 7a): half away from zero on the value's shortest decimal form, as
# a reader rounds what they see. Runs with worst_lag_s 30.25, 0.15 and
# 1000.5 s are ingested (no guest); the text and markdown tables show
# 30.3s, 0.2s and 1001s, the CSV the stored values as they are, and the
# pages' helpers (web/kcanary.js under node) the same strings as the text.
# The expected strings come from python3's decimal module, not from
# kcanary: Decimal('30.25').quantize(Decimal('0.1'), ROUND_HALF_UP) =
# 30.3, Decimal('0.15') -> 0.2, Decimal('1000.5') to 1 -> 1001,
# Decimal('14.85') -> 14.9, Decimal('0.0455') to 0.001 -> 0.046,
# Decimal('1.0005') to 0.001 -> 1.001 (printf's "%.1f" gives 30.2 and 0.1:
# it rounds the binary value half to even). `kcanary jobs` shows the
# headline change and p by the same rule.
set -u
B=${B:-build}
KC=$PWD/$B/kcanary
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export KCANARY_HOME=$tmp/home
mkdir -p "$KCANARY_HOME"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

stream() { # worst_lag_s
	grep -v '"type":"summary"' tests/fuzz/ingest/seed-stream.jsonl |
		sed "s|^{\"type\":\"done\"|{\"type\":\"summary\",\"metrics\":{\"worst_lag_s\":$1,\"mean_lag_s\":0.5}}\n&|"
}
for v in 30.25 0.15 1000.5; do
	stream $v > "$tmp/s.jsonl"
	$KC ingest --job round --variant "v$v" "$tmp/s.jsonl" > /dev/null 2>&1 || fail "ingest of worst_lag_s $v"
done

for fmt in text markdown; do
	$KC report round --metric worst_lag_s --format $fmt > "$tmp/$fmt" 2>&1 || fail "report --format $fmt: $(cat "$tmp/$fmt")"
	for want in 30.3s 0.2s 1001s; do
		grep -q "[^0-9.]$want" "$tmp/$fmt" || fail "report --format $fmt has no $want"
	done
	for bad in 30.2s 0.1s 1000s; do
		! grep -q "[^0-9.]$bad" "$tmp/$fmt" || fail "report --format $fmt shows $bad: $(grep "$bad" "$tmp/$fmt")"
	done
done
# the CSV is the stored value, unrounded
$KC report round --metric worst_lag_s --format csv > "$tmp/csv" 2>&1 || fail "report --format csv"
for want in 30.25 0.15 1000.5; do
	grep -q ",worst_lag_s,$want," "$tmp/csv" || fail "csv has no $want: $(cat "$tmp/csv")"
done

# `kcanary jobs` rounds the headline's change as the report does and p as
# the web's jobs list (3 decimals): 4 runs at 100 s against 4 at 130.25 s
# is a change of +30.25% (Decimal to 0.1, half up: +30.3%; printf's
# "%+.1f" gives +30.2%) and, every run of one above every run of the
# other, the exact two-sided Mann-Whitney p = 2 / C(8,4) = 2/70 = 0.028571
# (0.029; the report's table: 0.03)
for i in 1 2 3 4; do
	stream 100 > "$tmp/s.jsonl"
	$KC ingest --job jobsround --variant base "$tmp/s.jsonl" > /dev/null 2>&1 || fail "ingest base"
	stream 130.25 > "$tmp/s.jsonl"
	$KC ingest --job jobsround --variant new "$tmp/s.jsonl" > /dev/null 2>&1 || fail "ingest new"
done
$KC jobs > "$tmp/jobs" 2>&1 || fail "kcanary jobs: $(cat "$tmp/jobs")"
grep -q "jobsround .* +30\.3%  *0\.029  " "$tmp/jobs" ||
	fail "kcanary jobs does not show +30.3% and p 0.029: $(grep jobsround "$tmp/jobs")"
$KC report jobsround --metric worst_lag_s > "$tmp/jr" 2>&1 || fail "report jobsround"
grep -q "+30\.3% (p=0\.03," "$tmp/jr" || fail "report jobsround: $(grep % "$tmp/jr")"

# the pages: KC.fmt / fmtPct / fmtP give the text report's strings
if command -v node > /dev/null; then
	node -e '
const fs = require("fs"), vm = require("vm"), c = {};
vm.createContext(c);
vm.runInContext(fs.readFileSync("web/kcanary.js", "utf8") + ";globalThis.KC = KC;", c);
const K = c.KC, want = [
	[K.fmt(30.25, "s"), "30.3s"], [K.fmt(0.15, "s"), "0.2s"], [K.fmt(-30.25, "s"), "-30.3s"],
	[K.fmt(1000.5, "s"), "1001s"], [K.fmt(1.0005, ""), "1.001"],
	[K.fmtPct(14.85), "+14.9%"], [K.fmtP(0.0455), "0.046"],
];
let bad = 0;
for (const [got, exp] of want)
	if (got !== exp) { console.log(`FAIL: web shows ${got}, expected ${exp}`); bad++; }
process.exit(bad ? 1 : 0);' || fail "web/kcanary.js rounds otherwise"
else
	fail "node is not installed (the web side of this test needs it)"
fi

echo "report round: $fails failed"
[ $fails = 0 ]
