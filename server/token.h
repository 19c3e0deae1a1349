/* token.h - API bearer tokens: random secrets shown once, stored only as
 * their sha256 (nettle's, in token.c, the one file including nettle). */
#ifndef KC_TOKEN_H
#define KC_TOKEN_H

#include <stddef.h>

/* Hex digits of a sha256. */
#define TOKEN_HASH_HEX 64
/* "kct_" + 64 hex digits: 256 bits from getrandom(2). */
#define TOKEN_SECRET_LEN (4 + 64)

/*
 * token_generate - write a new secret (NUL-terminated) into out, which
 * holds at least TOKEN_SECRET_LEN + 1 bytes. Returns 0 or -errno when the
 * kernel's random source fails.
 */
int token_generate(char *out, size_t size);

/*
 * token_hash - sha256 (FIPS 180-4, via nettle) of the secret's bytes as
 * lowercase hex into out (TOKEN_HASH_HEX + 1 bytes). Surrounding blanks
 * of the secret are not part of it and are skipped.
 */
void token_hash(char *out, const char *secret);

#endif
