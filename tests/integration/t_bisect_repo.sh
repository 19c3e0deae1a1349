#!/bin/sh
# t_bisect_repo.sh - `kcanary bisect --repo` through range, build and boot
# on a fake kernel tree (a Makefile honouring O= that compiles src/*.c into
# a "bzImage" that is not a kernel), with a history made by git: a commit
# that does not build is a skip (no guest), a kernel QEMU cannot load is a
# skip (no guest runs: QEMU refuses it at once), and an endpoint that
# cannot be measured stops the bisection with exit 3. Checks the variants
# (named by short sha and subject, with their commit), the runs and the log.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/guest-lib.sh
command -v git >/dev/null && command -v gcc >/dev/null || skip "git or gcc missing"

S=$HOME_DIR/linux
mkdir -p "$S/src" "$S/scripts/kconfig"
printf 'VERSION = 1\nPATCHLEVEL = 2\nSUBLEVEL = 3\nEXTRAVERSION =\nO ?= .\nCC ?= cc\n' > "$S/Makefile"
printf 'OBJS := $(patsubst %%.c,$(O)/%%.o,$(sort $(wildcard src/*.c)))\n' >> "$S/Makefile"
printf 'tinyconfig:\n\t@mkdir -p $(O) && echo CONFIG_64BIT=y > $(O)/.config\n' >> "$S/Makefile"
printf 'olddefconfig:\n\t@true\n' >> "$S/Makefile"
printf 'bzImage: $(OBJS)\n\t@mkdir -p $(O)/arch/x86/boot && cat $(OBJS) > $(O)/arch/x86/boot/bzImage && : > $(O)/System.map\n' >> "$S/Makefile"
printf '$(O)/src/%%.o: src/%%.c $(O)/.config\n\t@mkdir -p $(dir $@)\n\t@$(CC) -c -o $@ $<\n' >> "$S/Makefile"
printf '#!/bin/sh\nwhile [ $# -gt 0 ]; do case "$1" in -m) shift;; -O) O=$2; shift 2;; *) break;; esac; done\nb=$1; shift\ncat "$b" "$@" > "$O/.c.new" && mv "$O/.c.new" "$O/.config"\n' > "$S/scripts/kconfig/merge_config.sh"
printf 'int a = 1;\n' > "$S/src/mm.c"
G="git -c user.name=Dev -c user.email=dev@example.org -c commit.gpgsign=false"
(cd "$S" && $G init -q . && $G add -A && $G commit -qm "base" && $G tag good &&
	printf 'int b = 2;\n' >> src/mm.c && $G commit -qam "mm: add b" &&
	printf 'int c = ;\n' >> src/mm.c && $G commit -qam "mm: broken c" &&
	printf 'int d = 4;\n' > src/d.c && $G add src/d.c && $G commit -qm "add d" && $G tag bad) ||
	fail "cannot make the history"
BIS="--workload command --set cmd=true --metric x --strategy fixed --repeats 1 --check-runs 0 --watchdog 30s"

echo "-- the old end builds, QEMU cannot load it: endpoint skip"
# shellcheck disable=SC2086
$KC bisect --repo "$S" --good good --bad bad --first-parent $BIS > "$HOME_DIR/out.1" 2> "$HOME_DIR/err.1"
rc=$?
cat "$HOME_DIR/out.1"
[ $rc = 3 ] || { tail -n 20 "$HOME_DIR/err.1"; fail "exit $rc, expected 3"; }
good=$(cd "$S" && git rev-parse good)
short=$(echo "$good" | cut -c1-12)
grep -q "^bisect job 1: endpoint-skip: good endpoint (commit 0) cannot be measured" "$HOME_DIR/out.1" ||
	fail "no endpoint-skip line"
grep -Eq "^  0 +$short base +0 +1  skip +\(run failed: cannot start guest" "$HOME_DIR/out.1" || fail "table row of the old end"
grep -q "^totals: 1 builds (0 failed), 1 boots, 0 runs with a value, 1 skips" "$HOME_DIR/out.1" ||
	fail "totals"
[ "$(q "SELECT name || '|' || status || '|' || commit_oid || '|' || base_rev FROM variants WHERE job_id = 1")" = \
  "$short base|ok|$good|$good" ] || fail "variant: $(q "SELECT * FROM variants WHERE job_id = 1")"
[ "$(q "SELECT status FROM runs WHERE job_id = 1")" = failed ] || fail "run: $(q "SELECT status, error FROM runs")"
$KC bisect log 1 | grep -q "^# candidate 3 $(cd "$S" && git rev-parse bad) [0-9a-f]* add d$" ||
	fail "log lacks the candidates"

echo "-- the old end does not build: skip, no guest"
# shellcheck disable=SC2086
$KC bisect --repo "$S" --good bad~1 --bad bad $BIS > "$HOME_DIR/out.2" 2> "$HOME_DIR/err.2"
rc=$?
cat "$HOME_DIR/out.2"
[ $rc = 3 ] || { tail -n 20 "$HOME_DIR/err.2"; fail "exit $rc, expected 3"; }
grep -Eq "^  0 +[0-9a-f]{12} mm: broken c +0 +1  skip .*src/mm.c:3:9: error" "$HOME_DIR/out.2" ||
	fail "the build failure is not a skip with its first error"
[ "$(q "SELECT status FROM variants WHERE job_id = 2")" = build-failed ] || fail "variant status"
[ "$(q "SELECT count(*) FROM runs WHERE job_id = 2")" = 0 ] || fail "job 2 has runs"
echo ok
