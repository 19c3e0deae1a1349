#!/bin/sh
# check-layers.sh - the include graph of server/: print its cycles and every
# arrow from a lower layer to a higher one; exit 1 when there is any, 0 when
# there is none (`make check-layers`, part of `make test`).
#
#   usage: tools/check-layers.sh [DIR]     (default: server/ of this tree)
#
# A module is a file name without .c/.h: compare.c and compare.h are one
# module "compare". An arrow A -> B is an `#include "B.h"` in A.c or A.h
# (headers not in DIR, such as generated ones, are not modules).
#
# The layers, lowest first, one row each: rank, name, peers, the modules
# (shell patterns). An arrow may point
#   - to a lower rank;
#   - inside one layer when its peers are "shared" (the store's db_*.c use
#     one another's helpers);
#   - inside a layer whose peers are "alone" only to the same module, the
#     name up to its first '_' (compare_build -> compare is one executor;
#     bisect_exec -> compare is one executor using another's insides).
# Two layers of the same rank are siblings: neither may include the other
# (the library wrappers and the engines know nothing of each other).
# Every module must match exactly one row: a new file is placed here by
# whoever adds it.
#
# Why the rows are where they are:
#   base      pure helpers every layer may use; stats is arithmetic only
#             (no store, no library), used by the store's listings too;
#             patch_fit is text in, text out (hunk relocation, reversal);
#             progress is stderr lines only
#   store     sqlite's one user (db*.c)
#   wrapper   each external library's one user: libgit2 git, libvirt vm,
#             GMime mbox, libmicrohttpd http, zlib gzip, libcurl
#             fetch (prometheus over it), nettle token
#   engine    pure engines over results: bisection, canary judge, report
#   service   job specs (inih's one user, but also variants, the matrix and
#             the stored job, built on series), the typed variant and its
#             JSON (variant), series and their application, builds, the
#             build service over them (variant_build), guest images, ingest,
#             one run in a guest (runner) and the run service over it
#             (guest_run, with the agent's check and a run's stored params)
#   executor  what carries out a stored job: compare, bisect
#   api       /api/v1/ (api.c, api_*.c) over http.h's request/response
#   command   the kcanary subcommands and main.c
LAYERS='
1 base     shared util log error json_num schema stats downsample patch_fit progress lkp_report
2 store    shared db db_*
3 wrapper  shared git vm mbox http gzip fetch prometheus token
3 engine   shared report report_* bisect bisect_log bisect_sim canary canary_format canary_sim
4 service  shared job variant series series_source series_diff inbox reply_mail apply build variant_build image rootfs ingest runner tree_import guest_run run_params agent_check lab hostfs
5 executor alone  compare compare_* bisect_exec
6 api      shared api api_*
7 command  shared cmd cmd_* main
'

dir=${1:-$(dirname "$0")/../server}
[ -d "$dir" ] || { echo "check-layers: no directory '$dir'" >&2; exit 2; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# Every module's layer: "module rank layer peers".
for f in "$dir"/*.c "$dir"/*.h; do
	[ -e "$f" ] || continue
	m=$(basename "$f"); m=${m%.[ch]}
	echo "$m"
done | sort -u >"$tmp/modules"
bad=0
while read -r m; do
	hit=""
	while read -r rank layer peers pats; do
		[ -n "$rank" ] || continue
		for p in $pats; do
			# shellcheck disable=SC2254
			case $m in $p) hit="$hit$rank $layer $peers|"; break ;; esac
		done
	done <<EOF
$LAYERS
EOF
	case $hit in
	"") echo "check-layers: module '$m' is in no layer: add it to LAYERS in $0"
	    bad=1 ;;
	*"|"?*) echo "check-layers: module '$m' is in more than one layer (${hit%|}): fix LAYERS in $0"
	    bad=1 ;;
	*) echo "$m ${hit%|}" ;;
	esac
done <"$tmp/modules" >"$tmp/layers"
grep '^check-layers:' "$tmp/layers" && exit 1

# The arrows: "from-file from-module to-module", local headers only.
for f in "$dir"/*.c "$dir"/*.h; do
	[ -e "$f" ] || continue
	b=$(basename "$f")
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
	while read -r inc; do
		[ -e "$dir/$inc" ] || continue
		t=$(basename "$inc"); t=${t%.h}
		[ "$t" = "${b%.[ch]}" ] || echo "$b ${b%.[ch]} $t"
	done
done >"$tmp/arrows"

# Upward, or sideways between modules that must not see each other.
awk '
NR == FNR { rank[$1] = $2; layer[$1] = $3; peers[$1] = $4; next }
{
	f = $2; t = $3
	if (rank[t] < rank[f])
		next
	if (layer[t] == layer[f]) {
		if (peers[f] == "shared")
			next
		mf = f; sub(/_.*/, "", mf); mt = t; sub(/_.*/, "", mt)
		if (mf == mt)
			next
	}
	kind = "sideways"
	if (rank[t] > rank[f])
		kind = "upward"
	printf "check-layers: %s arrow: %s includes %s.h (%s %d -> %s %d)\n",
	       kind, $1, t, layer[f], rank[f], layer[t], rank[t]
}' "$tmp/layers" "$tmp/arrows" >"$tmp/up"

# Cycles, as coreutils tsort finds them (one line per cycle).
awk '{ print $2, $3 }' "$tmp/arrows" | sort -u | tsort 2>&1 >/dev/null |
awk '
/input contains a loop/ { if (c != "") print "check-layers: cycle:" c; c = " "; next }
/^tsort: / { sub(/^tsort: /, ""); c = (c == " " ? " " $0 : c " -> " $0) }
END { if (c != "") print "check-layers: cycle:" c }' >"$tmp/cycles"

cat "$tmp/cycles" "$tmp/up"
ncyc=$(wc -l <"$tmp/cycles"); nup=$(wc -l <"$tmp/up")
nmod=$(wc -l <"$tmp/layers"); narr=$(awk '{ print $2, $3 }' "$tmp/arrows" | sort -u | wc -l)
echo "check-layers: $nmod modules, $narr arrows, $ncyc cycles, $nup upward or sideways arrows"
[ "$ncyc" -eq 0 ] && [ "$nup" -eq 0 ]
