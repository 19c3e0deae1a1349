/* inbox.c - see inbox.h: message-ids and URLs, public-inbox's t.mbox.gz
 * and search mboxes, kept in the store. */
#define LOG_MODULE "inbox"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/db_inbox.h"
#include "error.h"
#include "fetch.h"
#include "gzip.h"
#include "kernel/inbox.h"
#include "log.h"
#include "util.h"

/* A thread or search larger than this is refused (lore's largest threads
 * are a few MB). */
#define INBOX_MAX_BYTES ((size_t)256 << 20)
#define INBOX_TIMEOUT_S 120L

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* s[0..n) with %XX undone, <> and spaces around it dropped. */
static char *unescape_id(const char *s, size_t n)
{
	struct buf b = BUF_INIT;

	while (n && (*s == '<' || *s == ' ')) {
		s++;
		n--;
	}
	while (n && (s[n - 1] == '>' || s[n - 1] == ' '))
		n--;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
			char c = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			buf_append(&b, &c, 1);
			i += 2;
		} else {
			buf_append(&b, &s[i], 1);
		}
	}
	return b.ptr ? buf_detach(&b) : xstrdup("");
}

/* True when id looks like a message-id: local@domain, no blanks or '/'. */
static bool id_ok(const char *id)
{
	const char *at = strchr(id, '@');

	return at && at != id && at[1] && !strpbrk(id, " \t\n/<>");
}

int inbox_ref_parse(char **out, const char *arg)
{
	const char *p = arg, *seg, *end;
	char *id;

	if (!strncmp(p, "https://", 8))
		p += 8;
	else if (!strncmp(p, "http://", 7))
		p += 7;
	else if (*p == '<' || !strchr(p, '/')) {
		/* "<id>" or "id" */
		id = unescape_id(p, strlen(p));
		if (!id_ok(id)) {
			free(id);
			return -EINVAL;
		}
		*out = id;
		return 0;
	} else if (strncmp(p, "patch.msgid.link/", 17) && strncmp(p, "lore.kernel.org/", 16)) {
		return -EINVAL;
	}
	/* HOST/r/<id>, HOST/<list>/<id>/..., patch.msgid.link/<id>: the first
	 * path segment holding an '@' (escaped or not) is the message-id */
	seg = strchr(p, '/');
	while (seg) {
		seg++;
		end = strchr(seg, '/');
		size_t n = end ? (size_t)(end - seg) : strlen(seg);
		id = unescape_id(seg, n);
		if (id_ok(id)) {
			*out = id;
			return 0;
		}
		free(id);
		seg = end;
	}
	return -EINVAL;
}

const char *inbox_base_url(const struct inbox *ib, size_t *len_out)
{
	const char *u = ib && ib->base_url ? ib->base_url : getenv("KCANARY_PUBLIC_INBOX");
	size_t n;

	if (!u || !*u)
		u = INBOX_DEFAULT_URL;
	n = strlen(u);
	while (n && u[n - 1] == '/')
		n--;
	*len_out = n;
	return u;
}

/* The answer for key: kept, else fetched from url (POST when post),
 * inflated when gz, and kept. */
static int get_kept(const struct inbox *ib, struct buf *out, bool *cached, const char *key,
		    const char *url, bool post, const char *what, struct buf *err)
{
	struct buf raw = BUF_INIT_MAX(INBOX_MAX_BYTES), why = BUF_INIT;
	struct buf body = BUF_INIT_MAX(INBOX_MAX_BYTES);
	long status = 0;
	int r;

	if (cached)
		*cached = false;
	r = ib->refresh ? -ENOENT : db_inbox_get(ib->db, &body, &status, NULL, key, &why);
	if (!r) {
		if (cached)
			*cached = true;
		log_debug("%s: kept copy (status %ld, %zu bytes)", what, status, body.len);
		goto judge;
	}
	if (r != -ENOENT) {
		err_setf(err, r, "%s", buf_str(&why));
		goto out;
	}
	buf_reset(&why);
	r = post ? fetch_post_empty(&raw, &status, url, INBOX_TIMEOUT_S, &why)
		 : fetch_get(&raw, &status, url, INBOX_TIMEOUT_S, &why);
	if (r) {
		err_setf(err, r == -EFBIG ? r : -EIO, "cannot fetch %s from '%s': %s (and no copy "
			 "is kept in the store)", what, url, buf_str(&why));
		r = r == -EFBIG ? r : -EIO;
		goto out;
	}
	if (status == 200 && raw.len >= 2 && (unsigned char)raw.ptr[0] == 0x1f &&
	    (unsigned char)raw.ptr[1] == 0x8b) {
		buf_reset(&why);
		if ((r = gzip_inflate(&body, raw.ptr, raw.len, INBOX_MAX_BYTES, &why))) {
			err_setf(err, -EPROTO, "the answer to '%s' is not a whole gzip stream: %s", url,
				 buf_str(&why));
			r = -EPROTO;
			goto out;
		}
	} else if (status == 200) {
		if (raw.len)
			buf_append(&body, raw.ptr, raw.len);
	}
	if (status == 200 || status == 404) {
		/* a 404 is kept too: "not on the server" is an answer to keep */
		buf_reset(&why);
		if ((r = db_inbox_put(ib->db, key, url, status, body.ptr, body.len, &why))) {
			err_setf(err, r, "%s", buf_str(&why));
			goto out;
		}
	}
judge:
	if (status == 404) {
		r = err_setf(err, -ENOENT, "%s is not on the server ('%s' answered 404)", what, url);
	} else if (status != 200) {
		r = err_setf(err, -EPROTO, "'%s' answered HTTP %ld for %s", url, status, what);
	} else {
		buf_append(out, body.ptr ? body.ptr : "", body.len);
		r = 0;
	}
out:
	buf_release(&raw);
	buf_release(&body);
	buf_release(&why);
	return r;
}

/* One kind of request to the inbox: its URL is base + url_pre + the
 * escaped argument + url_post, its store key key_pre + the argument, and
 * messages name it what_pre + the argument + what_post. */
struct inbox_req {
	const char *url_pre, *url_post, *key_pre, *what_pre, *what_post;
	bool post;                 /* POST (public-inbox's search), else GET */
};

static const struct inbox_req req_thread = {
	"/", "/t.mbox.gz", "thread:", "message <", ">", false,
};
static const struct inbox_req req_search = {
	"/?q=", "&x=m", "search:", "the search '", "'", true,
};

/* The answer to q for arg: get_kept() on the URL, key and description q
 * builds from it. */
static int get_req(const struct inbox *ib, struct buf *out, bool *cached,
		   const struct inbox_req *q, const char *arg, struct buf *err)
{
	size_t n;
	const char *base = inbox_base_url(ib, &n);
	char *esc = fetch_escape(arg);
	char *url = xasprintf("%.*s%s%s%s", (int)n, base, q->url_pre, esc, q->url_post);
	char *key = xasprintf("%s%s", q->key_pre, arg);
	char *what = xasprintf("%s%s%s", q->what_pre, arg, q->what_post);
	int r = get_kept(ib, out, cached, key, url, q->post, what, err);

	free(esc);
	free(url);
	free(key);
	free(what);
	return r;
}

int inbox_thread(const struct inbox *ib, struct buf *out, bool *cached, const char *msgid,
		 struct buf *err)
{
	return get_req(ib, out, cached, &req_thread, msgid, err);
}

int inbox_search(const struct inbox *ib, struct buf *out, bool *cached, const char *query,
		 struct buf *err)
{
	int r = get_req(ib, out, cached, &req_search, query, err);

	/* public-inbox answers a search without a match with 404 */
	if (r == -ENOENT) {
		if (err)
			buf_reset(err);
		r = 0;
	}
	return r;
}
