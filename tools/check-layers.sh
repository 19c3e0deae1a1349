#!/bin/sh
# check-layers.sh - the folders are the layers: print every arrow that runs
# against their order and every cycle, of includes and of calls; exit 1 when
# there is any, 0 when there is none (`make check-layers`, part of `make test`).
#
#   usage: tools/check-layers.sh [BUILD_DIR]     (default: build)
#
# A module is a source path without .c/.h: server/store/db.c and
# server/store/db.h are one module "server/store/db". An arrow A -> B is
#   - an #include "..." in A.c or A.h that names a header of B (resolved as
#     the compiler does: beside the file, then lib/, then the binary's own
#     top folder), or
#   - a call: A's object needs a symbol (nm: undefined) that B's object
#     alone defines, so a cycle that the headers hide (A.c calls B, B.c
#     calls A, each through a third header) is still a cycle.
# Calls are read from the objects in BUILD_DIR (make all builds them).
#
# The layers are the folders below, lowest first; that order is the
# architecture, and it lives only here. An arrow may point
#   - inside its own folder (but no two modules may reach each other, even
#     through others: that is a cycle);
#   - to lib/, which both binaries share;
#   - from a server/ folder to a lower server/ folder.
# agent/ and server/ never reach each other: they are two binaries.
# Every source file must be in one of these folders.
LAYERS='
lib
agent
server/store
server/wrap
server/judge
server/guest
server/kernel
server/exec
server/api
server/cli
'

top=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-${B:-build}}
cd "$top" || exit 2
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# rank of each folder: "folder rank"
echo "$LAYERS" | awk 'NF { print $1, n++ }' >"$tmp/ranks"

# Every source file's folder must be a layer.
bad=0
for f in lib/*.[ch] agent/*.[ch] server/*.[ch] server/*/*.[ch] server/*/*/*.[ch]; do
	[ -e "$f" ] || continue
	case $f in *.bpf.c) continue ;; esac
	d=${f%/*}
	grep -q "^$d " "$tmp/ranks" || {
		echo "check-layers: $f is in no layer: its folder '$d' is not in LAYERS in $0"
		bad=1
	}
done
[ $bad -eq 0 ] || exit 1

# Include arrows: "kind from-module to-module what".
for f in $(awk '{ print $1 }' "$tmp/ranks"); do ls "$f"/*.[ch] 2>/dev/null; done |
	grep -v '\.bpf\.c$' >"$tmp/files"
while read -r f; do
	d=${f%/*}; bin=${f%%/*}
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
	while read -r inc; do
		for cand in "$d/$inc" "lib/$inc" "$bin/$inc"; do
			[ -e "$cand" ] || continue
			echo "include ${f%.[ch]} ${cand%.h} #include\"$inc\""
			break
		done
	done
done <"$tmp/files" >"$tmp/arrows"

# Call arrows from the objects: who defines each global symbol, who needs it.
objs=$(for f in $(grep '\.c$' "$tmp/files"); do o="$B/${f%.c}.o"; [ -e "$o" ] && echo "$o"; done)
if [ -z "$objs" ]; then
	echo "check-layers: no objects under $B/: run make all first (calls are read from them)"
	exit 2
fi
for o in $objs; do
	m=${o#"$B"/}; m=${m%.o}
	nm -P "$o" | awk -v m="$m" '$2 ~ /^[TDBRCGSV]$/ { print "def", $1, m } $2 == "U" { print "use", $1, m }'
done >"$tmp/syms"
awk '
$1 == "def" { n[$2]++; def[$2] = $3; next }
$1 == "use" { use[NR] = $2 " " $3 }
END {
	for (i in use) {
		split(use[i], u, " ")
		if (n[u[1]] == 1 && def[u[1]] != u[2])
			print "call", u[2], def[u[1]], u[1] "()"
	}
}' "$tmp/syms" | sort -u -k2,3 >>"$tmp/arrows"

# Arrows against the order.
awk '
NR == FNR { rank[$1] = $2; next }
function folder(m) { sub(/\/[^\/]*$/, "", m); return m }
function bin(m) { sub(/\/.*/, "", m); return m }
{
	if ($2 == $3) next
	ff = folder($2); ft = folder($3)
	if (ff == ft || ft == "lib") next
	if (bin($2) == "server" && bin($3) == "server" && rank[ft] < rank[ff]) next
	kind = rank[ft] > rank[ff] ? "upward" : "sideways"
	if (bin($2) != bin($3)) kind = "between binaries"
	printf "check-layers: %s %s arrow: %s -> %s (%s)\n", kind, $1, $2, $3, $4
}' "$tmp/ranks" "$tmp/arrows" | sort -u >"$tmp/up"

# Cycles, as coreutils tsort finds them (one line per cycle).
awk '$2 != $3 { print $2, $3 }' "$tmp/arrows" | sort -u | tsort 2>&1 >/dev/null |
awk '
/input contains a loop/ { if (c != "") print "check-layers: cycle:" c; c = " "; next }
/^tsort: / { sub(/^tsort: /, ""); c = (c == " " ? " " $0 : c " -> " $0) }
END { if (c != "") print "check-layers: cycle:" c }' >"$tmp/cycles"

cat "$tmp/cycles" "$tmp/up"
ncyc=$(wc -l <"$tmp/cycles"); nup=$(wc -l <"$tmp/up")
nmod=$(sed 's/\.[ch]$//' "$tmp/files" | sort -u | wc -l)
ninc=$(awk '$1 == "include" && $2 != $3 { print $2, $3 }' "$tmp/arrows" | sort -u | wc -l)
ncall=$(awk '$1 == "call" { print $2, $3 }' "$tmp/arrows" | sort -u | wc -l)
echo "check-layers: $nmod modules in $(grep -c . "$tmp/ranks") folders, $ninc include arrows, $ncall call arrows, $ncyc cycles, $nup arrows against the order"
[ "$ncyc" -eq 0 ] && [ "$nup" -eq 0 ]
