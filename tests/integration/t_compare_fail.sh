#!/bin/sh
# t_compare_fail.sh - a compare job whose variants fail in each way before
# any guest: a series that does not apply and a kernel that does not build,
# on a fake kernel tree (a Makefile honouring O=, as t_tree_build.sh); and
# an unknown knob, refused before anything is stored. The job ends with a
# clear message and a report that names each failed variant and why.
set -u
KC="$PWD/${B:-build}/kcanary"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export KCANARY_HOME="$T/home"
export KCANARY_AGENT="$PWD/${B:-build}/kcanary-agent"
fail() { echo "FAIL: $*"; exit 1; }
q() { sqlite3 -batch -noheader "$KCANARY_HOME/kcanary.db" "$@"; }

S="$T/src/linux-1.2"
mkdir -p "$S/src" "$S/scripts/kconfig"
printf 'VERSION = 1\nPATCHLEVEL = 2\nSUBLEVEL = 3\nEXTRAVERSION =\nO ?= .\nCC ?= cc\nOBJS := $(patsubst %%.c,$(O)/%%.o,$(sort $(wildcard src/*.c)))\n' > "$S/Makefile"
printf 'tinyconfig:\n\t@mkdir -p $(O) && echo CONFIG_64BIT=y > $(O)/.config\nolddefconfig:\n\t@true\n' >> "$S/Makefile"
printf 'bzImage: $(OBJS)\n\t@mkdir -p $(O)/arch/x86/boot && cat $(OBJS) > $(O)/arch/x86/boot/bzImage && : > $(O)/System.map\n' >> "$S/Makefile"
printf '$(O)/src/%%.o: src/%%.c $(O)/.config\n\t@mkdir -p $(dir $@)\n\t@$(CC) -c -o $@ $<\n' >> "$S/Makefile"
printf '#!/bin/sh\nwhile [ $# -gt 0 ]; do case "$1" in -m) shift;; -O) O=$2; shift 2;; *) break;; esac; done\nb=$1; shift\ncat "$b" "$@" > "$O/.c.new" && mv "$O/.c.new" "$O/.config"\n' > "$S/scripts/kconfig/merge_config.sh"
printf 'int a = 1;\nint b = 2;\nint c = 3;\n' > "$S/src/mm.c"
tar -C "$T/src" -czf "$T/linux-1.2.3.tar.gz" linux-1.2
"$KC" tree import "$T/linux-1.2.3.tar.gz" --repo "$T/linux" >/dev/null || fail import
printf 'CONFIG_GUEST=y\n' > "$T/guest.config"

patch() {   # patch SUBJECT OLD NEW > file
	cat <<EOP
From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001
From: Dev One <dev1@example.org>
Date: Tue, 14 Nov 2023 22:13:20 +0100
Subject: [PATCH] $1

Signed-off-by: Dev One <dev1@example.org>
---
diff --git a/src/mm.c b/src/mm.c
--- a/src/mm.c
+++ b/src/mm.c
@@ -1,3 +1,3 @@
 int a = 1;
-$2
+$3
 int c = 3;
-- 
2.43.0
EOP
}
patch "mm: b is 40" "int b = 4;" "int b = 40;" > "$T/noapply.patch"
patch "mm: break it" "int b = 2;" "#error broken on purpose" > "$T/nobuild.patch"

# an unknown knob stops everything before a job is stored
"$KC" compare --repo "$T/linux" --base v1.2.3 --set rate=3 2>"$T/err" && fail "unknown knob accepted"
grep -q "unknown knob 'rate' for workload 'wb-handover'" "$T/err" || fail "knob error: $(cat "$T/err")"
[ ! -f "$KCANARY_HOME/kcanary.db" ] || [ "$(q 'SELECT count(*) FROM jobs')" = 0 ] || fail "a job was stored"

# the base builds (a fake image: its run fails to boot, quickly, or to
# connect when no libvirt answers); the two series fail before any guest
"$KC" compare --name failing --repo "$T/linux" --base v1.2.3 \
	--series "$T/noapply.patch,$T/nobuild.patch" --config-fragment "$T/guest.config" \
	--repeat 1 --watchdog 60s >"$T/out" 2>"$T/err"
rc=$?
cat "$T/out"
# the job ran to its end (compare --help: exit 0 then, 1 on failure)
[ $rc = 0 ] || { cat "$T/err"; fail "compare exited $rc, expected 0 (the job ran to its end)"; }
grep -q "apply-failed: cannot apply patch 1/1 'mm: b is 40': src/mm.c" "$T/err" || fail "apply message: $(cat "$T/err")"
grep -q "build-failed: .*src/mm.c:2.*error.*broken on purpose" "$T/err" || fail "build message: $(cat "$T/err")"
grep -q "^+ noapply v1: apply-failed: cannot apply patch 1/1 'mm: b is 40': src/mm.c hunk" "$T/out" || fail "report lacks the apply failure"
grep -q "^+ nobuild v1: build-failed: " "$T/out" || fail "report lacks the build failure"
[ "$(q "SELECT status FROM variants WHERE name = 'base (v1.2.3)'")" = ok ] || fail "base variant not ok"
# the base's one run was tried and failed to start its guest, with the
# reason: QEMU cannot load the fake image ('cannot start guest'), or no
# libvirt answers ('cannot connect to libvirt')
[ "$(q "SELECT count(*) FROM runs r JOIN variants v ON v.id = r.variant_id WHERE v.name = 'base (v1.2.3)'")" = 1 ] ||
	fail "the base does not have exactly its 1 run"
[ "$(q "SELECT r.status FROM runs r JOIN variants v ON v.id = r.variant_id WHERE v.name = 'base (v1.2.3)'
	AND (r.error LIKE 'cannot start guest %' OR r.error LIKE 'cannot connect to libvirt%')")" = failed ] ||
	fail "base run: $(q "SELECT r.status, r.error FROM runs r JOIN variants v ON v.id = r.variant_id WHERE v.name = 'base (v1.2.3)'")"
grep -Eq "^  base \(v1.2.3\) +failed +- *$" "$T/out" || fail "report lacks the base's failed run"
# each failed variant keeps its one run, never started, stored as what it
# is: skipped, with why (issue 35 item 13: they were left 'pending', and the
# finished job's report said "unfinished (done): 2 of 3 runs pending")
[ "$(q "SELECT group_concat(n) FROM (SELECT count(*) AS n FROM runs r JOIN variants v ON v.id = r.variant_id
	WHERE v.status != 'ok' AND r.status = 'skipped' AND r.started_at IS NULL GROUP BY v.id)")" = "1,1" ] ||
	fail "failed variants' runs are not 1 skipped each: $(q "SELECT v.name, r.status, r.error FROM runs r JOIN variants v ON v.id = r.variant_id")"
[ "$(q "SELECT group_concat(e, '|') FROM (SELECT r.error AS e FROM runs r JOIN variants v ON v.id = r.variant_id
	WHERE v.status != 'ok' ORDER BY v.idx)")" = \
	"not run: variant '+ noapply v1' has no kernel (apply-failed: its patches did not apply)|not run: variant '+ nobuild v1' has no kernel (build-failed: its kernel did not build)" ] ||
	fail "skipped runs' reasons: $(q "SELECT r.error FROM runs r JOIN variants v ON v.id = r.variant_id WHERE v.status != 'ok'")"
[ "$(q "SELECT count(*) FROM runs WHERE status = 'pending'")" = 0 ] || fail "the finished job has pending runs"
! grep -q "unfinished" "$T/out" || fail "the finished job's report says it is unfinished: $(grep unfinished "$T/out")"
# issue 35 item 5: status names each run status it counts (the old line
# lumped the skipped runs as "2 other"); the jobs list does not show a job
# whose only finished run failed as a plain "done"
"$KC" status failing > "$T/status" 2>&1 || fail "status exited $?: $(cat "$T/status")"
grep -qF "runs: 3/3 done: 0 ok, 1 failed, 2 skipped; 0 running" "$T/status" ||
	fail "status does not name the skipped runs: $(cat "$T/status")"
"$KC" jobs > "$T/jobs" 2>&1 || fail "jobs exited $?: $(cat "$T/jobs")"
grep -Eq "^ +1 +failing +compare +no result +3/3 +1 +- +- +[0-9]{4}-" "$T/jobs" ||
	fail "jobs does not say the job has no result: $(cat "$T/jobs")"
echo "ok: unknown knob refused; apply and build failures named in the report"
