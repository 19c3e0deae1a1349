#!/bin/sh
# t_tree_build.sh - the tree/apply/build commands end to end on a fake
# kernel (a Makefile honouring O= that compiles src/*.c and writes
# arch/x86/boot/bzImage): import twice, resolve, series apply of a
# format-patch mail, build base + series (then all cached), a build failure.
set -u
KC="$PWD/${B:-build}/kcanary"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export KCANARY_HOME="$T/home"
fail() { echo "FAIL: $*"; exit 1; }

command -v tar >/dev/null && command -v gcc >/dev/null || { echo "tar or gcc missing"; exit 77; }

S="$T/src/linux-1.2"
mkdir -p "$S/src" "$S/scripts/kconfig"
printf 'VERSION = 1\nPATCHLEVEL = 2\nSUBLEVEL = 3\nEXTRAVERSION =\nO ?= .\nCC ?= cc\n' > "$S/Makefile"
printf 'OBJS := $(patsubst %%.c,$(O)/%%.o,$(sort $(wildcard src/*.c)))\n' >> "$S/Makefile"
printf 'tinyconfig:\n\t@mkdir -p $(O) && echo CONFIG_64BIT=y > $(O)/.config\n' >> "$S/Makefile"
printf 'olddefconfig:\n\t@true\n' >> "$S/Makefile"
printf 'bzImage: $(OBJS)\n\t@mkdir -p $(O)/arch/x86/boot && cat $(OBJS) > $(O)/arch/x86/boot/bzImage && : > $(O)/System.map\n' >> "$S/Makefile"
printf '$(O)/src/%%.o: src/%%.c $(O)/.config\n\t@mkdir -p $(dir $@)\n\t@echo "  CC      src/$*.o"\n\t@$(CC) -c -o $@ $<\n' >> "$S/Makefile"
printf '#!/bin/sh\nwhile [ $# -gt 0 ]; do case "$1" in -m) shift;; -O) O=$2; shift 2;; *) break;; esac; done\nb=$1; shift\ncat "$b" "$@" > "$O/.c.new" && mv "$O/.c.new" "$O/.config"\n' > "$S/scripts/kconfig/merge_config.sh"
printf '/*\n!.gitignore\n' > "$S/.gitignore"
printf 'int a = 1;\nint b = 2;\nint c = 3;\n' > "$S/src/mm.c"
tar -C "$T/src" -czf "$T/linux-1.2.3.tar.gz" linux-1.2
printf 'CONFIG_GUEST=y\n' > "$T/guest.config"

out=$("$KC" tree import "$T/linux-1.2.3.tar.gz" --repo "$T/linux") || fail "import: $out"
echo "$out" | grep -q '^imported [0-9a-f]\{40\} tag v1.2.3$' || fail "import said: $out"
out=$("$KC" tree import "$T/linux-1.2.3.tar.gz" --repo "$T/linux") || fail "import 2"
echo "$out" | grep -q '^unchanged ' || fail "second import said: $out"
[ -f "$T/linux/.gitignore" ] || fail "ignored file not imported"
base=$("$KC" tree resolve --repo "$T/linux" v1.2.3) || fail resolve
"$KC" tree resolve --repo "$T/linux" v9 2>"$T/err" && fail "resolved v9"
grep -q "unknown revision 'v9'" "$T/err" || fail "resolve error: $(cat "$T/err")"

cat > "$T/0001-mm-b.patch" <<'EOP'
From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001
From: Dev One <dev1@example.org>
Date: Tue, 14 Nov 2023 22:13:20 +0100
Subject: [PATCH] mm: make b bigger

Because.

Signed-off-by: Dev One <dev1@example.org>
---
 src/mm.c | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/src/mm.c b/src/mm.c
index 1111111..2222222 100644
--- a/src/mm.c
+++ b/src/mm.c
@@ -1,3 +1,3 @@
 int a = 1;
-int b = 2;
+int b = 20;
 int c = 3;
-- 
2.43.0
EOP
sed -e 's/make b bigger/break the build/' -e 's/^+int b = 20;/+#error broken on purpose/' \
	"$T/0001-mm-b.patch" > "$T/0001-break.patch"

out=$("$KC" series apply --repo "$T/linux" --base v1.2.3 "$T/0001-mm-b.patch") || fail "apply: $out"
echo "$out" | grep -q '^1/1 applied [0-9a-f]\{40\}$' || fail "apply said: $out"
echo "$out" | grep -q '^branch kcanary/mm-make-b-bigger/v1 at ' || fail "no branch: $out"
"$KC" tree resolve --repo "$T/linux" kcanary/mm-make-b-bigger/v1 >/dev/null || fail "branch missing"
# applying it on top of itself: already applied, exit 1
"$KC" series apply --repo "$T/linux" --base kcanary/mm-make-b-bigger/v1 "$T/0001-mm-b.patch" \
	> "$T/out" 2>&1 && fail "already applied exited 0"
grep -q '^1/1 already applied$' "$T/out" || fail "already: $(cat "$T/out")"

args="--repo $T/linux --base v1.2.3 --no-default-fragments --config-fragment $T/guest.config --jobs 1"
out=$("$KC" build $args --series "$T/0001-mm-b.patch") || fail "build: $out"
echo "$out"
echo "$out" | grep -q '^base .* ok ' || fail "base not built"
echo "$out" | grep -q '^mm-make-b-bigger v1 .* ok .*/bzImage$' || fail "variant not built"
out=$("$KC" build $args --series "$T/0001-mm-b.patch") || fail "rebuild: $out"
[ "$(echo "$out" | grep -c ' cached ')" = 2 ] || fail "second build not cached: $out"
out=$("$KC" build $args --series "$T/0001-break.patch") && fail "broken build exited 0"
echo "$out"
echo "$out" | grep -q '^mm-break-the-build v1 .* build-failed ' || fail "no build-failed row"
echo "$out" | grep -q 'src/mm.c:2:2: error: #error broken on purpose' || fail "first error not shown"
n=$(sqlite3 "$KCANARY_HOME/kcanary.db" "SELECT count(*) FROM variants WHERE status = 'build-failed'")
[ "$n" = 1 ] || fail "variant status not stored ($n)"
echo "PASS"
