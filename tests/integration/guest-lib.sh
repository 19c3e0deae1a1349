# guest-lib.sh - shared by the t_guest_*.sh integration tests (sourced).
# Checks the prerequisites, starts libvirtd when none answers (as CI has no
# services running), and gives each test its own $KCANARY_HOME.
# Sets: KC (the kcanary binary), KERNEL, HOME_DIR; defines q (sqlite3 on
# the test's store), fail, and a cleanup trap.

B=${B:-build}
KC="$PWD/$B/kcanary -v"
KERNEL=${KCANARY_TEST_KERNEL:-/boot/vmlinuz-6.12.117+deb12-cloud-amd64}
export KCANARY_AGENT=$PWD/$B/kcanary-agent
export KCANARY_LIBVIRT_URI=qemu:///system
export KCANARY_ACCEL=${KCANARY_ACCEL:-}

skip() { echo "$*"; exit 77; }
fail() { echo "FAIL: $*"; [ -n "${HOME_DIR:-}" ] && tail -n 30 "$HOME_DIR"/runs/*/console.log 2>/dev/null | tail -n 30; exit 1; }

[ "$(id -u)" = 0 ] || skip "guest tests need root (qemu:///system, mknod in the guest image)"
[ -x "$PWD/$B/kcanary" ] && [ -x "$KCANARY_AGENT" ] || fail "build first: $B/kcanary or $KCANARY_AGENT missing"
[ -r "$KERNEL" ] || fail "no test kernel $KERNEL: run 'make deps' (linux-image-6.12.117+deb12-cloud-amd64-unsigned)"
command -v sqlite3 >/dev/null || fail "no sqlite3 CLI: run 'make deps'"
sh tools/libvirtd-up.sh -q || fail "no libvirt daemon answers and tools/libvirtd-up.sh could not start one"

HOME_DIR=$(mktemp -d "${KC_TEST_TMP:-/tmp}/kcguest.XXXXXX")
export KCANARY_HOME=$HOME_DIR
cleanup() {
	# Guests a failed test may have left (kcanary -v logs each name to the
	# err.* files; libvirt's autodestroy normally removes them anyway).
	for d in $(grep -ho "kcanary-r[0-9]*-p[0-9]*-[0-9a-f]*" "$HOME_DIR"/err.* 2>/dev/null | sort -u); do
		virsh -q -c qemu:///system destroy "$d" >/dev/null 2>&1
	done
	rm -rf "$HOME_DIR"
}
trap cleanup EXIT

q() { sqlite3 -batch -noheader "$HOME_DIR/kcanary.db" "$@"; }

# private_libvirtd DIR PORT [UNMOUNT]: a private libvirt daemon for this
# test (tools/libvirtd-tcp.sh: its own namespaces and /var/lib/libvirt in
# DIR, 127.0.0.1:PORT over TCP, $HOME_DIR hidden from it), in URI. The EXIT
# trap then stops it, removes DIR, unmounts UNMOUNT when given (a tmpfs the
# test mounted) and runs cleanup. Fails the test when it does not answer.
private_libvirtd() {
	_plv_dir=$1 _plv_umount=${3:-}
	URI=qemu+tcp://127.0.0.1:$2/system
	trap private_libvirtd_cleanup EXIT
	sh tools/libvirtd-tcp.sh start "$1" "$2" "$HOME_DIR" ||
		fail "the private libvirtd on port $2 did not start"
}
private_libvirtd_cleanup() {
	sh tools/libvirtd-tcp.sh stop "$_plv_dir"
	rm -rf "$_plv_dir"
	[ -z "$_plv_umount" ] || umount "$_plv_umount" 2>/dev/null
	cleanup
}

# run_leftovers RUN: print what of run RUN is still on its host, one line
# each: its guest (the domain it stored in guest_json) and its scratch
# volume (DOMAIN-scratch.img in the kcanary pool, runner.c). Asks the URI
# the run stored; fails the test when the run stored none or the pool
# cannot be listed, so an empty answer means "looked, and nothing left".
run_leftovers() {
	_d=$(q "SELECT json_extract(guest_json, '\$.domain') FROM runs WHERE id = $1")
	_u=$(q "SELECT json_extract(guest_json, '\$.uri') FROM runs WHERE id = $1")
	[ -n "$_d" ] && [ -n "$_u" ] || fail "run $1 stored no guest name or URI"
	_vols=$(virsh -q -c "$_u" vol-list kcanary) || fail "cannot list the kcanary pool on $_u"
	_doms=$(virsh -q -c "$_u" list --all --name) || fail "cannot list the guests on $_u"
	echo "$_doms" | grep -qx "$_d" && echo "guest $_d"
	echo "$_vols" | grep -q "^ *$_d-scratch.img " && echo "scratch volume $_d-scratch.img"
	return 0
}

# wait_run_going PID ERRFILE [COND]: wait (at most 450 s) until a run r of
# the store is 'running' with >= 2 samples stored (and COND, SQL on r, holds);
# fail when PID, the coordinator, ends first, with ERRFILE's last lines.
wait_run_going() {
	_i=0
	while :; do
		_n=$(q "SELECT count(*) FROM runs r WHERE ${3:+$3 AND} r.status = 'running'
		       AND (SELECT count(*) FROM samples s WHERE s.run_id = r.id) >= 2" 2>/dev/null)
		[ "${_n:-0}" -ge 1 ] && return 0
		kill -0 "$1" 2>/dev/null || fail "the job ended before a run got going: $(tail -5 "$2")"
		_i=$((_i + 1))
		[ $_i -lt 900 ] || fail "no run got going in 450 s"
		sleep 0.5
	done
}

# The workload scaled down for TCG: ~4 s of old writer, 8 s measured.
SHORT="--set rate_mbps=8 --set nfiles=10 --set old_s=4 --set settle_s=1 --set measure_s=8"
