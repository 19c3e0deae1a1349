#!/bin/bash
# metrics.sh - run a recipe (default ./recipe.sh) as it is, in $DIR
# (default: here), its output on stderr, and turn what it prints into the
# command workload's metric lines: each "@ret[K]: N" of its bpftrace map
# as "metric ret[K] N calls lower", and bash's "real XmY.Zs" of the timed
# replacement as "metric elapsed_s SECONDS s lower".
#   kcanary boot ... --rootfs debian:bpftrace --files recipe.sh \
#       --files metrics.sh --workload command --set cmd='bash ./metrics.sh'
recipe=${1:-./recipe.sh}
export DIR=${DIR:-$PWD}
out=$(bash "$recipe" 2>&1)
rc=$?
printf '%s\n' "$out" >&2
printf '%s\n' "$out" | awk '
/^@ret\[-?[0-9]+\]: [0-9]+$/ {
	k = $1; sub(/^@ret\[/, "", k); sub(/\]:$/, "", k)
	printf "metric ret[%s] %s calls lower\n", k, $2
}
/^real[ \t]/ {
	t = $2; m = t; sub(/m.*/, "", m); s = t; sub(/^[0-9]+m/, "", s); sub(/s$/, "", s)
	printf "metric elapsed_s %.3f s lower\n", m * 60 + s
}'
exit $rc
