/* series_diff.c - see series_diff.h: range-diff of two revisions. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "wrap/git.h"
#include "kernel/series_diff.h"
#include "util.h"

const char *series_diff_mark(enum series_diff_kind k)
{
	static const char *const m[] = { "=", "!", "<", ">" };

	return (size_t)k < 4 ? m[k] : "?";
}

/* What range-diff compares: the commit message, then the diff. */
static char *patch_text(const struct patch *p)
{
	return xasprintf("%s\n%s", p->message ? p->message : "", p->diff ? p->diff : "");
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Changed lines of a unified diff (not its ---/+++ headers). */
static size_t changed_lines(const char *d)
{
	size_t n = 0;

	for (const char *l = d; *l; ) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		if ((*l == '+' && strncmp(l, "+++ ", 4)) || (*l == '-' && strncmp(l, "--- ", 4)))
			n++;
		(void)len;
		if (!e)
			break;
		l = e + 1;
	}
	return n;
}

static int interdiff(char **out, const struct patch *a, const struct patch *b, struct buf *err)
{
	char *ta = patch_text(a), *tb = patch_text(b);
	char *na = xasprintf("old %d/%d", a->k, a->m), *nb = xasprintf("new %d/%d", b->k, b->m);
	int r = kc_text_diff(out, ta, tb, na, nb, 3, err);
	char *hunks;

	/* the hunks only: the diff --git/index/---/+++ header names nothing */
	if (!r && (hunks = strstr(*out, "@@")) && hunks != *out) {
		memmove(*out, hunks, strlen(hunks) + 1);
	}
	free(ta);
	free(tb);
	free(na);
	free(nb);
	return r;
}

/* The interdiff's changed lines (*cost) and the two patches' lines
 * (*total). */
static int match_cost(size_t *cost, size_t *total, const struct patch *a, const struct patch *b,
		      struct buf *err)
{
	char *d = NULL, *ta = patch_text(a), *tb = patch_text(b);
	int r = interdiff(&d, a, b, err);

	if (!r) {
		*cost = changed_lines(d);
		*total = count_lines(ta) + count_lines(tb);
	}
	free(d);
	free(ta);
	free(tb);
	return r;
}

static bool same_files(const struct patch *a, const struct patch *b)
{
	if (a->nfiles != b->nfiles)
		return false;
	for (size_t i = 0; i < a->nfiles; i++)
		if (strcmp(a->files[i], b->files[i]))
			return false;
	return true;
}

int series_diff(struct series_diff_row **out, size_t *n_out, const struct series *a,
		const struct series *b, struct buf *err)
{
	size_t na = a->npatches, nb = b->npatches, nrows = 0;
	char (*ida)[KC_OID_HEX] = xcalloc(na + 1, KC_OID_HEX);
	char (*idb)[KC_OID_HEX] = xcalloc(nb + 1, KC_OID_HEX);
	ssize_t *match_b = xcalloc(nb + 1, sizeof(*match_b)); /* b's patch -> a's, -1 */
	const char **how = xcalloc(nb + 1, sizeof(*how));
	bool *used_a = xcalloc(na + 1, sizeof(*used_a)), *emitted_a = xcalloc(na + 1, 1);
	struct series_diff_row *rows = xcalloc(na + nb + 1, sizeof(*rows));
	int r = 0;

	for (size_t i = 0; i < na; i++)
		if (kc_patch_id(ida[i], a->patches[i].diff, strlen(a->patches[i].diff), NULL))
			ida[i][0] = '\0';
	for (size_t j = 0; j < nb; j++) {
		match_b[j] = -1;
		if (kc_patch_id(idb[j], b->patches[j].diff, strlen(b->patches[j].diff), NULL))
			idb[j][0] = '\0';
	}
	/* 1. patch-id; 2. subject */
	for (int pass = 0; pass < 2; pass++)
		for (size_t j = 0; j < nb; j++)
			for (size_t i = 0; match_b[j] < 0 && i < na; i++) {
				if (used_a[i])
					continue;
				bool eq = pass == 0 ? idb[j][0] && !strcmp(ida[i], idb[j])
						    : !strcmp(a->patches[i].subject, b->patches[j].subject);
				if (eq) {
					match_b[j] = (ssize_t)i;
					used_a[i] = true;
					how[j] = pass == 0 ? "patch-id" : "subject";
				}
			}
	/* 3. content: the old patch with the smallest interdiff, when its
	 * changed lines are under 60% of the two patches' lines (git
	 * range-diff's creation factor) for the patch at the same position
	 * touching the same files, else under 25%: at 60% anywhere A2's
	 * v1 4/5 would pair with its unrelated v2 3/4, which patch-id and b4
	 * call dropped and new (the real mail of t_series_inbox.sh) */
	for (size_t j = 0; j < nb; j++) {
		ssize_t best = -1;
		size_t best_cost = 0;
		if (match_b[j] >= 0)
			continue;
		for (size_t i = 0; i < na; i++) {
			size_t cost, total;
			if (used_a[i])
				continue;
			if ((r = match_cost(&cost, &total, &a->patches[i], &b->patches[j], err)))
				goto out;
			bool near = a->patches[i].k == b->patches[j].k &&
				    same_files(&a->patches[i], &b->patches[j]);
			if ((near ? 10 * cost < 6 * total : 4 * cost < total) &&
			    (best < 0 || cost < best_cost)) {
				best = (ssize_t)i;
				best_cost = cost;
			}
		}
		if (best >= 0) {
			match_b[j] = best;
			used_a[best] = true;
			how[j] = "content";
		}
	}
	/* rows in b's order; a dropped patch after the old one before it */
	for (size_t j = 0; j <= nb; j++) {
		size_t upto = j < nb && match_b[j] >= 0 ? (size_t)match_b[j] : j < nb ? 0 : na;
		for (size_t i = 0; i < upto; i++) {
			if (used_a[i] || emitted_a[i])
				continue;
			struct series_diff_row *x = &rows[nrows++];
			x->kind = SERIES_DIFF_DROPPED;
			x->old_p = &a->patches[i];
			memcpy(x->old_id, ida[i], KC_OID_HEX);
			emitted_a[i] = true;
		}
		if (j == nb)
			break;
		struct series_diff_row *x = &rows[nrows++];
		x->new_p = &b->patches[j];
		memcpy(x->new_id, idb[j], KC_OID_HEX);
		if (match_b[j] < 0) {
			x->kind = SERIES_DIFF_NEW;
			continue;
		}
		size_t i = (size_t)match_b[j];
		emitted_a[i] = true;
		x->old_p = &a->patches[i];
		memcpy(x->old_id, ida[i], KC_OID_HEX);
		x->matched_by = how[j];
		if (ida[i][0] && !strcmp(ida[i], idb[j])) {
			x->kind = SERIES_DIFF_SAME;
		} else {
			x->kind = SERIES_DIFF_CHANGED;
			if ((r = interdiff(&x->interdiff, x->old_p, x->new_p, err)))
				goto out;
		}
	}
	*out = rows;
	*n_out = nrows;
	rows = NULL;
out:
	if (rows)
		series_diff_free(rows, nrows);
	free(ida);
	free(idb);
	free(match_b);
	free(how);
	free(used_a);
	free(emitted_a);
	return r;
}

void series_diff_free(struct series_diff_row *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].interdiff);
	free(v);
}
