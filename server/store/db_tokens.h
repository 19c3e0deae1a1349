/* db_tokens.h - the API's bearer tokens (db_tokens.c); hashes are
 * token_hash() hex. Errors as db.h says.
 */
#ifndef KC_DB_TOKENS_H
#define KC_DB_TOKENS_H

#include <stddef.h>
#include <jansson.h>

#include "store/db.h"

/* -EEXIST when the name or the hash is taken. scopes (token.h; NULL: the
 * default for its name, token_default_scopes()) are stored as given. */
int db_token_add(struct db *db, const char *name, const char *hash_hex, const char *scopes,
		 struct buf *err);
/* Name and scopes of the token with this hash into name (size bytes) and
 * scopes (scopes_size; "" for a token stored before scopes: the caller
 * takes token_default_scopes()); -ENOENT if none. */
int db_token_find(struct db *db, char *name, size_t size, char *scopes, size_t scopes_size,
		  const char *hash_hex, struct buf *err);
/* [{"name","created_at","scopes"}], oldest first; scopes null for a token
 * stored before scopes. */
int db_token_list(struct db *db, json_t **out, struct buf *err);
/* -ENOENT when there is no token of that name. */
int db_token_remove(struct db *db, const char *name, struct buf *err);

#endif
