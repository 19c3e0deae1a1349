#!/bin/sh
# t_guest_hostfs.sh - --rootfs host (server/guest/hostfs.c): boot Debian's 6.12
# cloud kernel with this machine's / shared read-only over virtiofs under a
# tmpfs overlay, run the host's own fio (installed by make deps, in no
# image) as the fio workload, and check: fio's figures reached the store,
# the run records the host's dpkg package list (fio's version in it), the
# text, JSON report mark the job "rootfs: host (not reproducible)", a file
# the guest writes to / stays in its overlay (the host's / is unchanged),
# and a run placed on a remote libvirt URI is refused with a clear error.
# Before this, 'host' was not a root filesystem: rootfs_get() refused it
# ("--rootfs 'host': expected debian or debian:PKG,PKG,...").
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/guest-lib.sh
command -v fio >/dev/null || fail "no fio on the host: run 'make deps'"
[ -x /usr/lib/qemu/virtiofsd ] || [ -x /usr/libexec/virtiofsd ] || fail "no virtiofsd: run 'make deps' (qemu-system-common)"

echo "-- a remote libvirt URI is refused (its guest cannot see this /)"
$KC boot --kernel "$KERNEL" --rootfs host --workload fio --set runtime_s=5 \
	--connect qemu+ssh://lab.invalid/system > "$HOME_DIR/out.remote" 2> "$HOME_DIR/err.remote"
rc=$?
[ $rc != 0 ] || fail "boot --rootfs host on a remote URI exited 0"
grep -q "rootfs host shares this machine's / and cannot reach a guest on another host" \
	"$HOME_DIR/out.remote" "$HOME_DIR/err.remote" ||
	{ cat "$HOME_DIR/out.remote" "$HOME_DIR/err.remote"; fail "no clear refusal for a remote URI"; }
run=$(q "SELECT max(id) FROM runs")
q "SELECT status || ': ' || error FROM runs WHERE id = $run"

echo "-- a compare placed on a remote lab host is refused before any run"
$KC lab add far qemu+ssh://root@lab.invalid/system >/dev/null 2>&1 || fail "kcanary lab add far"
$KC compare --name far --kernels "$KERNEL" --rootfs host --workload fio --set runtime_s=5 \
	--hosts far > "$HOME_DIR/out.far" 2> "$HOME_DIR/err.far"
rc=$?
[ $rc != 0 ] || fail "compare --rootfs host --hosts far exited 0"
grep -q "rootfs host shares this machine's / and cannot reach lab host 'far'" "$HOME_DIR/err.far" ||
	{ cat "$HOME_DIR/out.far" "$HOME_DIR/err.far"; fail "no clear refusal for a remote lab host"; }
grep "cannot reach lab host" "$HOME_DIR/err.far"
[ "$(q "SELECT count(*) FROM runs r JOIN jobs j ON j.id = r.job_id WHERE j.name = 'far' AND r.status != 'pending'")" = 0 ] ||
	fail "compare --hosts far ran: $(q "SELECT r.id, r.status FROM runs r JOIN jobs j ON j.id = r.job_id WHERE j.name = 'far'")"

echo "-- boot with the host's userland, the host's fio"
probe=/kcanary-hostfs-probe-$$
start=$(date +%s)
$KC boot --kernel "$KERNEL" --rootfs host --workload fio \
	--set runtime_s=5 --set size=16M --set rw=randwrite \
	--watchdog 300s > "$HOME_DIR/out.boot" 2> "$HOME_DIR/err.boot"
rc=$?
cat "$HOME_DIR/out.boot"
[ $rc = 0 ] || { tail -n 20 "$HOME_DIR/err.boot"; fail "kcanary boot --rootfs host exited $rc"; }
echo "   took $(( $(date +%s) - start )) s"
run=$(q "SELECT max(id) FROM runs")
[ "$(q "SELECT status FROM runs WHERE id = $run")" = ok ] ||
	fail "run $run: $(q "SELECT status, error FROM runs WHERE id = $run")"
grep -a -q "root filesystem host mounted" "$(q "SELECT console_log_path FROM runs WHERE id = $run")" ||
	fail "run $run: the console does not show the host's / mounted"
v=$(q "SELECT value FROM run_summary WHERE run_id = $run AND metric = 'fio:kc:write:iops'")
awk -v v="${v:-0}" 'BEGIN { exit !(v > 0) }' || fail "run $run: fio:kc:write:iops = '$v', expected > 0"
echo "   fio:kc:write:iops = $v"
[ "$(q "SELECT r.spec FROM rootfs_images r JOIN runs u ON u.rootfs_hash = r.hash WHERE u.id = $run")" = host ] ||
	fail "run $run: no 'host' root filesystem recorded"
fiov=$(dpkg-query -W -f='${Version}' fio)
q "SELECT packages FROM rootfs_images r JOIN runs u ON u.rootfs_hash = r.hash WHERE u.id = $run" |
	grep -qx "fio $fiov" || fail "run $run: the host's package list does not have 'fio $fiov'"

echo "-- the report marks it not reproducible"
job=$(q "SELECT job_id FROM runs WHERE id = $run")
$KC report "$job" > "$HOME_DIR/report.txt" 2>&1 || { cat "$HOME_DIR/report.txt"; fail "kcanary report $job"; }
grep "rootfs: host (not reproducible)" "$HOME_DIR/report.txt" || { cat "$HOME_DIR/report.txt"; fail "the text report has no not-reproducible mark"; }
# stdout is the JSON alone; stderr may say which metric the report chose
# (a fio job: its runs have no worst lag)
$KC report "$job" --format json > "$HOME_DIR/report.json" 2> "$HOME_DIR/report.err" ||
	{ cat "$HOME_DIR/report.err"; fail "kcanary report --format json"; }
[ "$(jq -r '.rootfs | "\(.spec) \(.reproducible) \(.mark)"' "$HOME_DIR/report.json")" = "host false rootfs: host (not reproducible)" ] ||
	fail "the JSON report's rootfs: $(jq -c .rootfs "$HOME_DIR/report.json")"

echo "-- a write to / in the guest stays in its overlay"
$KC boot --kernel "$KERNEL" --rootfs host --workload command \
	--set "cmd=touch $probe && test -e $probe && echo metric wrote 1" \
	--watchdog 300s > "$HOME_DIR/out.cmd" 2> "$HOME_DIR/err.cmd" ||
	{ tail -n 20 "$HOME_DIR/err.cmd"; fail "kcanary boot --rootfs host --workload command"; }
run=$(q "SELECT max(id) FROM runs")
[ "$(q "SELECT s.value FROM samples s JOIN metrics m ON m.id = s.metric_id
       WHERE s.run_id = $run AND m.name = 'wrote'")" = 1.0 ] ||
	fail "run $run: the guest could not write to its overlay: $(q "SELECT status, error FROM runs WHERE id = $run")"
[ ! -e "$probe" ] || { rm -f "$probe"; fail "the guest's write reached the host's $probe"; }
[ -z "$(pgrep -x virtiofsd)" ] || fail "virtiofsd still runs after the runs: $(pgrep -a -x virtiofsd)"
echo "PASS"
