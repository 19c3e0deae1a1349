/* lkp_report.c - see lkp_report.h. The shapes come from the robot's mails
 * (lkp-tests' report templates), D1 in tests/fixtures/mail first. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/lkp_report.h"
#include "util.h"

static char *dup_trim(const char *s, size_t n)
{
	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	return xasprintf("%.*s", (int)n, s);
}

/* The rest of the line after the first occurrence of key in t, trimmed;
 * NULL when key is not there. *next (may be NULL) gets the next line. */
static char *line_after(const char *t, const char *key, const char **next)
{
	const char *p = strstr(t, key), *e;

	if (!p)
		return NULL;
	p += strlen(key);
	e = p + strcspn(p, "\n");
	if (next)
		*next = *e ? e + 1 : e;
	return dup_trim(p, (size_t)(e - p));
}

static void param_add(struct lkp_param **v, size_t *n, const char *k, size_t kn, const char *val,
		      size_t vn)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[*n].key = dup_trim(k, kn);
	(*v)[*n].value = dup_trim(val, vn);
	(*n)++;
}

/* "<metric> -36.6% regression" (or improvement) at s. */
static void metric_change(const char *s, char **metric, double *pct, char **kind)
{
	const char *sp = strchr(s, ' ');
	char *end;

	if (!sp)
		return;
	*metric = dup_trim(s, (size_t)(sp - s));
	*pct = strtod(sp + 1, &end);
	if (*end == '%') {
		end++;
		while (*end == ' ')
			end++;
		*kind = dup_trim(end, strcspn(end, " \n|"));
	}
}

/* 'ID ("subject")' into id and subject. */
static void commit_and_subject(const char *s, char **id, char **subject)
{
	size_t n = strcspn(s, " \n");
	const char *q = strstr(s, "(\"");

	*id = dup_trim(s, n);
	if (q) {
		const char *e = strstr(q, "\")");
		if (e)
			*subject = dup_trim(q + 2, (size_t)(e - q - 2));
	}
}

/* The "parameters:" block: tab- or space-indented "key: value" lines. */
static void parse_params(struct lkp_report *r, const char *t)
{
	const char *p = strstr(t, "\nparameters:");

	if (!p)
		return;
	p = strchr(p + 1, '\n');
	while (p && *p) {
		p++;
		const char *e = p + strcspn(p, "\n");
		const char *colon = memchr(p, ':', (size_t)(e - p));
		if (e == p) {
			if (r->nparams)
				break;  /* the blank line after the block */
			p = e;
			continue;
		}
		if ((*p != ' ' && *p != '\t') || !colon)
			break;
		param_add(&r->params, &r->nparams, p, (size_t)(colon - p), colon + 1,
			  (size_t)(e - colon - 1));
		p = e;
	}
}

/* The "| testcase: change | …" table of further tests. */
static void parse_further(struct lkp_report *r, const char *t)
{
	struct lkp_further *f = NULL;

	for (const char *p = t; (p = strstr(p, "\n| ")); ) {
		p += 3;
		const char *e = p + strcspn(p, "\n");
		const char *bar = memchr(p, '|', (size_t)(e - p));
		if (!bar)
			continue;
		char *key = dup_trim(p, (size_t)(bar - p));
		char *val = dup_trim(bar + 1, (size_t)(e - bar - 1));
		size_t vn = strlen(val);
		if (vn && val[vn - 1] == '|')
			val[--vn] = '\0';
		char *v2 = dup_trim(val, vn);
		free(val);
		val = v2;
		if (!strcmp(key, "testcase: change")) {
			const char *c = strchr(val, ':');
			r->further = xrealloc(r->further, (r->nfurther + 1) * sizeof(*r->further));
			f = &r->further[r->nfurther++];
			memset(f, 0, sizeof(*f));
			f->testcase = c ? dup_trim(val, (size_t)(c - val)) : xstrdup(val);
			/* after "testcase: change: ", and never past the value's
			 * end: a ':' may be its last character (fuzz_mbox found
			 * c + 2 read past it) */
			if (c)
				metric_change(c + 1 + strspn(c + 1, " "), &f->metric, &f->change_pct,
					      &f->kind);
		} else if (f && !strcmp(key, "test machine")) {
			/* a second row for one test case: the last one holds */
			free(f->machine);
			f->machine = xstrdup(val);
		} else if (f && (!strcmp(key, "test parameters") || !*key) && *val) {
			const char *eq = strchr(val, '=');
			if (eq)
				param_add(&f->params, &f->nparams, val, (size_t)(eq - val), eq + 1,
					  strlen(eq + 1));
		}
		free(key);
		free(val);
	}
}

int lkp_report_parse(struct lkp_report **out, const char *subject, const char *body,
		     const char *message_id)
{
	const char *noticed = strstr(body, "kernel test robot noticed a");
	const char *next = NULL;
	struct lkp_report *r;
	char *s;

	if (!noticed)
		return -ENOENT;
	r = xcalloc(1, sizeof(*r));
	r->message_id = xstrdup(message_id ? message_id : "");
	if (subject[0] == '[' && strchr(subject, ']'))
		r->branch = dup_trim(subject + 1, (size_t)(strchr(subject, ']') - subject - 1));
	/* "noticed a -36.6% regression of vm-scalability.throughput on:" */
	noticed += strlen("kernel test robot noticed a");
	{
		char *end;
		r->change_pct = strtod(noticed, &end);
		if (*end == '%') {
			const char *k = end + 1;
			while (*k == ' ')
				k++;
			r->kind = dup_trim(k, strcspn(k, " \n"));
			const char *of = strstr(k, " of ");
			if (of && of < k + strcspn(k, "\n")) {
				of += 4;
				r->metric = dup_trim(of, strcspn(of, " \n"));
			}
		}
	}
	if ((s = line_after(body, "\ncommit: ", &next))) {
		commit_and_subject(s, &r->commit, &r->commit_subject);
		free(s);
		if (next && *next && *next != '\n')
			r->tree = dup_trim(next, strcspn(next, "\n"));
	}
	r->testcase = line_after(body, "\ntestcase: ", NULL);
	r->machine = line_after(body, "\ntest machine: ", NULL);
	parse_params(r, body);
	parse_further(r, body);
	/* the comparison's "commit: \n  BASE (\"…\")\n  COMMIT (\"…\")" */
	const char *cmp = strstr(body, "\ncommit: \n");
	if (!cmp)
		cmp = strstr(body, "\ncommit:\n");
	if (cmp) {
		cmp = strchr(cmp + 1, '\n') + 1;
		while (*cmp == ' ')
			cmp++;
		commit_and_subject(cmp, &r->base, &r->base_subject);
	}
	*out = r;
	return 0;
}

static void params_free(struct lkp_param *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].key);
		free(v[i].value);
	}
	free(v);
}

void lkp_report_free(struct lkp_report *r)
{
	if (!r)
		return;
	free(r->message_id);
	free(r->branch);
	free(r->metric);
	free(r->kind);
	free(r->commit);
	free(r->commit_subject);
	free(r->tree);
	free(r->base);
	free(r->base_subject);
	free(r->testcase);
	free(r->machine);
	params_free(r->params, r->nparams);
	for (size_t i = 0; i < r->nfurther; i++) {
		struct lkp_further *f = &r->further[i];
		free(f->testcase);
		free(f->metric);
		free(f->kind);
		free(f->machine);
		params_free(f->params, f->nparams);
	}
	free(r->further);
	free(r);
}
