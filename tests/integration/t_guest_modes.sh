#!/bin/sh
# t_guest_modes.sh - wb-handover's mode=alive (the seed's control: the old
# cgroup kept) and mode=fresh (the new writer on files of its own: no
# hand-over) in real guests, scaled down like t_guest_boot.sh (which runs
# the default, mode=removed). For each: the run is ok, the agent echoed
# the mode in hello, its phases are those of the mode (no remove_old: the
# old cgroup is never removed; old_writer, settle, new_writer and
# measure_end all there), and the new writer sent lag samples.
# MODES=alive (say) runs one of them.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/guest-lib.sh

for mode in ${MODES:-alive fresh}; do
	echo "-- mode=$mode"
	start=$(date +%s)
	# shellcheck disable=SC2086
	$KC boot --kernel "$KERNEL" $SHORT --set mode=$mode --watchdog 240s \
		> "$HOME_DIR/out.$mode" 2> "$HOME_DIR/err.$mode"
	rc=$?
	cat "$HOME_DIR/out.$mode"
	[ $rc = 0 ] || { tail -n 20 "$HOME_DIR/err.$mode"; fail "kcanary boot --set mode=$mode exited $rc"; }
	echo "   took $(( $(date +%s) - start )) s"
	run=$(q "SELECT max(id) FROM runs")
	[ "$(q "SELECT status FROM runs WHERE id = $run")" = ok ] ||
		fail "run $run: $(q "SELECT status, error FROM runs WHERE id = $run")"
	[ "$(q "SELECT json_extract(hello_json, '$.params.mode') FROM runs WHERE id = $run")" = "$mode" ] ||
		fail "run $run: the agent did not say mode=$mode: $(q "SELECT hello_json FROM runs WHERE id = $run")"
	phases=$(q "SELECT group_concat(name, ' ') FROM (SELECT name FROM phases WHERE run_id = $run ORDER BY t_s, rowid)")
	echo "   phases: $phases"
	case " $phases " in
	*" remove_old "*) fail "run $run (mode=$mode) removed the old cgroup: $phases" ;;
	esac
	for p in old_writer settle new_writer measure_end; do
		case " $phases " in
		*" $p "*) ;;
		*) fail "run $run (mode=$mode): no phase $p in '$phases'" ;;
		esac
	done
	n=$(q "SELECT count(*) FROM samples s JOIN metrics m ON m.id = s.metric_id
	       WHERE s.run_id = $run AND m.name = 'lag_s'")
	[ "$n" -ge 5 ] || fail "run $run (mode=$mode): $n lag_s samples, expected at least 5"
done
echo "modes: ${MODES:-alive fresh} ran in guests, the old cgroup kept, lag measured"
