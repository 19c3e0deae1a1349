# skips-lib.sh - sourced by tests/integration/run.sh and tests/run-unit.sh
# (from the top of the tree): whether a skip is allowed. The rules are in
# tests/allowed-skips.txt.
#
# skip_reason NAME: the reason listed for NAME (empty when NAME is not
#   listed, or listed without a sentence).
# skip_allowed NAME: true outside CI (CI unset or not "true": a skip is
#   counted, not failed); under CI=true only when skip_reason is non-empty.
SKIPS_FILE=${SKIPS_FILE:-tests/allowed-skips.txt}
skip_reason() {
	awk -v n="$1" '$1 == n && NF > 1 { sub(/^[^ \t]+[ \t]+/, ""); print; exit }' "$SKIPS_FILE" 2>/dev/null
}
skip_allowed() {
	[ "${CI:-}" = true ] || return 0
	[ -n "$(skip_reason "$1")" ]
}
