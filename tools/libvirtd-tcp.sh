#!/bin/sh
# libvirtd-tcp.sh - a second libvirt daemon on this machine that shares
# none of the coordinator's files: a lab host for tests (docs/lab.md).
#
#   usage: tools/libvirtd-tcp.sh start DIR PORT [HIDE...]
#          tools/libvirtd-tcp.sh restart DIR PORT
#          tools/libvirtd-tcp.sh stop DIR
#
# start: runs libvirtd (setsid tini -s -- libvirtd --listen) in its own
# mount and PID namespaces (unshare -m -p --kill-child), listening on
# 127.0.0.1:PORT over TCP without authentication (loopback only: a test
# host, never a real one), with
#   - its own /var/lib/libvirt, /var/cache/libvirt, /var/log/libvirt and
#     /etc/libvirt (fresh directories under DIR, bind-mounted; the local
#     *.conf files, not its pools or domains, and qemu.conf with the
#     settings of tools/libvirtd-up.sh) and a tmpfs
#     over /run (so its own /run/libvirt and pid file);
#   - a tmpfs over every HIDE directory (the coordinator's $KCANARY_HOME):
#     a path on the coordinator that a run forgot to send does not exist
#     for this daemon or its QEMU, and the run fails.
# Waits until `virsh -c qemu+tcp://127.0.0.1:PORT/system version` answers
# (at most 30 s). DIR/pid is the namespace's holder: killing it (stop, or
# kill -9 in a test: a host that drops) kills the daemon and its guests.
# The daemon inherits no descriptor but stdio (an inherited one, such as
# the integration lock's, would stay held for as long as it runs).
# restart: SIGKILLs the daemon alone (as a crash or `systemctl restart`
# would: its QEMU processes and /run stay) and waits until the daemon the
# namespace starts again answers: a libvirtd restarted under a running
# guest (tests/fault/f_libvirtd.sh).
# Exits 0 when the daemon answers (start, restart) or is gone (stop), 1
# otherwise.
set -u
cmd=${1:-} dir=${2:-}
say() { echo "libvirtd-tcp: $*" >&2; }
[ -n "$dir" ] || { sed -n '4,7p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

if [ "$cmd" = stop ]; then
	[ -f "$dir/pid" ] || exit 0
	pid=$(cat "$dir/pid")
	kill -9 "$pid" 2>/dev/null
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	rm -f "$dir/pid"
	exit 0
fi
port=${3:-}
uri="qemu+tcp://127.0.0.1:$port/system"
wait_up() {
	i=0
	while [ $i -lt 60 ]; do
		if timeout 10 virsh -q -c "$uri" version >/dev/null 2>&1; then
			say "libvirtd answers on $uri (namespace holder $(cat "$dir/pid"))"
			exit 0
		fi
		kill -0 "$(cat "$dir/pid")" 2>/dev/null || break
		sleep 0.5
		i=$((i + 1))
	done
	say "libvirtd did not answer on $uri; see $dir/libvirtd.out:"
	tail -n 20 "$dir/libvirtd.out" >&2
	exit 1
}
if [ "$cmd" = restart ]; then
	[ -n "$port" ] && [ -f "$dir/pid" ] || { say "restart needs DIR (started) and PORT"; exit 2; }
	# holder (unshare) -> tini -> the restart loop (sh) -> libvirtd
	loop=$(pgrep -P "$(pgrep -P "$(cat "$dir/pid")" | head -n 1)" | head -n 1)
	daemon=$(pgrep -P "$loop" -x libvirtd | head -n 1)
	[ -n "$daemon" ] || { say "no libvirtd under the namespace's loop ($loop)"; exit 1; }
	kill -9 "$daemon"
	while kill -0 "$daemon" 2>/dev/null; do sleep 0.1; done
	say "libvirtd $daemon killed"
	wait_up
fi
[ "$cmd" = start ] || { say "unknown command '$cmd' (start, restart or stop)"; exit 2; }
[ -n "$port" ] || { say "start needs DIR and PORT"; exit 2; }
shift 3
[ "$(id -u)" = 0 ] || { say "needs root (namespaces, libvirtd)"; exit 1; }

mkdir -p "$dir/lib" "$dir/cache" "$dir/log/qemu" "$dir/etc"
# the local daemon's settings, not its stored pools and domains
for f in /etc/libvirt/*.conf; do [ -f "$f" ] && cp "$f" "$dir/etc/"; done
conf=$dir/etc/qemu.conf
touch "$conf"
for kv in 'user "root"' 'group "root"' 'cgroup_controllers [ ]' 'stdio_handler "file"'; do
	k=${kv%% *} v=${kv#* }
	sed -i "/^[[:space:]]*$k[[:space:]]*=/d" "$conf"
	echo "$k = $v" >> "$conf"
done
cat > "$dir/etc/libvirtd.conf" <<EOF
listen_tls = 0
listen_tcp = 1
listen_addr = "127.0.0.1"
tcp_port = "$port"
auth_tcp = "none"
auth_unix_rw = "none"
EOF
hide=""
for h in "$@"; do hide="$hide mount -t tmpfs -o size=16m none '$h' &&"; done
# Inside the namespaces: private mounts, the daemon's own directories,
# the hidden ones, then the daemon under a subreaper, started again when
# it dies (restart) until the namespace is killed (stop).
inner="mount --make-rprivate / &&
	mount --bind '$dir/lib' /var/lib/libvirt &&
	mkdir -p /var/cache/libvirt && mount --bind '$dir/cache' /var/cache/libvirt &&
	mount --bind '$dir/log' /var/log/libvirt &&
	mount --bind '$dir/etc' /etc/libvirt &&
	mount -t tmpfs -o mode=0755 none /run && mkdir -p /run/lock && $hide
	exec tini -s -- sh -c 'while :; do /usr/sbin/libvirtd --listen -f /etc/libvirt/libvirtd.conf;
		sleep 0.5; done'"
mkdir -p /var/lib/libvirt /var/log/libvirt
setsid unshare -m -p --kill-child --mount-proc sh -c "$inner" \
	>>"$dir/libvirtd.out" 2>&1 </dev/null 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
echo $! > "$dir/pid"
wait_up
