#!/bin/sh
# boot-check.sh BZIMAGE - boot a built kernel under QEMU (TCG: /dev/kvm on
# these machines is PVM, see notes/guests.md) with a busybox initramfs that
# reports what the guest kernel offers: cgroup v2 controllers (memory, io),
# BTF, kprobe events; then powers off. Exit 0 when all are there.
set -u
IMG=${1:?usage: boot-check.sh BZIMAGE}
BB=${BUSYBOX:-/bin/busybox}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
[ -x "$BB" ] || { echo "SKIP: no busybox"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "SKIP: no qemu"; exit 77; }
mkdir -p "$T/root/bin" "$T/root/dev" "$T/root/proc" "$T/root/sys"
cp "$BB" "$T/root/bin/busybox"
cat > "$T/root/init" <<'EOI'
#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sys /sys
/bin/busybox mount -t cgroup2 none /sys/fs/cgroup
/bin/busybox mount -t tracefs none /sys/kernel/tracing 2>/dev/null ||
	/bin/busybox mount -t debugfs none /sys/kernel/debug
echo "KC release: $(/bin/busybox uname -r)"
echo "KC controllers: $(/bin/busybox cat /sys/fs/cgroup/cgroup.controllers)"
[ -e /sys/kernel/btf/vmlinux ] && echo "KC btf: yes"
if echo 'p:kc_probe cgroup_writeback_by_id' > /sys/kernel/tracing/kprobe_events 2>/dev/null ||
   echo 'p:kc_probe cgroup_writeback_by_id' > /sys/kernel/debug/tracing/kprobe_events; then
	echo "KC kprobe: yes"
fi
echo "KC done"
/bin/busybox poweroff -f
EOI
chmod +x "$T/root/init"
(cd "$T/root" && find . | cpio -o -H newc 2>/dev/null | gzip > "$T/initrd.gz")
start=$(date +%s)
timeout 300 qemu-system-x86_64 -accel tcg -cpu max -m 1024 -smp 1 -nographic -no-reboot \
	-kernel "$IMG" -initrd "$T/initrd.gz" \
	-append "console=ttyS0 panic=-1 rdinit=/init" > "$T/console" 2>&1
echo "boot + checks + poweroff: $(( $(date +%s) - start ))s (TCG)"
grep '^KC ' "$T/console"
ok=0
grep -q '^KC controllers:.*memory' "$T/console" && grep -q '^KC controllers:.* io' "$T/console" &&
	grep -q '^KC btf: yes' "$T/console" && grep -q '^KC kprobe: yes' "$T/console" && ok=1
[ $ok = 1 ] || { tail -30 "$T/console"; echo "FAIL"; exit 1; }
echo PASS
