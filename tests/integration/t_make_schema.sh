#!/bin/sh
# t_make_schema.sh - the embedded migrations follow schema/'s list, not
# only its files' times: generating build/gen/schema_sql.c for a list of
# migrations, then for a shorter one (a file deleted or renamed: nothing
# newer than the generated file), regenerates it without the dropped one.
# Host only, a private build directory, a few seconds.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
all=$(echo schema/*.sql)
last=$(ls schema/*.sql | tail -n 1)
fewer=$(ls schema/*.sql | sed '$d' | tr "\n" " ")
out=$tmp/b/gen/schema_sql.c
make -s B=$tmp/b SCHEMA="$all" $out > $tmp/log 2>&1 || fail "make: $(cat $tmp/log)"
grep -q "$(basename $last)" $out || fail "$(basename $last) is not embedded with the whole list"
make -s B=$tmp/b SCHEMA="$fewer" $out > $tmp/log 2>&1 || fail "make: $(cat $tmp/log)"
! grep -q "$(basename $last)" $out ||
	fail "$(basename $last) is still embedded after it left the list (schema_sql.c not rebuilt)"
echo "ok: schema_sql.c follows the list of migrations ($(echo $all | wc -w) then $(echo $fewer | wc -w))"
