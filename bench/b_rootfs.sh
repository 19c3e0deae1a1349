#!/bin/sh
# Guest root filesystem build time (server/guest/rootfs.c, `kcanary rootfs build`):
# debian:fio,bpftrace into an empty $KCANARY_HOME (cold: mmdebstrap from the
# host's package lists and apt sources, the agent, mksquashfs), then the
# same again (warm: apt's resolution of the versions only, no build).
# Targets on these 2-core hosts: cold <= 120 s, warm <= 10 s and nothing
# built. Needs root, mmdebstrap and squashfs-tools; reports and exits 0
# otherwise. One line per figure, as bench/run.sh reads it:
# "target: WHAT: FIGURE: met|NOT met".
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
SPEC=${KCANARY_BENCH_ROOTFS:-debian:fio,bpftrace}
if [ "$(id -u)" != 0 ] || ! command -v mmdebstrap >/dev/null || ! command -v mksquashfs >/dev/null; then
	echo "rootfs: skipped (needs root, mmdebstrap and squashfs-tools; run 'make deps')"
	exit 0
fi
tmp=$(mktemp -d /tmp/kcbench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export KCANARY_HOME=$tmp/home KCANARY_AGENT=$PWD/$B/kcanary-agent

one() {   # one build: "<built|cached> <seconds>"
	start=$(date +%s.%N)
	"$B/kcanary" rootfs build "$SPEC" > "$tmp/out" 2> "$tmp/err" || { cat "$tmp/out" "$tmp/err"; return 1; }
	end=$(date +%s.%N)
	how=$(awk '{print $3}' "$tmp/out")
	echo "$how $(echo "$end - $start" | bc)"
}
cold=$(one) || exit 1
warm=$(one) || exit 1
cat "$tmp/out"
echo "$cold" | awk -v spec="$SPEC" '{ printf "target: rootfs %s cold build <= 120 s: %.1f s (%s, %.2fx the target): %s\n", spec, $2, $1, $2 / 120, ($1 == "built" && $2 <= 120) ? "met" : "NOT met" }'
echo "$warm" | awk -v spec="$SPEC" '{ printf "target: rootfs %s warm <= 10 s and no build: %.1f s (%s, %.2fx the target): %s\n", spec, $2, $1, $2 / 10, ($1 == "cached" && $2 <= 10) ? "met" : "NOT met" }'
