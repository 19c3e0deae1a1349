/* mbox.h - mail in: split mboxes into messages and parse RFC 822 messages
 * (headers, RFC 2047 words, MIME parts, quoted-printable and base64).
 * The one wrapper around GMime; series.c reads patches out of struct mail.
 */
#ifndef KC_MBOX_H
#define KC_MBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* One leaf MIME part of a text kind (text/ anything, or an attachment named
 * *.patch / *.diff), with the transfer encoding undone. */
struct mail_part {
	char *type;        /* lower case "text/plain", "text/x-patch", ... */
	char *charset;     /* lower case, NULL when not given */
	char *filename;    /* NULL when none */
	bool attachment;   /* Content-Disposition: attachment */
	char *text;        /* decoded bytes, CRLF made LF, NUL-terminated;
			    * no charset conversion (see mail_text_utf8) */
	size_t len;
	size_t quoted_crlf; /* CRLFs made LF that were inside a base64 or
			    * quoted-printable encoding (git am's "quoted CRLF
			    * detected"); 0 for 7bit/8bit parts */
};

/* One message. Header strings are decoded (RFC 2047) to UTF-8, unfolded. */
struct mail {
	char *subject;          /* "" when none */
	char *from_name;        /* "" when none */
	char *from_email;       /* "" when none */
	char *from, *to, *cc;   /* the From:, To: and Cc: address lists as a
				 * reply writes them ("A <a@x>, \"B, C\" <b@y>"),
				 * decoded; "" when none */
	bool has_date;
	int64_t date_s;         /* seconds since the epoch */
	int tz_offset_min;      /* minutes east of UTC */
	char *message_id;       /* without <>; "" when none */
	char *in_reply_to;      /* without <>; "" when none */
	struct mail_part *parts; size_t nparts;  /* in MIME order */
	size_t line;            /* 1-based line of the file where it starts */
};

/*
 * mbox_parse - split one file's bytes into messages and parse each.
 *
 * The data is an mbox when its first non-blank line is a From_ line
 * ("From <addr> <asctime date>", as git format-patch writes it); it is then
 * split at every From_ line that starts the file or follows a blank line
 * and is followed by a header line. With mboxrd, ">From " lines (any
 * number of '>') lose one '>' (what public-inbox serves and b4 writes);
 * without it the mbox is read as mboxo, as git am does by default, and a
 * ">From " line stays as it is. Otherwise the whole data is one message,
 * never split or unescaped (.eml). name is used in messages only.
 *
 * out: new array of *n_out messages (mail_free_all()); written on success.
 * Returns 0, or -EINVAL (with err) when a message cannot be parsed.
 */
int mbox_parse(struct mail ***out, size_t *n_out, const char *data, size_t len,
	       const char *name, bool mboxrd, struct buf *err);

void mail_free(struct mail *m);
void mail_free_all(struct mail **v, size_t n);

/* True when the line (without its end) has the From_ shape of an mbox
 * separator: "From " addr " " then an asctime date (weekday, month,
 * hh:mm, 4-digit year). */
bool mbox_is_from_line(const char *line, size_t len);

/* Text of a part (or a piece of it) converted to UTF-8 from charset
 * (NULL = UTF-8 if valid, else ISO-8859-1). Never fails: invalid bytes
 * become U+FFFD. Caller frees. */
char *mail_text_utf8(const char *s, size_t len, const char *charset);

/* Decode an unstructured header value (RFC 2047 words, raw 8-bit),
 * unfolded, to UTF-8. Caller frees. */
char *mail_decode_header(const char *value);

/* Parse an address header value ("Name <a@b>", "=?UTF-8?q?…?= <a@b>",
 * "a@b (Name)") into a decoded name ("" when none) and address.
 * Returns 0 or -EINVAL when there is no mailbox in it. */
int mail_parse_address(char **name_out, char **email_out, const char *value);

/*
 * mail_address_header - the header line "Key: list\n" of a mail we write,
 * list being addresses as a mail's own are stored ("Name <a@b>, \"Doe,
 * Jane\" <c@d>, e@f", UTF-8): written by GMime
 * (internet_address_list_encode), so a name outside ASCII is an RFC 2047
 * encoded word (RFC 2047 section 5: a phrase in an address) and the line is
 * folded before 78 columns (RFC 5322 section 2.1.1). New string (caller
 * frees); NULL when list holds no address.
 */
char *mail_address_header(const char *key, const char *list);

/* Parse an RFC 822 Date: value. Returns 0 or -EINVAL. */
int mail_parse_date(int64_t *date_s, int *tz_offset_min, const char *value);

#endif
