/* fakekernel.h - a fake "kernel" source release for the tree, apply and
 * build tests (header-only): a Makefile that honours O= and CC=, has
 * tinyconfig/olddefconfig/bzImage targets, compiles src/ *.c with the real
 * compiler (so a broken file gives a real gcc error) and writes
 * $(O)/arch/x86/boot/bzImage and $(O)/System.map; a minimal
 * scripts/kconfig/merge_config.sh; and a .gitignore ignoring everything at
 * the top, as Debian's linux-source tarball has. Its olddefconfig drops
 * CONFIG_IMPOSSIBLE (an option whose dependencies cannot be met). */
#ifndef KC_FAKEKERNEL_H
#define KC_FAKEKERNEL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static inline void fk_write(const char *root, const char *rel, const char *text)
{
	char path[1024], cmd[1100];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	if (system(cmd) != 0)
		abort();
	f = fopen(path, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

static const char fk_makefile[] =
	"VERSION = 1\n"
	"PATCHLEVEL = 2\n"
	"SUBLEVEL = @SUBLEVEL@\n"
	"EXTRAVERSION =\n"
	"# A fake kernel for kcanary's tests.\n"
	"O ?= .\n"
	"CC ?= cc\n"
	"SRCS := $(sort $(wildcard src/*.c))\n"
	"OBJS := $(SRCS:%.c=$(O)/%.o)\n"
	".PHONY: tinyconfig olddefconfig bzImage\n"
	"tinyconfig:\n"
	"\t@mkdir -p $(O) && printf 'CONFIG_64BIT=y\\n# CONFIG_MODULES is not set\\n' > $(O)/.config\n"
	"olddefconfig:\n"
	"\t@awk '/^CONFIG_IMPOSSIBLE=/ {next} { k = $$0; sub(/=.*/, \"\", k); if (k ~ /^# /) k = $$2;"
	" if (!(k in v)) o[n++] = k; v[k] = $$0 } END { for (i = 0; i < n; i++) print v[o[i]] }'"
	" $(O)/.config > $(O)/.config.tmp && mv $(O)/.config.tmp $(O)/.config\n"
	"bzImage: $(OBJS)\n"
	"\t@env | grep -E '^(CCACHE_|KBUILD_BUILD_|DISTCC_)' | sort > $(O)/.fake-env\n"
	"\t@mkdir -p $(O)/arch/x86/boot\n"
	"\t@cat $(OBJS) > $(O)/arch/x86/boot/bzImage\n"
	"\t@echo 'ffffffff81000000 T _text' > $(O)/System.map\n"
	"$(O)/src/%.o: src/%.c $(O)/.config\n"
	"\t@mkdir -p $(dir $@)\n"
	"\t@echo '  CC      src/$*.o'\n"
	"\t@$(CC) -c -o $@ $<\n";

static const char fk_merge_config[] =
	"#!/bin/sh\n"
	"# fake merge_config.sh: -m -O DIR BASE FRAGMENT...\n"
	"while [ $# -gt 0 ]; do case \"$1\" in -m) shift;; -O) O=$2; shift 2;; *) break;; esac; done\n"
	"base=$1; shift\n"
	"cat \"$base\" \"$@\" > \"$O/.config.new\" && mv \"$O/.config.new\" \"$O/.config\"\n";

/* src/mm.c: "int vN = N;" on line N, for N = 1..60 (a file to patch). */
static inline void fk_write_mm(const char *root, int changed_line, const char *changed)
{
	char text[4096];
	size_t n = 0;

	for (int i = 1; i <= 60; i++) {
		if (i == changed_line)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "%s\n", changed);
		else
			n += (size_t)snprintf(text + n, sizeof(text) - n, "int v%d = %d;\n", i, i);
	}
	fk_write(root, "src/mm.c", text);
}

/*
 * fk_tarball - write a fake release 1.2.<sublevel> under dir/src-<sublevel>
 * /linux-1.2/ and pack it as dir/linux-1.2.<sublevel>.tar.gz; returns the
 * tarball path (caller frees). extra: one more file "path=content" or NULL.
 */
static inline char *fk_tarball(const char *dir, const char *sublevel, const char *extra)
{
	char root[512], mk[4096], cmd[2048], *tarball;
	const char *at;

	snprintf(root, sizeof(root), "%s/src-%s/linux-1.2", dir, sublevel);
	at = strstr(fk_makefile, "@SUBLEVEL@");
	snprintf(mk, sizeof(mk), "%.*s%s%s", (int)(at - fk_makefile), fk_makefile, sublevel,
		 at + strlen("@SUBLEVEL@"));
	fk_write(root, "Makefile", mk);
	fk_write(root, ".gitignore", "/*\n!.gitignore\n");
	fk_write(root, "scripts/kconfig/merge_config.sh", fk_merge_config);
	fk_write(root, "src/main.c", "int main_v = 1;\n");
	fk_write(root, "include/wb.h", "#define WB_STATE 1\n");
	fk_write_mm(root, 0, NULL);
	if (extra) {
		const char *eq = strchr(extra, '=');
		char rel[256];
		snprintf(rel, sizeof(rel), "%.*s", (int)(eq - extra), extra);
		fk_write(root, rel, eq + 1);
	}
	tarball = malloc(600);
	snprintf(tarball, 600, "%s/linux-1.2.%s.tar.gz", dir, sublevel);
	snprintf(cmd, sizeof(cmd), "tar -C '%s/src-%s' -czf '%s' linux-1.2", dir, sublevel, tarball);
	if (system(cmd) != 0)
		abort();
	return tarball;
}

#endif
