#!/bin/sh
# libvirtd-up.sh - make sure a libvirt daemon with the QEMU driver answers on
# qemu:///system, starting one when none does (docs/guests.md).
#
# For machines without systemd (containers, CI): Debian 12 ships only the
# monolithic libvirtd, and without libvirt-daemon-system nothing creates its
# user, log directory or qemu.conf. This script, run as root:
#   - creates the libvirt-qemu user and group (the qemu driver refuses to
#     load without them, even when QEMU runs as root) and /var/log/libvirt;
#   - sets in /etc/libvirt/qemu.conf, keeping any other line:
#       user = "root", group = "root"   /dev/kvm is 0600 root on such hosts
#       cgroup_controllers = [ ]        no /machine/... cgroups per guest
#       stdio_handler = "file"          QEMU's stdio to a file, no virtlogd
#   - starts `setsid tini -s -- /usr/sbin/libvirtd` in the background: tini
#     as a subreaper reaps QEMU at once (PID 1 here reaps orphans only every
#     1-1.6 s, which added ~2 s to each guest shutdown);
#   - waits until `virsh -c qemu:///system version` answers (at most 30 s).
# Exits 0 when a daemon answers, 1 otherwise. Idempotent.
# Options: -q quiet; --check only test whether one answers (exit 0/1).
set -u
URI=qemu:///system
quiet=0 check=0
for a in "$@"; do
	case $a in
	-q) quiet=1 ;;
	--check) check=1 ;;
	-h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "libvirtd-up: unknown option '$a'" >&2; exit 2 ;;
	esac
done
say() { [ $quiet = 1 ] || echo "libvirtd-up: $*" >&2; }
answers() { timeout 10 virsh -q -c $URI version >/dev/null 2>&1; }

if answers; then
	say "libvirtd answers on $URI"
	exit 0
fi
[ $check = 1 ] && exit 1
if [ "$(id -u)" != 0 ]; then
	say "no libvirt daemon answers on $URI and starting one needs root"
	exit 1
fi
for p in /usr/sbin/libvirtd tini virsh; do
	command -v $p >/dev/null 2>&1 || { say "'$p' is missing: run 'make deps'"; exit 1; }
done

getent group libvirt-qemu >/dev/null || groupadd -r libvirt-qemu
getent passwd libvirt-qemu >/dev/null ||
	useradd -r -g libvirt-qemu -d /var/lib/libvirt -s /usr/sbin/nologin libvirt-qemu
mkdir -p /var/log/libvirt /var/log/libvirt/qemu /etc/libvirt

conf=/etc/libvirt/qemu.conf
touch $conf
setkey() {  # setkey KEY VALUE: replace an uncommented KEY line or append one
	if grep -q "^[[:space:]]*$1[[:space:]]*=" $conf; then
		sed -i "s|^[[:space:]]*$1[[:space:]]*=.*|$1 = $2|" $conf
	else
		echo "$1 = $2" >> $conf
	fi
}
setkey user '"root"'
setkey group '"root"'
setkey cgroup_controllers '[ ]'
setkey stdio_handler '"file"'

# A stale pid file from a daemon that died makes libvirtd refuse to start.
if [ -f /run/libvirtd.pid ] && ! kill -0 "$(cat /run/libvirtd.pid)" 2>/dev/null; then
	rm -f /run/libvirtd.pid
fi
say "starting libvirtd (setsid tini -s -- /usr/sbin/libvirtd), log /var/log/libvirt/libvirtd.out"
# Only stdin, stdout and stderr go to the daemon: a descriptor it
# inherited would stay open as long as it runs, such as the one of
# `flock /tmp/kc-integration.lock` around a test that started it, which
# then holds that lock for ever and blocks every later test.
setsid tini -s -- /usr/sbin/libvirtd >>/var/log/libvirt/libvirtd.out 2>&1 </dev/null \
	3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
i=0
while [ $i -lt 60 ]; do
	if answers; then
		say "libvirtd answers on $URI"
		exit 0
	fi
	sleep 0.5
	i=$((i + 1))
done
say "libvirtd did not answer on $URI within 30 s; see /var/log/libvirt/libvirtd.out"
exit 1
