#!/bin/sh
# t_cli_readme.sh - claims of the everyday commands (README.md's first
# run, docs/compare.md, docs/guests.md, docs/reliability.md; mapped in
# docs/claims.md) that no other test backed: `token create/list/remove` (the secret printed once, only
# its name listed, a removed token gone, removing it again an error naming
# it), `jobs` and `status` of a stored job, and `kcanary doctor` "checks
# every prerequisite and says how to fix what is missing" (mkfs.xfs
# hidden in a private mount namespace: FAIL, the fix, exit 1). doctor
# boots a guest for its channel check: run under the integration flock.
# And README.md's first run as written: its ingest loop, run in a fresh
# store, then the jobs row and the report it shows, compared line by line.
set -u
B=${B:-build}
KC=$PWD/$B/kcanary
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export KCANARY_HOME=$tmp/home
mkdir -p "$KCANARY_HOME"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# token create / list / remove
secret=$($KC token create ci 2>"$tmp/err") || fail "token create ci: $(cat "$tmp/err")"
case $secret in kct_*) ;; *) fail "token create printed '$secret', not a kct_ secret" ;; esac
$KC token list > "$tmp/out" 2>&1 || fail "token list: exit $?"
grep -q '^ci[[:space:]]' "$tmp/out" || fail "token list does not list 'ci': $(cat "$tmp/out")"
! grep -qF "$secret" "$tmp/out" || fail "token list shows the secret"
$KC token remove ci > "$tmp/out" 2>&1 || fail "token remove ci: exit $?: $(cat "$tmp/out")"
$KC token list > "$tmp/out" 2>&1
! grep -q '^ci[[:space:]]' "$tmp/out" || fail "token list still lists the removed 'ci'"
rc=0; $KC token remove ci > "$tmp/out" 2>&1 || rc=$?
{ [ $rc = 1 ] && grep -qF "no token named 'ci'" "$tmp/out"; } ||
	fail "token remove of a removed token: exit $rc: $(cat "$tmp/out")"

# jobs and status of a stored job (one ingested run, done)
$KC ingest --job j1 --variant base tests/fuzz/ingest/seed-stream.jsonl > /dev/null 2>&1 || fail "ingest"
$KC jobs > "$tmp/out" 2>&1 || fail "jobs: exit $?"
grep -Eq '^ +1 +j1 +adhoc +done +1/1 +0 ' "$tmp/out" || fail "jobs: no 'j1 adhoc done 1/1 0' row in: $(cat "$tmp/out")"
$KC status j1 > "$tmp/out" 2>&1 || fail "status j1: exit $?"
grep -qF "job 1 'j1' (adhoc): done" "$tmp/out" && grep -qF "runs: 1/1 done: 1 ok, 0 failed" "$tmp/out" ||
	fail "status j1 says: $(cat "$tmp/out")"
rc=0; $KC status nosuch > "$tmp/out" 2>&1 || rc=$?
[ $rc = 1 ] || fail "status of an unknown job: exit $rc"

# README's first run: the loop as README gives it, then its pasted output
readme=${README:-README.md}
loop=$(sed -n '/^    for mode in removed alive; do$/,/^    done$/s/^    //p' "$readme")
[ -n "$loop" ] || fail "$readme has no first-run ingest loop"
# block CMD: the fenced block README shows after the command line CMD,
# without a closing '...' line
block() {
	awk -v cmd="    $1" '$0 == cmd { f = 1; next }
		f == 1 && /^```/ { f = 2; next }
		f == 2 && /^```/ { exit }
		f == 2 { print }' "$readme" | sed '${/^\.\.\.$/d}'
}
mkdir -p "$tmp/first"
(export KCANARY_HOME=$tmp/first PATH=$PWD/$B:$PATH; eval "$loop") > "$tmp/out" 2>&1 ||
	fail "README's ingest loop: $(tail -n 3 "$tmp/out")"
[ "$(grep -c ': ok, ' "$tmp/out")" = 6 ] || fail "README's loop stored: $(cat "$tmp/out")"
# a time (the jobs' started column) is the day README was written: any time matches
stamp() { sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z/YYYY-MM-DDTHH:MM:SSZ/g'; }
for cmd in "kcanary jobs" "kcanary report first-run --by mode"; do
	block "$cmd" | stamp > "$tmp/want"
	[ -s "$tmp/want" ] || { fail "$readme shows no output for '$cmd'"; continue; }
	KCANARY_HOME=$tmp/first $KC ${cmd#kcanary } 2>&1 | head -n "$(wc -l < "$tmp/want")" | stamp > "$tmp/got"
	diff -u "$tmp/want" "$tmp/got" || fail "'$cmd' does not print what $readme shows"
done

# doctor: all checks pass here (make deps); with mkfs.xfs hidden it fails
# that check, says the fix and exits 1
$KC doctor > "$tmp/doctor" 2>&1 || fail "doctor on this host: exit $?: $(tail -n 5 "$tmp/doctor")"
grep -qF "all checks passed" "$tmp/doctor" || fail "doctor did not say all checks passed"
x=$(command -v mkfs.xfs)
rc=0; unshare -m sh -c "mount --bind /dev/null $x && $KC doctor" > "$tmp/doctor" 2>&1 || rc=$?
{ [ $rc = 1 ] && grep -Eq '^FAIL +mkfs.xfs +missing' "$tmp/doctor" &&
	grep -Eq 'fix: +apt-get install .*xfsprogs' "$tmp/doctor"; } ||
	fail "doctor with mkfs.xfs hidden: exit $rc: $(grep -A1 mkfs.xfs "$tmp/doctor")"

echo "cli readme: $fails failed"
[ $fails = 0 ]
