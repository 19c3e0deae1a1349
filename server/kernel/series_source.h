/* series_source.h - where a series comes from: a mail file, standard input
 * ("-"), or a message-id / URL fetched from a public-inbox server
 * (inbox.h) and kept in the store; and every revision of a series, found
 * from the one given (its thread, its cover's links, searches). What
 * `series show/apply/revisions`, `build` and `compare` take as a series. */
#ifndef KC_SERIES_SOURCE_H
#define KC_SERIES_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "store/db.h"
#include "kernel/series.h"
#include "util.h"

struct series_source_opts {
	struct db *db;          /* the store keeping fetched threads; needed only
				 * when an argument is a message-id (borrowed) */
	const char *inbox_url;  /* NULL: $KCANARY_PUBLIC_INBOX, else lore's all/ */
	int version;            /* -v N: only revision N of a fetched thread;
				 * 0: the newest revision in the thread */
	bool mboxrd;            /* --mboxrd: read mbox files and stdin as mboxrd
				 * (">From " loses one '>'); else mboxo, as git am
				 * does by default. A fetched thread is mboxrd. */
	bool refresh;           /* --refresh: fetch each message-id's thread again
				 * and replace the kept copy (inbox.h refresh) */
};

/* True when arg names a message (inbox_ref_parse) and is not a file that
 * exists, nor "-". */
bool series_source_is_ref(const char *arg);

/* True when any of args is a message-id (the caller then opens the store). */
bool series_source_any_ref(char *const *args, size_t nargs);

/*
 * series_source_load - the series revisions of the given arguments, read
 * together as one set of mail (series_load_buffers): a file; "-", standard
 * input; a message-id or URL, its whole thread (inbox_thread), of which
 * only revision o->version (or the newest) is kept. out/n_out as
 * series_load(). Returns series_load's codes; inbox_thread's (-ENOENT no
 * such message, -EIO no server and no kept copy); -EINVAL when o->version
 * is not in a fetched thread (err names the revisions it has) or a
 * message-id is given without a store. On success err may hold warnings
 * the parser gave (as series_load()).
 */
int series_source_load(struct series ***out, size_t *n_out, char *const *args, size_t nargs,
		       const struct series_source_opts *o, struct buf *err);

/* One revision of a series, as series_revisions found it. */
struct series_revision {
	struct series *series;  /* owned; NULL when the message is not on the server */
	char *message_id;       /* the cover's (or first patch's) message-id */
	char *found;            /* how it was found: "given", "in the thread of
				 * <id>", "linked from v3's cover", "search
				 * change-id:…", "search s:\"…\"" */
};

/*
 * series_revisions - every revision of the series ref names (a message-id
 * or URL): the revisions in its thread; then, repeatedly, the messages the
 * covers link to (b4's "Link to vN:" lines, "[1] https://lore…/<id>/");
 * then a search of the server for the cover's change-id and for its
 * subject. A message found is a revision when its series has the same
 * change-id or the same name (series.h: the cover subject's slug). out: a
 * new array of *n_out, by version, then date (free with
 * series_revisions_free); a link to a message the server does not have is
 * kept with series NULL. Errors as series_source_load for ref itself;
 * what cannot be fetched later is a row, not an error.
 */
int series_revisions(struct series_revision **out, size_t *n_out, const char *ref,
		     const struct series_source_opts *o, struct buf *err);

void series_revisions_free(struct series_revision *v, size_t n);

#endif
