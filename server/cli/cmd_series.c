/* cmd_series.c - kcanary series: `show` prints the series read from mail
 * (series_source.h); `apply` is cmd_series_apply() (cmd_series_apply.c),
 * `revisions` and `diff` are in cmd_series_revs.c. The
 * verbs are dispatched from verbs[] at the end.
 */
#define LOG_MODULE "series"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli/cmd.h"
#include "log.h"
#include "store/db.h"
#include "kernel/series.h"
#include "kernel/series_diff.h"
#include "kernel/series_source.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kcanary series show [--format text|json] [-v N] [--mboxrd] [--refresh]\n"
		"                           SERIES...\n"
		"       kcanary series apply --repo DIR --base REV SERIES... [--patches K]\n"
		"       kcanary series revisions MSGID\n"
		"       kcanary series diff MSGID vA vB\n"
		"\n"
		"SERIES is a mail file (mbox, .eml, .patch), '-' (standard input), or a\n"
		"message-id or URL (<id>, id, https://lore.kernel.org/r/<id>,\n"
		"https://HOST/<list>/<id>/, patch.msgid.link/<id>): its thread is\n"
		"fetched from $KCANARY_PUBLIC_INBOX (default " "https://lore.kernel.org/all)\n"
		"as t.mbox.gz once, kept in the store and read from there thereafter;\n"
		"-v N takes revision N of the thread (default the newest).\n"
		"\n"
		"show: read patch mails as git am and b4 do\n"
		"and print each revision of each series: name, version, base-commit,\n"
		"prerequisites, and per patch k/M, author, date, subject, files touched\n"
		"and trailers. A mailbox with several revisions gives one series per vN.\n"
		"Exit 0 when every file parsed, 1 on a parse error (a missing or\n"
		"duplicated patch, no patches), 2 on a usage error.\n"
		"\n"
		"  --format text|json   output format (default text)\n"
		"\n"
		"  -v N                 revision N of a message-id's thread\n"
		"  --refresh            fetch each message-id's thread again and replace\n"
		"                       the kept copy (replies and revisions sent since)\n"
		"  --mboxrd             read mbox files as mboxrd ('>From ' loses one '>');\n"
		"                       default mboxo, as git am (a fetched thread is mboxrd)\n"
		"\n"
		"apply: see 'kcanary series apply --help'.\n"
		"revisions: every revision of the series: its thread, the covers' links\n"
		"  ('Link to vN:', '[1] https://lore…/<id>/'), the server's search by\n"
		"  change-id and by subject; one line each with how it was found.\n"
		"diff: revisions A and B (v1, v2, or 1, 2) patch by patch, as git\n"
		"  range-diff: matched by patch-id, then subject, then content;\n"
		"  '=' same, '!' changed (with the interdiff), '<' dropped, '>' new.\n");
}

/* "2026-10-02 21:40:45 +0000" in the mail's own zone (git log's style). */
static void format_date(char *out, size_t size, int64_t date_s, int tz_min, bool iso)
{
	time_t t = (time_t)(date_s + (int64_t)tz_min * 60);
	struct tm tm;
	int a = tz_min < 0 ? -tz_min : tz_min;
	char d[40];

	gmtime_r(&t, &tm);
	strftime(d, sizeof(d), iso ? "%Y-%m-%dT%H:%M:%S" : "%Y-%m-%d %H:%M:%S", &tm);
	if (iso)
		snprintf(out, size, "%s%c%02d:%02d", d, tz_min < 0 ? '-' : '+', a / 60, a % 60);
	else
		snprintf(out, size, "%s %c%02d%02d", d, tz_min < 0 ? '-' : '+', a / 60, a % 60);
}

static void print_report_text(const struct lkp_report *r);

/* Revisions of one series shown together: how each differs from the one
 * before it (series_diff.h), one line. */
static void print_revision_changes(struct series **v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		const struct series *a = v[i - 1], *b = v[i];
		struct series_diff_row *rows = NULL;
		size_t nrows = 0, c[4] = { 0 };
		if (a->report || b->report || strcmp(a->name, b->name) || a->version >= b->version ||
		    series_diff(&rows, &nrows, a, b, NULL))
			continue;
		for (size_t k = 0; k < nrows; k++)
			c[rows[k].kind]++;
		printf("\nv%d -> v%d: %zu unchanged, %zu changed, %zu dropped, %zu new (series diff)\n",
		       a->version, b->version, c[SERIES_DIFF_SAME], c[SERIES_DIFF_CHANGED],
		       c[SERIES_DIFF_DROPPED], c[SERIES_DIFF_NEW]);
		series_diff_free(rows, nrows);
	}
}

static void print_text(struct series **v, size_t n)
{
	char date[64];

	for (size_t i = 0; i < n; i++) {
		const struct series *s = v[i];
		if (i)
			printf("\n");
		if (s->report) {
			print_report_text(s->report);
			continue;
		}
		printf("series %s v%d%s: %zu patch%s\n", s->name, s->version, s->rfc ? " (RFC)" : "",
		       s->npatches, s->npatches == 1 ? "" : "es");
		if (*s->prefix_tags)
			printf("  tags:          %s\n", s->prefix_tags);
		printf("  cover:         %s\n", s->cover_subject ? s->cover_subject : "(none)");
		printf("  base-commit:   %s\n", s->base_commit ? s->base_commit : "(none)");
		if (s->change_id)
			printf("  change-id:     %s\n", s->change_id);
		for (size_t j = 0; j < s->nprereq; j++)
			printf("  prerequisite:  %s\n", s->prerequisite_patch_ids[j]);
		for (size_t j = 0; j < s->nprereq_change; j++)
			printf("  prerequisite:  change-id %s\n", s->prerequisite_change_ids[j]);
		if (s->stable_review)
			printf("  stable review: %s, a stable release candidate: its %d patches are "
			       "posted as replies to this cover (a review cycle, not a series)\n",
			       s->stable_review, s->m);
		else if (s->cover_only)
			printf("  cover only:    none of its %d patches is in the mail\n", s->m);
		for (size_t j = 0; j < s->nmissing; j++)
			printf("  missing:       %d/%d\n", s->missing[j], s->m);
		for (size_t j = 0; j < s->npatches; j++) {
			const struct patch *p = &s->patches[j];
			format_date(date, sizeof(date), p->date_s, p->tz_offset_min, false);
			printf("  [%d/%d] %s\n", p->k, p->m, p->subject);
			printf("        author:  %s <%s>\n", p->author_name, p->author_email);
			printf("        date:    %s\n", date);
			printf("        source:  %s\n", p->source);
			for (size_t f = 0; f < p->nfiles; f++)
				printf("        %s %s\n", f ? "        " : "files:  ", p->files[f]);
			for (size_t t = 0; t < p->ntrailers; t++)
				printf("        %s: %s\n", p->trailers[t].key, p->trailers[t].value);
			for (size_t t = 0; t < p->nreply_trailers; t++)
				printf("        %s: %s (in reply <%s>)\n", p->reply_trailers[t].key,
				       p->reply_trailers[t].value, p->reply_trailers[t].from);
			if (p->warning)
				printf("        warning: %s\n", p->warning);
			if (p->corrupt)
				printf("        corrupt: %s\n", p->corrupt);
		}
	}
}

/* A JSON string of s; bytes that are not UTF-8 (a diff of a Latin-1 file,
 * a path) become U+FFFD so that the string is never dropped. */
static json_t *jstr(const char *s)
{
	json_t *j = json_string(s);
	struct buf b = BUF_INIT;
	const unsigned char *p = (const unsigned char *)s;

	if (j)
		return j;
	while (*p) {
		size_t n = *p < 0x80 ? 1 : (*p >> 5) == 6 ? 2 : (*p >> 4) == 14 ? 3 :
			   (*p >> 3) == 30 ? 4 : 0;
		bool ok = n > 0;
		for (size_t i = 1; ok && i < n; i++)
			ok = (p[i] & 0xc0) == 0x80;
		if (ok && n > 1) {
			/* no overlong forms, surrogates or values past U+10FFFF */
			unsigned cp = n == 2 ? (p[0] & 0x1fu) << 6 | (p[1] & 0x3fu) :
				      n == 3 ? (p[0] & 0x0fu) << 12 | (p[1] & 0x3fu) << 6 | (p[2] & 0x3fu) :
				      (p[0] & 0x07u) << 18 | (p[1] & 0x3fu) << 12 |
				      (p[2] & 0x3fu) << 6 | (p[3] & 0x3fu);
			ok = (n == 2 && cp >= 0x80) || (n == 3 && cp >= 0x800 && (cp < 0xd800 || cp > 0xdfff)) ||
			     (n == 4 && cp >= 0x10000 && cp <= 0x10ffff);
		}
		if (ok) {
			buf_append(&b, p, n);
			p += n;
		} else {
			buf_puts(&b, "\xef\xbf\xbd");
			p++;
		}
	}
	j = json_string(buf_str(&b));
	buf_release(&b);
	return j ? j : json_string("");
}

static json_t *jstr_or_null(const char *s)
{
	return s ? jstr(s) : json_null();
}

static void print_report_text(const struct lkp_report *r)
{
	printf("report (kernel test robot) <%s>: %s %+.1f%% %s\n", r->message_id,
	       r->metric ? r->metric : "?", r->change_pct, r->kind ? r->kind : "");
	if (r->branch)
		printf("  branch:        %s\n", r->branch);
	if (r->commit)
		printf("  commit:        %s (\"%s\")\n", r->commit,
		       r->commit_subject ? r->commit_subject : "");
	if (r->base)
		printf("  base:          %s (\"%s\")\n", r->base, r->base_subject ? r->base_subject : "");
	if (r->tree)
		printf("  tree:          %s\n", r->tree);
	if (r->testcase)
		printf("  testcase:      %s\n", r->testcase);
	if (r->machine)
		printf("  machine:       %s\n", r->machine);
	for (size_t i = 0; i < r->nparams; i++)
		printf("  %-14s %s\n", r->params[i].key, r->params[i].value);
	for (size_t i = 0; i < r->nfurther; i++)
		printf("  also:          %s %+.1f%% %s\n", r->further[i].metric ? r->further[i].metric : "?",
		       r->further[i].change_pct, r->further[i].kind ? r->further[i].kind : "");
}

static json_t *params_json(const struct lkp_param *p, size_t n)
{
	json_t *o = json_object();

	for (size_t i = 0; i < n; i++)
		json_object_set_new(o, p[i].key, jstr(p[i].value));
	return o;
}

static json_t *report_json(const struct lkp_report *r)
{
	json_t *further = json_array();

	for (size_t i = 0; i < r->nfurther; i++) {
		const struct lkp_further *f = &r->further[i];
		json_array_append_new(further, json_pack("{s:o, s:o, s:f, s:o, s:o, s:o}",
			"testcase", jstr_or_null(f->testcase), "metric", jstr_or_null(f->metric),
			"change_pct", f->change_pct, "kind", jstr_or_null(f->kind),
			"machine", jstr_or_null(f->machine), "params", params_json(f->params, f->nparams)));
	}
	return json_pack("{s:s, s:o, s:o, s:o, s:f, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
		"kind", "lkp-report", "message_id", jstr(r->message_id),
		"branch", jstr_or_null(r->branch), "metric", jstr_or_null(r->metric),
		"change_pct", r->change_pct, "change_kind", jstr_or_null(r->kind),
		"commit", jstr_or_null(r->commit), "commit_subject", jstr_or_null(r->commit_subject),
		"base", jstr_or_null(r->base), "base_subject", jstr_or_null(r->base_subject),
		"tree", jstr_or_null(r->tree), "testcase", jstr_or_null(r->testcase),
		"machine", jstr_or_null(r->machine), "params", params_json(r->params, r->nparams),
		"further", further);
}

static int print_json(struct series **v, size_t n)
{
	json_t *arr = json_array();
	char date[64];
	int ret;

	for (size_t i = 0; i < n; i++) {
		const struct series *s = v[i];
		if (s->report) {
			json_array_append_new(arr, report_json(s->report));
			continue;
		}
		json_t *pre = json_array(), *patches = json_array(), *missing = json_array();
		for (size_t j = 0; j < s->nmissing; j++)
			json_array_append_new(missing, json_integer(s->missing[j]));
		for (size_t j = 0; j < s->nprereq; j++)
			json_array_append_new(pre, jstr(s->prerequisite_patch_ids[j]));
		for (size_t j = 0; j < s->npatches; j++) {
			const struct patch *p = &s->patches[j];
			json_t *files = json_array(), *tr = json_array(), *rtr = json_array();
			for (size_t t = 0; t < p->nreply_trailers; t++)
				json_array_append_new(rtr, json_pack("{s:o, s:o, s:o}",
					"key", jstr(p->reply_trailers[t].key),
					"value", jstr(p->reply_trailers[t].value),
					"from", jstr(p->reply_trailers[t].from)));
			for (size_t f = 0; f < p->nfiles; f++)
				json_array_append_new(files, jstr(p->files[f]));
			for (size_t t = 0; t < p->ntrailers; t++)
				json_array_append_new(tr, json_pack("{s:o, s:o}",
					"key", jstr(p->trailers[t].key), "value", jstr(p->trailers[t].value)));
			format_date(date, sizeof(date), p->date_s, p->tz_offset_min, true);
			json_array_append_new(patches, json_pack(
				"{s:i, s:i, s:o, s:o, s:o, s:s, s:I, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o,"
				" s:o, s:o}",
				"k", p->k, "m", p->m, "subject", jstr(p->subject),
				"author_name", jstr(p->author_name), "author_email", jstr(p->author_email),
				"date", date, "date_s", (json_int_t)p->date_s,
				"tz_offset_min", p->tz_offset_min,
				"message_id", jstr(p->message_id), "message", jstr(p->message),
				"files", files, "trailers", tr,
				"warning", jstr_or_null(p->warning), "corrupt", jstr_or_null(p->corrupt),
				"source", jstr(p->source), "notes", jstr(p->notes), "diff", jstr(p->diff)));
			json_object_set_new(json_array_get(patches, json_array_size(patches) - 1),
					    "reply_trailers", rtr);
		}
		json_array_append_new(arr, json_pack(
			"{s:o, s:i, s:b, s:o, s:o, s:o, s:o, s:o, s:o}",
			"name", jstr(s->name), "version", s->version, "rfc", s->rfc,
			"prefix_tags", jstr(s->prefix_tags),
			"cover_subject", jstr_or_null(s->cover_subject),
			"base_commit", jstr_or_null(s->base_commit),
			"change_id", jstr_or_null(s->change_id),
			"prerequisite_patch_ids", pre, "patches", patches));
		json_t *last = json_array_get(arr, json_array_size(arr) - 1);
		json_object_set_new(last, "kind", json_string(s->stable_review ? "stable-review" :
								  "series"));
		json_object_set_new(last, "stable_release", jstr_or_null(s->stable_review));
		json_object_set_new(last, "m", json_integer(s->m));
		json_object_set_new(last, "missing", missing);
		json_object_set_new(last, "cover_only", json_boolean(s->cover_only));
		json_t *prec = json_array();
		for (size_t j = 0; j < s->nprereq_change; j++)
			json_array_append_new(prec, jstr(s->prerequisite_change_ids[j]));
		json_object_set_new(last, "prerequisite_change_ids", prec);
	}
	ret = json_dumpf(arr, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII |
			 JSON_REAL_PRECISION(10));
	printf("\n");
	json_decref(arr);
	return ret;
}

static int series_show(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "mboxrd", no_argument, NULL, 'r' },
		{ "refresh", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct series_source_opts so = { 0 };
	struct series **v = NULL;
	struct buf err = BUF_INIT;
	bool json = false;
	size_t n = 0;
	int c, ret;

	optind = 1;
	while ((c = cmd_getopt(argc, argv, "kcanary series show", "hv:", opts)) != -1) {
		switch (c) {
		case 'r':
			so.mboxrd = true;
			break;
		case 'R':
			so.refresh = true;
			break;
		case 'v':
			so.version = atoi(optarg + (*optarg == 'v'));
			if (so.version <= 0) {
				fprintf(stderr, "kcanary series show: -v '%s': expected a revision "
					"number (2 or v2)\n", optarg);
				return 2;
			}
			break;
		case 'f':
			if (!strcmp(optarg, "json"))
				json = true;
			else if (strcmp(optarg, "text")) {
				fprintf(stderr, "kcanary series show: unknown format '%s' "
					"(expected text or json)\n", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "kcanary series show: no FILE given\n");
		usage(stderr);
		return 2;
	}
	if (series_source_any_ref(argv + optind, (size_t)(argc - optind)) &&
	    !(so.db = cmd_open_store(ctx, "kcanary series show")))
		return 1;
	ret = series_source_load(&v, &n, argv + optind, (size_t)(argc - optind), &so, &err);
	db_close(so.db);
	if (ret < 0) {
		fprintf(stderr, "kcanary series show: %s\n", buf_str(&err));
		buf_release(&err);
		return 1;
	}
	/* what the parser warns about (a patch missing from a series) */
	if (err.len)
		for (const char *p = buf_str(&err); *p; ) {
			size_t len = strcspn(p, "\n");
			fprintf(stderr, "kcanary series show: warning: %.*s\n", (int)len, p);
			p += len + (p[len] == '\n');
		}
	if (json)
		ret = print_json(v, n) ? 1 : 0;
	else {
		print_text(v, n);
		print_revision_changes(v, n);
	}
	series_free_all(v, n);
	buf_release(&err);
	return ret;
}

static const struct cmd_verb verbs[] = {
	{ "show", series_show },
	{ "apply", cmd_series_apply },
	{ "revisions", cmd_series_revisions },
	{ "diff", cmd_series_diff },
	{ NULL, NULL },
};

int cmd_series(struct cmd_ctx *ctx, int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	return cmd_select(ctx, "kcanary series", verbs, argc, argv);
}
