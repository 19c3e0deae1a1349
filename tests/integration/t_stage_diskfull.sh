#!/bin/sh
# t_stage_diskfull.sh - a full disk at the two steps of a compare before
# its guests, in seconds (issue 18; t_build_diskfull.sh does the build
# with a real kernel): a fake kernel tree (as t_tree_build.sh: a Makefile
# honouring O=, one 4 MiB object) whose build dir and $KCANARY_HOME are one
# 16 MiB tmpfs (unshare -m), runs on libvirt's test:///default. (1) 13 MiB
# of filler: make stops with "No space left on device"; the job stops with
# the build dir and its free KiB named, the variants stay pending. (2) The
# filler removed: resume builds the kernel, then the guest image's stage
# (busybox, the agent, their libraries) fills the tmpfs: the job stops with
# the stage and its free KiB named instead of failing the runs. (3) The
# tmpfs grown: resume finishes the job, each planned run once; the ingested
# run stored first keeps its records and integrity_check is ok throughout.
set -u
if [ -z "${KC_STAGEFULL_NS:-}" ]; then
	[ "$(id -u)" = 0 ] || { echo "needs root (unshare -m, tmpfs)"; exit 77; }
	KC_STAGEFULL_NS=1 exec unshare -m --propagation private sh "$0" "$@"
fi
KC="$PWD/${B:-build}/kcanary"
T=$(mktemp -d "${KC_TEST_TMP:-/tmp}/kc-stagefull.XXXXXX")
fail() { echo "FAIL: $*"; [ -n "${KEEP:-}" ] && cat "$T"/err.* ; exit 1; }
cleanup() {
	umount "$T/linux/.kcanary-build" 2>/dev/null
	umount "$T/fs" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
command -v gcc >/dev/null && command -v sqlite3 >/dev/null || fail "gcc or sqlite3 missing (make deps)"

S="$T/src/linux-1.2"
mkdir -p "$S/src" "$S/scripts/kconfig" "$T/fs" "$T/kernels"
printf 'VERSION = 1\nPATCHLEVEL = 2\nSUBLEVEL = 3\nEXTRAVERSION =\nO ?= .\nCC ?= cc\n' > "$S/Makefile"
printf 'OBJS := $(patsubst %%.c,$(O)/%%.o,$(sort $(wildcard src/*.c)))\n' >> "$S/Makefile"
printf 'tinyconfig:\n\t@mkdir -p $(O) && echo CONFIG_64BIT=y > $(O)/.config\n' >> "$S/Makefile"
printf 'olddefconfig:\n\t@true\n' >> "$S/Makefile"
printf 'bzImage: $(OBJS)\n\t@mkdir -p $(O)/arch/x86/boot && cat $(OBJS) > $(O)/arch/x86/boot/bzImage && : > $(O)/System.map\n' >> "$S/Makefile"
printf '$(O)/src/%%.o: src/%%.c $(O)/.config\n\t@mkdir -p $(dir $@)\n\t@echo "  CC      src/$*.o"\n\t@$(CC) -c -o $@ $<\n' >> "$S/Makefile"
printf '#!/bin/sh\nwhile [ $# -gt 0 ]; do case "$1" in -m) shift;; -O) O=$2; shift 2;; *) break;; esac; done\nb=$1; shift\ncat "$b" "$@" > "$O/.c.new" && mv "$O/.c.new" "$O/.config"\n' > "$S/scripts/kconfig/merge_config.sh"
printf '/*\n!.gitignore\n' > "$S/.gitignore"
printf 'char big[4 << 20] = { 1 };\n' > "$S/src/mm.c"
tar -C "$T/src" -czf "$T/linux-1.2.3.tar.gz" linux-1.2
KCANARY_HOME=$T/imp "$KC" tree import "$T/linux-1.2.3.tar.gz" --repo "$T/linux" >/dev/null || fail import
for f in guest cgroup-wb fs probes; do : > "$T/kernels/$f.config"; done
export KCANARY_KERNELS_DIR=$T/kernels
mount -t tmpfs -o size=16m tmpfs "$T/fs" || fail "cannot mount a tmpfs"
mkdir "$T/fs/home" "$T/fs/build" "$T/linux/.kcanary-build" || fail mkdir
mount --bind "$T/fs/build" "$T/linux/.kcanary-build" || fail "cannot bind the build dir"
export KCANARY_HOME=$T/fs/home
q() { sqlite3 -batch -noheader "$KCANARY_HOME/kcanary.db" "$@"; }
"$KC" ingest --job before --variant lag tests/fixtures/streams/lag-46.9.jsonl >/dev/null || fail ingest
before=$(q "SELECT records || '/' || (SELECT count(*) FROM samples) FROM runs")
# the fault table's row, measured whether the test passes or fails: lost
# is the ingested run's samples the store lacks now (issue 35 item 15)
ROW="disk full in a compare's build (make) and guest image stage (fake tree)|2"
lost() { n=$(q "SELECT count(*) FROM samples WHERE run_id = 1" 2>/dev/null) || n=0; echo $(( ${before#*/} - ${n:-0} )); }
fail() { echo "fault-table: $ROW|0|$(lost)"; echo "FAIL: $*"; [ -n "${KEEP:-}" ] && cat "$T"/err.* ; exit 1; }
kept() {
	[ "$(q "PRAGMA integrity_check")" = ok ] || fail "integrity_check after $1"
	[ "$(q "SELECT records || '/' || (SELECT count(*) FROM samples) FROM runs WHERE id = 1")" = "$before" ] ||
		fail "the ingested run lost records after $1"
}
pending() {
	[ "$(q "SELECT group_concat(status) FROM variants WHERE job_id = 2")" = "pending,pending" ] ||
		fail "variants after $1: $(q "SELECT id, status FROM variants")"
}

# (1) make finds no space
dd if=/dev/zero of="$T/fs/filler" bs=1M count=13 2>/dev/null
"$KC" compare --name sfull --repo "$T/linux" --base HEAD --aa --repeat 1 --seed 1 --watchdog 1s \
	--connect test:///default >"$T/out.1" 2>"$T/err.1" && fail "compare exited 0 with make out of space"
grep "^kcanary compare" "$T/err.1" | cut -c1-300
grep -q "the build dir '$T/linux/.kcanary-build/[0-9a-f-]*' is full: [0-9]* KiB free of [0-9]* KiB in .*No space left on device" \
	"$T/err.1" || fail "the error does not name the build dir, its free KiB and the log's line"
grep -q "kcanary resume 2" "$T/err.1" || fail "the error does not say kcanary resume"
kept "make's full disk"
pending "make's full disk"

# (2) space freed; the kernel builds, then the guest image's stage fills
rm -f "$T/fs/filler"
"$KC" resume sfull --connect test:///default >"$T/out.2" 2>"$T/err.2" && fail "resume exited 0 with the stage out of space"
grep "^kcanary compare" "$T/err.2" | cut -c1-300
grep -q "into the guest image: the file system of its stage '$KCANARY_HOME/images/stage[^']*' is full: [0-9]* KiB free" \
	"$T/err.2" || fail "the error does not name the image stage and its free KiB: $(tail -3 "$T/err.2")"
kept "the stage's full disk"
[ "$(q "SELECT count(*) FROM runs WHERE job_id = 2 AND status NOT IN ('pending', 'interrupted')")" = 0 ] ||
	fail "runs ended by the full stage: $(q "SELECT id, status, error FROM runs WHERE job_id = 2")"

# (3) the tmpfs grown: the job finishes
mount -o remount,size=256m "$T/fs" || fail "cannot grow the tmpfs"
"$KC" resume sfull --connect test:///default >"$T/out.3" 2>"$T/err.3" || fail "resume: $(tail -3 "$T/err.3")"
[ "$(q "SELECT status FROM jobs WHERE id = 2")" = done ] || fail "job not done"
[ "$(q "SELECT count(*) || ' ' || count(DISTINCT variant_id) FROM runs WHERE job_id = 2
	AND status NOT IN ('pending', 'interrupted')")" = "2 2" ] || fail "not each planned run once: $(q "SELECT id, status FROM runs")"
kept "the end"
echo "fault-table: $ROW|2|$(lost)"
echo "ok: make's and the image stage's full disk stopped the job with the place named; resumed, done"
