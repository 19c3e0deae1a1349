#!/bin/sh
# t_series_b4.sh - b4 as the reference: for every mail set in
# tests/fixtures/mail (the real mails of ../shared/inputs/mail), `b4 am`
# (offline, no cache, the set as a local mbox) writes its .mbx, and the
# patches kcanary reads from the same mails must match it: subject,
# author, trailers and the diff bytes, each b4 message read by git
# mailinfo (b4_compare.py). The sets b4 does not read, and the one place
# kcanary reads differently on purpose, are named below with the reason.
# Exit 77 when b4 is not installed.
K=$(realpath "${B:-build}/kcanary")
M=$(realpath tests/fixtures/mail)
CMP=$(realpath tests/integration/b4_compare.py)
command -v b4 >/dev/null || { echo "SKIP: b4 is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME=$tmp XDG_CACHE_HOME=$tmp/cache XDG_CONFIG_HOME=$tmp/config
# b4 am stops without a git identity (it would add one's Signed-off-by)
git config --global user.name "kcanary test"
git config --global user.email test@example.invalid
fail() { echo "FAIL: $*"; cat "$tmp/out" "$tmp/err" 2>/dev/null | head -c 3000; exit 1; }

# The set's messages as one mboxrd, as a list archive would give them.
mbox() {
	for f in "$@"; do
		echo "From mboxrd@z Thu Jan  1 00:00:00 1970"
		sed 's/^\(>*From \)/>\1/' "$f"
		echo
	done
}

compared=0
for d in "$M"/*/; do
	name=$(basename "$d")
	expect=
	case $name in
	# b4 0.12 stops on it: Python's email policy refuses the folded
	# Thread-Topic header ("Header values may not contain linefeed")
	C2-base64-singlepart-crlf) continue ;;
	# a reply carrying the patch as an attachment: b4 takes no patch from
	# it ("No patches found"); kcanary takes the attachment (t_series_show)
	C3-multipart-mixed-patch-attachment) continue ;;
	# a test robot's report, not a patch: neither finds a patch
	D1-lkp-vm-scalability-regression) continue ;;
	# git mailinfo (and so b4) takes the prose before the embedded
	# format-patch as the message, so no trailers; kcanary takes the
	# embedded real message, with its Signed-off-by, and warns (INDEX.md)
	C7c-embedded-format-patch) expect=trailers ;;
	esac
	rm -rf "$tmp/b4" && mkdir -p "$tmp/b4"
	mbox "$d"*.eml >"$tmp/in.mbox"
	b4 --offline-mode am -C -m "$tmp/in.mbox" -o "$tmp/b4" >"$tmp/err" 2>&1 ||
		fail "$name: b4 am exited $?"
	mbx=$(ls "$tmp"/b4/*.mbx 2>/dev/null)
	[ -n "$mbx" ] || fail "$name: b4 wrote no .mbx"
	$K series show --format json "$d"*.eml >"$tmp/k.json" 2>"$tmp/err" ||
		fail "$name: kcanary series show exited $?"
	python3 "$CMP" "$tmp/k.json" "$mbx" $expect >"$tmp/out" 2>&1 || fail "$name: kcanary and b4 differ"
	[ -s "$tmp/out" ] && sed "s/^/$name: /" "$tmp/out"
	compared=$((compared + 1))
done
[ "$compared" = 15 ] || fail "compared $compared mail sets, expected 15"

# trailers given in replies (tests/fixtures/mail-replies: to A1 v3's 1/2
# and to its cover): b4 am -t adds them, a cover's to every patch
rm -rf "$tmp/b4" && mkdir -p "$tmp/b4"
mbox "$M"/A1-memcg-vmscan-tracepoints-v3/*.eml "$M"/../mail-replies/a1-v3-*.eml >"$tmp/in.mbox"
b4 --offline-mode am -t -C -m "$tmp/in.mbox" -o "$tmp/b4" >"$tmp/err" 2>&1 || fail "A1 v3 + replies: b4 am"
mbx=$(ls "$tmp"/b4/*.mbx)
grep -q '^Reviewed-by: Dev Nine <dev9@example.org>$' "$mbx" || fail "b4 did not collect the review"
$K series show --format json "$M"/A1-memcg-vmscan-tracepoints-v3/*.eml "$M"/../mail-replies/a1-v3-*.eml \
	>"$tmp/k.json" 2>"$tmp/err" || fail "A1 v3 + replies: series show"
python3 "$CMP" "$tmp/k.json" "$mbx" >"$tmp/out" 2>&1 || fail "A1 v3 + replies: kcanary and b4 differ"
# the expected difference is still there, and kcanary says why
$K series show "$M"/C7c-embedded-format-patch/01.eml >"$tmp/out" 2>&1
grep -q "warning: .*format-patch" "$tmp/out" || fail "C7c warning"
echo "PASS: t_series_b4 ($compared mail sets match b4 am)"
