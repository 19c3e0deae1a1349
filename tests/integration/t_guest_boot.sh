#!/bin/sh
# t_guest_boot.sh - boot Debian's cloud kernel through libvirt (TCG here,
# KVM where the host has hardware KVM: checked against the host),
# run wb-handover scaled down on ext4 and on xfs, and check what the store
# holds: status ok, samples and probe counts, the accelerator, the console
# tail, and the knobs exactly as the agent echoed them in hello.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/guest-lib.sh

# The accelerator this host gives, by the rule of docs/guests.md ("Accelerator"), worked
# out here from the host and not from kcanary: $KCANARY_ACCEL when set,
# else kvm only for a /dev/kvm that opens, is not PVM's, with vmx/svm.
if [ -n "$KCANARY_ACCEL" ]; then
	want_accel=$KCANARY_ACCEL
elif [ -e /dev/kvm ] && [ ! -e /sys/module/kvm_pvm ] && grep -Eqw 'vmx|svm' /proc/cpuinfo &&
     (exec 3<>/dev/kvm) 2>/dev/null; then
	want_accel=kvm
else
	want_accel=tcg
fi
echo "-- this host: $want_accel"

for fs in ext4 xfs; do
	echo "-- $fs"
	start=$(date +%s)
	# shellcheck disable=SC2086
	$KC boot --kernel "$KERNEL" --fs $fs $SHORT --set dirty_after=1 --watchdog 240s \
		> "$HOME_DIR/out.$fs" 2> "$HOME_DIR/err.$fs"
	rc=$?
	cat "$HOME_DIR/out.$fs"
	[ $rc = 0 ] || { cat "$HOME_DIR/err.$fs"; fail "kcanary boot --fs $fs exited $rc"; }
	echo "   took $(( $(date +%s) - start )) s"
	run=$(q "SELECT max(id) FROM runs")
	# what kcanary said it chose is this host's, and is what the run stored
	said=$(sed -n 's/^  accel \([a-z]*\), boot-to-hello .*/\1/p' "$HOME_DIR/out.$fs")
	[ "$said" = "$want_accel" ] || fail "kcanary boot chose accel '$said', this host gives '$want_accel'"
	[ "$(q "SELECT status || ' ' || fs || ' ' || accel FROM runs WHERE id = $run")" = "ok $fs $said" ] ||
		fail "run $run (accel $said): $(q "SELECT status, fs, accel, error FROM runs WHERE id = $run")"
	n=$(q "SELECT count(*) FROM samples s JOIN metrics m ON m.id = s.metric_id
	       WHERE s.run_id = $run AND m.name = 'lag_s'")
	[ "$n" -ge 5 ] || fail "run $run: $n lag_s samples, expected at least 5"
	n=$(q "SELECT count(*) FROM probes WHERE run_id = $run")
	[ "$n" -ge 1 ] || fail "run $run: no probe counts stored"
	n=$(q "SELECT count(*) FROM run_summary WHERE run_id = $run AND metric = 'worst_lag_s'")
	[ "$n" = 1 ] || fail "run $run: no worst_lag_s in the summary"
	# The guest formatted the filesystem asked for.
	[ "$(q "SELECT json_extract(hello_json, '$.fs_type') FROM runs WHERE id = $run")" = "$fs" ] ||
		fail "run $run: the agent did not run on $fs: $(q "SELECT hello_json FROM runs WHERE id = $run")"
	# Every stored knob reached the agent exactly.
	bad=$(q "SELECT p.key FROM runs r, json_each(r.params_json) p WHERE r.id = $run
		 AND json_extract(r.hello_json, '$.params.' || p.key) IS NOT p.value")
	[ -z "$bad" ] || fail "run $run: knobs differ from the agent's hello: $bad"
	[ "$(q "SELECT count(*) FROM json_each((SELECT params_json FROM runs WHERE id = $run))")" = 6 ] ||
		fail "run $run: expected 6 stored knobs: $(q "SELECT params_json FROM runs WHERE id = $run")"
	q "SELECT json_extract(guest_json, '$.cmdline') FROM runs WHERE id = $run" | grep -q " kc.fs=$fs " ||
		fail "run $run: guest_json lacks the command line: $(q "SELECT guest_json FROM runs WHERE id = $run")"
	q "SELECT console_tail FROM runs WHERE id = $run" | grep -q "kcanary-init: \[[0-9.]*\] powering off" ||
		fail "run $run: console tail lacks the power-off line"
	[ -s "$(q "SELECT console_log_path FROM runs WHERE id = $run")" ] || fail "run $run: no console log"
	# the guest's files are volumes in the host's pool: the kernel's and
	# the initramfs's kept (named by content), the scratch disk deleted
	dom=$(q "SELECT json_extract(guest_json, '$.domain') FROM runs WHERE id = $run")
	vols=$(virsh -q -c qemu:///system vol-list kcanary)
	echo "$vols" | grep -q "$(q "SELECT json_extract(guest_json, '$.kernel_volume') FROM runs WHERE id = $run")" ||
		fail "run $run: no kernel volume in pool kcanary: $vols"
	! echo "$vols" | grep -q "$dom-scratch" || fail "run $run: scratch volume left behind"
	[ -z "$(find "$HOME_DIR/runs/$run" -name '*.img' -o -name '*.sock')" ] ||
		fail "run $run: a disk or socket under the coordinator's runs/"
	# where the run's wall time went (issue 19 item 5): every phase stored,
	# those a booted run must spend time in non-zero (mkfs from /init's
	# figure in the hello), summing to the wall time, which is within the
	# command's own time
	took_ms=$(( ($(date +%s) - start + 1) * 1000 ))
	ov=$(q "SELECT wall_ms, image_ms, upload_ms, create_ms, boot_ms, mkfs_ms, workload_ms, teardown_ms
		FROM run_overhead WHERE run_id = $run")
	echo "   overhead (ms: wall image upload create boot mkfs workload teardown): $ov"
	[ -n "$ov" ] || fail "run $run: no phases in run_overhead"
	[ "$(q "SELECT count(*) FROM run_overhead WHERE run_id = $run AND image_ms > 0 AND create_ms > 0
		AND boot_ms > 0 AND mkfs_ms > 0 AND workload_ms > 0 AND teardown_ms > 0 AND upload_ms >= 0
		AND image_ms + upload_ms + create_ms + boot_ms + mkfs_ms + workload_ms + teardown_ms <= wall_ms
		AND wall_ms <= $took_ms
		AND mkfs_ms = CAST(round(1000 * json_extract((SELECT hello_json FROM runs WHERE id = $run),
			'$.mkfs_s')) AS INTEGER)")" = 1 ] ||
		fail "run $run: phases missing, zero or not summing to at most the wall time ($took_ms ms): $ov"
	grep -q "^  overhead [0-9.]* s of [0-9.]* s ([0-9]*%): image [0-9.]* s, upload .* teardown [0-9.]* s$" \
		"$HOME_DIR/out.$fs" || fail "kcanary boot did not print the run's overhead"
done
$KC report adhoc-boot > "$HOME_DIR/report.txt" || fail "kcanary report adhoc-boot failed"
grep -q "^overhead: median [0-9.]* s of [0-9.]* s wall per run ([0-9]*%, 2 runs): image" "$HOME_DIR/report.txt" ||
	fail "the report has no overhead footer: $(cat "$HOME_DIR/report.txt")"
grep -A1 "^overhead:" "$HOME_DIR/report.txt"
[ "$(q "SELECT count(DISTINCT variant_id) || ' ' || count(*) FROM runs r JOIN jobs j ON j.id = r.job_id
	WHERE j.name = 'adhoc-boot'")" = "1 2" ] || fail "expected both runs in job adhoc-boot, one variant"
[ "$(q "SELECT name FROM variants")" = "$(basename "$KERNEL")" ] || fail "variant is not the kernel's file name"
echo "guest boot: ext4 and xfs runs stored with samples, probes, exact knobs and their overhead phases"
