#!/bin/sh
# t_fleet_prometheus.sh - the Prometheus source of the canary verdict:
# Debian's prometheus on loopback scrapes the /metrics of 8 real agents
# (kcanary-agent daemon --metrics-listen 127.0.0.1:0) every second; four
# report kernel 6.12.115, four 6.12.117 whose `command` workload prints
# values 30% higher. `kcanary canary --prometheus URL --query
# 'x_s=kcanary_workload_sample{metric="x_s",$cohort}'` must fail the
# canary and pass an A/A split of the control's hosts. About 35 s.
set -eu
PROM=${PROMETHEUS:-$(command -v prometheus || echo /usr/bin/prometheus)}
[ -x "$PROM" ] || { echo "skip: Debian's prometheus is not installed (make deps installs it)"; exit 77; }
command -v curl >/dev/null || { echo "skip: curl is missing"; exit 77; }

FLEET_NAME=fleet-prometheus
. tests/integration/fleet-lib.sh
start_server 0
write_workload
for i in 1 2 3 4 5 6 7 8; do
	if [ $i -le 4 ]; then kernel=6.12.115 base=10; else kernel=6.12.117 base=13; fi
	half=a
	[ $((i % 2)) -eq 0 ] && half=b
	"$AG" daemon --server "$url" --token-file "$tmp/token" --host-id "prom-$i" \
		--kernel-release "$kernel" --labels "half=$half" --interval 1s \
		--metrics-listen 127.0.0.1:0 \
		--workload command --every 1s cgroup=0 dir="$tmp" cmd="sh $tmp/wl.sh $base $tmp/cnt.$i" \
		>"$out/agent$i.out" 2>"$out/agent$i.log" &
	apids="$apids $!"
done
targets=
for i in 1 2 3 4 5 6 7 8; do
	t=
	for _ in $(seq 50); do
		t=$(sed -n 's|.*metrics on http://\(127.0.0.1:[0-9]*\)/metrics|\1|p' "$out/agent$i.log" 2>/dev/null || :)
		[ -n "$t" ] && break
		sleep 0.1
	done
	[ -n "$t" ] || { cat "$out/agent$i.log"; fail "agent $i did not say where /metrics is"; }
	targets="$targets${targets:+, }'$t'"
done
for _ in $(seq 50); do   # the first sample comes within --interval
	curl -sf "http://${t}/metrics" >"$out/metrics-agent8.txt" || fail "GET /metrics of agent 8"
	grep -q '^kcanary_dirty_pages{host="prom-8",kernel="6.12.117",half="b"} ' "$out/metrics-agent8.txt" &&
		break
	sleep 0.1
done
grep -q '^kcanary_dirty_pages{host="prom-8",kernel="6.12.117",half="b"} ' "$out/metrics-agent8.txt" ||
	fail "no kcanary_dirty_pages with the host's labels in /metrics"

cat >"$tmp/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: kcanary-agents
    static_configs:
      - targets: [$targets]
YML
# a port for prometheus (it cannot bind port 0 and say which): derived from
# our pid, another one when it is taken
prom_url=
for attempt in 1 2 3; do
	port=$(( (($$ + attempt * 7919) % 20000) + 40000 ))
	"$PROM" --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
		--web.listen-address="127.0.0.1:$port" >"$out/prometheus.log" 2>&1 &
	extra_pids=$!
	for _ in $(seq 100); do
		if curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null 2>&1; then
			prom_url=http://127.0.0.1:$port
			break 2
		fi
		kill -0 "$extra_pids" 2>/dev/null || break
		sleep 0.2
	done
	kill -9 "$extra_pids" 2>/dev/null || :
	wait "$extra_pids" 2>/dev/null || :
	extra_pids=
done
[ -n "$prom_url" ] || { tail -5 "$out/prometheus.log"; fail "prometheus did not start"; }
echo "prometheus $("$PROM" --version 2>&1 | head -1 | cut -d' ' -f3) on $prom_url scraping 8 agents"

# let it gather 22 s of samples
up=0
for _ in $(seq 60); do
	up=$(curl -sf "$prom_url/api/v1/query?query=sum(up)" 2>/dev/null | sed -n 's/.*"value":\[[0-9.]*,"\([0-9]*\)"\].*/\1/p')
	[ "${up:-0}" -eq 8 ] && break
	sleep 0.5
done
[ "${up:-0}" -eq 8 ] || fail "prometheus scrapes ${up:-0} of 8 agents"
sleep 22

q='x_s=kcanary_workload_sample{metric="x_s",$cohort}'
rc=0
"$KC" canary --prometheus "$prom_url" --query "$q" --window 20s --step 1s --seed 1 \
	--control kernel=6.12.115 --canary kernel=6.12.117 >"$out/regression.txt" 2>&1 || rc=$?
cat "$out/regression.txt"
[ $rc -eq 1 ] || fail "the shifted canary got exit status $rc from the Prometheus source, expected 1"
grep -q "canary verdict: FAIL" "$out/regression.txt" || fail "no FAIL verdict"
grep -q "samples on 4 series" "$out/regression.txt" || fail "expected 4 series per cohort"

rc=0
"$KC" canary --prometheus "$prom_url" --query "$q" --window 20s --step 1s --seed 1 --per-host \
	--control 'kernel=6.12.115,half=a' --canary 'kernel=6.12.11[5],half=b' >"$out/aa-per-host.txt" 2>&1 || rc=$?
# --per-host: one value per series, 2 against 2 is too few to judge (NODATA)
grep -q "nodata *2/2" "$out/aa-per-host.txt" || { cat "$out/aa-per-host.txt"; fail "--per-host did not give one value per series"; }
# and that is no verdict: exit 4 (not a crash, not a usage error, not a pass)
[ $rc -eq 4 ] || { cat "$out/aa-per-host.txt"; fail "--per-host 2 against 2: exit $rc, expected 4 (no verdict)"; }
grep -q "^canary verdict: NO VERDICT" "$out/aa-per-host.txt" || fail "--per-host: no NO VERDICT line"
# the A/A split per sample (the second selector a glob: a =~ matcher)
rc=0
"$KC" canary --prometheus "$prom_url" --query "$q" --window 20s --step 1s --seed 1 \
	--control 'kernel=6.12.115,half=a' --canary 'kernel=6.12.11[5],half=b' >"$out/aa.txt" 2>&1 || rc=$?
cat "$out/aa.txt"
[ $rc -eq 0 ] || fail "the A/A split got exit status $rc from the Prometheus source, expected 0"

rc=0
"$KC" canary --prometheus "$prom_url" --query 'x=up' --control kernel=1 --canary kernel=2 \
	>"$out/noquery.txt" 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q 'cohort' "$out/noquery.txt" || fail "a query without \$cohort was not refused"
echo "fleet prometheus: regression fails, A/A passes"
