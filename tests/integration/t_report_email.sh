#!/bin/sh
# t_report_email.sh - report --format email (issue 35 item 7b): the job is
# named once; the reply goes To the series mail's From and Cc its To and
# Cc; "measured vN of this series" only when a variant of the job applied
# that revision (its stored spec names the series file and the revision),
# else the mail says the job did not apply it. Runs are ingested (no
# guest); the series is tests/fixtures/mail/A1-memcg-vmscan-tracepoints-v3
# (its 00.eml: From Dev One <dev1@example.org>, To dev2..dev9, Cc
# dev10, dev11, cgroups@vger.kernel.org, ...); names outside ASCII are
# RFC 2047 encoded words (C4a's Karel Novák).
set -u
B=${B:-build}
KC=$PWD/$B/kcanary
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export KCANARY_HOME=$tmp/home
mkdir -p "$KCANARY_HOME"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
COVER=$PWD/tests/fixtures/mail/A1-memcg-vmscan-tracepoints-v3/00.eml
S=tests/fuzz/ingest/seed-stream.jsonl

$KC ingest --job wb-v6 --variant base $S > /dev/null 2>&1 &&
	$KC ingest --job wb-v6 --variant patched $S > /dev/null 2>&1 || fail "ingest"
# the opening paragraph: "Hi," to the table
opening() { sed -n '/^Hi,$/,/^Worst lag/p' "$tmp/mail.txt" | sed '$d'; }
mail() { $KC report wb-v6 --format email "$@" > "$tmp/mail.txt" 2>&1 || fail "report --format email $*: $(cat "$tmp/mail.txt")"; }
# the headers unfolded, as a mail reader reads them
hdr() { sed '/^$/q' "$tmp/mail.txt" | awk '/^[ \t]/ { sub(/^[ \t]+/, " "); line = line $0; next }
	{ if (line != "") print line; line = $0 } END { if (line != "") print line }' | grep "^$1: "; }

# a job that applied no series, replying to v3's thread
mail --series "$COVER"
[ "$(opening | grep -o "wb-v6" | wc -l)" = 1 ] || fail "the opening names the job more than once: $(opening)"
grep -qx "kcanary measured job 'wb-v6' (2 runs, 2 ok). The job did not apply v3 of" "$tmp/mail.txt" ||
	fail "no 'did not apply v3': $(sed -n '/^Hi,/,/^$/!p' "$tmp/mail.txt" | sed -n 1,3p)"
! grep -q "measured v3 of this series" "$tmp/mail.txt" || fail "claims v3 for a job that did not apply it"
[ "$(hdr To)" = "To: Dev One <dev1@example.org>" ] || fail "To: '$(hdr To)'"
for a in dev2@example.org dev9@example.org dev10@example.org cgroups@vger.kernel.org \
		linux-kernel@vger.kernel.org bpf@vger.kernel.org; do
	hdr Cc | grep -qF "$a" || fail "Cc has no $a: '$(hdr Cc)'"
done
sed '/^$/q' "$tmp/mail.txt" | awk 'length($0) > 78 { exit 1 }' || fail "a header line over 78 columns"
# git mailinfo (what git am and send-email read) takes its headers
printf 'From: kcanary <kcanary@example.invalid>\n' | cat - "$tmp/mail.txt" > "$tmp/mail.eml"
git mailinfo -k "$tmp/m" "$tmp/p" < "$tmp/mail.eml" > "$tmp/info" || fail "git mailinfo"
grep -q '^Subject: Re: \[PATCH v3 0/2\]' "$tmp/info" || fail "git mailinfo: $(cat "$tmp/info")"

# a name outside ASCII (C4a: From Karel Novák, RFC 2047 in the series
# mail): the reply's To is ASCII, an encoded word that python3's email
# package (not kcanary) decodes back to the name
mail --series "$PWD/tests/fixtures/mail/C4a-rfc2047-utf8-q-author/01.eml"
sed '/^$/q' "$tmp/mail.txt" | LC_ALL=C grep -q '[^ -~	]' && fail "raw 8-bit bytes in the headers: $(sed '/^$/q' "$tmp/mail.txt")"
to=$(hdr To | python3 -c 'import sys, email.header as h
v = sys.stdin.read().strip()[len("To: "):]
print(str(h.make_header(h.decode_header(v))))')
[ "$to" = "Karel Novák <dev17@example.org>" ] || fail "To decodes to '$to' ($(hdr To))"
hdr Cc | grep -qF "linux-hardening@vger.kernel.org" || fail "C4a's Cc: '$(hdr Cc)'"
sed '/^$/q' "$tmp/mail.txt" | awk 'length($0) > 78 { exit 1 }' || fail "a header line over 78 columns (C4a)"

# the patched variant applied v3 (its stored spec names the file): claimed
DB=$KCANARY_HOME/kcanary.db
sqlite3 "$DB" "UPDATE variants SET spec_json = '{\"kind\":\"series\",\"base\":\"v6.12\",\"series\":\"$COVER\"}' WHERE name = 'patched'"
mail --series "$COVER"
grep -qx "kcanary measured v3 of this series (job 'wb-v6', 2 runs, 2 ok):" "$tmp/mail.txt" ||
	fail "no v3 claim for the job that applied it: $(grep measured "$tmp/mail.txt")"
[ "$(opening | grep -o "wb-v6" | wc -l)" = 1 ] || fail "the opening names the job more than once: $(opening)"
# ... and without --series the thread is the job's own (its spec's series)
# only when the spec names one; this job's spec names none
mail
grep -qx "kcanary measured job 'wb-v6' (2 runs, 2 ok):" "$tmp/mail.txt" ||
	fail "no series: $(grep measured "$tmp/mail.txt")"
! grep -q '^To: ' "$tmp/mail.txt" || fail "a To: without a thread"

# another revision (v2) of it: not claimed
sqlite3 "$DB" "UPDATE variants SET spec_json = '{\"kind\":\"series\",\"base\":\"v6.12\",\"series\":\"$COVER\",\"version\":2}' WHERE name = 'patched'"
mail --series "$COVER"
grep -q "The job did not apply v3 of" "$tmp/mail.txt" || fail "v2's job claims v3: $(grep measured "$tmp/mail.txt")"
# its series gone: said, not claimed
sqlite3 "$DB" "UPDATE variants SET spec_json = '{\"kind\":\"series\",\"base\":\"v6.12\",\"series\":\"$tmp/gone.eml\"}' WHERE name = 'patched'"
mail --series "$COVER"
grep -q "Whether it applied v3 of" "$tmp/mail.txt" && grep -qF "variant 'patched'" "$tmp/mail.txt" ||
	fail "an unreadable series: $(sed -n '/^Hi,/,/^Worst/p' "$tmp/mail.txt")"

echo "report email: $fails failed"
[ $fails = 0 ]
