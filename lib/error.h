/* error.h - kcanary's one error model: negative errno codes, the detail
 * in one struct buf, logged once where it is handled.
 *
 * Codes. A fallible function returns int: 0 on success, a negative errno
 * on failure; never a positive code, never a bare -1. Use the specific
 * code a caller can branch on:
 *
 *   -EINVAL     the input is wrong (a flag, a job file, a knob, a record,
 *               a mail); the message names the input, the place and what
 *               was expected
 *   -ENOENT     a named thing is not there (a job, a run, a file, a
 *               revision, a lab host)
 *   -EEXIST     it is there already
 *   -EINTR      interrupted: SIGINT/SIGTERM, or a stop request from the
 *               thread that owns the work (serve's job queue). The one code
 *               for "interrupted" in every executor (compare, bisect, boot)
 *   -ECANCELED  a user cancelled the job (POST .../cancel): not an interrupt
 *   -EBUSY      another live coordinator owns it
 *   -ETIMEDOUT  a bounded wait ran out
 *   -ENOSPC     a disk is full; -EIO a store, file, tool or host failed;
 *               -ENOMEM only for an external limit (malloc failures abort,
 *               util.h)
 *
 * Outcomes are not errors. A patch that does not apply, a kernel that does
 * not build, a guest that panics or times out: these are results of the
 * thing under test. A service returns 0 and says so in its result struct
 * (status plus reason); a negative code means kcanary itself could not do
 * its job (the store, the file system, libvirt, a tool it needs).
 *
 * The detail. Every public function that can fail with something to say
 * takes `struct buf *err` (util.h) as its last parameter. On failure the
 * callee writes one message there: lowercase, what failed first, the
 * subject quoted, no trailing period or newline, as git words them:
 *     cannot apply patch 2/3 'writeback: …': mm/backing-dev.c hunk 3 does not match
 * On success err is left as it was. err may be NULL: the caller does not
 * want the text. A caller that adds context wraps it (err_wrapf) rather
 * than logging a second line. Library wrappers (db*.c for sqlite, git.c
 * for libgit2, vm.c for libvirt, ...) read the library's own last error at
 * once (it is per connection or per thread) and put it in err.
 *
 * Logging. A function that returns an error does not also log it: the
 * place that handles it (a cmd_*.c file printing for the user, the job
 * queue's thread, an HTTP handler turning it into a status) logs or prints
 * it once.
 */
#ifndef KC_ERROR_H
#define KC_ERROR_H

#include "util.h"

/*
 * err_setf - set err's text to the formatted message (replacing what was
 * there) and return code, so that a failure reads
 *     return err_setf(err, -ENOENT, "no job %lld in the store", id);
 * err may be NULL. code must be negative.
 */
int err_setf(struct buf *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * err_wrapf - put the formatted context in front of err's text ("CONTEXT:
 * DETAIL"), or set it when err is empty, and return code:
 *     if ((r = build_variant(..., err)))
 *             return err_wrapf(err, r, "variant '%s'", name);
 * err may be NULL. code must be negative.
 */
int err_wrapf(struct buf *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* err_text - err's message, "" when there is none or err is NULL.
 * Borrowed from err. */
const char *err_text(const struct buf *err);

#endif
