#!/bin/sh
# t_fleet_soak.sh - 8 fleet agents (kcanary-agent daemon, real processes,
# distinct --host-id, loopback only) stream to kcanary serve; the server is
# SIGKILLed midway and restarted on the same port. At the end every record
# each agent numbered is stored exactly once: the agents' own counts
# (their final stats line) against the store's rows. Half the agents also
# run the `command` workload every 3 s (cgroup=0: this host has no cgroup
# v2 memory controller), so workload runs cross the restart too. Agent 1
# is stopped while the server is down (its records wait in its spool file)
# and started again on the same spool: its two processes together must
# account for every record of soak-1.
# Bounded: about 40 s. SOAK_S=N runs longer.
set -eu
N=8
SOAK_S=${SOAK_S:-24}
command -v sqlite3 >/dev/null || { echo "skip: the sqlite3 CLI is missing (make deps)"; exit 77; }
command -v curl >/dev/null || { echo "skip: curl is missing"; exit 77; }

FLEET_NAME=fleet-soak
. tests/integration/fleet-lib.sh
db=$KCANARY_HOME/kcanary.db

start_server 0
port=${url##*:}
echo "server $url"

start_agent() { # i, extra args...
	i=$1
	shift
	"$AG" daemon --server "$url" --token-file "$tmp/token" --host-id "soak-$i" \
		--labels "cohort=c$((i % 2)),slot=s$i" --interval 100ms --heartbeat 1s \
		"$@" >>"$out/agent$i.out" 2>>"$out/agent$i.log" &
	apid=$!
}

t0=$(date +%s)
i=1
while [ $i -le $N ]; do
	spool="--spool $tmp/agent$i.spool"
	[ $i -eq $N ] && spool=   # one agent keeps its queue in memory only
	if [ $((i % 2)) -eq 0 ]; then
		set -- --workload command --every 3s cgroup=0 dir="$tmp" \
			cmd="for k in 1 2 3 4 5; do echo metric soak_x_s $i.\$k; done"
	else
		set --
	fi
	drain=20s
	[ $i -eq 1 ] && drain=1s   # stopped while the server is away: gives up soon
	start_agent $i $spool --drain $drain "$@"
	[ $i -eq 1 ] && a1=$apid || apids="$apids $apid"
	i=$((i + 1))
done

half=$((SOAK_S / 2))
sleep "$half"
kill -9 "$spid"
wait "$spid" 2>/dev/null || :
spid=
echo "server killed (SIGKILL) after ${half}s; agents spool for 4s"
sleep 2
# agent 1 stops while the server is away: what it could not send stays in its spool
kill -TERM "$a1"
wait "$a1" || fail "agent 1 exited with status $?"
a1_pending=$(sed -n 's/.* pending=\([0-9]*\).*/\1/p' "$out/agent1.out")
[ "${a1_pending:-0}" -gt 0 ] || fail "agent 1 stopped with nothing spooled: $(cat "$out/agent1.out")"
echo "agent 1 stopped with $a1_pending records in its spool file"
sleep 2
start_server "$port"
echo "server restarted on the same port"
i=1
start_agent 1 --spool "$tmp/agent1.spool" --drain 20s
apids="$apids $apid"
sleep "$half"

for p in $apids; do kill -TERM "$p"; done
for p in $apids; do wait "$p" || fail "an agent exited with status $?"; done
apids=
t1=$(date +%s)

# the attach points the passive probes loaded on this kernel
sed -n "s/.*probes \([a-z]*\)\(.*\)/probes \1\2/p" "$out/agent1.log" | head -1

q() { sqlite3 "$db" "$1"; }
total=0 dups=0 wl_runs=0
i=1
while [ $i -le $N ]; do
	line=$(grep '^kcanary-agent daemon: stats ' "$out/agent$i.out" | tail -n 1)
	[ -n "$line" ] ||
		{ cat "$out/agent$i.log"; fail "agent $i printed no stats line"; }
	get() { echo "$line" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }
	produced=$(get produced) samples=$(get samples) pending=$(get pending)
	acked=$(get acked_seq) dropped=$(get dropped) next=$(get next_seq)
	if [ $i -eq 1 ]; then   # two processes: add up the first one's counts
		first=$(grep '^kcanary-agent daemon: stats ' "$out/agent1.out" | head -1)
		produced=$((produced + $(echo "$first" | sed -n 's/.* produced=\([0-9]*\).*/\1/p')))
		samples=$((samples + $(echo "$first" | sed -n 's/.* samples=\([0-9]*\).*/\1/p')))
		first_next=$(echo "$first" | sed -n 's/.* next_seq=\([0-9]*\).*/\1/p')
		# the second process numbered on after the spooled records
		[ $((next - $(get produced))) -eq "$first_next" ] ||
			fail "agent 1's second process did not go on from seq $first_next: $line"
	fi
	[ "$pending" -eq 0 ] || fail "agent $i still has $pending records queued: $line"
	[ "$dropped" -eq 0 ] || fail "agent $i dropped $dropped records: $line"
	h="(SELECT id FROM hosts WHERE name = 'soak-$i')"
	runs="(SELECT run_id FROM host_runs WHERE host_id = $h)"
	s_next=$(q "SELECT next_seq FROM hosts WHERE name = 'soak-$i'")
	s_records=$(q "SELECT records FROM hosts WHERE name = 'soak-$i'")
	s_dups=$(q "SELECT duplicates FROM hosts WHERE name = 'soak-$i'")
	s_lines=$(q "SELECT coalesce(sum(records + bad_lines), 0) FROM runs WHERE id IN $runs")
	s_bad=$(q "SELECT coalesce(sum(bad_lines), 0) FROM runs WHERE id IN $runs")
	s_samples=$(q "SELECT count(*) FROM samples WHERE run_id IN $runs")
	s_wl=$(q "SELECT count(*) FROM runs WHERE id IN $runs AND cell = 'workload=command'")
	echo "soak-$i: agent produced $produced (samples $samples), acked seq $acked;" \
	     "store: next seq $s_next, records $s_records, lines in runs $s_lines, samples $s_samples," \
	     "duplicates dropped $s_dups, workload runs $s_wl"
	[ "$acked" -eq "$produced" ] || fail "soak-$i: acked seq $acked, produced $produced"
	[ "$s_next" -eq "$next" ] || fail "soak-$i: the store expects seq $s_next, the agent $next"
	[ "$s_records" -eq "$produced" ] || fail "soak-$i: the store counted $s_records records, the agent produced $produced"
	[ "$s_lines" -eq "$produced" ] || fail "soak-$i: the host's runs hold $s_lines records, the agent produced $produced"
	[ "$s_samples" -eq "$samples" ] || fail "soak-$i: $s_samples sample rows stored, the agent produced $samples samples"
	[ "$s_bad" -eq 0 ] || fail "soak-$i: $s_bad records stored raw"
	if [ $((i % 2)) -eq 0 ]; then
		[ "$s_wl" -ge 3 ] || fail "soak-$i: only $s_wl workload runs stored"
		bad_wl=$(q "SELECT count(*) FROM runs WHERE id IN $runs AND cell = 'workload=command' AND status NOT IN ('ok', 'failed')")
		# the run interrupted by the agent's stop may end failed; none may stay running
		[ "$bad_wl" -eq 0 ] || fail "soak-$i: $bad_wl workload runs neither ok nor failed"
	fi
	total=$((total + produced))
	dups=$((dups + s_dups))
	wl_runs=$((wl_runs + s_wl))
	i=$((i + 1))
done
passive=$(q "SELECT count(*) FROM runs WHERE cell = 'workload=passive'")
[ "$passive" -eq $N ] || fail "$passive passive runs, expected one per host ($N)"
kr=$(q "SELECT count(*) FROM runs WHERE host LIKE 'soak-%' AND kernel_release = '$(uname -r)'")
[ "$kr" -eq "$(q "SELECT count(*) FROM runs")" ] || fail "runs without the hosts' kernel release"
echo "fleet soak: $N agents, $total records in $((t1 - t0)) s, each stored exactly once;" \
     "$dups duplicates dropped by (agent, seq); $wl_runs workload runs; server SIGKILLed and restarted once"
