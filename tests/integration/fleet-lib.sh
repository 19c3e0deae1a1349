# fleet-lib.sh - shared by the t_fleet_*.sh integration tests (sourced
# after they set FLEET_NAME): a temporary $KCANARY_HOME with an API token,
# an output directory $out, a cleanup trap that kills the server ($spid),
# the agents ($apids) and any $extra_pids, fail(), start_server PORT (sets
# $url and $spid) and write_workload (the `command` workload script
# $tmp/wl.sh: run n of a host prints five values BASE * (1 + (3n+k mod 10)/100)).
B=${B:-build}
top=$PWD
KC=$top/$B/kcanary
AG=$top/$B/kcanary-agent
tmp=$(mktemp -d)
out=$top/$B/test-output/$FLEET_NAME
rm -rf "$out"
mkdir -p "$out"
spid=
apids=
extra_pids=
cleanup() {
	rc=$?
	[ -z "$spid" ] || kill -9 "$spid" 2>/dev/null || :
	for p in $apids $extra_pids; do kill -9 "$p" 2>/dev/null || :; done
	wait 2>/dev/null || :
	rm -rf "$tmp"
	exit $rc
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

export KCANARY_HOME=$tmp/home
mkdir -p "$KCANARY_HOME"
"$KC" token create fleet 2>/dev/null >"$tmp/token"

start_server() {
	"$KC" serve --listen "127.0.0.1:$1" >"$tmp/serve.out" 2>>"$out/serve.log" &
	spid=$!
	url=$(sh tools/serve-url.sh "$tmp/serve.out" $spid) && return 0
	cat "$out/serve.log"
	fail "kcanary serve did not start on port $1"
}

write_workload() {
	cat >"$tmp/wl.sh" <<'SH'
base=$1 cnt=$2
n=$(cat "$cnt" 2>/dev/null || echo 0)
echo $((n + 1)) >"$cnt"
awk -v n="$n" -v b="$base" 'BEGIN { for (k = 0; k < 5; k++) printf "metric x_s %.3f\n", b * (1 + ((n * 3 + k) % 10) / 100) }'
SH
}
