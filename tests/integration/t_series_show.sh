#!/bin/sh
# t_series_show.sh - `kcanary series show` on the fixture mails: text and
# JSON output, exit codes for a parse error and a usage error.
K=${B:-build}/kcanary
M=tests/fixtures/mail
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fail() { echo "FAIL: $*"; head -c 2000 "$out"; cat "$err"; exit 1; }

$K series show $M/wb-dying-cgwb-flush-v6.mbox >"$out" 2>"$err" || fail "show v6 exited $?"
grep -q '^series wb-dying-cgwb-flush v6: 3 patches$' "$out" || fail "v6 header"
grep -q '^  base-commit:   168a8c13159c6e3f0f08da6f8fa2f633a91ba9fd$' "$out" || fail "v6 base-commit"
grep -q '^  \[2/3\] writeback: let foreign flushes reach dying cgwbs$' "$out" || fail "v6 2/3"
grep -q '^        date:    2026-10-02 21:40:46 +0000$' "$out" || fail "v6 2/3 date"
[ "$(grep -c '^        Signed-off-by: Liz Fong-Jones <lizf@honeycomb.io>$' "$out")" = 3 ] ||
	fail "v6 trailers"

# three revisions at once, one series per vN; the accented reviewer in UTF-8
$K series show --format json $M/A2-memcg-cleanup-next-v1/*.eml $M/A2-memcg-cleanup-next-v2/*.eml \
	>"$out" 2>"$err" || fail "show A2 exited $?"
[ "$(grep -c '"version": ' "$out")" = 2 ] || fail "A2: two revisions"
grep -A3 '"version": 2' "$out" | grep -q '"rfc": false' || fail "A2 v2"
[ "$(grep -c '"k": ' "$out")" = 9 ] || fail "A2: 5 + 4 patches"
[ "$(grep -c '"author_email": "dev12@example.com"' "$out")" = 9 ] || fail "A2 in-body From"
grep -q '"value": "Karel Nov\\u00E1k <dev17@example.org>"' "$out" || fail "A2 accented reviewer"
grep -q '"diff": "diff --git a/mm/memcontrol.c b/mm/memcontrol.c\\n' "$out" || fail "A2 diff"

# two revisions shown together say how they differ (INDEX.md: A2 keeps 3
# patches, drops 2, adds 1; A4's patch 1 was replaced by another)
$K series show $M/A2-memcg-cleanup-next-v1/*.eml $M/A2-memcg-cleanup-next-v2/*.eml >"$out" 2>"$err" ||
	fail "show A2 text exited $?"
grep -q '^v1 -> v2: 3 unchanged, 0 changed, 2 dropped, 1 new (series diff)$' "$out" || fail "A2 v1 -> v2"
$K series show $M/A4-blk-iocost-module-rfc-v1/*.eml $M/A4-blk-iocost-module-rfc-v2/*.eml >"$out" 2>"$err" ||
	fail "show A4 exited $?"
grep -q '^v1 -> v2: 6 unchanged, 0 changed, 1 dropped, 1 new (series diff)$' "$out" || fail "A4 v1 -> v2"

# a missing patch is a warning naming it (t_series_hazards.sh); a report
# has no patches
$K series show $M/C7a-body-line-From/01.eml >"$out" 2>"$err" || fail "C7a alone exited $?"
grep -q "warning: patch 1 of 2 of .* is missing" "$err" || fail "C7a message"
$K series show $M/D1-lkp-vm-scalability-regression/01.eml >"$out" 2>"$err" || fail "D1 exit code"
grep -q "^report (kernel test robot) <202401221624.cb53a8ca-dev41@example.org>: vm-scalability.throughput -36.6% regression$" \
	"$out" || fail "D1 report"
$K series show $M/C5-crlf-base64-corrupt-patch/01.eml.none >"$out" 2>"$err"
[ $? = 1 ] || fail "no such file exit code"

# usage errors exit 2; --help exits 0
$K series show --format yaml $M/C2-base64-singlepart-crlf/01.eml >"$out" 2>"$err"
[ $? = 2 ] || fail "bad format exit code"
$K series show >"$out" 2>"$err"
[ $? = 2 ] || fail "no FILE exit code"
$K series --help >"$out" 2>"$err" || fail "--help"
grep -q "usage: kcanary series show" "$out" || fail "--help text"
echo "ok"
