/* report_axis.c - a run's value on the compared axis, the values' order,
 * the cell without the axis (report_axis.h). Pure: reads what
 * db_report_load() gave, parses params and the spec with jansson. */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "judge/report_axis.h"
#include "store/db_report.h"

int report_axis_is_variant(const char *name)
{
	return !strcmp(name, "variant") || !strcmp(name, "kernel");
}

/* Does the cell token key ("fs", "mode", "sysctl.vm.x") belong to axis? */
static int token_of_axis(const char *key, size_t klen, const char *axis)
{
	size_t alen = strlen(axis);

	if (!strcmp(axis, "sysctl"))
		return klen > 7 && !strncmp(key, "sysctl.", 7);
	if (klen == alen && !strncmp(key, axis, klen))
		return 1;
	return klen == alen + 7 && !strncmp(key, "sysctl.", 7) && !strncmp(key + 7, axis, alen);
}

char *report_axis_rest(const struct db_report_run *run, const char *const *axes,
		       size_t naxes)
{
	struct buf b = BUF_INIT;
	const char *p = run->cell ? run->cell : "";

	while (*p) {
		size_t len = strcspn(p, " ");
		const char *eq = memchr(p, '=', len);
		size_t klen = eq ? (size_t)(eq - p) : len;
		int drop = 0;
		for (size_t i = 0; i < naxes && !drop; i++)
			drop = token_of_axis(p, klen, axes[i]);
		if (len && !drop) {
			if (b.len)
				buf_puts(&b, " ");
			buf_append(&b, p, len);
		}
		p += len;
		while (*p == ' ')
			p++;
	}
	return buf_detach(&b);
}

/* A params value as text: strings as they are, numbers as %g. */
static char *json_text(json_t *v)
{
	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	if (json_is_integer(v))
		return xasprintf("%lld", (long long)json_integer_value(v));
	if (json_is_real(v))
		return xasprintf("%g", json_real_value(v));
	return NULL;
}

/* Every sysctl of the run, "k=v k=v": from the cell, else from params. */
static char *sysctls_of(const struct db_report_run *run, json_t *params)
{
	struct buf b = BUF_INIT;
	const char *p = run->cell ? run->cell : "";

	while (*p) {
		size_t len = strcspn(p, " ");
		if (len > 7 && !strncmp(p, "sysctl.", 7)) {
			if (b.len)
				buf_puts(&b, " ");
			buf_append(&b, p + 7, len - 7);
		}
		p += len;
		while (*p == ' ')
			p++;
	}
	if (!b.len) {
		json_t *sys = json_object_get(params, "sysctl");
		const char *k;
		json_t *v;
		json_object_foreach(sys, k, v) {
			char *t = json_text(v);
			if (t)
				buf_printf(&b, "%s%s=%s", b.len ? " " : "", k, t);
			free(t);
		}
	}
	return b.len ? buf_detach(&b) : (buf_release(&b), NULL);
}

/* The run's value of one setting: its cell token, else its params
 * (a knob, or a sysctl under "sysctl"). NULL when it has none. */
static char *setting_of(const struct db_report_run *run, json_t *params, const char *axis)
{
	const char *p = run->cell ? run->cell : "";

	while (*p) {
		size_t len = strcspn(p, " ");
		const char *eq = memchr(p, '=', len);
		if (eq && token_of_axis(p, (size_t)(eq - p), axis))
			return xasprintf("%.*s", (int)(len - (size_t)(eq - p) - 1), eq + 1);
		p += len;
		while (*p == ' ')
			p++;
	}
	return report_axis_param(params, axis);
}

char *report_axis_param(json_t *params, const char *axis)
{
	const char *bare = !strncmp(axis, "sysctl.", 7) ? axis + 7 : axis;
	char *t = bare == axis ? json_text(json_object_get(params, axis)) : NULL;

	if (!t)
		t = json_text(json_object_get(json_object_get(params, "sysctl"), bare));
	return t;
}

int report_axis_is_of_variant(const char *name)
{
	return !strcmp(name, "revision") || !strcmp(name, "patches");
}

/* A series variant's revision or patch prefix from its name, as job.c
 * names them ("+ v6 1-2": revision v6, patches 1-2; "+ v6": all of v6's
 * patches); any other variant (the base, a prebuilt kernel) is revision
 * "base" with patches "none". */
char *report_axis_variant_part(const char *name, const char *axis)
{
	const char *p = name, *sp;

	if (strncmp(p, "+ ", 2))
		return xstrdup(!strcmp(axis, "revision") ? "base" : "none");
	p += 2;
	sp = strchr(p, ' ');
	if (!strcmp(axis, "revision"))
		return sp ? xasprintf("%.*s", (int)(sp - p), p) : xstrdup(p);
	if (!sp || !sp[1])
		return xstrdup("all");
	return xstrdup(sp + 1);
}

/* The run's value on a non-variant axis (a new string), or NULL. */
static char *value_of(const struct db_report_data *d, const struct db_report_run *run,
		      const char *axis)
{
	json_t *params = run->params_json ? json_loads(run->params_json, 0, NULL) : NULL;
	char *v = NULL;

	if (report_axis_is_of_variant(axis)) {
		for (size_t j = 0; j < d->nvariants && !v; j++)
			if (d->variants[j].id == run->variant_id)
				v = report_axis_variant_part(d->variants[j].name, axis);
	} else if (!strcmp(axis, "host"))
		/* the lab host a guest ran on (lab.h), else the agent's host */
		v = run->lab_host ? xstrdup(run->lab_host) : run->host ? xstrdup(run->host) : NULL;
	else if (!strcmp(axis, "fs") && run->fs && *run->fs)
		v = xstrdup(run->fs);
	else if (!strcmp(axis, "sysctl"))
		v = sysctls_of(run, params);
	else
		v = setting_of(run, params, axis);
	json_decref(params);
	return v;
}

/* Position of value in the spec's [matrix] dimension for axis; SIZE_MAX
 * when the spec does not list it. */
static size_t spec_rank(json_t *spec, const char *axis, const char *value)
{
	json_t *dims = json_object_get(spec, "matrix"), *dim;
	size_t i, j;
	const char *bare = !strncmp(axis, "sysctl.", 7) ? axis + 7 : axis;

	json_array_foreach(dims, i, dim) {
		const char *key = json_string_value(json_object_get(dim, "key"));
		json_t *vals = json_object_get(dim, "values"), *x;
		if (!key)
			continue;
		int sys = !strncmp(key, "sysctl.", 7);
		if (!strcmp(axis, "sysctl") ? !sys :
		    strcmp(key, axis) && !(sys && !strcmp(key + 7, bare)))
			continue;
		json_array_foreach(vals, j, x) {
			const char *s = json_string_value(x);
			if (!s)
				continue;
			if (!strcmp(axis, "sysctl")) {
				/* "vm.x=3000": the dimension's key and value */
				size_t kl = strlen(key + 7);
				if (!strncmp(value, key + 7, kl) && value[kl] == '=' &&
				    !strcmp(value + kl + 1, s))
					return j;
			} else if (!strcmp(s, value)) {
				return j;
			}
		}
	}
	return SIZE_MAX;
}

struct axis_value {
	char *value;
	size_t rank;
	int64_t first_id;
};

static int cmp_value(const void *a, const void *b)
{
	const struct axis_value *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->first_id < y->first_id ? -1 : x->first_id > y->first_id;
}

/* What a job can be compared along, for the error message. */
static void list_axes(struct buf *b, const struct db_report_data *d)
{
	buf_puts(b, "variant, fs, host");
	for (size_t i = 0; i < d->nruns; i++) {
		json_t *params = d->runs[i].params_json ?
			json_loads(d->runs[i].params_json, 0, NULL) : NULL;
		const char *k;
		json_t *v;
		int sys = 0;
		json_object_foreach(params, k, v) {
			if (!strcmp(k, "sysctl"))
				sys = 1;
			else if (strcmp(k, "fs") && strcmp(k, "workload"))
				buf_printf(b, ", %s", k);
		}
		if (sys)
			buf_puts(b, ", sysctl");
		json_decref(params);
		break;   /* one run's settings name them all */
	}
}

static void set_labels(struct report_axis *a, const char *name, int variant,
		       const struct db_report_data *d)
{
	const char *bare = !strncmp(name, "sysctl.", 7) ? name + 7 : name;

	a->labels = xcalloc(a->n ? a->n : 1, sizeof(*a->labels));
	for (size_t i = 0; i < a->n; i++) {
		if (variant) {
			const char *full = d->variants[i].name;
			const char *paren = strstr(full, " (");
			a->labels[i] = xstrdup(full);
			free(a->values[i]);
			a->values[i] = paren ? xasprintf("%.*s", (int)(paren - full), full) :
					       xstrdup(full);
		} else if (!strcmp(name, "sysctl") || !strcmp(name, "revision")) {
			a->labels[i] = xstrdup(a->values[i]);   /* "vm.x=500", "v6" */
		} else if (!strcmp(name, "patches")) {
			a->labels[i] = xasprintf("patches %s", a->values[i]);
		} else {
			a->labels[i] = xasprintf("%s=%s", bare, a->values[i]);
		}
	}
}

/* Move the value named baseline (a value or label) to the front. */
static int put_baseline_first(struct report_axis *a, const char *baseline, struct buf *err)
{
	size_t k = SIZE_MAX;

	for (size_t i = 0; i < a->n && k == SIZE_MAX; i++)
		if (!strcmp(a->values[i], baseline) || !strcmp(a->labels[i], baseline))
			k = i;
	if (k == SIZE_MAX) {
		struct buf have = BUF_INIT;
		for (size_t i = 0; i < a->n; i++)
			buf_printf(&have, "%s'%s'", i ? ", " : "", a->values[i]);
		int r = err_setf(err, -EINVAL, "baseline '%s' is not a value of axis '%s'"
				 " (its values: %s)", baseline, a->name, buf_str(&have));
		buf_release(&have);
		return r;
	}
	char *v = a->values[k], *l = a->labels[k];
	memmove(a->values + 1, a->values, k * sizeof(*a->values));
	memmove(a->labels + 1, a->labels, k * sizeof(*a->labels));
	a->values[0] = v;
	a->labels[0] = l;
	return 0;
}

/* The distinct values of a non-variant axis over the runs, ordered;
 * run_values[i] is run i's value (owned by the caller). */
static int gather_values(struct report_axis *a, const struct db_report_data *d,
			 char **run_values, struct buf *err)
{
	json_t *spec = d->spec_json ? json_loads(d->spec_json, 0, NULL) : NULL;
	struct axis_value *vals = NULL;
	size_t n = 0, known = 0;

	for (size_t i = 0; i < d->nruns; i++) {
		run_values[i] = value_of(d, &d->runs[i], a->name);
		known += run_values[i] != NULL;
		if (!run_values[i])
			run_values[i] = xstrdup("-");
		size_t k = 0;
		while (k < n && strcmp(vals[k].value, run_values[i]))
			k++;
		if (k == n) {
			vals = xrealloc(vals, (n + 1) * sizeof(*vals));
			vals[n++] = (struct axis_value){ run_values[i],
				spec_rank(spec, a->name, run_values[i]), d->runs[i].id };
		} else if (d->runs[i].id < vals[k].first_id) {
			vals[k].first_id = d->runs[i].id;
		}
	}
	json_decref(spec);
	if (d->nruns && !known) {
		struct buf have = BUF_INIT;
		list_axes(&have, d);
		int r = err_setf(err, -EINVAL, "job '%s' has no axis '%s': no run varies in or"
				 " sets it (it has: %s)", d->job_name, a->name, buf_str(&have));
		buf_release(&have);
		free(vals);
		return r;
	}
	qsort(vals, n, sizeof(*vals), cmp_value);
	a->values = xcalloc(n ? n : 1, sizeof(*a->values));
	for (size_t i = 0; i < n; i++)
		a->values[i] = xstrdup(vals[i].value);
	a->n = n;
	free(vals);
	return 0;
}

int report_axis_resolve(struct report_axis *out, const struct db_report_data *d,
			const char *name, const char *baseline, struct buf *err)
{
	struct report_axis a = { .name = xstrdup(name) };
	int variant = report_axis_is_variant(name);
	char **run_values = xcalloc(d->nruns ? d->nruns : 1, sizeof(*run_values));
	int r = 0;

	if (variant) {
		a.n = d->nvariants;
		a.values = xcalloc(a.n ? a.n : 1, sizeof(*a.values));
		for (size_t i = 0; i < a.n; i++)
			a.values[i] = xstrdup(d->variants[i].name);
		for (size_t i = 0; i < d->nruns; i++)
			for (size_t j = 0; j < d->nvariants; j++)
				if (d->variants[j].id == d->runs[i].variant_id)
					run_values[i] = xstrdup(d->variants[j].name);
	} else if ((r = gather_values(&a, d, run_values, err))) {
		goto out;
	}
	set_labels(&a, name, variant, d);
	if (baseline && (r = put_baseline_first(&a, baseline, err)))
		goto out;
	a.of_run = xcalloc(d->nruns ? d->nruns : 1, sizeof(*a.of_run));
	for (size_t i = 0; i < d->nruns; i++) {
		a.of_run[i] = SIZE_MAX;   /* a run of no listed variant: none */
		for (size_t k = 0; run_values[i] && k < a.n; k++)
			if (!strcmp(variant ? a.labels[k] : a.values[k], run_values[i]))
				a.of_run[i] = k;
	}
out:
	for (size_t i = 0; i < d->nruns; i++)
		free(run_values[i]);
	free(run_values);
	if (r) {
		report_axis_release(&a);
		return r;
	}
	*out = a;
	return 0;
}

void report_axis_release(struct report_axis *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->labels ? a->labels[i] : NULL);
		free(a->values ? a->values[i] : NULL);
	}
	free(a->labels);
	free(a->values);
	free(a->of_run);
	free(a->name);
	memset(a, 0, sizeof(*a));
}
