#!/bin/sh
# The scratch disk is sized from the knobs (issue 35, item 8), and a run
# that cannot fit is refused before anything is stored or booted: host
# only, no guest. The sizes are worked by hand in tests/unit/test_scratch.c
# (the seed's knobs with measure_s=10 write 10002 MiB: a 12 GiB disk; with
# measure_s=300, 82502 MiB: 92 GiB, above the 64 GiB cap).
set -eu
B=${B:-build}
KC=$PWD/$B/kcanary
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export KCANARY_HOME=$tmp/home
mkdir -p "$KCANARY_HOME"
: > "$tmp/bzImage"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# what the agent says the newcomer's first boot writes: 10002 MiB in 1000 files
reply=$($B/kcanary-agent check wb-handover measure_s=10 --json)
case $reply in
*'"disk_bytes":10487857152,"disk_files":1000,"disk_knobs":"rate_mbps, old_s, measure_s"'*) ;;
*) fail "agent check said: $reply" ;;
esac

refused() {	# refused EXPECTED-LINE ARGS...: exit 2 with that line, nothing stored
	w=$1; shift
	rc=0; $KC boot --kernel "$tmp/bzImage" "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
	[ $rc = 2 ] || fail "kcanary boot $* exited $rc, not 2"
	[ "$(head -n 1 "$tmp/err")" = "$w" ] || fail "kcanary boot $* said: $(cat "$tmp/err")"
	n=0
	[ ! -e "$KCANARY_HOME/kcanary.db" ] ||
		n=$(sqlite3 "$KCANARY_HOME/kcanary.db" 'SELECT count(*) FROM runs')
	[ "$n" = 0 ] || fail "kcanary boot $* stored $n runs"
	echo "refused: $(head -n 1 "$tmp/err")"
}
refused "kcanary boot: scratch disk: the workload writes up to 80.6 GiB in 1000 files, so its ext4 disk needs 92 GiB, above the 64 GiB a disk is sized to by itself: lower rate_mbps, old_s, measure_s (--set KNOB=VALUE), or give the size by name (kcanary boot --disk 92G)" \
	--set measure_s=300
refused "kcanary boot: scratch disk: --disk 4.0 GiB cannot hold the 9.8 GiB the workload writes in 1000 files (its ext4 disk needs 12 GiB with the filesystem's headroom): give --disk 12G or lower rate_mbps, old_s, measure_s (--set KNOB=VALUE)" \
	--disk 4G --set measure_s=10
[ $fails = 0 ] || exit 1
echo "t_boot_disk: ok"
