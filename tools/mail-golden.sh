#!/bin/sh
# mail-golden.sh - write the git mailinfo view of each fixture mail next to
# it (NN.mailinfo-patch), the independent reference the series tests compare
# our diff against. Run from the repository root after adding a fixture:
#   sh tools/mail-golden.sh tests/fixtures/mail/*/[0-9]*.eml
set -e
for f in "$@"; do
	out=${f%.eml}.mailinfo-patch
	tmp=$(mktemp -d)
	git mailinfo --quoted-cr=strip "$tmp/msg" "$out" < "$f" > "$tmp/info"
	rm -rf "$tmp"
done
