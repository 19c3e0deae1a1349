/* apply.c - a series revision as commits on a base (see apply.h). */
#define LOG_MODULE "apply"
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/apply.h"
#include "error.h"
#include "log.h"
#include "kernel/series.h"
#include "util.h"

int patch_range_parse(bool *sel, int m, const char *spec, struct buf *err)
{
	const char *p = spec;

	for (int k = 0; k <= m; k++)
		sel[k] = k > 0 && (!spec || !*spec);
	if (!spec || !*spec)
		return 0;
	while (*p) {
		char *e;
		long a, b;

		if (!isdigit((unsigned char)*p))
			goto bad;
		a = strtol(p, &e, 10);
		b = a;
		if (*e == '-') {
			if (isdigit((unsigned char)e[1])) {
				b = strtol(e + 1, &e, 10);
			} else {
				b = m;
				e++;
			}
		}
		if (a < 1 || b > m || a > b)
			goto bad;
		for (long k = a; k <= b; k++)
			sel[k] = true;
		if (*e == ',' && e[1])
			e++;
		else if (*e)
			goto bad;
		p = e;
	}
	return 0;
bad:
	return err_setf(err, -EINVAL, "bad patch subset '%s': expected K, A-B or a comma list"
			" within 1-%d", spec, m);
}

static void slug(char *out, size_t size, const char *s)
{
	size_t n = 0;

	for (; s && *s && n + 1 < size; s++)
		out[n++] = (isalnum((unsigned char)*s) || *s == '.' || *s == '_' || *s == '-')
			   ? *s : '-';
	out[n] = '\0';
	if (!n)
		snprintf(out, size, "series");
}

/* Does subset select every patch of s (then the branch is plain vN)? */
static bool selects_all(const struct apply_series *s, const char *subset)
{
	int m = 0;
	bool *sel, all = true;

	for (size_t i = 0; i < s->npatches; i++)
		if (s->patches[i].k > m)
			m = s->patches[i].k;
	sel = xcalloc((size_t)m + 1, sizeof(*sel));
	if (patch_range_parse(sel, m, subset, NULL))
		all = false;
	for (size_t i = 0; all && i < s->npatches; i++)
		all = sel[s->patches[i].k];
	free(sel);
	return all && s->npatches > 0;
}

void apply_branch_name(char *out, size_t size, const struct apply_series *s,
		       const char *subset)
{
	char name[128], sub[64];

	slug(name, sizeof(name), s->name);
	if (subset && *subset && !selects_all(s, subset)) {
		/* "1,3" and "1-3" are different subsets: ',' becomes '+' */
		slug(sub, sizeof(sub), subset);
		for (char *c = sub; *c; c++)
			if (subset[c - sub] == ',')
				*c = '+';
		snprintf(out, size, "kcanary/%s/v%d-p%s", name, s->version, sub);
	} else {
		snprintf(out, size, "kcanary/%s/v%d", name, s->version);
	}
}

int apply_series(struct apply_result *out, struct repo *r, const char *base_hex,
		 const struct apply_series *s, const char *subset, struct buf *err)
{
	struct buf why = BUF_INIT;
	int m = 0, ret = 0;
	bool *sel;

	memset(out, 0, sizeof(*out));
	snprintf(out->tip, sizeof(out->tip), "%s", base_hex);
	for (size_t i = 0; i < s->npatches; i++)
		if (s->patches[i].k > m)
			m = s->patches[i].k;
	sel = xcalloc((size_t)m + 1, sizeof(*sel));
	if ((ret = patch_range_parse(sel, m, subset, err)))
		goto out;
	out->patches = xcalloc(s->npatches ? s->npatches : 1, sizeof(*out->patches));
	for (size_t i = 0; i < s->npatches; i++) {
		const struct apply_patch *p = &s->patches[i];
		struct apply_patch_result *pr;
		char commit[KC_OID_HEX];
		int rc;

		if (p->k < 1 || !sel[p->k])
			continue;
		pr = &out->patches[out->npatches++];
		pr->k = p->k;
		pr->m = p->m;
		pr->subject = p->subject;
		buf_reset(&why);
		rc = repo_apply_patch(r, commit, out->tip, p, &pr->fail, &why);
		if (rc == 0) {
			pr->outcome = APPLY_APPLIED;
			memcpy(pr->commit, commit, KC_OID_HEX);
			memcpy(out->tip, commit, KC_OID_HEX);
			out->napplied++;
			continue;
		}
		pr->error = xstrdup(buf_str(&why));
		if (rc == -EALREADY) {
			pr->outcome = APPLY_ALREADY;
			out->nalready++;
			log_info("%s", pr->error);
			continue;
		}
		if (rc != -ENOEXEC && rc != -EBADMSG && rc != -EINVAL) {
			/* the repository itself failed: an error, not an outcome */
			ret = err_setf(err, rc, "%s", pr->error);
			goto out;
		}
		pr->outcome = APPLY_FAILED;
		out->nfailed++;
		if (!out->error)
			out->error = xstrdup(pr->error);
	}
	if (out->nfailed == 0) {
		apply_branch_name(out->branch, sizeof(out->branch), s, subset);
		if ((ret = repo_branch_set(r, out->branch, out->tip, err)))
			out->branch[0] = '\0';
	}
out:
	buf_release(&why);
	free(sel);
	return ret;
}

void apply_result_release(struct apply_result *res)
{
	if (!res)
		return;
	for (size_t i = 0; i < res->npatches; i++)
		free(res->patches[i].error);
	free(res->patches);
	free(res->error);
	memset(res, 0, sizeof(*res));
}

void apply_result_print(FILE *f, const struct apply_result *res)
{
	for (size_t i = 0; i < res->npatches; i++) {
		const struct apply_patch_result *p = &res->patches[i];

		fprintf(f, "%d/%d ", p->k, p->m);
		switch (p->outcome) {
		case APPLY_APPLIED:
			fprintf(f, "applied %s\n", p->commit);
			break;
		case APPLY_ALREADY:
			fprintf(f, "already applied\n");
			break;
		case APPLY_FAILED:
			if (*p->fail.hunk)
				fprintf(f, "failed: %s hunk %s\n", p->fail.file, p->fail.hunk);
			else if (*p->fail.file)
				fprintf(f, "failed: %s (%s)\n", p->fail.file,
					*p->fail.detail ? p->fail.detail : "does not apply");
			else
				fprintf(f, "failed: %s\n", *p->fail.detail ? p->fail.detail
					: "does not apply");
			break;
		}
	}
	if (*res->branch)
		fprintf(f, "branch %s at %s\n", res->branch, res->tip);
}

void apply_series_from(struct apply_series *out, const struct series *s)
{
	struct apply_patch *v = xcalloc(s->npatches ? s->npatches : 1, sizeof(*v));

	for (size_t i = 0; i < s->npatches; i++) {
		const struct patch *p = &s->patches[i];

		v[i].k = p->k;
		v[i].m = p->m;
		v[i].subject = p->subject;
		v[i].author_name = p->author_name;
		v[i].author_email = p->author_email;
		v[i].date_s = p->date_s;
		v[i].tz_offset_min = p->tz_offset_min;
		v[i].message = p->message;
		v[i].diff = p->diff;
		v[i].corrupt = p->corrupt;
	}
	out->name = s->name;
	out->version = s->version;
	out->npatches = s->npatches;
	out->patches = v;
}

void apply_series_view_release(struct apply_series *v)
{
	if (!v)
		return;
	free((void *)v->patches);
	memset(v, 0, sizeof(*v));
}
