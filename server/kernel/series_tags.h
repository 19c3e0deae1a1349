/* series_tags.h - a mail's subject tags ("[PATCH net-next v3 2/5]") and
 * a commit message's trailers ("Signed-off-by: ..."), as git mailinfo
 * and git interpret-trailers read them (series_tags.c).
 */
#ifndef KC_SERIES_TAGS_H
#define KC_SERIES_TAGS_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel/series_patch.h"

struct tags {
	int k, m;               /* -1 when absent */
	int version;            /* 0 when absent */
	bool rfc, patch_tag, reply;
	char *extra;            /* other tags, space separated */
	char *title;            /* subject without prefixes, collapsed */
};

/* Parse "Re: [PATCH net-next v3 2/5] foo: bar" into *t (every leading
 * [...] group and Re:/Aw:/Fwd: read and stripped, as git mailinfo does).
 * Release with series_tags_release(). */
void series_tags_parse(struct tags *t, const char *subject);
void series_tags_release(struct tags *t);

/* An in-body Subject: (raw, RFC 2047 encoded) read into tg: its title
 * always, its tags when it has any of its own. */
void series_tags_inbody(struct tags *tg, const char *raw);

/* Whether p (n bytes) starts with a trailer key ("Acked-by:"): *klen is
 * the key's length without the ':'. */
bool series_trailer_key_len(const char *p, size_t n, size_t *klen);

/* The trailers of a commit message body into p->trailers: its last
 * paragraph, when it is all trailers, or when a quarter of it is and one
 * is a Signed-off-by (git interpret-trailers' rule). */
void series_trailers_parse(struct patch *p, const char *body);

/* Whether the key of k bytes at p is one b4 collects from replies
 * ("Reviewed-by", "Acked-by", "Tested-by", ...). */
bool series_reply_trailer_key(const char *p, size_t k);

#endif
