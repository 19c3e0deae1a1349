/* prometheus.c - see prometheus.h: GETs through fetch.h, jansson for the answer. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "error.h"
#include "fetch.h"
#include "wrap/prometheus.h"
#include "util.h"

/* Answers larger than this are refused (a query over a whole fleet for a
 * day at 15 s steps is a few MB). */
#define PROM_MAX_ANSWER (256u << 20)

void prom_result_release(struct prom_result *r)
{
	free(r->values);
	free(r->series_of);
	memset(r, 0, sizeof(*r));
}

static bool label_name_ok(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* Append s as the inside of a PromQL string ("…"): backslash and quote
 * escaped. */
static void put_quoted(struct buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			buf_append(b, "\\", 1);
		buf_append(b, s, 1);
	}
}

/* Append s as an RE2 regex matching it literally (inside a PromQL string,
 * so a backslash is written twice). */
static void put_regex_literal(struct buf *b, char c)
{
	if (strchr(".+*?()[]{}|^$\\", c))
		buf_puts(b, "\\\\");
	if (c == '"')
		buf_puts(b, "\\");
	buf_append(b, &c, 1);
}

/* A glob (sqlite GLOB: * ? [set]) as an RE2 regex. */
static void put_glob(struct buf *b, const char *g)
{
	for (; *g; g++) {
		if (*g == '*') {
			buf_puts(b, ".*");
		} else if (*g == '?') {
			buf_puts(b, ".");
		} else if (*g == '[') {
			const char *end = strchr(g + 1, ']');
			if (!end) {
				put_regex_literal(b, *g);
				continue;
			}
			buf_puts(b, "[");
			for (const char *p = g + 1; p < end; p++) {
				if (p == g + 1 && *p == '^')
					buf_puts(b, "^");
				else if (*p == '\\' || *p == '"')
					put_regex_literal(b, *p);
				else
					buf_append(b, p, 1);
			}
			buf_puts(b, "]");
			g = end;
		} else {
			put_regex_literal(b, *g);
		}
	}
}

int prom_matchers(char **out, const struct db_selector *sel, size_t n, struct buf *err)
{
	struct buf b = BUF_INIT;

	for (size_t i = 0; i < n; i++) {
		const char *k = sel[i].key, *v = sel[i].value;
		bool glob = strpbrk(v, "*?[") != NULL;

		if (!strcmp(k, "since")) {
			buf_release(&b);
			return err_setf(err, -EINVAL, "selector 'since' has no Prometheus label: use --window");
		}
		if (!label_name_ok(k)) {
			buf_release(&b);
			return err_setf(err, -EINVAL, "selector key '%s' is not a Prometheus label name "
					"(letters, digits, '_')", k);
		}
		if (b.len)
			buf_puts(&b, ",");
		buf_printf(&b, "%s%s\"", k, glob || !strcmp(k, "kernel") ? "=~" : "=");
		if (glob) {
			put_glob(&b, v);
		} else if (!strcmp(k, "kernel")) {
			for (const char *p = v; *p; p++)
				put_regex_literal(&b, *p);
			buf_puts(&b, "([+-].*)?");
		} else {
			put_quoted(&b, v);
		}
		buf_puts(&b, "\"");
	}
	*out = b.ptr ? buf_detach(&b) : xstrdup("");
	return 0;
}

/* One sample ["<t>", "<value>"]: appended when finite. */
static void add_sample(struct prom_result *r, json_t *pair, size_t series, size_t *cap)
{
	const char *s = json_string_value(json_array_get(pair, 1));
	char *end;
	double v;

	if (!s)
		return;
	v = strtod(s, &end);
	if (end == s || *end || !isfinite(v))
		return;
	if (r->n == *cap) {
		*cap = *cap ? 2 * *cap : 256;
		r->values = xrealloc(r->values, *cap * sizeof(*r->values));
		r->series_of = xrealloc(r->series_of, *cap * sizeof(*r->series_of));
	}
	r->values[r->n] = v;
	r->series_of[r->n++] = series;
}

int prom_query(struct prom_result *out, const char *base_url, const char *promql,
	       double end_s, double window_s, double step_s, struct buf *err)
{
	struct buf body = BUF_INIT_MAX(PROM_MAX_ANSWER), why = BUF_INIT;
	char *q = NULL, *url = NULL;
	size_t blen = strlen(base_url), cap = 0;
	json_t *j = NULL, *data, *result, *item;
	struct prom_result r = { 0 };
	long status = 0;
	int ret;
	size_t i;

	while (blen && base_url[blen - 1] == '/')
		blen--;
	q = fetch_escape(promql);
	if (window_s > 0)
		url = xasprintf("%.*s/api/v1/query_range?query=%s&start=%.3f&end=%.3f&step=%.3f",
				(int)blen, base_url, q, end_s - window_s, end_s, step_s);
	else
		url = xasprintf("%.*s/api/v1/query?query=%s&time=%.3f", (int)blen, base_url, q, end_s);
	if ((ret = fetch_get(&body, &status, url, 60, &why))) {
		err_setf(err, -EIO, "cannot query Prometheus at '%.*s': %s", (int)blen, base_url,
			 buf_str(&why));
		ret = -EIO;
		goto out;
	}
	j = json_loadb(body.ptr ? body.ptr : "", body.len, 0, NULL);
	ret = -EPROTO;
	if (!j || strcmp(json_string_value(json_object_get(j, "status")) ?: "", "success")) {
		const char *e = json_string_value(json_object_get(j, "error"));
		err_setf(err, ret, "Prometheus at '%.*s' answered %ld to '%s': %s", (int)blen,
			 base_url, status, promql, e ? e : j ? "no error text" : "not JSON");
		goto out;
	}
	data = json_object_get(j, "data");
	result = json_object_get(data, "result");
	const char *type = json_string_value(json_object_get(data, "resultType"));
	if (!json_is_array(result) || !type || (strcmp(type, "matrix") && strcmp(type, "vector"))) {
		err_setf(err, ret, "Prometheus answered '%s' with a %s, expected an instant vector or"
			 " a range of one (the PromQL must select series)", promql, type ? type : "?");
		goto out;
	}
	json_array_foreach(result, i, item) {
		if (!strcmp(type, "matrix")) {
			size_t k;
			json_t *pair;
			json_array_foreach(json_object_get(item, "values"), k, pair)
				add_sample(&r, pair, i, &cap);
		} else {
			add_sample(&r, json_object_get(item, "value"), i, &cap);
		}
	}
	r.nseries = json_array_size(result);
	*out = r;
	memset(&r, 0, sizeof(r));
	ret = 0;
out:
	prom_result_release(&r);
	json_decref(j);
	buf_release(&body);
	buf_release(&why);
	free(q);
	free(url);
	return ret;
}
