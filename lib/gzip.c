/* gzip.c - see gzip.h: zlib's deflate, and its inflate with a cap on the
 * output. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "error.h"
#include "gzip.h"

int gzip_inflate(struct buf *out, const void *data, size_t len, size_t max_bytes,
		 struct buf *err)
{
	z_stream zs;
	unsigned char chunk[65536];
	size_t total = 0;
	int zr, r = 0;

	memset(&zs, 0, sizeof(zs));
	/* 16 + MAX_WBITS: gzip wrapper only (RFC 1952) */
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
		return err_setf(err, -ENOMEM, "cannot start zlib's inflate");
	}
	zs.next_in = (unsigned char *)data;
	zs.avail_in = (uInt)len;
	if (len > 0xffffffffu) {
		r = err_setf(err, -EFBIG, "body too large to inflate");
		goto out;
	}
	for (;;) {
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		zr = inflate(&zs, Z_NO_FLUSH);
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
			r = err_setf(err, -EINVAL, "not a valid gzip stream: %s", zs.msg ? zs.msg : "zlib error");
			goto out;
		}
		size_t n = sizeof(chunk) - zs.avail_out;
		if (total + n > max_bytes) {
			r = err_setf(err, -EFBIG, "inflates to more than %zu bytes", max_bytes);
			goto out;
		}
		if (n && buf_append(out, chunk, n)) {
			r = err_setf(err, -EFBIG, "inflates to more than the buffer's limit");
			goto out;
		}
		total += n;
		if (zr == Z_STREAM_END) {
			if (!zs.avail_in)
				break;
			/* another gzip member follows */
			if (inflateReset(&zs) != Z_OK) {
				r = err_setf(err, -EINVAL, "cannot restart zlib's inflate");
				goto out;
			}
			continue;
		}
		if (zr == Z_BUF_ERROR || (!zs.avail_in && n == 0)) {
			r = err_setf(err, -EINVAL, "truncated gzip stream");
			goto out;
		}
	}
out:
	inflateEnd(&zs);
	return r;
}

int gzip_deflate(struct buf *out, const void *data, size_t len, struct buf *err)
{
	z_stream zs;
	uLong bound;
	unsigned char *dst = NULL;
	int r = 0;

	if (len > 0xffffffffu)
		return err_setf(err, -EFBIG, "body too large to deflate");
	memset(&zs, 0, sizeof(zs));
	/* 16 + MAX_WBITS: a gzip header and trailer (RFC 1952) */
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return err_setf(err, -ENOMEM, "cannot start zlib's deflate");
	bound = deflateBound(&zs, (uLong)len) + 32;
	dst = xmalloc(bound);
	zs.next_in = (unsigned char *)data;
	zs.avail_in = (uInt)len;
	zs.next_out = dst;
	zs.avail_out = (uInt)bound;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END) {
		r = err_setf(err, -ENOMEM, "zlib's deflate did not finish: %s",
			     zs.msg ? zs.msg : "no room");
		goto out;
	}
	if (buf_append(out, dst, zs.total_out))
		r = err_setf(err, -EFBIG, "deflates to more than the buffer's limit");
out:
	deflateEnd(&zs);
	free(dst);
	return r;
}
