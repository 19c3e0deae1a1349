/* variant.c - a variant's one JSON form, written and read (see variant.h). */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "kernel/variant.h"

static const char *const kind_names[] = {
	[VARIANT_BASE] = "base",
	[VARIANT_SERIES] = "series",
	[VARIANT_PREBUILT] = "prebuilt",
};

const char *variant_kind_name(enum variant_kind kind)
{
	return (size_t)kind < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[kind] : "?";
}

void variant_release(struct variant *v)
{
	if (!v)
		return;
	free(v->name);
	free(v->base);
	free(v->series);
	free(v->patches);
	free(v->kernel);
	free(v->build_base);
	for (size_t i = 0; i < v->nconfig; i++)
		free(v->config[i]);
	free(v->config);
	free(v->subject);
	free(v->author);
	memset(v, 0, sizeof(*v));
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void variant_copy(struct variant *out, const struct variant *from)
{
	*out = *from;
	out->name = dup_or_null(from->name);
	out->base = dup_or_null(from->base);
	out->series = dup_or_null(from->series);
	out->patches = dup_or_null(from->patches);
	out->kernel = dup_or_null(from->kernel);
	out->build_base = dup_or_null(from->build_base);
	out->subject = dup_or_null(from->subject);
	out->author = dup_or_null(from->author);
	if (from->config) {
		out->config = xcalloc(from->nconfig + 1, sizeof(*out->config));
		for (size_t i = 0; i < from->nconfig; i++)
			out->config[i] = xstrdup(from->config[i]);
	}
}

static void set_str(json_t *o, const char *key, const char *value)
{
	if (value)
		json_object_set_new(o, key, json_string(value));
}

char *variant_to_json(const struct variant *v)
{
	json_t *o = json_object();
	char *out;

	set_str(o, "kind", variant_kind_name(v->kind));
	set_str(o, "base", v->base);
	set_str(o, "series", v->series);
	set_str(o, "patches", v->patches);
	set_str(o, "kernel", v->kernel);
	if (v->config) {
		json_t *a = json_array();
		for (size_t i = 0; i < v->nconfig; i++)
			json_array_append_new(a, json_string(v->config[i]));
		json_object_set_new(o, "config", a);
	}
	set_str(o, "subject", v->subject);
	set_str(o, "build_base", v->build_base);
	set_str(o, "author", v->author);
	if (v->author_time)
		json_object_set_new(o, "author_time", json_integer((json_int_t)v->author_time));
	if (v->version)
		json_object_set_new(o, "version", json_integer(v->version));
	out = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!out)
		abort();        /* jansson fails here only when out of memory */
	return out;
}

/* The string at key into *out (a copy; NULL when absent or null). */
static int get_str(char **out, json_t *o, const char *key, struct buf *err)
{
	json_t *j = json_object_get(o, key);

	if (!j || json_is_null(j))
		return 0;
	if (!json_is_string(j))
		return err_setf(err, -EINVAL, "variant spec: '%s' is not a string", key);
	*out = xstrdup(json_string_value(j));
	return 0;
}

static int get_int(int64_t *out, json_t *o, const char *key, struct buf *err)
{
	json_t *j = json_object_get(o, key);

	if (!j || json_is_null(j))
		return 0;
	if (!json_is_integer(j))
		return err_setf(err, -EINVAL, "variant spec: '%s' is not a whole number", key);
	*out = (int64_t)json_integer_value(j);
	return 0;
}

static int get_config(struct variant *v, json_t *o, struct buf *err)
{
	json_t *a = json_object_get(o, "config"), *e;
	size_t i;

	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a))
		return err_setf(err, -EINVAL, "variant spec: 'config' is not a list");
	v->config = xcalloc(json_array_size(a) + 1, sizeof(*v->config));
	json_array_foreach(a, i, e) {
		if (!json_is_string(e))
			return err_setf(err, -EINVAL, "variant spec: 'config' item %zu is not a string",
					i + 1);
		v->config[v->nconfig++] = xstrdup(json_string_value(e));
	}
	return 0;
}

static int get_kind(enum variant_kind *out, json_t *o, struct buf *err)
{
	json_t *j = json_object_get(o, "kind");
	const char *k = json_string_value(j);

	if (!k)
		return err_setf(err, -EINVAL, "variant spec: %s (expected base, series or prebuilt)",
				j && !json_is_null(j) ? "'kind' is not a string" : "no 'kind'");
	for (size_t i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
		if (!strcmp(k, kind_names[i])) {
			*out = (enum variant_kind)i;
			return 0;
		}
	return err_setf(err, -EINVAL, "variant spec: unknown kind '%s' (expected base, series or "
			"prebuilt)", k);
}

/* What each kind needs to be built or booted. */
static int check_kind(const struct variant *v, struct buf *err)
{
	const char *kind = variant_kind_name(v->kind), *missing = NULL;

	if (v->kind != VARIANT_PREBUILT && !v->base)
		missing = "base";
	else if (v->kind == VARIANT_SERIES && !v->series)
		missing = "series";
	else if (v->kind == VARIANT_PREBUILT && !v->kernel)
		missing = "kernel";
	if (missing)
		return err_setf(err, -EINVAL, "variant spec: a %s variant needs '%s'", kind, missing);
	return 0;
}

int variant_from_json(struct variant *out, const char *name, const char *json,
		      struct buf *err)
{
	struct variant v = { 0 };
	int64_t version = 0;
	json_error_t je;
	json_t *o = json ? json_loads(json, 0, &je) : NULL;
	int r;

	if (!json_is_object(o)) {
		r = err_setf(err, -EINVAL, "variant spec is not a JSON object: %s",
			     o ? "another JSON value" : json ? je.text : "none stored");
		goto out;
	}
	if ((r = get_kind(&v.kind, o, err)) ||
	    (r = get_str(&v.base, o, "base", err)) ||
	    (r = get_str(&v.series, o, "series", err)) ||
	    (r = get_str(&v.patches, o, "patches", err)) ||
	    (r = get_str(&v.kernel, o, "kernel", err)) ||
	    (r = get_config(&v, o, err)) ||
	    (r = get_str(&v.subject, o, "subject", err)) ||
	    (r = get_str(&v.build_base, o, "build_base", err)) ||
	    (r = get_str(&v.author, o, "author", err)) ||
	    (r = get_int(&v.author_time, o, "author_time", err)) ||
	    (r = get_int(&version, o, "version", err)))
		goto out;
	if (version < 0 || version > 999) {
		r = err_setf(err, -EINVAL, "variant spec: 'version' %lld is not a revision number",
			     (long long)version);
		goto out;
	}
	v.version = (int)version;
	if ((r = check_kind(&v, err)))
		goto out;
	v.name = dup_or_null(name);
	*out = v;
	memset(&v, 0, sizeof(v));
out:
	variant_release(&v);
	json_decref(o);
	return r;
}
