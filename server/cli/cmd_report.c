/* cmd_report.c - kcanary report: a job's cover-letter table. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "store/db.h"
#include "store/db_runs.h"
#include "store/db_compare.h"
#include "store/db_report.h"
#include "error.h"
#include "judge/report.h"
#include "kernel/reply_mail.h"
#include "kernel/series_source.h"
#include "util.h"

static const char usage_text[] =
	"usage: kcanary report JOB [--by AXIS[,AXIS]] [--baseline VALUE]\n"
	"                      [--metric NAME] [--threshold VALUE]\n"
	"                      [--format text|markdown|csv|json|email] [--series SERIES]\n"
	"\n"
	"Print a job's results as the table that goes into a cover letter: one\n"
	"row per variant (the first is the baseline), one column per repeat in\n"
	"run order, the median, the change against the baseline with a\n"
	"two-sided Mann-Whitney U p-value, and how many runs were worse than the\n"
	"threshold. One table per matrix cell (filesystem, knob setting).\n"
	"\n"
	"  JOB                job id or name (the newest job of that name)\n"
	"  --by AXIS          the compared axis, one row per value (default: the\n"
	"                     job file's 'by' when it is an axis of the job, else\n"
	"                     variant): variant, fs, host,\n"
	"                     sysctl (all sysctls), a sysctl name, or a workload\n"
	"                     knob (mode, sync_old, shutdown_file); the other\n"
	"                     dimensions stay cells. --by A,B: a table of A x B\n"
	"                     with the interaction (difference of differences);\n"
	"                     --by revision,patches: a --prefixes job's revision x\n"
	"                     patch-prefix matrix\n"
	"  --baseline VALUE   the value compared against (default: the first)\n"
	"  --metric NAME      per-run metric from the agent's summary (default:\n"
	"                     the job's headline metric, worst_lag_s unless named;\n"
	"                     when no run has it, the one most runs have: a fio\n"
	"                     job's fio:kc:write:bw)\n"
	"  --threshold VALUE  count runs worse than this (default 5s for lag\n"
	"                     metrics); a unit suffix s/ms/m is allowed\n"
	"  --format FMT       text (for email, <= 80 columns when it fits),\n"
	"                     markdown, csv (one row per run), json, or email: a\n"
	"                     reply to the series' thread for git send-email\n"
	"                     (In-Reply-To, Subject Re: [PATCH vN 0/M] ..., the\n"
	"                     table, the environment)\n"
	"  --series SERIES    the thread replied to (a file, '-' or a message-id,\n"
	"                     as 'series show'); default the job's first series\n"
	"\n"
	"Exit status: 0 printed, 1 no such job or no store at the home, 2 usage\n"
	"(a bad option or value).\n";

/* The revision an email report replies to: --series, else the job spec's
 * first series; its newest revision. NULL (no threading) when there is
 * none; an error only when the one given cannot be read. */
static int thread_of(struct series ***revs, size_t *n, const struct series **out, struct db *db,
		     int64_t job_id, const char *arg, struct buf *err)
{
	struct series_source_opts so = { .db = db };
	char *spec = NULL, *first = NULL;
	int r = 0;

	*out = NULL;
	if (!arg && !db_job_spec(db, job_id, &spec, NULL)) {
		/* "series":["a.mbox", ...] */
		char *p = strstr(spec, "\"series\":");
		if (p && (p = strchr(p, '[')) && p[1] == '"') {
			char *e = strchr(p + 2, '"');
			if (e)
				first = xasprintf("%.*s", (int)(e - p - 2), p + 2);
		}
		free(spec);
		arg = first;
	}
	if (arg) {
		char *args[] = { (char *)arg };
		struct buf why = BUF_INIT;
		r = series_source_load(revs, n, args, 1, &so, &why);
		if (r)
			err_setf(err, r, "%s", buf_str(&why));
		buf_release(&why);
		for (size_t i = 0; !r && i < *n; i++)
			if (!(*revs)[i]->report && (!*out || (*revs)[i]->version > (*out)->version))
				*out = (*revs)[i];
	}
	free(first);
	return r;
}

/* report's flags, as parsed: job is the JOB operand. */
struct report_args {
	struct report_opts ro;
	enum report_format fmt;
	bool email;			/* --format email: fmt is not used */
	const char *series, *job;
};

/* --threshold arg into ro: a number, optionally with s, ms or m, finite
 * and >= 0. -EINVAL after saying why. */
static int parse_threshold(struct report_opts *ro, const char *arg)
{
	char *end;
	double v = strtod(arg, &end);

	/* a run's summary values (lags, bytes, rates) are >= 0: a negative
	 * or non-finite threshold counts nothing useful */
	if ((end != arg && !strcmp(end, "")) || parse_duration_s(&v, arg) == 0) {
		ro->threshold = v;
	} else {
		fprintf(stderr, "kcanary report: --threshold '%s': expected a number,"
			" optionally with s, ms or m\n", arg);
		return -EINVAL;
	}
	if (!isfinite(v) || v < 0) {
		fprintf(stderr, "kcanary report: --threshold '%s': expected a finite"
			" number >= 0 (summary values are not negative)\n", arg);
		return -EINVAL;
	}
	ro->has_threshold = true;
	return 0;
}

/* The flags and the JOB operand into a. Returns -1 to go on, else the exit
 * status (0 for --help, 2 for bad usage). */
static int parse_args(struct report_args *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "metric", required_argument, NULL, 'm' },
		{ "by", required_argument, NULL, 'b' },
		{ "baseline", required_argument, NULL, 'B' },
		{ "threshold", required_argument, NULL, 't' },
		{ "format", required_argument, NULL, 'f' },
		{ "series", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	while ((c = cmd_getopt(argc, argv, "kcanary report", "h", opts)) != -1) {
		switch (c) {
		case 'm': a->ro.metric = optarg; break;
		case 'b': a->ro.by = optarg; break;
		case 'B': a->ro.baseline = optarg; break;
		case 't':
			if (parse_threshold(&a->ro, optarg))
				return 2;
			break;
		case 's': a->series = optarg; break;
		case 'f':
			if (!strcmp(optarg, "email")) {
				a->email = true;
			} else if (report_format_parse(&a->fmt, optarg)) {
				fprintf(stderr, "kcanary report: --format '%s': expected text, markdown,"
					" csv, json or email\n", optarg);
				return 2;
			}
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fputs(usage_text, stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "kcanary report: expected one JOB\n");
		fputs(usage_text, stderr);
		return 2;
	}
	a->job = argv[optind];
	return -1;
}

/* --format email: the reply to the series' thread on stdout. Returns the
 * exit status. */
static int print_email(struct db *db, int64_t job_id, const struct report_args *a)
{
	struct series **revs = NULL;
	const struct series *thread = NULL;
	struct buf out = BUF_INIT, err = BUF_INIT;
	size_t nrevs = 0;
	int ret = 1;

	if (thread_of(&revs, &nrevs, &thread, db, job_id, a->series, &err) ||
	    reply_mail(&out, db, job_id, &a->ro, thread, &err)) {
		fprintf(stderr, "kcanary report: %s\n", buf_str(&err));
	} else {
		fputs(buf_str(&out), stdout);
		ret = 0;
	}
	series_free_all(revs, nrevs);
	buf_release(&out);
	buf_release(&err);
	return ret;
}

/* "no run of job 'J' has a value of metric 'M'", then what its runs have
 * (db_report_job_metrics), on stderr. */
static void say_no_values(struct db *db, int64_t job_id, const struct report_args *a)
{
	struct db_job_metric *m = NULL;
	struct buf err = BUF_INIT;
	size_t n = 0;

	fprintf(stderr, "kcanary report: no run of job '%s' has a value of metric '%s'", a->job,
		a->ro.metric);
	if (db_report_job_metrics(db, job_id, &m, &n, &err))
		fprintf(stderr, " (cannot list its runs' metrics: %s)\n", buf_str(&err));
	else if (!n)
		fprintf(stderr, " (no run of it has a summary yet: see kcanary status %s)\n", a->job);
	else {
		fprintf(stderr, ": expected one its runs have:");
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, "%s %s", i ? "," : "", m[i].name);
		fprintf(stderr, ", or a worst_X or mean_X of a sampled X\n");
	}
	db_job_metrics_free(m, n);
	buf_release(&err);
}

/* The job's table in a->fmt on stdout. Returns the exit status. */
static int print_table(struct db *db, int64_t job_id, const struct report_args *a)
{
	struct report *rep = NULL;
	struct buf out = BUF_INIT, err = BUF_INIT;
	int ret = 1;

	if (report_build(&rep, db, job_id, &a->ro, &err)) {
		fprintf(stderr, "kcanary report: cannot read job '%s': %s\n", a->job, buf_str(&err));
		goto out;
	}
	if (a->ro.metric && !report_nvalues(rep)) {
		say_no_values(db, job_id, a);
		goto out;
	}
	if (report_note(rep))
		fprintf(stderr, "kcanary report: job '%s': %s\n", a->job, report_note(rep));
	report_format(&out, rep, a->fmt);
	fputs(buf_str(&out), stdout);
	ret = 0;
out:
	report_free(rep);
	buf_release(&out);
	buf_release(&err);
	return ret;
}

int cmd_report(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct report_args a = { .fmt = REPORT_TEXT };
	struct buf err = BUF_INIT;
	struct db *db = NULL;
	int64_t job_id;
	int ret;

	if ((ret = parse_args(&a, argc, argv)) >= 0)
		return ret;
	ret = 1;
	if (access(ctx->db_path, F_OK)) {
		/* reading must not create an empty store (cmd_open_existing_store) */
		db = cmd_open_existing_store(ctx, "kcanary report");
		goto out;
	}
	if (db_open(&db, ctx->db_path, &err)) {
		fprintf(stderr, "kcanary report: %s\n", buf_str(&err));
		goto out;
	}
	if (db_job_resolve(db, &job_id, a.job, &err)) {
		fprintf(stderr, "kcanary report: %s\n", buf_str(&err));
		goto out;
	}
	ret = a.email ? print_email(db, job_id, &a) : print_table(db, job_id, &a);
out:
	buf_release(&err);
	db_close(db);
	return ret;
}
