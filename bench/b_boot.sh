#!/bin/sh
# Boot-to-hello: how long from asking for a guest to the agent's hello
# record, through kcanary + libvirt (`kcanary boot`) against plain
# qemu-system-x86_64 booting the same kernel and initramfs with the same
# command line and devices (virtio-blk scratch disk cache=none, serial
# console to a file, virtio-serial port "kcanary"). N rounds; each round
# boots both ways back to back, in alternating order, so that the host's
# load (TCG times move with it) hits both alike. Reported: medians and
# minimums of each, and the median of the per-round ratios, the estimate
# least moved by load drifting between rounds. Target: kcanary + libvirt
# add at most 10%.
# Both sides are timed by one clock outside the programs, this script's
# (date +%s.%N), from the process's start to the first agent record seen,
# polled every 20 ms either way:
#   kcanary: `kcanary -v boot` started to its log line "the agent said
#            hello" on stderr (written when the record arrives through
#            libvirt's channel stream)
#   qemu:    qemu-system-x86_64 started to the hello in the port's file
# kcanary's own figure (domain create to hello, its monotonic clock) is
# printed beside them, not judged.
# Needs root, the Debian cloud kernel and a libvirt daemon (started with
# tools/libvirtd-up.sh when none answers); reports and exits 0 otherwise.
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
N=${N:-3}
KERNEL=${KCANARY_BENCH_KERNEL:-/boot/vmlinuz-6.12.117+deb12-cloud-amd64}
if [ "$(id -u)" != 0 ] || [ ! -r "$KERNEL" ]; then
	echo "boot: skipped (needs root and $KERNEL; run 'make deps')"
	exit 0
fi
sh tools/libvirtd-up.sh -q || { echo "boot: skipped (no libvirt daemon)"; exit 0; }
tmp=$(mktemp -d /tmp/kcbench.XXXXXX)
qpid=
trap '[ -n "$qpid" ] && kill $qpid 2>/dev/null; rm -rf "$tmp"' EXIT
export KCANARY_HOME=$tmp/home KCANARY_AGENT=$PWD/$B/kcanary-agent
KNOBS="rate_mbps=8 nfiles=10 old_s=1 settle_s=1 measure_s=1"
set_args=
for k in $KNOBS; do set_args="$set_args --set $k"; done
# The command line image_cmdline() makes for these settings (server/guest/image.h).
CMDLINE="console=ttyS0 loglevel=5 panic=-1 rdinit=/init kc.fs=ext4 kc.workload=wb-handover kc.knobs=$(echo $KNOBS | tr ' ' ,) kc.port=kcanary"
now() { date +%s.%N; }

# kc_round: "OUTSIDE INSIDE", the outside clock's process start to hello
# and kcanary's own domain create to hello, in seconds.
kc_round() {
	# the last round's log must not answer the poll before this one's
	# redirection has emptied it
	rm -f "$tmp/kc.err"
	t0=$(now)
	# shellcheck disable=SC2086
	"$B/kcanary" -v boot --kernel "$KERNEL" $set_args > "$tmp/kc.out" 2> "$tmp/kc.err" &
	kpid=$!
	i=0
	while ! grep -qs ': the agent said hello ' "$tmp/kc.err"; do
		i=$((i + 1))
		if [ $i -gt 6000 ] || ! kill -0 $kpid 2>/dev/null; then
			echo "kcanary: no hello within 120 s" >&2
			kill $kpid 2>/dev/null
			return 1
		fi
		sleep 0.02
	done
	t1=$(now)
	wait $kpid || { cat "$tmp/kc.out" "$tmp/kc.err" >&2; return 1; }
	inside=$(sed -n 's/.*boot-to-hello \([0-9.]*\) s (.*/\1/p' "$tmp/kc.out")
	echo "$t0 $t1 $inside" | awk '{ printf "%.2f %s\n", $2 - $1, $3 }'
}

qemu_round() {
	rm -f "$tmp/chan" "$tmp/console"
	truncate -s 4G "$tmp/disk.img"
	t0=$(now)
	qemu-system-x86_64 -machine pc,accel=tcg -cpu max -smp 2 -m 2048 \
		-nodefaults -no-user-config -display none -no-reboot \
		-kernel "$qkernel" -initrd "$initrd" -append "$CMDLINE" \
		-serial "file:$tmp/console" \
		-drive "file=$tmp/disk.img,if=virtio,format=raw,cache=none,aio=native" \
		-device virtio-serial-pci -chardev "file,id=kc,path=$tmp/chan" \
		-device virtserialport,chardev=kc,name=kcanary 2>> "$tmp/qemu.err" &
	qpid=$!
	i=0
	while ! grep -qs '"type":"hello"' "$tmp/chan"; do
		i=$((i + 1))
		if [ $i -gt 6000 ] || ! kill -0 $qpid 2>/dev/null; then
			echo "qemu: no hello within 120 s" >&2
			kill $qpid 2>/dev/null
			return 1
		fi
		sleep 0.02
	done
	t1=$(now)
	kill $qpid 2>/dev/null
	wait $qpid 2>/dev/null
	qpid=
	rm -f "$tmp/disk.img"
	echo "$t0 $t1" | awk '{ printf "%.2f\n", $2 - $1 }'
}

# A first run builds and caches the guest image; not counted.
kc_round > /dev/null || { echo "boot: kcanary boot failed"; exit 1; }
initrd=$(ls -t "$KCANARY_HOME"/images/*.cpio | head -n 1)
# the kernel kcanary boots: its vmlinux through PVH when it has one
qkernel=$(ls -t "$KCANARY_HOME"/kernels/*.pvh 2>/dev/null | head -n 1)
qkernel=${qkernel:-$KERNEL}
: > "$tmp/kc.times"
: > "$tmp/qemu.times"
r=1
while [ $r -le "$N" ]; do
	if [ $((r % 2)) = 1 ]; then
		k=$(kc_round) || exit 1
		q=$(qemu_round) || exit 1
	else
		q=$(qemu_round) || exit 1
		k=$(kc_round) || exit 1
	fi
	echo "round $r: kcanary $(echo "$k" | cut -d' ' -f1) s (its own clock, from domain create: $(echo "$k" | cut -d' ' -f2) s), qemu $q s"
	echo "$k" >> "$tmp/kc.times"
	echo "$q" >> "$tmp/qemu.times"
	echo "$k $q" | awk '{ printf "%.4f\n", $1 / $3 }' >> "$tmp/ratios"
	r=$((r + 1))
done
med() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
kc=$(cut -d' ' -f1 "$tmp/kc.times" | med)
kci=$(cut -d' ' -f2 "$tmp/kc.times" | med)
qm=$(med < "$tmp/qemu.times")
kmin=$(cut -d' ' -f1 "$tmp/kc.times" | sort -n | head -n 1)
qmin=$(sort -n "$tmp/qemu.times" | head -n 1)
rc=$(med < "$tmp/ratios")
accel=$(sqlite3 "$KCANARY_HOME/kcanary.db" "SELECT accel FROM runs ORDER BY id DESC LIMIT 1" 2>/dev/null)
awk -v kc="$kc" -v kci="$kci" -v q="$qm" -v n="$N" -v a="$accel" -v kmin="$kmin" -v qmin="$qmin" \
	-v rc="$rc" 'BEGIN {
	printf "boot-to-hello (%d rounds, %s; one outside clock, process start to the first agent record): kcanary+libvirt median %.2f s, min %.2f s; plain qemu median %.2f s, min %.2f s (kcanary by its own clock from domain create: median %.2f s)\n", n, a, kc, kmin, q, qmin, kci
	printf "ratio kcanary/qemu: %.2f median of per-round ratios; %.2f of medians; %.2f of minimums\n", rc, kc / q, kmin / qmin
	printf "target: kcanary boot-to-hello <= 1.10x plain qemu (median of per-round ratios, both from process start by the same clock): %.2fx: %s\n", rc, (rc <= 1.10 ? "met" : "NOT met")
}'
