#!/bin/sh
# The build cache across trees (issue 19, item 7): build one base with
# `kcanary build` (tinyconfig, no fragments: the smallest real kernel
# build) in one tree, then the same base in a second tree at another path
# (a clone, deeper in another directory) with another KCANARY_HOME, so
# kcanary's own image cache cannot answer and only ccache can. Prints
# ccache's hit rate of the second build (target >= 95%) and its wall time
# as a share of the first, cold one (target <= 20%), measured side by side
# in this run, each with met / not met.
#
# Needs Debian's linux-source-6.12 tarball and ccache; a kernel build takes
# both cores, so the builds hold /tmp/kc-integration.lock. About 10 minutes
# on 2 cores. BENCH_DIR (default /var/tmp/kc-bench-ccache) is removed first.
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
KC=$(pwd)/$B/kcanary
TARBALL=${TARBALL:-/usr/src/linux-source-6.12.tar.xz}
W=${BENCH_DIR:-/var/tmp/kc-bench-ccache}
LOCK=${KC_LOCK:-/tmp/kc-integration.lock}

if [ ! -r "$TARBALL" ] || ! command -v ccache >/dev/null; then
	echo "b_ccache: SKIP: needs $TARBALL and ccache"
	exit 0
fi
rm -rf "$W" && mkdir -p "$W" || exit 1
export CCACHE_DIR="$W/ccache"

# hits and misses of the cacheable compilations since the last ccache -z
stats() {
	ccache --print-stats | awk -F'\t' '
		$1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { h += $2 }
		$1 == "cache_miss" { m += $2 }
		END { printf "%d %d\n", h, m }'
}

# build TREE HOME LOG: prints the wall seconds of the build, timed inside
# the lock (waiting for it is not build time)
build() {
	flock "$LOCK" sh -c 't0=$(date +%s.%N)
		KCANARY_HOME="$2" "$1" build --repo "$3" --base HEAD --no-default-fragments \
			--jobs 2 >"$4" 2>&1 || exit 1
		echo "$(date +%s.%N) $t0" >"$4.time"' sh "$KC" "$2" "$1" "$3" ||
		{ cat "$3" >&2; return 1; }
	awk '{ printf "%.1f\n", $1 - $2 }' "$3.time"
}

T1="$W/one/linux"
T2="$W/elsewhere/at/another/depth/linux"
"$KC" tree import "$TARBALL" --repo "$T1" >"$W/import.log" 2>&1 || { cat "$W/import.log"; exit 1; }
mkdir -p "$(dirname "$T2")"
git clone -q "$T1" "$T2" || exit 1
git -C "$T2" checkout -q "$(git -C "$T1" rev-parse HEAD)" || exit 1

ccache -z >/dev/null
cold=$(build "$T1" "$W/home1" "$W/build1.log") || exit 1
set -- $(stats); h1=$1 m1=$2
ccache -z >/dev/null
warm=$(build "$T2" "$W/home2" "$W/build2.log") || exit 1
set -- $(stats); h2=$1 m2=$2

echo "ccache across trees: tinyconfig of $(basename "$TARBALL") built in $T1, then in $T2"
echo "  cold build: ${cold} s, ccache hits $h1, misses $m1"
echo "  other tree: ${warm} s, ccache hits $h2, misses $m2"
awk -v h="$h2" -v m="$m2" -v c="$cold" -v w="$warm" 'BEGIN {
	rate = h + m > 0 ? 100 * h / (h + m) : 0
	ratio = c > 0 ? 100 * w / c : 100
	printf "goal: hit rate >= 95%% in the other tree: %.1f%%: %s\n", rate,
		(rate >= 95 ? "met" : "NOT met")
	printf "goal: the other tree takes <= 20%% of the cold build: %.1f%% (%.1f s / %.1f s): %s\n",
		ratio, w, c, (ratio <= 20 ? "met" : "NOT met")
}'
