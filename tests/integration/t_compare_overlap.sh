#!/bin/sh
# t_compare_overlap.sh - builds and runs overlap (#14): `kcanary compare
# --repo --base --series` of two variants (the base and base + one tiny
# patch) on a lab of one host, a second libvirtd on 127.0.0.1 TCP
# (private_libvirtd), so --overlap-builds auto overlaps there. The tree is
# a fake kernel tree imported from a tarball as t_tree_build.sh makes it,
# whose `make bzImage` compiles src/*.c and installs this machine's test
# kernel as the image (so the guests boot: without its modules, so each
# run stops at kcanary-init's "no scratch disk /dev/vda" and is stored
# failed, after a real boot on h2), and takes 30 s more when the patch is
# in (a slow build, deterministic). Checks from the store that
# the base's first run started before the patched kernel's build ended,
# that every planned run (2 variants x 2 repeats) ran exactly once, and
# that the report works; then, on this machine (qemu:///system, the
# default host), that auto does not overlap: the runs wait for the builds
# and say so once. Before the overlap, every run started after every build.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/guest-lib.sh
command -v tar >/dev/null && command -v gcc >/dev/null || fail "tar or gcc missing"

PORT=${KCANARY_OVERLAP_TEST_PORT:-16600}
H2DIR=$(mktemp -d /var/tmp/kcovl-h2.XXXXXX)
KCQ="$PWD/$B/kcanary"
private_libvirtd "$H2DIR" "$PORT"
$KCQ lab add h2 "$URI" >/dev/null || fail "lab add h2"

S="$HOME_DIR/src/linux-1.2"
mkdir -p "$S/src" "$S/scripts/kconfig"
printf 'VERSION = 1\nPATCHLEVEL = 2\nSUBLEVEL = 3\nEXTRAVERSION =\nO ?= .\nCC ?= cc\n' > "$S/Makefile"
printf 'OBJS := $(patsubst %%.c,$(O)/%%.o,$(sort $(wildcard src/*.c)))\n' >> "$S/Makefile"
printf 'tinyconfig:\n\t@mkdir -p $(O) && echo CONFIG_64BIT=y > $(O)/.config\n' >> "$S/Makefile"
printf 'olddefconfig:\n\t@true\n' >> "$S/Makefile"
printf 'bzImage: $(OBJS)\n\t@if grep -q slow src/mm.c; then sleep 30; fi\n' >> "$S/Makefile"
printf '\t@mkdir -p $(O)/arch/x86/boot && cp %s $(O)/arch/x86/boot/bzImage && : > $(O)/System.map\n' "$KERNEL" >> "$S/Makefile"
printf '$(O)/src/%%.o: src/%%.c $(O)/.config\n\t@mkdir -p $(dir $@)\n\t@$(CC) -c -o $@ $<\n' >> "$S/Makefile"
printf '#!/bin/sh\nwhile [ $# -gt 0 ]; do case "$1" in -m) shift;; -O) O=$2; shift 2;; *) break;; esac; done\nb=$1; shift\ncat "$b" "$@" > "$O/.c.new" && mv "$O/.c.new" "$O/.config"\n' > "$S/scripts/kconfig/merge_config.sh"
printf '/*\n!.gitignore\n' > "$S/.gitignore"
printf 'int a = 1;\nint b = 2;\nint c = 3;\n' > "$S/src/mm.c"
tar -C "$HOME_DIR/src" -czf "$HOME_DIR/linux-1.2.3.tar.gz" linux-1.2
$KCQ tree import "$HOME_DIR/linux-1.2.3.tar.gz" --repo "$HOME_DIR/linux" >/dev/null || fail import
cat > "$HOME_DIR/slow.patch" <<'EOP'
From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001
From: Dev One <dev1@example.org>
Date: Tue, 14 Nov 2023 22:13:20 +0100
Subject: [PATCH] mm: slow b

Signed-off-by: Dev One <dev1@example.org>
---
diff --git a/src/mm.c b/src/mm.c
--- a/src/mm.c
+++ b/src/mm.c
@@ -1,3 +1,3 @@
 int a = 1;
-int b = 2;
+int b = 2; /* slow */
 int c = 3;
-- 
2.43.0
EOP

start=$(date +%s)
$KCQ compare --name ovl --repo "$HOME_DIR/linux" --base v1.2.3 --series "$HOME_DIR/slow.patch" \
	--workload command --set cmd=true --metric x --repeat 2 --seed 1 --vcpus 1 --watchdog 120s \
	--hosts h2 >"$HOME_DIR/out" 2>"$HOME_DIR/err"
rc=$?
cat "$HOME_DIR/out"
echo "   took $(( $(date +%s) - start )) s"
[ $rc = 0 ] || fail "compare exited $rc: $(tail -20 "$HOME_DIR/err")"
J="job_id = (SELECT id FROM jobs WHERE name = 'ovl')"
[ "$(q "SELECT status FROM jobs WHERE name = 'ovl'")" = done ] || fail "job not done"
q "SELECT v.name, v.status, v.kernel_at, k.built_at FROM variants v JOIN kernels k ON k.id = v.kernel_id
   WHERE v.$J ORDER BY v.idx"
q "SELECT r.id, v.name, r.repeat_idx, r.status, r.started_at, r.finished_at FROM runs r
   JOIN variants v ON v.id = r.variant_id WHERE r.$J ORDER BY r.started_at"
# every planned run (2 variants x 2 repeats) done exactly once: a guest
# booted the installed image on h2 and its init ran
[ "$(q "SELECT count(*) FROM runs WHERE $J")" = 4 ] || fail "not 4 runs"
[ "$(q "SELECT count(*) FROM (SELECT 1 FROM runs WHERE $J AND finished_at IS NOT NULL
	AND status = 'failed' AND error LIKE '%no scratch disk /dev/vda%'
	GROUP BY variant_id, repeat_idx HAVING count(*) = 1)")" = 4 ] ||
	fail "not each run once, booted: $(q "SELECT id, variant_id, repeat_idx, status, error FROM runs")"
[ "$(q "SELECT count(*) FROM runs WHERE $J AND lab_host = 'h2'")" = 4 ] || fail "runs not on h2"
# the base's first run started before the patched kernel's build ended
first=$(q "SELECT min(r.started_at) FROM runs r JOIN variants v ON v.id = r.variant_id
	   WHERE r.$J AND v.idx = 0")
built=$(q "SELECT k.built_at FROM variants v JOIN kernels k ON k.id = v.kernel_id WHERE v.$J AND v.idx = 1")
[ -n "$first" ] && [ -n "$built" ] || fail "no start ($first) or build end ($built) stored"
[ "$(q "SELECT '$first' < '$built'")" = 1 ] ||
	fail "the base's first run started at $first, not before the second kernel's build ended ($built)"
[ "$(q "SELECT count(*) FROM variants WHERE $J AND kernel_at IS NULL")" = 0 ] || fail "kernel_at not stored"
grep -q "wait until the kernel builds end" "$HOME_DIR/err" && fail "h2 (not this machine) did not overlap"
$KCQ report ovl >"$HOME_DIR/report" 2>&1 || fail "report: $(cat "$HOME_DIR/report")"
grep -q "^ *+ v1 *failed *failed" "$HOME_DIR/report" || fail "report has no row of the patched variant: $(cat "$HOME_DIR/report")"
echo "ok: the base's first run started at $first, the patched kernel was built at $built; 4 runs once each on h2"

# the same on this machine (the default host, qemu:///system) with a new
# config (so both kernels build again): auto does not overlap there, and
# says so once
printf 'CONFIG_LOCAL=y\n' > "$HOME_DIR/local.config"
$KCQ compare --name loc --repo "$HOME_DIR/linux" --base v1.2.3 --series "$HOME_DIR/slow.patch" \
	--config-fragment "$HOME_DIR/local.config" --workload command --set cmd=true --metric x \
	--repeat 1 --seed 1 --vcpus 1 --watchdog 120s >"$HOME_DIR/out.loc" 2>"$HOME_DIR/err.loc" ||
	fail "compare on local: $(tail -20 "$HOME_DIR/err.loc")"
J="job_id = (SELECT id FROM jobs WHERE name = 'loc')"
[ "$(grep -c "lab host local (qemu:///system) is this machine, where the kernels build: its runs wait until the kernel builds end" \
	"$HOME_DIR/err.loc")" = 1 ] || fail "local's wait not said once: $(grep -i wait "$HOME_DIR/err.loc")"
first=$(q "SELECT min(started_at) FROM runs WHERE $J")
built=$(q "SELECT max(k.built_at) FROM variants v JOIN kernels k ON k.id = v.kernel_id WHERE v.$J")
[ "$(q "SELECT count(*) FROM runs WHERE $J AND finished_at IS NOT NULL")" = 2 ] || fail "not 2 runs on local"
[ "$(q "SELECT '$first' >= '$built'")" = 1 ] ||
	fail "a run on this machine started at $first, while a kernel built (until $built)"
echo "ok: on this machine the runs waited for the builds (ended $built, first run $first)"
