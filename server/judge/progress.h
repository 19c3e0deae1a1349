/* progress.h - the executors' progress on stderr (compare, bisect, the
 * run service): one line per event, and on a terminal one live line
 * ("run 3/12 base ext4 r1: t=41s lag 0.8s") that the next event line
 * replaces. Any thread may call these; lines never interleave.
 */
#ifndef KC_PROGRESS_H
#define KC_PROGRESS_H

#include <stdarg.h>
#include <stdbool.h>

/* progress_say - one line (a newline is added) unless quiet; clears the
 * live line first. */
void progress_say(bool quiet, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void progress_vsay(bool quiet, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* progress_live - replace the live line with the formatted text (no
 * newline). Callers write it only when stderr is a terminal. */
void progress_live(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
