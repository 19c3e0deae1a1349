#!/bin/sh
# t_guest_badkernel.sh - a corrupt kernel image fails its run with a clear
# message: a file that is no bzImage at all (refused before booting), and a
# truncated bzImage (boots, dies in the decompressor).
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/guest-lib.sh

echo "not a kernel" > "$HOME_DIR/garbage-vmlinuz"
$KC boot --kernel "$HOME_DIR/garbage-vmlinuz" --set measure_s=5 > "$HOME_DIR/out" 2> "$HOME_DIR/err.1"
rc=$?
cat "$HOME_DIR/err.1" | grep -v "warning: guests run under TCG"
[ $rc = 1 ] || fail "kcanary boot of a garbage kernel exited $rc, expected 1"
grep -q "kernel image '$HOME_DIR/garbage-vmlinuz' is not a bzImage: no 'HdrS' setup header at offset 0x202" \
	"$HOME_DIR/err.1" || fail "no clear message on stderr"
[ "$(q "SELECT status FROM runs WHERE variant_id = (SELECT id FROM variants WHERE name = 'garbage-vmlinuz')")" = failed ] ||
	fail "the garbage kernel's run is not stored as failed"
q "SELECT error FROM runs ORDER BY id DESC LIMIT 1" | grep -q "is not a bzImage" || fail "run error lacks the reason"

head -c 3000000 "$KERNEL" > "$HOME_DIR/truncated-vmlinuz"
start=$(date +%s)
$KC boot --kernel "$HOME_DIR/truncated-vmlinuz" --modules none --set measure_s=5 --watchdog 90s \
	> "$HOME_DIR/out" 2> "$HOME_DIR/err.2"
rc=$?
cat "$HOME_DIR/out"
[ $rc = 1 ] || fail "kcanary boot of a truncated kernel exited $rc, expected 1"
run=$(q "SELECT max(id) FROM runs")
[ "$(q "SELECT status FROM runs WHERE id = $run")" = failed ] ||
	fail "run $run: $(q "SELECT status, error FROM runs WHERE id = $run")"
q "SELECT error FROM runs WHERE id = $run" | grep -q "^the kernel did not boot: the guest stopped after .* without running /init (is '$HOME_DIR/truncated-vmlinuz' a working kernel" ||
	fail "run $run: error is '$(q "SELECT error FROM runs WHERE id = $run")'"
echo "   truncated kernel failed after $(( $(date +%s) - start )) s"
echo "   both corrupt images fail their runs with a clear message"

# A kernel that panics (no init to run): 'kernel-panic' with the panic line.
$KC boot --kernel "$KERNEL" --set measure_s=5 --append rdinit=/nonexistent --watchdog 120s \
	> "$HOME_DIR/out" 2> "$HOME_DIR/err.3"
rc=$?
cat "$HOME_DIR/out"
[ $rc = 1 ] || fail "kcanary boot of a panicking kernel exited $rc, expected 1"
run=$(q "SELECT max(id) FROM runs")
[ "$(q "SELECT status FROM runs WHERE id = $run")" = kernel-panic ] ||
	fail "run $run: $(q "SELECT status, error FROM runs WHERE id = $run")"
q "SELECT error FROM runs WHERE id = $run" | grep -q "^Kernel panic - not syncing: VFS: Unable to mount root fs" ||
	fail "run $run: error is '$(q "SELECT error FROM runs WHERE id = $run")'"
q "SELECT console_tail FROM runs WHERE id = $run" | grep -q "Kernel panic - not syncing" ||
	fail "run $run: console tail lacks the panic"
echo "panicking kernel: run stored as kernel-panic with the panic line"
