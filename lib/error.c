/* error.c - see error.h. */
#include <assert.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

int err_setf(struct buf *err, int code, const char *fmt, ...)
{
	va_list ap;

	assert(code < 0);
	if (!err)
		return code;
	buf_reset(err);
	va_start(ap, fmt);
	buf_vprintf(err, fmt, ap);
	va_end(ap);
	return code;
}

int err_wrapf(struct buf *err, int code, const char *fmt, ...)
{
	struct buf ctx = BUF_INIT;
	va_list ap;

	assert(code < 0);
	if (!err)
		return code;
	va_start(ap, fmt);
	buf_vprintf(&ctx, fmt, ap);
	va_end(ap);
	if (err->len) {
		buf_puts(&ctx, ": ");
		buf_append(&ctx, err->ptr, err->len);
	}
	buf_reset(err);
	buf_append(err, ctx.ptr ? ctx.ptr : "", ctx.len);
	buf_release(&ctx);
	return code;
}

const char *err_text(const struct buf *err)
{
	return err ? buf_str(err) : "";
}
