#!/bin/sh
# t_serve_cli.sh - kcanary serve's start-up mistakes, on loopback, no guest
# (--no-exec): a busy port is said with its address and what to do, never
# as libmicrohttpd's "Failed to bind to port 0"; a --home that names no
# directory (a typo) is refused and creates nothing, as the reading
# commands refuse a home without a store; an existing empty directory
# still gets a new store (a fleet's first run).
set -u
B=${B:-build}
KC=$PWD/$B/kcanary
tmp=$(mktemp -d)
spid=
trap '[ -z "$spid" ] || kill $spid 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
export KCANARY_HOME=$tmp/home
mkdir -p "$KCANARY_HOME"

# a first server on a free port, then a second on the same port
$KC serve --no-exec --listen 127.0.0.1:0 > "$tmp/serve.out" 2> "$tmp/serve.log" &
spid=$!
url=$(sh tools/serve-url.sh "$tmp/serve.out" $spid) || { cat "$tmp/serve.log"; echo "FAIL: serve did not start"; exit 1; }
addr=${url#http://}
rc=0; timeout 20 $KC serve --no-exec --listen "$addr" > "$tmp/out" 2>&1 || rc=$?
[ $rc = 1 ] || fail "second serve on $addr: exit $rc, expected 1"
grep -qF "cannot listen on '$addr': Address already in use" "$tmp/out" ||
	fail "second serve on $addr does not name the busy address: $(cat "$tmp/out")"
grep -qF -- "--listen HOST:PORT" "$tmp/out" ||
	fail "second serve on $addr does not say what to do: $(cat "$tmp/out")"
! grep -q 'to port 0' "$tmp/out" || fail "second serve says 'to port 0': $(cat "$tmp/out")"
kill $spid; wait $spid 2>/dev/null; spid=

# serve --home (its own flag and kcanary's) naming no directory: refused
for args in "serve --home $tmp/typo" "--home $tmp/typo serve"; do
	# shellcheck disable=SC2086 # args is a word list on purpose
	rc=0; timeout 20 $KC $args --no-exec --listen 127.0.0.1:0 > "$tmp/out" 2>&1 || rc=$?
	[ $rc = 1 ] || fail "kcanary $args: exit $rc, expected 1: $(cat "$tmp/out")"
	grep -qF "kcanary serve: no store at '$tmp/typo/kcanary.db' (--home)" "$tmp/out" ||
		fail "kcanary $args: no refusal naming the home: $(cat "$tmp/out")"
	[ ! -e "$tmp/typo" ] || { fail "kcanary $args created $tmp/typo"; rm -rf "$tmp/typo"; }
done

# an existing empty directory: a new store, served
mkdir "$tmp/fresh"
$KC serve --home "$tmp/fresh" --no-exec --listen 127.0.0.1:0 > "$tmp/serve.out" 2> "$tmp/serve.log" &
spid=$!
sh tools/serve-url.sh "$tmp/serve.out" $spid > /dev/null || fail "serve --home (empty dir) did not start: $(cat "$tmp/serve.log")"
[ -e "$tmp/fresh/kcanary.db" ] || fail "serve --home (empty dir) made no store"
kill $spid; wait $spid 2>/dev/null; spid=

echo "serve cli: $fails failed"
[ $fails = 0 ]
