#!/bin/sh
# t_cli_readme.sh - README claims of the everyday commands that no other
# test backed: `token create/list/remove` (the secret printed once, only
# its name listed, a removed token gone, removing it again an error naming
# it), `jobs` and `status` of a stored job, and `kcanary doctor` "checks
# every prerequisite and says how to fix what is missing" (mkfs.xfs
# hidden in a private mount namespace: FAIL, the fix, exit 1). doctor
# boots a guest for its channel check: run under the integration flock.
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
