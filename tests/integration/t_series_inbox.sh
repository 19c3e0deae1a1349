#!/bin/sh
# t_series_inbox.sh - series by message-id from a real public-inbox
# (Debian's public-inbox: -init, -mda, -index, -httpd on loopback) holding
# three revisions of A1 and two of A2 (tests/fixtures/mail, INDEX.md there
# says what each should give): `series show MSGID` (-v N), `series
# revisions`, `series diff` (patch-id, subject, content), `series apply
# MSGID`; then the same again with the server stopped, from the store.
# Any other host is unreachable (a proxy that refuses), so nothing leaves
# the machine. Exit 77 when public-inbox is not installed.
K=$(realpath "${B:-build}/kcanary")
M=$(realpath tests/fixtures/mail)
PORT=${KC_INBOX_PORT:-18101}
command -v public-inbox-httpd >/dev/null || { echo "SKIP: public-inbox is not installed"; exit 77; }
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
out=$tmp/out err=$tmp/err
fail() { echo "FAIL: $*"; head -c 3000 "$out"; cat "$err"; exit 1; }

export HOME=$tmp PI_CONFIG=$tmp/pi-config KCANARY_HOME=$tmp/kc
export KCANARY_PUBLIC_INBOX=http://127.0.0.1:$PORT/kc
export http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 no_proxy=127.0.0.1
mkdir -p "$KCANARY_HOME"
public-inbox-init -V2 -L full kc "$tmp/kc.git" "$KCANARY_PUBLIC_INBOX" kc@example.invalid \
	>"$err" 2>&1 || fail "public-inbox-init"
git config -f "$PI_CONFIG" publicinboxmda.spamcheck none
for f in "$M"/A1-*/*.eml "$M"/A2-*/*.eml "$M"/../mail-replies/a1-v3-*.eml; do
	ORIGINAL_RECIPIENT=kc@example.invalid public-inbox-mda --no-precheck <"$f" 2>>"$err" ||
		fail "public-inbox-mda $f"
done
public-inbox-index "$tmp/kc.git" >>"$err" 2>&1 || fail "public-inbox-index"
public-inbox-httpd -W0 -l "http://127.0.0.1:$PORT" >"$tmp/httpd.log" 2>&1 &
pid=$!
for _ in $(seq 50); do
	curl -sf -o /dev/null "$KCANARY_PUBLIC_INBOX/" && break
	sleep 0.2
done
curl -sf -o /dev/null "$KCANARY_PUBLIC_INBOX/" || { cat "$tmp/httpd.log"; fail "httpd did not answer"; }

A1V1=20231101102837.25205-1-dev1@example.org
A1V3=20231123193937.11628-1-dev1@example.org
A2V2=20250114122519.1404275-1-dev12@example.org

checks() {
	# every form of reference names the same thread
	for ref in "<$A1V3>" "$A1V3" "https://lore.kernel.org/r/$A1V3" \
		   "https://lore.kernel.org/linux-mm/$A1V3/" "patch.msgid.link/$A1V3" \
		   "https://lore.kernel.org/all/20231123193937.11628-1-dev1%40example.org/T/"; do
		$K series show "$ref" >"$out" 2>"$err" || fail "$1: show '$ref' exited $?"
		grep -q '^series mm-memcg-improve-vmscan-tracepoints v3: 2 patches$' "$out" ||
			fail "$1: show '$ref'"
	done
	grep -q '^  \[1/2\] mm: memcg: print out cgroup ino in the memcg tracepoints$' "$out" ||
		fail "$1: v3 1/2 subject"
	[ "$(grep -c '^        author:  Dev One <dev1@example.org>$' "$out")" = 2 ] || fail "$1: author"
	# trailers given in replies (tests/fixtures/mail-replies): to 1/2, and
	# to the cover for both; the quoted Signed-off-by is not one
	[ "$(grep -c '^        Acked-by: Dev Seven <dev7@example.com> (in reply <20231124194012.GA1234@host7.example.net>)$' "$out")" = 2 ] ||
		fail "$1: Acked-by from the reply to the cover"
	[ "$(grep -c '^        Reviewed-by: Dev Nine <dev9@example.org> (in reply <ZWBoLzPCmG8vTj2a@host9.example.net>)$' "$out")" = 1 ] ||
		fail "$1: Reviewed-by from the reply to 1/2"
	# -v picks a revision of the thread; the thread of v3 holds only v3
	$K series show -v 3 "$A1V3" >"$out" 2>"$err" || fail "$1: -v 3"
	$K series show -v 2 "$A1V3" >"$out" 2>"$err" && fail "$1: -v 2 of v3's thread should fail"
	grep -q -- "-v 2: the thread of <$A1V3> has v3" "$err" || fail "$1: -v 2 message"

	# revisions: v1 by the cover's link, v2 by the subject search, and the
	# v2 posting v3 links to that is not on this server
	$K series revisions "$A1V3" >"$out" 2>"$err" || fail "$1: revisions exited $?"
	grep -q "^v1 .*<$A1V1>  linked from v3's cover$" "$out" || fail "$1: v1 by link"
	grep -q '^v2 .*<20231122100156.6568-1-dev1@example.org>  search s:"mm: memcg: improve vmscan tracepoints"$' \
		"$out" || fail "$1: v2 by search"
	grep -q "^v3 .*<$A1V3>  given$" "$out" || fail "$1: v3 given"
	grep -q "^v?   <20231123071945.25811-1-dev1@example.org>  not on the server (linked from v3's cover)$" \
		"$out" || fail "$1: the missing v2 posting"
	[ "$(wc -l <"$out")" = 4 ] || fail "$1: 4 rows"

	# diff: every A1 patch changed between every pair (INDEX.md)
	for pair in "v1 v2" "v2 v3" "v1 v3"; do
		# shellcheck disable=SC2086
		$K series diff "$A1V1" $pair >"$out" 2>"$err" || fail "$1: diff $pair exited $?"
		tail -1 "$out" | grep -q '^0 unchanged, 2 changed, 0 dropped, 0 new$' || fail "$1: A1 $pair"
	done
	grep -q '^  1:  ba9aab74 !   1:  0d7640f9 mm: memcg: print out cgroup ino in the memcg tracepoints  (matched by content)$' \
		"$out" || fail "$1: A1 v1 1/2 -> v3 1/2"
	grep -q '^    -mm: memcg: print out cgroup name in the memcg tracepoints$' "$out" || fail "$1: interdiff"
	# A2: 3 unchanged (git patch-id --stable), 2 dropped, 1 new
	$K series diff "$A2V2" v1 v2 >"$out" 2>"$err" || fail "$1: A2 diff exited $?"
	tail -1 "$out" | grep -q '^3 unchanged, 0 changed, 2 dropped, 1 new$' || fail "$1: A2 counts"
	grep -q '^  5:  3d9e372d =   4:  3d9e372d memcg: factor out stat' "$out" || fail "$1: A2 5/5 = 4/4"
	grep -q '^  -:  -------- >   3:  f5b8b490 memcg: factor out the replace_stock_objcg function$' \
		"$out" || fail "$1: A2 new 3/4"

	# apply takes a message-id too (an empty tree: both patches fail, but
	# the revision was read from the thread)
	$K series apply --repo "$tmp/tree" --base HEAD "$A1V3" >"$out" 2>"$err"
	grep -q '^series mm-memcg-improve-vmscan-tracepoints v3 (2 patches) on ' "$out" ||
		fail "$1: apply MSGID"
	# and build, the path compare's executor takes (the series is read
	# from the thread; its patches cannot apply to the empty tree)
	$K build --repo "$tmp/tree" --base HEAD --series "patch.msgid.link/$A1V3" >"$out" 2>"$err"
	grep -q "^mm-memcg-improve-vmscan-tracepoints v3 .* apply-failed" "$out" || fail "$1: build --series MSGID"
	grep -q "cannot apply patch 1/2 'mm: memcg: print out cgroup ino in the memcg tracepoints'" "$out" ||
		fail "$1: build --series MSGID: the patch tried"
	# compare names the variant by the message-id
	$K compare --repo "$tmp/tree" --base HEAD --series "https://lore.kernel.org/r/$A1V3" --dry-run \
		>"$out" 2>"$err" || fail "$1: compare --dry-run"
	grep -q "^  variant 1: + <$A1V3>$" "$out" || fail "$1: compare variant"
	# --all-revisions: one variant per revision `series revisions` finds
	# (v1 by link, v2 by search; the v2 posting not on the server left out)
	$K compare --repo "$tmp/tree" --base HEAD --series "$A1V3" --all-revisions --dry-run \
		>"$out" 2>"$err" || fail "$1: compare --all-revisions exited $?"
	grep -q '^job .*: 4 variants x 1 cell x 3 repeats = 12 runs' "$out" || fail "$1: all-revisions count"
	for v in 1 2 3; do
		grep -q "^  variant $v: + v$v$" "$out" || fail "$1: all-revisions variant v$v"
	done
	grep -q "<20231123071945.25811-1-dev1@example.org> .*not on the server: left out" "$err" ||
		fail "$1: all-revisions says what it left out"
	# -v N pins a revision of the thread for compare and build
	$K compare --repo "$tmp/tree" --base HEAD --series "$A1V3" -v 3 --dry-run >"$out" 2>"$err" ||
		fail "$1: compare -v 3 exited $?"
	grep -q '^  variant 1: + v3$' "$out" || fail "$1: compare -v 3"
	$K compare --repo "$tmp/tree" --base HEAD --series "$A1V3" -v 2 --dry-run >"$out" 2>"$err" &&
		fail "$1: compare -v 2 of v3's thread should fail"
	grep -q -- "-v 2: the thread of <$A1V3> has v3" "$err" || fail "$1: compare -v 2 message"
	$K compare --repo "$tmp/tree" --base HEAD --series 20231122100156.6568-1-dev1@example.org \
		-v 2 --dry-run >"$out" 2>"$err" || fail "$1: compare -v 2 exited $?"
	grep -q '^  variant 1: + v2$' "$out" || fail "$1: compare -v 2"
	$K build --repo "$tmp/tree" --base HEAD -v 2 --series "$A1V3" >"$out" 2>"$err" &&
		fail "$1: build -v 2 of v3's thread should fail"
	grep -q -- "-v 2: the thread of <$A1V3> has v3" "$err" || fail "$1: build -v 2 message"
	# --base auto says plainly that A1 names no base-commit
	for cmd in "compare --dry-run" build; do
		# shellcheck disable=SC2086
		$K $cmd --repo "$tmp/tree" --base auto --series "$A1V3" >"$out" 2>"$err" &&
			fail "$1: $cmd --base auto without a base-commit should fail"
		grep -q -- "--base auto: series mm-memcg-improve-vmscan-tracepoints v3 names no base-commit (give --base REV)" \
			"$err" || fail "$1: $cmd --base auto message"
	done
}

git init -q "$tmp/tree" && echo x >"$tmp/tree/README" &&
	git -C "$tmp/tree" add README && git -C "$tmp/tree" -c user.name=t -c user.email=t@t commit -qm init ||
	fail "test tree"
checks "served"
n=$(sqlite3 "$KCANARY_HOME/kcanary.db" "SELECT count(*) FROM inbox_cache")
[ "$n" -ge 5 ] || fail "kept answers: $n"

# a reply arrives after the thread was kept: seen only after --refresh
# (written for this test: tests/fixtures/mail-replies/README)
ORIGINAL_RECIPIENT=kc@example.invalid public-inbox-mda --no-precheck \
	<"$M/../mail-replies/late-a1-v3-00-tested.eml" 2>>"$err" || fail "public-inbox-mda late reply"
public-inbox-index "$tmp/kc.git" >>"$err" 2>&1 || fail "public-inbox-index late reply"
curl -sf "$KCANARY_PUBLIC_INBOX/$A1V3/t.mbox.gz" | gzip -dc | grep -q '^Tested-by: Dev Ten' ||
	fail "the server does not serve the late reply"
tested='^        Tested-by: Dev Ten <dev10@example.org> (in reply <20231127081244.GB5678@host10.example.org>)$'
$K series show "$A1V3" >"$out" 2>"$err" || fail "show before refresh exited $?"
grep -q "$tested" "$out" && fail "the kept copy cannot have the late reply"
$K series show --refresh "$A1V3" >"$out" 2>"$err" || fail "show --refresh exited $?"
[ "$(grep -c "$tested" "$out")" = 2 ] || fail "--refresh: the late Tested-by on both patches"
$K series show "$A1V3" >"$out" 2>"$err" || fail "show after refresh exited $?"
[ "$(grep -c "$tested" "$out")" = 2 ] || fail "the refreshed copy replaced the kept one"

# the server stops: everything again, from the store
kill "$pid"; wait "$pid" 2>/dev/null; pid=
curl -s -o /dev/null "$KCANARY_PUBLIC_INBOX/" && fail "the server still answers"
checks "kept"
# a message never fetched is an error naming the server
$K series show "<never-fetched@example.org>" >"$out" 2>"$err" && fail "unfetched should fail"
grep -q "cannot fetch message <never-fetched@example.org> from 'http://127.0.0.1:$PORT/kc/never-fetched%40example.org/t.mbox.gz'" \
	"$err" || fail "unfetched message"
echo "PASS: t_series_inbox"
