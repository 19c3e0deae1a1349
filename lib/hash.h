/* hash.h - the one content hash of both binaries: SHA-256 (FIPS 180-4,
 * nettle's; hash.c is the one file that includes nettle), given as
 * lowercase hex. Cache keys (guest images, root filesystems, volumes) and
 * API token digests are all this hash; a git object id is git's own
 * (wrap/git.h), not a content hash of ours.
 *
 *     char hex[HASH_HEX_SIZE];
 *     hash_hex(hex, text, len);
 *
 *     struct hash h;
 *     hash_init(&h);
 *     hash_update(&h, name, strlen(name) + 1);
 *     if ((r = hash_update_file(&h, path, err)))
 *             return r;
 *     hash_final_hex(&h, hex);
 */
#ifndef KC_HASH_H
#define KC_HASH_H

#include <stddef.h>

#include "util.h"

/* Hex digits of a digest, and the size of a buffer holding them. */
#define HASH_HEX_LEN 64
#define HASH_HEX_SIZE (HASH_HEX_LEN + 1)

/* struct hash - an incremental hash; its bytes are nettle's context
 * (opaque here, so that nettle's headers stay in hash.c). */
struct hash {
	_Alignas(8) unsigned char opaque[128];
};

void hash_init(struct hash *h);
void hash_update(struct hash *h, const void *data, size_t len);

/*
 * hash_update_file - add the bytes of the file at path. 0, or -errno
 * (open or read failed) with err naming the file; h then holds part of
 * it and should be dropped.
 */
int hash_update_file(struct hash *h, const char *path, struct buf *err);

/* hash_final_hex - the digest of what was added, as HASH_HEX_LEN lowercase
 * hex digits and a NUL, into out; h is spent (hash_init() it again). */
void hash_final_hex(struct hash *h, char out[HASH_HEX_SIZE]);

/* hash_hex - the digest of len bytes at data, into out. */
void hash_hex(char out[HASH_HEX_SIZE], const void *data, size_t len);

/* hash_file_hex - the digest of the file at path, into out. 0 or -errno
 * with err naming the file (out is then left as it was). */
int hash_file_hex(char out[HASH_HEX_SIZE], const char *path, struct buf *err);

#endif
