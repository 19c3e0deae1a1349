/* cmd_series_revs.c - kcanary series revisions / diff: every revision of
 * a series taken by message-id, and two of them compared as range-diff
 * does. The finding is series_source.h's, the matching series_diff.h's;
 * here the flags and the printing. Rows of cmd_series.c's verb table. */
#define LOG_MODULE "series"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "store/db.h"
#include "log.h"
#include "kernel/series_diff.h"
#include "kernel/series_source.h"

static int open_for(const struct cmd_ctx *ctx, struct series_source_opts *so, const char *prog)
{
	memset(so, 0, sizeof(*so));
	so->db = cmd_open_store(ctx, prog);
	return so->db ? 0 : -1;
}

int cmd_series_revisions(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct series_source_opts so;
	struct series_revision *v = NULL;
	struct buf err = BUF_INIT;
	size_t n = 0;
	int ret = 1;

	if (cmd_wants_help(argc, argv) || argc != 2) {
		fprintf(argc == 2 ? stdout : stderr,
			"usage: kcanary series revisions MSGID\n\n"
			"Every revision of the series MSGID (a message-id or URL) belongs to,\n"
			"one line each: vN, patches, date, message-id, how it was found.\n");
		return argc == 2 ? 0 : 2;
	}
	if (open_for(ctx, &so, "kcanary series revisions"))
		return 1;
	if (series_revisions(&v, &n, argv[1], &so, &err)) {
		fprintf(stderr, "kcanary series revisions: %s\n", buf_str(&err));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct series *s = v[i].series;
		if (!s) {
			printf("v?   <%s>  not on the server (%s)\n", v[i].message_id, v[i].found);
			continue;
		}
		printf("v%-3d %zu patch%s  %-40s <%s>  %s\n", s->version, s->npatches,
		       s->npatches == 1 ? "  " : "es", s->cover_subject ? s->cover_subject :
		       s->npatches ? s->patches[0].subject : "", v[i].message_id, v[i].found);
	}
	ret = 0;
out:
	series_revisions_free(v, n);
	db_close(so.db);
	buf_release(&err);
	return ret;
}

/* "v2", "2" -> 2; 0 when not a revision. */
static int rev_number(const char *s)
{
	char *end;
	long v = strtol(s + (*s == 'v' || *s == 'V'), &end, 10);

	return *end || v <= 0 || v > 1000 ? 0 : (int)v;
}

static const struct series *find_rev(const struct series_revision *v, size_t n, int want)
{
	const struct series *best = NULL;

	for (size_t i = 0; i < n; i++)
		if (v[i].series && v[i].series->version == want && !best)
			best = v[i].series;
	return best;
}

static void print_rows(const struct series_diff_row *rows, size_t n)
{
	size_t same = 0, changed = 0, dropped = 0, added = 0;

	for (size_t i = 0; i < n; i++) {
		const struct series_diff_row *x = &rows[i];
		char l[32] = "-", r[32] = "-";
		if (x->old_p)
			snprintf(l, sizeof(l), "%d", x->old_p->k);
		if (x->new_p)
			snprintf(r, sizeof(r), "%d", x->new_p->k);
		printf("%3s:  %-8.8s %s %3s:  %-8.8s %s", l, x->old_p ? x->old_id : "--------",
		       series_diff_mark(x->kind), r, x->new_p ? x->new_id : "--------",
		       (x->new_p ? x->new_p : x->old_p)->subject);
		if (x->matched_by && strcmp(x->matched_by, "patch-id"))
			printf("  (matched by %s)", x->matched_by);
		printf("\n");
		if (x->interdiff)
			for (const char *p = x->interdiff; *p; ) {
				const char *e = strchr(p, '\n');
				int len = e ? (int)(e - p) : (int)strlen(p);
				printf("    %.*s\n", len, p);
				p = e ? e + 1 : p + len;
			}
		same += x->kind == SERIES_DIFF_SAME;
		changed += x->kind == SERIES_DIFF_CHANGED;
		dropped += x->kind == SERIES_DIFF_DROPPED;
		added += x->kind == SERIES_DIFF_NEW;
	}
	printf("%zu unchanged, %zu changed, %zu dropped, %zu new\n", same, changed, dropped, added);
}

int cmd_series_diff(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct series_source_opts so;
	struct series_revision *v = NULL;
	struct series_diff_row *rows = NULL;
	const struct series *a, *b;
	struct buf err = BUF_INIT;
	size_t n = 0, nrows = 0;
	int va, vb, ret = 1;

	if (cmd_wants_help(argc, argv) || argc != 4) {
		fprintf(argc == 4 ? stdout : stderr,
			"usage: kcanary series diff MSGID vA vB\n\n"
			"Revisions A and B of the series MSGID belongs to (as 'series\n"
			"revisions' finds them), patch by patch as git range-diff shows them.\n");
		return argc == 4 ? 0 : 2;
	}
	va = rev_number(argv[2]);
	vb = rev_number(argv[3]);
	if (!va || !vb) {
		fprintf(stderr, "kcanary series diff: '%s': expected a revision (v2 or 2)\n",
			va ? argv[3] : argv[2]);
		return 2;
	}
	if (open_for(ctx, &so, "kcanary series diff"))
		return 1;
	if (series_revisions(&v, &n, argv[1], &so, &err)) {
		fprintf(stderr, "kcanary series diff: %s\n", buf_str(&err));
		goto out;
	}
	a = find_rev(v, n, va);
	b = find_rev(v, n, vb);
	if (!a || !b) {
		fprintf(stderr, "kcanary series diff: no v%d of the series of '%s' (see 'kcanary "
			"series revisions %s')\n", a ? vb : va, argv[1], argv[1]);
		goto out;
	}
	if (series_diff(&rows, &nrows, a, b, &err)) {
		fprintf(stderr, "kcanary series diff: %s\n", buf_str(&err));
		goto out;
	}
	printf("series %s v%d -> v%d\n", b->name, va, vb);
	print_rows(rows, nrows);
	ret = 0;
out:
	series_diff_free(rows, nrows);
	series_revisions_free(v, n);
	db_close(so.db);
	buf_release(&err);
	return ret;
}
