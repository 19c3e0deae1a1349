/* token.h - API bearer tokens: random secrets shown once, stored only as
 * their sha256 (hash.h); the scopes that say what a token may do. */
#ifndef KC_TOKEN_H
#define KC_TOKEN_H

#include <stdbool.h>
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
 * token_hash - sha256 (hash.h) of the secret's bytes as
 * lowercase hex into out (TOKEN_HASH_HEX + 1 bytes). Surrounding blanks
 * of the secret are not part of it and are skipped.
 */
void token_hash(char *out, const char *secret);

/*
 * Scopes: what a token may do, a space-separated list of
 *   read        GET endpoints (open to all today; listed for clients)
 *   submit      POST /api/v1/jobs and POST /api/v1/jobs/{job}/cancel
 *   agent:HOST  a fleet agent's register, heartbeat and records, for HOST
 *   agent:*     the same for any host (one token for a whole fleet)
 *   admin       everything
 */
#define TOKEN_MAX_SCOPES_LEN 256

/*
 * token_default_scopes - the scopes of a token made without --scope (and
 * of one stored before scopes existed): "agent:HOST" for a token named
 * agent:HOST, what a fleet host keeps on its disk; else "read submit
 * agent:*", what such a token could do before. Static string or out.
 */
const char *token_default_scopes(const char *name, char *out, size_t size);

/*
 * token_scopes_check - is text a valid scope list? 0, or -EINVAL with err
 * naming the word that is not a scope.
 */
struct buf;
int token_scopes_check(const char *text, struct buf *err);

/*
 * token_allows - do scopes allow need ("read", "submit", "agent")? For
 * "agent", host (may be NULL: any host of the token's) must be one the
 * token's agent:HOST or agent:* names. admin allows everything.
 */
bool token_allows(const char *scopes, const char *need, const char *host);

#endif
