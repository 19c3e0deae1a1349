/* mbox.c - mail in (see mbox.h). We split mboxes ourselves (GMime's mbox
 * mode splits at any "From " line) and leave RFC 822/MIME/RFC 2047 to GMime,
 * the only file that includes <gmime/gmime.h>.
 */
#define LOG_MODULE "mbox"
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <gmime/gmime.h>

#include "log.h"
#include "wrap/mbox.h"

static GMimeParserOptions *parser_opts;
static pthread_once_t gmime_once = PTHREAD_ONCE_INIT;

/* GMime is initialised once per process and never shut down (its type
 * registrations live as long as the process). */
static void gmime_setup(void)
{
	static const char *fallback[] = { "utf-8", "iso-8859-1", NULL };

	g_mime_init();
	parser_opts = g_mime_parser_options_new();
	/* Mail from the lists is often sloppy: encoded words inside quotes,
	 * unencoded 8-bit, unquoted parameters. Accept what git mailinfo does. */
	g_mime_parser_options_set_rfc2047_compliance_mode(parser_opts, GMIME_RFC_COMPLIANCE_LOOSE);
	g_mime_parser_options_set_address_compliance_mode(parser_opts, GMIME_RFC_COMPLIANCE_LOOSE);
	g_mime_parser_options_set_parameter_compliance_mode(parser_opts, GMIME_RFC_COMPLIANCE_LOOSE);
	g_mime_parser_options_set_allow_addresses_without_domain(parser_opts, TRUE);
	g_mime_parser_options_set_fallback_charsets(parser_opts, fallback);
}

static void gmime_ready(void)
{
	pthread_once(&gmime_once, gmime_setup);
}

/* Copy a GLib string into our allocator ("" for NULL) and free it. */
static char *from_g(char *s)
{
	char *r = xstrdup(s ? s : "");

	g_free(s);
	return r;
}

static bool is_wday(const char *t, size_t n)
{
	static const char *const d[] = { "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun" };

	if (n == 4 && t[3] == ',')
		n = 3;
	for (size_t i = 0; n == 3 && i < 7; i++)
		if (!strncasecmp(t, d[i], 3))
			return true;
	return false;
}

static bool is_month(const char *t, size_t n)
{
	static const char *const m[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

	for (size_t i = 0; n == 3 && i < 12; i++)
		if (!strncasecmp(t, m[i], 3))
			return true;
	return false;
}

static bool is_hhmm(const char *t, size_t n)
{
	return n >= 5 && isdigit((unsigned char)t[0]) && isdigit((unsigned char)t[1]) &&
	       t[2] == ':' && isdigit((unsigned char)t[3]) && isdigit((unsigned char)t[4]);
}

static bool is_year(const char *t, size_t n)
{
	if (n != 4)
		return false;
	for (size_t i = 0; i < 4; i++)
		if (!isdigit((unsigned char)t[i]))
			return false;
	return true;
}

bool mbox_is_from_line(const char *line, size_t len)
{
	bool wday = false, month = false, hhmm = false, year = false;
	size_t i = 5;

	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len < 5 || memcmp(line, "From ", 5))
		return false;
	/* the envelope sender: one token */
	if (i >= len || line[i] == ' ')
		return false;
	while (i < len && line[i] != ' ')
		i++;
	/* then an asctime date: "Mon Sep 17 00:00:00 2001" (any order of the
	 * parts we look for, zone allowed: mbox writers differ) */
	while (i < len) {
		while (i < len && line[i] == ' ')
			i++;
		size_t s = i;
		while (i < len && line[i] != ' ')
			i++;
		const char *t = line + s;
		size_t n = i - s;
		if (!n)
			break;
		wday |= is_wday(t, n);
		month |= is_month(t, n);
		hhmm |= is_hhmm(t, n);
		year |= is_year(t, n);
	}
	return wday && month && hhmm && year;
}

/* "Name:" at line start: a header field (RFC 5322 ftext, then ':'). */
static bool is_header_line(const char *line, size_t len)
{
	size_t i = 0;

	while (i < len && line[i] > ' ' && line[i] < 127 && line[i] != ':')
		i++;
	return i > 0 && i < len && line[i] == ':';
}

static bool is_blank(const char *line, size_t len)
{
	return len == 0 || (len == 1 && line[0] == '\r');
}

struct line {
	const char *p;
	size_t len;     /* without '\n' */
	size_t next;    /* offset of the next line */
};

static bool next_line(struct line *l, const char *data, size_t len, size_t off)
{
	if (off >= len)
		return false;
	const char *nl = memchr(data + off, '\n', len - off);
	l->p = data + off;
	l->len = nl ? (size_t)(nl - l->p) : len - off;
	l->next = nl ? off + l->len + 1 : len;
	return true;
}

/* Decode one leaf part's content into a struct mail_part, or skip it. */
static void add_part(struct mail *m, GMimeObject *obj)
{
	GMimePart *part = GMIME_PART(obj);
	GMimeContentType *ct = g_mime_object_get_content_type(obj);
	GMimeContentDisposition *cd = g_mime_object_get_content_disposition(obj);
	const char *fname = g_mime_part_get_filename(part);
	char *type = ct ? g_mime_content_type_get_mime_type(ct) : g_strdup("text/plain");
	bool want;

	for (char *c = type; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	want = !strncmp(type, "text/", 5) && strcmp(type, "text/html");
	if (!want && fname) {
		size_t n = strlen(fname);
		want = (n > 6 && !strcasecmp(fname + n - 6, ".patch")) ||
		       (n > 5 && !strcasecmp(fname + n - 5, ".diff"));
	}
	GMimeDataWrapper *w = g_mime_part_get_content(part);
	if (!want || !w) {
		g_free(type);
		return;
	}

	GMimeStream *ms = g_mime_stream_mem_new();
	g_mime_data_wrapper_write_to_stream(w, ms);
	GByteArray *ba = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(ms));
	struct mail_part *p;

	m->parts = xrealloc(m->parts, (m->nparts + 1) * sizeof(*m->parts));
	p = &m->parts[m->nparts++];
	memset(p, 0, sizeof(*p));
	p->type = from_g(type);
	const char *cs = ct ? g_mime_content_type_get_parameter(ct, "charset") : NULL;
	if (cs) {
		p->charset = xstrdup(cs);
		for (char *c = p->charset; *c; c++)
			*c = (char)tolower((unsigned char)*c);
	}
	p->filename = fname ? xstrdup(fname) : NULL;
	p->attachment = cd && g_mime_content_disposition_is_attachment(cd);
	/* CRLF → LF (git am --quoted-cr=strip): base64 bodies from Outlook
	 * carry CRLF inside the encoded text. */
	GMimeContentEncoding enc = g_mime_part_get_content_encoding(part);
	bool quoted = enc == GMIME_CONTENT_ENCODING_BASE64 ||
		      enc == GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE;
	p->text = xmalloc(ba->len + 1);
	for (size_t i = 0; i < ba->len; i++) {
		if (ba->data[i] == '\r' && i + 1 < ba->len && ba->data[i + 1] == '\n') {
			p->quoted_crlf += quoted;
			continue;
		}
		p->text[p->len++] = (char)ba->data[i];
	}
	p->text[p->len] = '\0';
	g_object_unref(ms);
}

static void foreach_part(GMimeObject *parent, GMimeObject *part, gpointer data)
{
	(void)parent;
	if (GMIME_IS_PART(part))
		add_part(data, part);
}

static char *msgid_of(const char *v)
{
	if (!v)
		return xstrdup("");
	return from_g(g_mime_utils_decode_message_id(v));
}

/* An address header's list as a reply writes it, decoded; "" when none. */
static char *addresses(GMimeMessage *msg, GMimeAddressType type)
{
	InternetAddressList *l = g_mime_message_get_addresses(msg, type);

	if (!l || !internet_address_list_length(l))
		return xstrdup("");
	return from_g(internet_address_list_to_string(l, NULL, FALSE));
}

/* Parse one message (bytes already unescaped). */
static int mail_parse_one(struct mail **out, const char *data, size_t len)
{
	GMimeStream *st = g_mime_stream_mem_new_with_buffer(data, len);
	GMimeParser *parser = g_mime_parser_new_with_stream(st);
	GMimeMessage *msg = NULL;
	struct mail *m = NULL;
	int ret = -EINVAL;

	g_mime_parser_set_format(parser, GMIME_FORMAT_MESSAGE);
	msg = g_mime_parser_construct_message(parser, parser_opts);
	if (!msg)
		goto out;

	m = xcalloc(1, sizeof(*m));
	const char *subj = g_mime_message_get_subject(msg);
	m->subject = xstrdup(subj ? subj : "");
	m->from_name = xstrdup("");
	m->from_email = xstrdup("");
	InternetAddressList *from = g_mime_message_get_from(msg);
	for (int i = 0; from && i < internet_address_list_length(from); i++) {
		InternetAddress *a = internet_address_list_get_address(from, i);
		if (!INTERNET_ADDRESS_IS_MAILBOX(a))
			continue;
		const char *nm = internet_address_get_name(a);
		const char *em = internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a));
		free(m->from_name);
		free(m->from_email);
		m->from_name = xstrdup(nm ? nm : "");
		m->from_email = xstrdup(em ? em : "");
		break;
	}
	m->from = addresses(msg, GMIME_ADDRESS_TYPE_FROM);
	m->to = addresses(msg, GMIME_ADDRESS_TYPE_TO);
	m->cc = addresses(msg, GMIME_ADDRESS_TYPE_CC);
	GDateTime *dt = g_mime_message_get_date(msg);
	if (dt) {
		m->has_date = true;
		m->date_s = g_date_time_to_unix(dt);
		m->tz_offset_min = (int)(g_date_time_get_utc_offset(dt) / G_TIME_SPAN_MINUTE);
	}
	const char *mid = g_mime_message_get_message_id(msg);
	m->message_id = xstrdup(mid ? mid : "");
	m->in_reply_to = msgid_of(g_mime_object_get_header(GMIME_OBJECT(msg), "In-Reply-To"));
	g_mime_message_foreach(msg, foreach_part, m);
	*out = m;
	m = NULL;
	ret = 0;
out:
	mail_free(m);
	if (msg)
		g_object_unref(msg);
	g_object_unref(parser);
	g_object_unref(st);
	return ret;
}

/* Append [p, p+n) to b, dropping one '>' from a ">+From " line (mboxrd). */
static void put_line(struct buf *b, const char *p, size_t n, bool unescape)
{
	if (unescape && n > 0 && p[0] == '>') {
		size_t i = 0;
		while (i < n && p[i] == '>')
			i++;
		if (n - i >= 5 && !memcmp(p + i, "From ", 5)) {
			p++;
			n--;
		}
	}
	buf_append(b, p, n);
}

/* The blank line that ends each message of an mbox (before the next From_
 * line, or at the end) belongs to the mbox, not to the message. */
static void drop_mbox_blank(struct buf *msg)
{
	size_t n = msg->len;

	if (n >= 2 && msg->ptr[n - 1] == '\n' && msg->ptr[n - 2] == '\n')
		n--;
	else if (n >= 4 && !memcmp(msg->ptr + n - 4, "\r\n\r\n", 4))
		n -= 2;
	msg->len = n;
	if (msg->ptr)
		msg->ptr[n] = '\0';
}

static int add_message(struct mail ***v, size_t *n, struct buf *msg, size_t line,
		       const char *name, struct buf *err)
{
	struct mail *m = NULL;
	int ret;

	ret = mail_parse_one(&m, msg->ptr ? msg->ptr : "", msg->len);
	if (ret < 0) {
		if (err)
			buf_printf(err, "cannot parse the message at '%s' line %zu: not an RFC 822 message",
				   name, line);
		return ret;
	}
	m->line = line;
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = m;
	return 0;
}

int mbox_parse(struct mail ***out, size_t *n_out, const char *data, size_t len,
	       const char *name, bool mboxrd, struct buf *err)
{
	struct mail **v = NULL;
	size_t n = 0, off = 0, lineno = 0, start_line = 1;
	struct buf msg = BUF_INIT;
	struct line l;
	bool is_mbox = false, in_msg = false, prev_blank = true;
	int ret = 0;

	gmime_ready();
	/* An mbox starts with a From_ line (after blank lines, if any). */
	for (size_t o = 0; next_line(&l, data, len, o); o = l.next) {
		if (is_blank(l.p, l.len))
			continue;
		is_mbox = mbox_is_from_line(l.p, l.len);
		break;
	}
	if (!is_mbox) {
		buf_append(&msg, data, len);
		ret = add_message(&v, &n, &msg, 1, name, err);
		goto out;
	}

	while (next_line(&l, data, len, off)) {
		struct line nx;
		bool sep = false;

		lineno++;
		off = l.next;
		if (prev_blank && mbox_is_from_line(l.p, l.len)) {
			/* A From_ line starts a message only when a header follows:
			 * "From the above log" in a body never does. */
			sep = next_line(&nx, data, len, l.next) && is_header_line(nx.p, nx.len);
		}
		if (sep) {
			if (in_msg) {
				drop_mbox_blank(&msg);
				ret = add_message(&v, &n, &msg, start_line, name, err);
				if (ret < 0)
					goto out;
				buf_reset(&msg);
			}
			in_msg = true;
			start_line = lineno + 1;
			prev_blank = false;
			continue;
		}
		prev_blank = is_blank(l.p, l.len);
		if (!in_msg)
			continue;
		put_line(&msg, l.p, l.len, mboxrd);
		if (l.next <= len && l.p + l.len < data + len)
			buf_append(&msg, "\n", 1);
	}
	if (in_msg) {
		drop_mbox_blank(&msg);
		ret = add_message(&v, &n, &msg, start_line, name, err);
	}
out:
	buf_release(&msg);
	if (ret < 0) {
		mail_free_all(v, n);
		return ret;
	}
	*out = v;
	*n_out = n;
	return 0;
}

void mail_free(struct mail *m)
{
	if (!m)
		return;
	free(m->subject);
	free(m->from_name);
	free(m->from_email);
	free(m->from);
	free(m->to);
	free(m->cc);
	free(m->message_id);
	free(m->in_reply_to);
	for (size_t i = 0; i < m->nparts; i++) {
		free(m->parts[i].type);
		free(m->parts[i].charset);
		free(m->parts[i].filename);
		free(m->parts[i].text);
	}
	free(m->parts);
	free(m);
}

void mail_free_all(struct mail **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		mail_free(v[i]);
	free(v);
}

static bool is_utf8ish(const char *cs)
{
	return !cs || !strcasecmp(cs, "utf-8") || !strcasecmp(cs, "utf8") ||
	       !strcasecmp(cs, "us-ascii") || !strcasecmp(cs, "ascii");
}

char *mail_text_utf8(const char *s, size_t len, const char *charset)
{
	const char *from = charset;
	gsize written = 0;
	char *r;

	gmime_ready();
	if (is_utf8ish(charset)) {
		if (g_utf8_validate(s, (gssize)len, NULL))
			return xstrndup(s, len);
		/* mislabelled 8-bit: ISO-8859-1 is what such mail usually is */
		from = "iso-8859-1";
	}
	r = g_convert(s, (gssize)len, "UTF-8", from, NULL, &written, NULL);
	if (r) {
		char *c = xstrndup(r, written);
		g_free(r);
		return c;
	}
	return from_g(g_utf8_make_valid(s, (gssize)len));
}

char *mail_decode_header(const char *value)
{
	gmime_ready();
	char *unf = g_mime_utils_header_unfold(value);
	char *dec = g_mime_utils_header_decode_text(parser_opts, unf);
	g_free(unf);
	if (dec && !g_utf8_validate(dec, -1, NULL)) {
		char *ok = g_utf8_make_valid(dec, -1);
		g_free(dec);
		dec = ok;
	}
	return from_g(dec);
}

char *mail_address_header(const char *key, const char *list)
{
	InternetAddressList *l;
	GString *s;
	char *out = NULL;

	gmime_ready();
	l = internet_address_list_parse(parser_opts, list);
	if (l && internet_address_list_length(l)) {
		s = g_string_new(key);
		g_string_append(s, ": ");
		internet_address_list_encode(l, NULL, s);   /* folded, ends in "\n" */
		out = xstrdup(s->str);
		g_string_free(s, TRUE);
	}
	if (l)
		g_object_unref(l);
	return out;
}

int mail_parse_address(char **name_out, char **email_out, const char *value)
{
	InternetAddressList *l;
	int ret = -EINVAL;

	gmime_ready();
	l = internet_address_list_parse(parser_opts, value);
	for (int i = 0; l && i < internet_address_list_length(l); i++) {
		InternetAddress *a = internet_address_list_get_address(l, i);
		if (!INTERNET_ADDRESS_IS_MAILBOX(a))
			continue;
		const char *nm = internet_address_get_name(a);
		const char *em = internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a));
		if (!em || !*em)
			continue;
		*name_out = xstrdup(nm ? nm : "");
		*email_out = xstrdup(em);
		ret = 0;
		break;
	}
	if (l)
		g_object_unref(l);
	return ret;
}

int mail_parse_date(int64_t *date_s, int *tz_offset_min, const char *value)
{
	GDateTime *dt;

	gmime_ready();
	dt = g_mime_utils_header_decode_date(value);
	if (!dt)
		return -EINVAL;
	*date_s = g_date_time_to_unix(dt);
	*tz_offset_min = (int)(g_date_time_get_utc_offset(dt) / G_TIME_SPAN_MINUTE);
	g_date_time_unref(dt);
	return 0;
}
