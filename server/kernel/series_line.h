/* series_line.h - the mail parser's small helpers (series*.c): a text
 * read line by line (struct line), prefixes, whitespace, string vectors.
 * Header-only: static inline, so each file has its own copy and none is
 * a symbol of its own.
 */
#ifndef KC_SERIES_LINE_H
#define KC_SERIES_LINE_H

#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static inline bool starts(const char *s, size_t n, const char *pfx)
{
	size_t k = strlen(pfx);
	return n >= k && !memcmp(s, pfx, k);
}

static inline bool starts_ci(const char *s, size_t n, const char *pfx)
{
	size_t k = strlen(pfx);
	return n >= k && !strncasecmp(s, pfx, k);
}

/* Collapse whitespace runs to one space, trim both ends. */
static inline char *collapse_ws(const char *s)
{
	char *r = xmalloc(strlen(s) + 1), *o = r;
	bool sp = false;

	for (; *s; s++) {
		if (isspace((unsigned char)*s)) {
			sp = o != r;
			continue;
		}
		if (sp)
			*o++ = ' ';
		sp = false;
		*o++ = *s;
	}
	*o = '\0';
	return r;
}

static inline char *trim_dup(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return xstrndup(s, n);
}

static inline void strv_push(char ***v, size_t *n, char *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = s;
}

static inline bool strv_has(char **v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

static inline void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

struct line {
	const char *p;
	size_t len;     /* without '\n' */
	size_t off;     /* offset of the line */
	size_t next;    /* offset of the next line */
};

static inline bool line_at(struct line *l, const char *t, size_t len, size_t off)
{
	if (off >= len)
		return false;
	const char *nl = memchr(t + off, '\n', len - off);
	l->p = t + off;
	l->off = off;
	l->len = nl ? (size_t)(nl - l->p) : len - off;
	l->next = nl ? off + l->len + 1 : len;
	return true;
}

static inline bool blank(const struct line *l)
{
	for (size_t i = 0; i < l->len; i++)
		if (!isspace((unsigned char)l->p[i]))
			return false;
	return true;
}

static inline bool all_digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

#endif
