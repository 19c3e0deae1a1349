/* series_body.h - one message's body as git mailinfo splits it
 * (series_body.c): in-body headers (From:, Date:, Subject:), the commit
 * message, the notes after '---', and the diff, scanned hunk by hunk for
 * the files it touches and for damage. Offsets are into the text given.
 */
#ifndef KC_SERIES_BODY_H
#define KC_SERIES_BODY_H

#include <stdbool.h>
#include <stddef.h>

struct body {
	char *from;             /* in-body From: value, raw; NULL if none */
	char *date;             /* in-body Date: */
	char *subject;          /* in-body Subject: */
	size_t msg_off, msg_end;     /* commit message body (after headers) */
	size_t notes_off, notes_end; /* after '---' up to the diff */
	size_t diff_off, diff_end;   /* the diff (diff_off == diff_end: none) */
	size_t tail_off;             /* after the diff (signature, b4 trailers) */
	char **files; size_t nfiles;
	char *corrupt;
};

/* Free what b owns and zero it. */
void series_body_release(struct body *b);

/* In-body headers at t[off..len): an optional format-patch From_ line,
 * then From:/Date:/Subject: lines into b. Returns the offset after them
 * (and the blank lines that follow). */
size_t series_inbody_headers(struct body *b, const char *t, size_t len, size_t off);

/* Split t[off..len) into message, notes and diff (b's offsets), scanning
 * the diff: b->files, b->corrupt, and where the diff ends. */
void series_body_split(struct body *b, const char *t, size_t len, size_t off);

/* Whether an unquoted diff starts anywhere in t (len bytes). */
bool series_has_diff(const char *t, size_t len);

/* The offset of an embedded format-patch ("From <sha> Mon Sep 17 ..."
 * then headers) inside t[a..b), or (size_t)-1. */
size_t series_embedded_format_patch(const char *t, size_t a, size_t b);

#endif
