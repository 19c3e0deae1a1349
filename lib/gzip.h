/* gzip.h - gzip'd request bodies (agents' record batches): the agent
 * deflates them, the server inflates them. zlib behind two calls: gzip.c
 * is the only file of either binary including <zlib.h>. */
#ifndef KC_GZIP_H
#define KC_GZIP_H

#include <stddef.h>

#include "util.h"

/*
 * gzip_inflate - append the inflated bytes of the gzip stream data (len
 * bytes; RFC 1952, concatenated members allowed) to out, at most
 * max_bytes of them. Returns 0, -EFBIG when the output would exceed
 * max_bytes (a zip bomb is cut off there, not inflated), or -EINVAL when
 * data is not gzip or is corrupt or truncated (err says how).
 */
int gzip_inflate(struct buf *out, const void *data, size_t len, size_t max_bytes,
		 struct buf *err);

/*
 * gzip_deflate - append data (len bytes) deflated as one gzip member
 * (RFC 1952, zlib's default level) to out. Returns 0, -EFBIG when the
 * result passes out's cap or len passes zlib's 4 GiB, or -ENOMEM when zlib
 * cannot start (err says which).
 */
int gzip_deflate(struct buf *out, const void *data, size_t len, struct buf *err);

#endif
