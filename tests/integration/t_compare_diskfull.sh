#!/bin/sh
# t_compare_diskfull.sh - the store's disk fills during a compare (issue
# 18): $KCANARY_HOME is a 160 MiB tmpfs in a private mount namespace
# (unshare -m; the guests run on a private libvirtd, tools/libvirtd-tcp.sh,
# which is sent every file). (1) Full before the job starts: refused with
# the store's path and free space; (2) full while a run is under way (its
# console log and records): the job stops with an error that names the
# path, says the file system is full and says to free space and run
# `kcanary resume`. Nothing stored before is lost (PRAGMA
# integrity_check ok, every sample kept, no half-stored job); once the
# filler is removed
# `kcanary resume` finishes the job with each planned run ok exactly once
# and nothing left on the host. Prints a "fault-table:" line. Port 18532.
set -u
if [ -z "${KC_DISKFULL_NS:-}" ]; then
	[ "$(id -u)" = 0 ] || { echo "needs root (unshare -m, tmpfs, libvirtd)"; exit 77; }
	KC_DISKFULL_NS=1 exec unshare -m --propagation private sh "$0" "$@"
fi
. tests/integration/guest-lib.sh

PORT=${KCANARY_DISKFULL_TEST_PORT:-18532}
LDIR=$(mktemp -d /var/tmp/kc-full.XXXXXX)
KCQ="$PWD/$B/kcanary"
mount -t tmpfs -o size=160m tmpfs "$HOME_DIR" || { rm -rf "$LDIR"; fail "cannot mount a tmpfs on $HOME_DIR"; }
private_libvirtd "$LDIR" "$PORT" "$HOME_DIR"
fill() { dd if=/dev/zero of="$HOME_DIR/filler" bs=64k 2>/dev/null || true; }
says_full() {   # $1: the error file
	grep -q "full" "$1" && grep -q "$HOME_DIR" "$1" && grep -q "kcanary resume" "$1" ||
		fail "the error does not name the path, the full disk and resume: $(tail -5 "$1")"
	grep -q "free space" "$1" || fail "the error does not say to free space: $(tail -5 "$1")"
}

# (1) full before the job starts: refused, naming the store and its free
# space; nothing half-stored
$KCQ token create x >/dev/null 2>&1   # the store exists
fill
$KCQ compare --name full --kernels "$KERNEL" --aa --repeat 1 --seed 1 --vcpus 1 $SHORT \
	--watchdog 300s --connect "$URI" >"$HOME_DIR/out.1" 2>"$LDIR/err.1" &&
	fail "compare on a full disk exited 0"
cat "$LDIR/err.1"
grep -q "the file system of the store '$HOME_DIR/kcanary.db' is full: [0-9]* KiB free of [0-9]* KiB in '$HOME_DIR'" \
	"$LDIR/err.1" || fail "the error does not name the store and its free space"
grep -q "free space there" "$LDIR/err.1" || fail "the error does not say to free space"
rm -f "$HOME_DIR/filler"
[ "$(q "PRAGMA integrity_check")" = ok ] || fail "integrity_check after (1)"
[ "$(q "SELECT count(*) FROM jobs")" = 0 ] || fail "a job was half-stored on the full disk: $(q "SELECT * FROM jobs")"

# (2) full while run 1 is under way
$KCQ compare --name full --kernels "$KERNEL" --aa --repeat 1 --seed 1 --vcpus 1 $SHORT \
	--watchdog 300s --connect "$URI" >"$HOME_DIR/out.2" 2>"$LDIR/err.2" &
pid=$!
wait_run_going $pid "$LDIR/err.2"
snap=$(q "SELECT group_concat(r.id || ':' || (SELECT count(*) FROM samples s WHERE s.run_id = r.id))
	FROM runs r")
hit=$(q "SELECT id FROM runs WHERE status = 'running'")
echo "-- filling $HOME_DIR during run $hit"
fill
i=0
while kill -0 $pid 2>/dev/null && [ $i -lt 1200 ]; do sleep 0.5; i=$((i + 1)); done
kill -0 $pid 2>/dev/null && { kill -9 $pid; fail "resume still runs 600 s after the disk filled"; }
wait $pid && fail "the job went on with a full disk: $(tail -5 "$LDIR/err.2")"
cat "$LDIR/err.2" | grep -v "^\[\|^kcanary-init"
says_full "$LDIR/err.2"
rm -f "$HOME_DIR/filler"
[ "$(q "PRAGMA integrity_check")" = ok ] || fail "integrity_check after (2)"
lost=0
for rn in $(echo "$snap" | tr ',' ' '); do
	id=${rn%%:*} n=${rn#*:}
	now=$(q "SELECT count(*) FROM samples WHERE run_id = $id")
	[ "$now" -ge "$n" ] || lost=$((lost + n - now))
done
[ "$lost" = 0 ] || fail "$lost samples stored before the disk filled are gone"

# space freed: resume finishes the job
$KCQ resume full --connect "$URI" >"$HOME_DIR/out.3" 2>"$LDIR/err.3" ||
	fail "resume after freeing space: $(tail -5 "$LDIR/err.3")"
[ "$(q "SELECT status FROM jobs WHERE name = 'full'")" = done ] || fail "job not done"
[ "$(q "SELECT count(*) FROM runs WHERE status = 'ok'")" = 2 ] ||
	fail "not 2 ok runs: $(q "SELECT id, variant_id, repeat_idx, status, error FROM runs")"
[ "$(q "SELECT group_concat(n) FROM (SELECT count(*) n FROM runs WHERE status = 'ok'
	GROUP BY variant_id)")" = "1,1" ] || fail "not 1 ok run per variant"
[ "$(q "SELECT count(*) FROM runs WHERE status NOT IN ('ok', 'interrupted')")" = 0 ] ||
	fail "runs neither ok nor interrupted: $(q "SELECT id, status, error FROM runs")"
[ "$(q "PRAGMA integrity_check")" = ok ] || fail "integrity_check at the end"
left=$(virsh -q -c "$URI" list --all --name | grep -c "^kcanary-" || true)
[ "$left" = 0 ] || fail "$left domains left on the host"
vols=$(virsh -q -c "$URI" vol-list kcanary | grep -c -- "-scratch" || true)
[ "$vols" = 0 ] || fail "$vols scratch volumes left in pool kcanary"
echo "fault-table: disk full during a compare (at its start; during a run's log and records)|2|2|$lost"
echo "ok: a full disk refused the job at its start and stopped it mid-run, its path named; resumed once freed, 2 runs ok once each"
