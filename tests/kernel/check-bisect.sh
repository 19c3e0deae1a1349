#!/bin/sh
# check-bisect.sh - the slow real bisection behind `make check-bisect` (not
# part of `make test`; hours of kernel builds on a 2-core machine): import
# Debian's linux-source-6.12 (6.12.117, now 6.12.118), make a linear history of real
# commits from mailed series on it, with v6 2/3 of the seed series
# ("writeback: let foreign flushes reach dying cgwbs") in the middle:
#
#   the release (old end: foreign flushes to a dying cgwb go to id -2)
#   + memcg clean-up v2 (A2, 4 patches)
#   + seed v6 2/3       (the fix)
#   + memcg/vmscan tracepoints v3 (A1, 2 patches)   (new end)
#
# then `kcanary bisect --find-fix --metric probe:cgroup_writeback_by_id:-2
# --set mode=removed` over it; it must name the seed patch. Prints the
# builds, boots, runs and wall time. Exit 0 pass, 77 skip (no tarball),
# else fail.
#
# Knobs (environment): KERNEL_TARBALL, KERNEL_REPO (its work tree is
# replaced by the import), KCANARY_HOME, MAIL_DIR, V6_MBOX, BISECT_ARGS
# (extra arguments for kcanary bisect, e.g. "--strategy adaptive"), KNOBS
# (workload knobs; the default scales wb-handover down so a TCG run takes
# about a minute: 16 MiB/s, 64 files, 20 s old writer, 30 s measured).
set -u
B=${B:-build}
KC="$PWD/$B/kcanary"
TARBALL=${KERNEL_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
REPO=${KERNEL_REPO:-/var/tmp/kcanary/linux}
export KCANARY_HOME=${KCANARY_HOME:-/var/tmp/kcanary/home}
MAIL_DIR=${MAIL_DIR:-/work/shared/inputs/mail}
[ -d "$MAIL_DIR/A2-memcg-cleanup-next-v2" ] || MAIL_DIR=tests/fixtures/mail
V6=${V6_MBOX:-/work/shared/inputs/series/wb-dying-cgwb-flush-v6.mbox}
[ -r "$V6" ] || V6=$MAIL_DIR/wb-dying-cgwb-flush-v6.mbox
KNOBS=${KNOBS:---set rate_mbps=16 --set nfiles=64 --set pod_max=256M --set old_s=20 --set measure_s=30}

[ -r "$TARBALL" ] || { echo "SKIP: $TARBALL missing (apt-get install linux-source-6.12)"; exit 77; }
[ -r "$V6" ] || { echo "FAIL: no seed series mbox (V6_MBOX)"; exit 1; }
sh tools/libvirtd-up.sh -q || { echo "FAIL: no libvirt daemon"; exit 1; }

echo "== import $TARBALL into $REPO"
imp=$("$KC" tree import "$TARBALL" --repo "$REPO") || exit 1
echo "$imp"
# the point release the tarball holds (6.12.117 when this was written,
# 6.12.118 since 2026-12); KERNEL_BASE overrides
BASE=${KERNEL_BASE:-$(echo "$imp" | sed -n 's/^[a-z]* [0-9a-f]* tag \(v[0-9.]*\)$/\1/p')}
[ -n "$BASE" ] || { echo "FAIL: no release tag in the import's output: $imp"; exit 1; }

# apply BASE ARGS... : apply mails on BASE, print the new tip (the last
# "applied <commit>" line); fail when any patch does not apply.
apply() {
	base=$1
	shift
	out=$("$KC" series apply --repo "$REPO" --base "$base" "$@" 2>&1) ||
		{ printf '%s\n' "$out" >&2; echo "FAIL: series apply $*" >&2; exit 1; }
	printf '%s\n' "$out" >&2
	printf '%s\n' "$out" | sed -n 's/^.* applied \([0-9a-f]\{40\}\)$/\1/p' | tail -n 1
}

echo "== history"
t1=$(apply "$BASE" "$MAIL_DIR"/A2-memcg-cleanup-next-v2/*.eml) || exit 1
fix=$(apply "$t1" --patches 2 "$V6") || exit 1
tip=$(apply "$fix" "$MAIL_DIR"/A1-memcg-vmscan-tracepoints-v3/*.eml) || exit 1
[ -n "$t1" ] && [ -n "$fix" ] && [ -n "$tip" ] || { echo "FAIL: no commits made"; exit 1; }
echo "fix (v6 2/3): $fix; new end: $tip"

echo "== bisect (find-fix: the old end is bad)"
t0=$(date +%s)
# shellcheck disable=SC2086 # KNOBS and BISECT_ARGS are word lists
"$KC" bisect --repo "$REPO" --bad "$BASE" --good "$tip" --find-fix \
	--metric probe:cgroup_writeback_by_id:-2 --set mode=removed --fs ext4 \
	$KNOBS ${BISECT_ARGS:-} > /tmp/kc-check-bisect.txt
rc=$?	# kcanary's status (a pipe into tee would give tee's)
cat /tmp/kc-check-bisect.txt
echo "wall: $(( $(date +%s) - t0 )) s"
grep '^totals:' /tmp/kc-check-bisect.txt
if [ $rc = 0 ] && grep -A1 '^culprit (p' /tmp/kc-check-bisect.txt | grep -q "commit $fix " &&
   ! grep -q 'FAILED the culprit check' /tmp/kc-check-bisect.txt; then
	echo "PASS bisect names the seed patch $fix"
	exit 0
fi
echo "FAIL bisect did not name the seed patch $fix (exit $rc)"
exit 1
