/* series_patch.h - one [PATCH k/M] mail as a series (series.h) holds it:
 * its commit (author, message, trailers), its notes and its diff, and the
 * trailers replies gave it.
 */
#ifndef KC_SERIES_PATCH_H
#define KC_SERIES_PATCH_H

#include <stddef.h>
#include <stdint.h>

/* One trailer line of a commit message ("Signed-off-by: A <a@x>"):
 * key as written, value with continuation lines joined by one space. */
struct trailer {
	char *key;
	char *value;
};

/* A trailer given in a reply: key and value as in struct trailer, and the
 * message-id of the reply it came from. */
struct reply_trailer {
	char *key, *value, *from;
};

/* One [PATCH k/M] mail. Every string is UTF-8 and owned by the patch. */
struct patch {
	int k, m;               /* k = 1..m; the cover letter is not a patch */
	char *subject;          /* without the [PATCH …] prefix, whitespace runs
				 * collapsed to one space as git mailinfo does */
	char *author_name, *author_email;  /* in-body From: wins over the header
				 * one (git mailinfo); RFC 2047 decoded; name may be "" */
	int64_t date_s;         /* seconds since the epoch, from Date: (0 if none) */
	int tz_offset_min;      /* the Date: zone, minutes east of UTC */
	char *message_id;       /* without <>; may be "" */
	char *in_reply_to;      /* without <>; may be "" */
	char *message;          /* commit message: subject line, blank line, body
				 * up to the first '---' line, trailers included,
				 * LF line ends, ends with one '\n' */
	char *notes;            /* text between the '---' line and the diff (the
				 * diffstat, changelog); "" when none */
	char *diff;             /* from the first 'diff --git' / '--- a/' (with
				 * '+++ ') / 'Index: ' line to the end of the last
				 * hunk, before the mail signature ("-- "); bytes as
				 * in the mail after transfer decoding, CRLF made
				 * LF, no charset conversion */
	char **files; size_t nfiles;       /* paths touched, -p1, in diff order,
				 * each once ("b/" side; the "a/" side when deleted) */
	struct trailer *trailers; size_t ntrailers;  /* in message order */
	struct reply_trailer *reply_trailers; size_t nreply_trailers; /* given in
				 * replies to this patch or to its cover (b4 am
				 * collects them), not already among trailers */
	char *corrupt;          /* NULL, or why the diff cannot be applied as
				 * sent: "corrupt patch at diff line 10: ..." (a
				 * whitespace-damaged hunk); the apply step refuses
				 * such a patch with this text */
	char *warning;          /* NULL, or a note on how the mail was read that
				 * a user should see (e.g. the commit message was
				 * taken from a format-patch embedded after '---') */
	char *source;           /* "path" or "path:LINE" (mbox message start) */
};

/* Free what p owns (not p itself); NULL is fine. */
void series_patch_release(struct patch *p);

#endif
