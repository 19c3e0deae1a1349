#!/bin/sh
# t_compare_resume.sh - a compare job of 2 variants x 2 repeats on Debian's
# prebuilt cloud kernel (the base and an A/A copy) in real TCG guests; the
# coordinator is killed (SIGKILL) during run 2 and 'kcanary resume'
# finishes the job: every finished run is kept once, the killed run is
# 'interrupted' with its samples and a fresh repeat replaced it.
set -u
. tests/integration/guest-lib.sh

KCQ="$PWD/$B/kcanary"
$KCQ compare --name resume-it --kernels "$KERNEL" --aa --repeat 2 --seed 1 $SHORT \
	>"$HOME_DIR/out.1" 2>"$HOME_DIR/err.1" &
pid=$!
# wait for run 2 to be running with samples stored, then kill -9
i=0
while :; do
	n=$(q "SELECT count(*) FROM runs r WHERE r.seq = 2 AND r.status = 'running'
	       AND (SELECT count(*) FROM samples s WHERE s.run_id = r.id) >= 2" 2>/dev/null)
	[ "${n:-0}" = 1 ] && break
	kill -0 $pid 2>/dev/null || fail "coordinator ended before run 2 ran: $(tail -5 "$HOME_DIR/err.1")"
	i=$((i + 1))
	[ $i -lt 600 ] || fail "run 2 never got going"
	sleep 0.5
done
kill -9 $pid
wait $pid 2>/dev/null
[ "$(q "SELECT status FROM runs WHERE seq = 1")" = ok ] || fail "run 1 not ok before the kill"
fin1=$(q "SELECT finished_at || id FROM runs WHERE seq = 1")
killed=$(q "SELECT id FROM runs WHERE seq = 2")
samples_killed=$(q "SELECT count(*) FROM samples WHERE run_id = $killed")
# the dead coordinator's run is not shown as live (issue 18)
$KCQ status resume-it >"$HOME_DIR/status.1" || fail "status after the kill"
grep -q "interrupted: the coordinator (pid $pid@" "$HOME_DIR/status.1" ||
	fail "status does not say the coordinator is gone: $(cat "$HOME_DIR/status.1")"
grep -q "now: run" "$HOME_DIR/status.1" && fail "status shows the killed run as live"

$KCQ resume resume-it >"$HOME_DIR/out.2" 2>"$HOME_DIR/err.2" || fail "resume: $(tail -5 "$HOME_DIR/err.2")"
grep -q "1 interrupted run rescheduled" "$HOME_DIR/err.2" || fail "resume said: $(head -3 "$HOME_DIR/err.2")"
[ "$(q "SELECT status FROM jobs")" = done ] || fail "job not done"
[ "$(q "SELECT count(*) FROM runs WHERE status = 'ok'")" = 4 ] || fail "not 4 ok runs: $(q 'SELECT seq, status FROM runs')"
[ "$(q "SELECT count(*) FROM runs")" = 5 ] || fail "expected 5 runs (4 + the interrupted one)"
[ "$(q "SELECT status FROM runs WHERE id = $killed")" = interrupted ] || fail "killed run not interrupted"
[ "$(q "SELECT count(*) FROM samples WHERE run_id = $killed")" -ge "$samples_killed" ] || fail "samples of the killed run lost"
[ "$(q "SELECT finished_at || id FROM runs WHERE seq = 1")" = "$fin1" ] || fail "run 1 was touched by the resume"
# each variant has repeats 1 and 3 (2 was interrupted) or 1 and 2, once each
[ "$(q "SELECT count(*) FROM (SELECT variant_id, repeat_idx FROM runs WHERE status = 'ok'
	GROUP BY variant_id, repeat_idx HAVING count(*) > 1)")" = 0 ] || fail "a finished run twice"
grep -q "Worst lag behind schedule over 8s (wb-handover, ext4)" "$HOME_DIR/out.2" || fail "no report"
# the killed coordinator's guest went with its libvirt connection
# (autodestroy); other guests on this host are not this test's business
left=$(virsh -q -c qemu:///system list --name 2>/dev/null | grep -c "^kcanary-r[0-9]*-p$pid-" || true)
[ "$left" = 0 ] || fail "$left guests of the killed coordinator (pid $pid) left running"
cat "$HOME_DIR/out.2"
echo "ok: killed during run 2, resumed, 4 runs ok once each, the killed run kept as interrupted"
