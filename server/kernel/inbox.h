/* inbox.h - mail from a public-inbox server (lore.kernel.org and any
 * public-inbox-httpd): a thread by message-id as its t.mbox.gz, a search's
 * mbox, each fetched once (fetch.h), inflated (gzip.h) and kept in the
 * store (db_inbox.h), so that it is read offline thereafter. */
#ifndef KC_INBOX_H
#define KC_INBOX_H

#include <stdbool.h>

#include "store/db.h"
#include "util.h"

/* The archive used when $KCANARY_PUBLIC_INBOX is not set: every list of
 * the kernel's public archive. */
#define INBOX_DEFAULT_URL "https://lore.kernel.org/all"

/* A client: the store that keeps answers (not NULL) and the archive's
 * base URL (NULL: $KCANARY_PUBLIC_INBOX, else INBOX_DEFAULT_URL). Both
 * borrowed. */
struct inbox {
	struct db *db;
	const char *base_url;
	bool refresh;           /* fetch again even when a copy is kept, and
				 * replace it (a 404 or an unreachable server
				 * then fails as if nothing were kept, the kept
				 * copy left as it was) */
};

/*
 * inbox_ref_parse - the message-id a series argument names, without <>,
 * in a new string (*out, caller frees): "<id>", "id" (with an '@' and no
 * '/'), "https://HOST/r/<id>", "https://HOST/<list>/<id>/[...]",
 * "[https://]patch.msgid.link/<id>"; %XX escapes undone. -EINVAL when arg
 * is none of these (a file name, say); *out is then untouched.
 */
int inbox_ref_parse(char **out, const char *arg);

/* The base URL a client uses (its own, the environment's or the default),
 * without a trailing '/'. Borrowed from ib or the environment. */
const char *inbox_base_url(const struct inbox *ib, size_t *len_out);

/*
 * inbox_thread - the whole thread of msgid (every message the server
 * threads with it: the series, its replies, revisions sent in reply to
 * it) as mbox bytes appended to out: the kept copy when there is one,
 * else (or always, with ib->refresh) GET BASE/<msgid>/t.mbox.gz, inflated
 * and kept. *cached says which
 * (may be NULL). -ENOENT when the server has no such message (a 404, kept
 * too), -EIO when it cannot be reached and nothing is kept, -EPROTO for an
 * answer that is not a gzip'd mbox; err names the message-id and URL.
 */
int inbox_thread(const struct inbox *ib, struct buf *out, bool *cached, const char *msgid,
		 struct buf *err);

/*
 * inbox_search - the messages matching a public-inbox search query (its
 * Xapian syntax: s:"subject words", "phrase in a body") as mbox bytes
 * appended to out (POST BASE/?q=QUERY&x=m, kept like a thread). A search
 * with no match is 0 with nothing appended; codes as inbox_thread.
 */
int inbox_search(const struct inbox *ib, struct buf *out, bool *cached, const char *query,
		 struct buf *err);

#endif
