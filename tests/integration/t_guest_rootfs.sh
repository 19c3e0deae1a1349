#!/bin/sh
# t_guest_rootfs.sh - --rootfs debian:fio,bpftrace (server/guest/rootfs.c): build
# the Debian root filesystem (cold), find it again without building
# (warm), then boot Debian's 6.12 cloud kernel with it, run a 10-second fio
# job on the scratch disk with a bpftrace one-liner beside it, and check
# the store: fio's bandwidth, IOPS and p99 latency per direction with
# units and directions, a per-second series, the bpftrace map as probe
# counts, the image and its package list recorded with the run, and a
# --files file that reached the workload's directory (its hash recorded);
# then the seed's recipe (removed, alive) as a command workload and the
# built-in wb-handover (removed, alive) on the same kernel, their -ENOENT
# counts printed side by side and checked to agree (some with the old
# cgroup removed, none with it kept).
# Before this, --rootfs was an unknown option to kcanary boot and the agent
# had no fio workload ("unknown workload 'fio'").
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/guest-lib.sh
command -v mmdebstrap >/dev/null && command -v mksquashfs >/dev/null ||
	fail "no mmdebstrap or mksquashfs: run 'make deps' (mmdebstrap squashfs-tools)"

SPEC=debian:fio,bpftrace
echo "-- rootfs build, cold then warm"
$KC rootfs build $SPEC > "$HOME_DIR/cold" 2> "$HOME_DIR/err.cold" ||
	{ cat "$HOME_DIR/err.cold"; grep -hv "^I:" "$HOME_DIR"/rootfs/*.log | tail -n 40; fail "cold build failed"; }
cat "$HOME_DIR/cold"
grep -q "^rootfs [0-9a-f]\{64\} built in" "$HOME_DIR/cold" || fail "cold: not built: $(cat "$HOME_DIR/cold")"
$KC rootfs build $SPEC > "$HOME_DIR/warm" 2> "$HOME_DIR/err.warm" || { cat "$HOME_DIR/err.warm"; fail "warm lookup failed"; }
cat "$HOME_DIR/warm"
grep -q "^rootfs [0-9a-f]\{64\} cached in" "$HOME_DIR/warm" || fail "warm: built again: $(cat "$HOME_DIR/warm")"
[ "$(awk '{print $2}' "$HOME_DIR/cold")" = "$(awk '{print $2}' "$HOME_DIR/warm")" ] || fail "warm hash differs from cold"
hash=$(awk '{print $2}' "$HOME_DIR/cold")
[ "$(ls "$HOME_DIR"/rootfs/*.sqfs | wc -l)" = 1 ] || fail "expected one image: $(ls "$HOME_DIR/rootfs")"

echo "-- boot with fio and bpftrace"
printf 'kcanary %s\n' "$$" > "$HOME_DIR/marker.txt"
start=$(date +%s)
$KC boot --kernel "$KERNEL" --rootfs $SPEC --files "$HOME_DIR/marker.txt" --workload fio \
	--set runtime_s=10 --set size=32M --set rw=randrw \
	--set 'bpftrace=kretprobe:vfs_write { @ret[(int32)retval] = count(); }' \
	--watchdog 420s > "$HOME_DIR/out.boot" 2> "$HOME_DIR/err.boot"
rc=$?
cat "$HOME_DIR/out.boot"
[ $rc = 0 ] || { tail -n 20 "$HOME_DIR/err.boot"; fail "kcanary boot --rootfs exited $rc"; }
echo "   took $(( $(date +%s) - start )) s"
# the base image is not built again; the --files layer on it is a copy
! grep -q "building root filesystem" "$HOME_DIR/err.boot" || fail "the boot ran mmdebstrap again"
run=$(q "SELECT max(id) FROM runs")
[ "$(q "SELECT status FROM runs WHERE id = $run")" = ok ] ||
	fail "run $run: $(q "SELECT status, error FROM runs WHERE id = $run")"
fhash=$(q "SELECT rootfs_hash FROM runs WHERE id = $run")
[ -n "$fhash" ] && [ "$fhash" != "$hash" ] || fail "run $run: rootfs_hash '$fhash', expected the files image on $hash"
q "SELECT packages FROM rootfs_images WHERE hash = '$fhash'" | grep -q "^fio 3\." || fail "image: no fio in its package list"
q "SELECT packages FROM rootfs_images WHERE hash = '$fhash'" | grep -q "^bpftrace " || fail "image: no bpftrace in its package list"
grep -a -q "root filesystem /dev/vdb mounted" "$(q "SELECT console_log_path FROM runs WHERE id = $run")" ||
	fail "run $run: the console does not show the root filesystem mounted"
# the image's volume on the host is named by its content, hashed once and
# kept beside the image (so a later run reads nothing of it)
img="$HOME_DIR/rootfs/$fhash.sqfs"
vol=$(awk '{ printf "kc-sha256-%s-%s.rootfs", $1, $2 }' "$img.sha256" 2>/dev/null)
[ "$vol" = "kc-sha256-$(sha256sum "$img" | cut -d' ' -f1)-$(stat -c %s "$img").rootfs" ] ||
	fail "the image's kept hash: '$(cat "$img.sha256" 2>&1)'"
virsh -q -c qemu:///system vol-list kcanary | grep -q " $vol " ||
	fail "no volume $vol in pool kcanary: $(virsh -q -c qemu:///system vol-list kcanary | grep rootfs)"

# fio's figures, each direction, with unit and direction known to the store
for dir in read write; do
	for fig in "bw bytes/s higher" "iops ops/s higher" "clat_p99 ns lower"; do
		set -- $fig
		name="fio:kc:$dir:$1"
		v=$(q "SELECT value FROM run_summary WHERE run_id = $run AND metric = '$name'")
		[ -n "$v" ] || fail "run $run: no $name in the summary"
		awk -v v="$v" 'BEGIN { exit !(v > 0) }' || fail "run $run: $name = $v, expected > 0"
		[ "$(q "SELECT unit || ' ' || better FROM metrics WHERE name = '$name'")" = "$2 $3" ] ||
			fail "metric $name: $(q "SELECT unit, better FROM metrics WHERE name = '$name'"), expected $2 $3"
	done
	n=$(q "SELECT count(*) FROM samples s JOIN metrics m ON m.id = s.metric_id
	       WHERE s.run_id = $run AND m.name = 'fio:kc:$dir:bw'")
	[ "$n" -ge 5 ] || fail "run $run: $n per-second fio:kc:$dir:bw samples, expected at least 5 of a 10 s job"
done
# the bpftrace map: psync 4 KiB writes return 4096
n=$(q "SELECT count FROM probes WHERE run_id = $run AND name = 'bpftrace:ret' AND key = '4096'")
[ -n "$n" ] && [ "$n" -gt 0 ] || fail "run $run: no bpftrace:ret[4096] probe count: $(q "SELECT name, key, count FROM probes WHERE run_id = $run AND name LIKE 'bpftrace:%' LIMIT 5")"
# --files: hashed into the image's record
sha=$(sha256sum "$HOME_DIR/marker.txt" | cut -d' ' -f1)
[ "$(q "SELECT json_extract(files_json, '\$[0].sha256') || ' ' || json_extract(files_json, '\$[0].dst') FROM rootfs_images r JOIN runs u ON u.rootfs_hash = r.hash WHERE u.id = $run")" = "$sha marker.txt" ] ||
	fail "run $run: files_json $(q "SELECT files_json FROM rootfs_images r JOIN runs u ON u.rootfs_hash = r.hash WHERE u.id = $run")"

echo "-- the seed's minimal recipe (examples/seed-recipe), scaled for TCG, as a command workload"
sed -f examples/seed-recipe/tcg.sed examples/seed-recipe/recipe.sh > "$HOME_DIR/recipe.sh"
sed -f examples/seed-recipe/alive.sed "$HOME_DIR/recipe.sh" > "$HOME_DIR/recipe-alive.sh"
for mode in removed alive; do
	r=recipe.sh
	[ $mode = alive ] && r=recipe-alive.sh
	start=$(date +%s)
	$KC boot --kernel "$KERNEL" --rootfs $SPEC --files "$HOME_DIR/$r" \
		--files examples/seed-recipe/metrics.sh --workload command --variant "seed-$mode" \
		--set "cmd=bash ./metrics.sh ./$r" --set timeout_s=300 \
		--watchdog 540s > "$HOME_DIR/out.$mode" 2> "$HOME_DIR/err.$mode"
	rc=$?
	cat "$HOME_DIR/out.$mode"
	echo "   took $(( $(date +%s) - start )) s"
	run=$(q "SELECT max(id) FROM runs")
	[ $rc = 0 ] || { tail -n 30 "$(q "SELECT console_log_path FROM runs WHERE id = $run")"; fail "the seed recipe ($mode) exited $rc"; }
	! grep -q "building root filesystem" "$HOME_DIR/err.$mode" || fail "the recipe run ran mmdebstrap again"
	q "SELECT m.name || ' ' || s.value || ' ' || m.unit || ' ' || m.better FROM samples s JOIN metrics m ON m.id = s.metric_id
	   WHERE s.run_id = $run AND (m.name LIKE 'ret[%' OR m.name = 'elapsed_s')" > "$HOME_DIR/seed.$mode"
	sed "s/^/   $mode: /" "$HOME_DIR/seed.$mode"
	grep -q "^elapsed_s [0-9.]* s lower$" "$HOME_DIR/seed.$mode" || fail "run $run ($mode): no elapsed_s from the recipe's time"
	grep -q "^ret\[-\{0,1\}[0-9]*\] [0-9.]* calls lower$" "$HOME_DIR/seed.$mode" ||
		fail "run $run ($mode): no @ret[...] count from the recipe's bpftrace"
done

# The built-in wb-handover on the same kernel (the initramfs; its own BPF
# probe on cgroup_writeback_by_id), once per mode, its -ENOENT count beside
# the recipe's @ret[-2]. At $SHORT's 8 MB/s nothing is throttled and both
# modes count 0 (seen: removed 0 against the recipe's 832); at 48 MB/s
# into a 192M pod, as tests/fixtures/streams/guest-*.jsonl were recorded,
# the removed mode's foreign flushes miss the dying wb.
echo "-- the built-in wb-handover on the same kernel, beside the recipe"
for mode in removed alive; do
	$KC boot --kernel "$KERNEL" --workload wb-handover --variant "builtin-$mode" --set mode=$mode $SHORT \
		--set rate_mbps=48 --set pod_max=192M \
		--watchdog 300s > "$HOME_DIR/out.wb-$mode" 2> "$HOME_DIR/err.wb-$mode" ||
		{ tail -n 20 "$HOME_DIR/err.wb-$mode"; fail "kcanary boot --workload wb-handover mode=$mode failed"; }
	run=$(q "SELECT max(id) FROM runs")
	[ "$(q "SELECT status FROM runs WHERE id = $run")" = ok ] || fail "run $run (wb-handover $mode): $(q "SELECT status, error FROM runs WHERE id = $run")"
	v=$(q "SELECT value FROM run_summary WHERE run_id = $run AND metric = 'wb_by_id_enoent'")
	[ -n "$v" ] || fail "run $run (wb-handover $mode): no wb_by_id_enoent in the summary (probes not attached?)"
	echo "$v" > "$HOME_DIR/wb.$mode"
done
echo "   -ENOENT from cgroup_writeback_by_id, same kernel:"
printf '   %-8s %-22s %s\n' mode "seed recipe @ret[-2]" "wb-handover wb_by_id_enoent"
for mode in removed alive; do
	rec=$(sed -n 's/^ret\[-2\] \([0-9.]*\) .*/\1/p' "$HOME_DIR/seed.$mode")
	wb=$(cat "$HOME_DIR/wb.$mode")
	printf '   %-8s %-22s %s\n' $mode "${rec:-0}" "$wb"
	# the two agree: -ENOENT when the old cgroup is removed, none when it stays
	if [ $mode = removed ]; then
		awk -v a="${rec:-0}" -v b="$wb" 'BEGIN { exit !(a > 0 && b > 0) }'
	else
		awk -v a="${rec:-0}" -v b="$wb" 'BEGIN { exit !(a == 0 && b == 0) }'
	fi || fail "mode=$mode: the recipe's @ret[-2] ${rec:-0} and wb-handover's wb_by_id_enoent $wb disagree"
done
echo "guest rootfs: built once, booted cached; fio bw/iops/p99 per direction with units, per-second series, bpftrace map stored; the seed's recipe (removed, alive) ran with its @ret and elapsed time stored, the built-in wb-handover's -ENOENT counts agree with it"
