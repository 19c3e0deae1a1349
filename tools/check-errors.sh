#!/bin/sh
# check-errors.sh - the public headers' error carriers (error.h): list
# every int-returning function declared in lib/*.h, server/*/*.h and
# agent/*.h (or DIR/*.h for each DIR given) whose
# last parameter is not `struct buf *err`, and flag any other carrier
# (a char *err/size_t pair, a char **err, a per-connection or per-thread
# last-error getter). Exit 1 when another carrier is found.
#
#   usage: tools/check-errors.sh [DIR...]
top=$(dirname "$0")/..
[ $# -gt 0 ] || set -- "$top"/lib "$top"/server/*/ "$top"/agent
hdrs=$(for d in "$@"; do ls "${d%/}"/*.h 2>/dev/null; done)
bad=0
for h in $hdrs; do
	# join declarations onto one line, drop comments
	sed 's://.*$::' "$h" | awk '
	/\/\*/ { c = 1 } c { if (/\*\//) c = 0; next }
	{ line = line " " $0 }
	/;[[:space:]]*$/ || /^[[:space:]]*$/ || /^#/ { if (line ~ /\(/) print line; line = "" }' |
	sed -n 's/^[[:space:]]*\(int\) \([a-z_0-9]*\)(\(.*\));.*/\2|\3/p' |
	while IFS='|' read -r fn params; do
		case $params in
		*"struct buf *err") ;;
		*) printf '%s: %s(%s)\n' "$(basename "$h")" "$fn" "$(echo "$params" | tr -s ' \t' ' ')" ;;
		esac
	done
done
other=$(grep -nE 'char \*err[,)]|char \*\*err|size_t err(_size|len|size)?[,)]|_errmsg\(|char \*msg, size_t' $hdrs)
if [ -n "$other" ]; then
	echo "check-errors: another error carrier:"
	echo "$other"
	bad=1
fi
exit $bad
