#!/bin/sh
# t_guest_command.sh - the `command` workload in a real guest, on btrfs.
# t_agent_cli.sh runs the same workload for real on the host only when the
# host has cgroup v2 with memory (this CI host has cgroup v1, so it does
# not); the guest always has it. One short TCG boot checks what the
# docs/guests.md says of `command` and of btrfs guests: the script runs in
# kcanary-cmd/run with memory.max = mem_max, under the scratch directory
# on the filesystem asked for; each "metric NAME VALUE [UNIT higher|lower]"
# line is a stored sample (its unit and direction kept); any other stdout
# line goes to the agent's stderr, the console; the run ends ok.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/guest-lib.sh

# What the script reports, each as a metric: whether it runs in the
# cgroup command.c makes, that cgroup's memory.max, whether its working
# directory is on btrfs (statfs magic 0x9123683e); then a line that is not a metric, for the console.
# shellcheck disable=SC2016 # expanded in the guest
CMD='cmd=cg=$(cut -d: -f3 /proc/self/cgroup);
[ "$cg" = /kcanary-cmd/run ] && echo metric in_cmd_cgroup 1 || echo metric in_cmd_cgroup 0;
echo metric cg_mem_max_bytes $(cat /sys/fs/cgroup$cg/memory.max) bytes lower;
[ "$(stat -f -c %t .)" = 9123683e ] && echo metric cwd_on_btrfs 1 || echo metric cwd_on_btrfs 0;
echo "not a metric: cgroup $cg in $(pwd)"'
CMD=$(echo "$CMD" | tr '\n' ' ')
start=$(date +%s)
$KC boot --kernel "$KERNEL" --fs btrfs --workload command --set "$CMD" --set mem_max=64M \
	--watchdog 120s > "$HOME_DIR/out" 2> "$HOME_DIR/err.1"
rc=$?
cat "$HOME_DIR/out"
echo "   took $(( $(date +%s) - start )) s"
[ $rc = 0 ] || { tail -n 20 "$HOME_DIR/err.1"; fail "kcanary boot --workload command exited $rc"; }
run=$(q "SELECT max(id) FROM runs")
[ "$(q "SELECT status || ' ' || fs FROM runs WHERE id = $run")" = "ok btrfs" ] ||
	fail "run $run: $(q "SELECT status, fs, error FROM runs WHERE id = $run")"
[ "$(q "SELECT json_extract(hello_json, '$.fs_type') FROM runs WHERE id = $run")" = btrfs ] ||
	fail "run $run: the agent did not run on btrfs: $(q "SELECT hello_json FROM runs WHERE id = $run")"
val() { q "SELECT s.value FROM samples s JOIN metrics m ON m.id = s.metric_id
	   WHERE s.run_id = $run AND m.name = '$1'"; }
[ "$(val in_cmd_cgroup)" = 1.0 ] || fail "the script did not run in kcanary-cmd/run: in_cmd_cgroup '$(val in_cmd_cgroup)'"
[ "$(val cg_mem_max_bytes)" = 67108864.0 ] || fail "its cgroup's memory.max is '$(val cg_mem_max_bytes)', expected 64M"
[ "$(q "SELECT unit || ' ' || better FROM metrics WHERE name = 'cg_mem_max_bytes'")" = "bytes lower" ] ||
	fail "unit and direction of cg_mem_max_bytes: '$(q "SELECT unit, better FROM metrics WHERE name = 'cg_mem_max_bytes'")'"
[ "$(val cwd_on_btrfs)" = 1.0 ] || fail "its directory is not on btrfs: cwd_on_btrfs '$(val cwd_on_btrfs)'"
grep -q "not a metric: cgroup /kcanary-cmd/run in /mnt/scratch" "$(q "SELECT console_log_path FROM runs WHERE id = $run")" ||
	fail "the script's other stdout is not on the console"
echo "command: ran in kcanary-cmd/run (memory.max 64M) on btrfs in a guest, its metrics stored"
