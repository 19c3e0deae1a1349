/* knob.c - see knob.h: the knob table of a workload, parsing name=value. */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"
#include "knob.h"
#include "util.h"

const char *knob_type_name(enum knob_type t)
{
	switch (t) {
	case KNOB_SIZE: return "size";
	case KNOB_SIZE_MAX: return "size|max";
	case KNOB_SECONDS: return "seconds";
	case KNOB_UINT: return "integer";
	case KNOB_NUMBER: return "number";
	case KNOB_BOOL: return "bool";
	case KNOB_ENUM: return "choice";
	case KNOB_STRING: return "text";
	}
	return "?";
}

static int parse_uint(uint64_t *out, const char *s)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

static void choices_text(char *out, size_t size, const char *const *choices)
{
	size_t len = 0;

	out[0] = '\0';
	for (size_t i = 0; choices && choices[i]; i++) {
		int w = snprintf(out + len, size - len, "%s%s", i ? ", " : "", choices[i]);
		if (w < 0 || (size_t)w >= size - len)
			break;
		len += (size_t)w;
	}
}

/* Parse one value; on error err says "is not ... (expected ...)". */
static int parse_value(struct knob_val *v, const struct knob_def *d,
		       const char *s, struct buf *err)
{
	char list[256];
	char *end;

	switch (d->type) {
	case KNOB_SIZE:
	case KNOB_SIZE_MAX:
		if (parse_size(&v->u, s, d->type == KNOB_SIZE_MAX) < 0) {
			return err_setf(err, -EINVAL, "knob '%s': '%s' is not a size (expected bytes with an optional K, M, G or T suffix%s)",
				 d->name, s, d->type == KNOB_SIZE_MAX ? ", or max" : "");
		}
		v->d = (double)v->u;
		return 0;
	case KNOB_SECONDS:
		if (parse_duration_s(&v->d, s) < 0 || v->d < 0) {
			return err_setf(err, -EINVAL, "knob '%s': '%s' is not a duration (expected seconds, like 120, 90s, 2m or 1.5s)",
				 d->name, s);
		}
		return 0;
	case KNOB_UINT:
		if (parse_uint(&v->u, s) < 0) {
			return err_setf(err, -EINVAL, "knob '%s': '%s' is not a whole number (expected 0, 1, 2, ...)",
				 d->name, s);
		}
		v->d = (double)v->u;
		return 0;
	case KNOB_NUMBER:
		errno = 0;
		v->d = strtod(s, &end);
		if (!*s || *end || errno || !isfinite(v->d) || v->d <= 0) {
			return err_setf(err, -EINVAL, "knob '%s': '%s' is not a positive number (expected e.g. 250 or 12.5)",
				 d->name, s);
		}
		return 0;
	case KNOB_BOOL:
		if (!strcmp(s, "1") || !strcasecmp(s, "yes") || !strcasecmp(s, "true") || !strcasecmp(s, "on")) {
			v->u = 1;
		} else if (!strcmp(s, "0") || !strcasecmp(s, "no") || !strcasecmp(s, "false") || !strcasecmp(s, "off")) {
			v->u = 0;
		} else {
			return err_setf(err, -EINVAL, "knob '%s': '%s' is not a yes/no value (expected 0 or 1)", d->name, s);
		}
		v->d = (double)v->u;
		return 0;
	case KNOB_ENUM:
		for (size_t i = 0; d->choices && d->choices[i]; i++) {
			if (!strcmp(s, d->choices[i])) {
				v->u = i;
				return 0;
			}
		}
		choices_text(list, sizeof(list), d->choices);
		return err_setf(err, -EINVAL, "knob '%s': '%s' is not a choice (expected one of: %s)", d->name, s, list);
	case KNOB_STRING:
		return 0;
	}
	assert(!"unknown knob type");
	return -EINVAL;
}

static void vals_free(struct knob_val *vals, size_t n)
{
	if (!vals)
		return;
	for (size_t i = 0; i < n; i++)
		free(vals[i].text);
	free(vals);
}

/* Name the knob at fault: name (len bytes, not NUL-terminated) into f->knob. */
static void fault_knob(struct knob_fault *f, const char *name, size_t len)
{
	snprintf(f->knob, sizeof(f->knob), "%.*s", (int)len, name);
}

int knobs_parse_fault(struct knobs *out, const char *workload,
		      const struct knob_def *defs, size_t n,
		      int argc, char **argv, struct knob_fault *f, struct buf *err)
{
	struct knob_val *vals = xcalloc(n ? n : 1, sizeof(*vals));
	int ret = 0;

	f->knob[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const char *def = defs[i].def ? defs[i].def : "";

		ret = parse_value(&vals[i], &defs[i], def, NULL);
		assert(ret == 0 && "a knob's default must parse");
		vals[i].text = xstrdup(def);
	}
	for (int a = 0; a < argc; a++) {
		const char *eq = strchr(argv[a], '=');
		size_t i;

		if (!eq || eq == argv[a]) {
			ret = err_setf(err, -EINVAL,
				       "argument '%s' is not a knob setting (expected name=value)", argv[a]);
			goto fail;
		}
		for (i = 0; i < n; i++) {
			if (strlen(defs[i].name) == (size_t)(eq - argv[a]) &&
			    !strncmp(defs[i].name, argv[a], (size_t)(eq - argv[a])))
				break;
		}
		if (i == n) {
			ret = err_setf(err, -EINVAL,
				       "unknown knob '%.*s' for workload '%s' (see 'kcanary-agent list')",
				       (int)(eq - argv[a]), argv[a], workload);
			fault_knob(f, argv[a], (size_t)(eq - argv[a]));
			goto fail;
		}
		ret = parse_value(&vals[i], &defs[i], eq + 1, err);
		if (ret < 0) {
			fault_knob(f, defs[i].name, strlen(defs[i].name));
			goto fail;
		}
		free(vals[i].text);
		vals[i].text = xstrdup(eq + 1);
		vals[i].given = true;
	}
	for (size_t i = 0; i < n; i++) {
		if (!defs[i].def && !*vals[i].text) {
			ret = err_setf(err, -EINVAL, "knob '%s' is required by workload '%s' and is empty "
				       "(pass %s=VALUE; see 'kcanary-agent list')", defs[i].name, workload,
				       defs[i].name);
			fault_knob(f, defs[i].name, strlen(defs[i].name));
			goto fail;
		}
	}
	out->defs = defs;
	out->n = n;
	out->vals = vals;
	return 0;
fail:
	vals_free(vals, n);
	return ret;
}

int knobs_parse(struct knobs *out, const char *workload,
		const struct knob_def *defs, size_t n,
		int argc, char **argv, struct buf *err)
{
	struct knob_fault f;

	return knobs_parse_fault(out, workload, defs, n, argc, argv, &f, err);
}

void knobs_release(struct knobs *k)
{
	vals_free(k->vals, k->n);
	k->vals = NULL;
	k->n = 0;
}

static const struct knob_val *knob_find(const struct knobs *k, const char *name,
					const struct knob_def **def_out)
{
	for (size_t i = 0; i < k->n; i++) {
		if (!strcmp(k->defs[i].name, name)) {
			if (def_out)
				*def_out = &k->defs[i];
			return &k->vals[i];
		}
	}
	assert(!"no such knob");
	return NULL;
}

uint64_t knobs_u64(const struct knobs *k, const char *name)
{
	return knob_find(k, name, NULL)->u;
}

double knobs_double(const struct knobs *k, const char *name)
{
	return knob_find(k, name, NULL)->d;
}

bool knobs_bool(const struct knobs *k, const char *name)
{
	return knob_find(k, name, NULL)->u != 0;
}

const char *knobs_str(const struct knobs *k, const char *name)
{
	const struct knob_def *d;
	const struct knob_val *v = knob_find(k, name, &d);

	if (d->type == KNOB_ENUM)
		return d->choices[v->u];
	return v->text;
}
