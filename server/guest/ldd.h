/* ldd.h - reading `ldd`'s output: which files a dynamic binary loads.
 * image.c puts them into the initramfs beside a binary, rootfs.c beside
 * the agent in a root filesystem; each runs ldd itself (lib/proc.h),
 * as its own failure rules want. */
#ifndef KC_LDD_H
#define KC_LDD_H

#include <stddef.h>

/*
 * ldd_paths - the absolute paths in ldd's output text (stdout, stderr
 * merged or not; NULL: none), in order: "\tname => /path (0x…)" gives /path, and
 * "\t/path (0x…)" (the loader) gives /path. Other lines give none: a
 * vDSO ("\tlinux-vdso.so.1 (0x…)"), "name => not found", "not a dynamic
 * executable", and a message whose first '/' is not its first word
 * ("ldd: warning: … `/x'"). text is cut in place (' (' and line ends
 * become '\0'); *out is a NULL-ended array of pointers into text, which the
 * caller frees (the array only). Returns how many paths.
 */
size_t ldd_paths(char *text, char ***out);

#endif
