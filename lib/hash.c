/* hash.c - SHA-256 through nettle, as hex (see hash.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <nettle/sha2.h>

#include "error.h"
#include "hash.h"

_Static_assert(sizeof(struct sha256_ctx) <= sizeof(((struct hash *)0)->opaque),
	       "struct hash holds nettle's sha256 context");

static struct sha256_ctx *ctx(struct hash *h)
{
	return (struct sha256_ctx *)(void *)h->opaque;
}

void hash_init(struct hash *h)
{
	sha256_init(ctx(h));
}

void hash_update(struct hash *h, const void *data, size_t len)
{
	sha256_update(ctx(h), len, data);
}

int hash_update_file(struct hash *h, const char *path, struct buf *err)
{
	unsigned char chunk[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC), r = 0;
	ssize_t n;

	if (fd < 0)
		return err_setf(err, -errno, "cannot read '%s': %s", path, strerror(errno));
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = err_setf(err, -errno, "cannot read '%s': %s", path, strerror(errno));
			break;
		}
		sha256_update(ctx(h), (size_t)n, chunk);
	}
	close(fd);
	return r;
}

void hash_final_hex(struct hash *h, char out[HASH_HEX_SIZE])
{
	static const char digits[] = "0123456789abcdef";
	uint8_t d[SHA256_DIGEST_SIZE];

	sha256_digest(ctx(h), sizeof(d), d);
	for (size_t i = 0; i < sizeof(d); i++) {
		out[2 * i] = digits[d[i] >> 4];
		out[2 * i + 1] = digits[d[i] & 15];
	}
	out[HASH_HEX_LEN] = '\0';
}

void hash_hex(char out[HASH_HEX_SIZE], const void *data, size_t len)
{
	struct hash h;

	hash_init(&h);
	hash_update(&h, data, len);
	hash_final_hex(&h, out);
}

int hash_file_hex(char out[HASH_HEX_SIZE], const char *path, struct buf *err)
{
	struct hash h;
	int r;

	hash_init(&h);
	if ((r = hash_update_file(&h, path, err)))
		return r;
	hash_final_hex(&h, out);
	return 0;
}
