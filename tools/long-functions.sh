#!/bin/sh
# long-functions.sh - every function in lib/, server/ and agent/ (or the files
# given) longer than MAX lines (default 120, the house rule), longest
# first: "lines file:line name", and whether a reason comment stands above
# it ("reason:" in the comment block right above the definition).
#
#   usage: tools/long-functions.sh [-m MAX] [FILE...]
max=120
if [ "$1" = "-m" ]; then max=$2; shift 2; fi
[ $# -gt 0 ] || set -- "$(dirname "$0")"/../lib/*.c "$(dirname "$0")"/../server/*/*.c "$(dirname "$0")"/../agent/*.c
ctags -x --c-kinds=f --fields=+ne --output-format=xref \
	--_xformat='%{name} %{input} %{line} %{end}' "$@" 2>/dev/null |
while read -r name file start end; do
	[ -n "$end" ] || continue
	n=$((end - start + 1))
	[ "$n" -gt "$max" ] || continue
	# the comment block right above the definition (its first line may be
	# a return type line: look at most 25 lines up)
	reason=$(awk -v s="$start" 'NR >= s - 25 && NR < s' "$file" | grep -c 'reason:')
	printf '%d %s:%d %s%s\n' "$n" "$file" "$start" "$name" \
		"$( [ "$reason" -gt 0 ] && echo ' (reason given)' || echo ' (NO REASON)')"
done | sort -rn
