/* db_tokens.h - the API's bearer tokens (db_tokens.c); hashes are
 * token_hash() hex. Errors as db.h says.
 */
#ifndef KC_DB_TOKENS_H
#define KC_DB_TOKENS_H

#include <stddef.h>

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
/* One stored token: its name, when it was made (sqlite's UTC
 * "YYYY-MM-DD HH:MM:SS") and its scopes (NULL for a token stored before
 * scopes: the caller takes token_default_scopes()). Never the hash. */
struct db_token_row {
	char *name;
	char *created_at;
	char *scopes;
};

/* db_token_list - every token, oldest first, into *out (*n of them; NULL
 * for none); free with db_token_rows_free(). */
int db_token_list(struct db *db, struct db_token_row **out, size_t *n, struct buf *err);
void db_token_rows_free(struct db_token_row *v, size_t n);
/* -ENOENT when there is no token of that name. */
int db_token_remove(struct db *db, const char *name, struct buf *err);

#endif
