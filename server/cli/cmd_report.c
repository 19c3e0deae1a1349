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
	"                     job file's 'by', else variant): variant, fs, host,\n"
	"                     sysctl (all sysctls), a sysctl name, or a workload\n"
	"                     knob (mode, sync_old, shutdown_file); the other\n"
	"                     dimensions stay cells. --by A,B: a table of A x B\n"
	"                     with the interaction (difference of differences);\n"
	"                     --by revision,patches: a --prefixes job's revision x\n"
	"                     patch-prefix matrix\n"
	"  --baseline VALUE   the value compared against (default: the first)\n"
	"  --metric NAME      per-run metric from the agent's summary (default:\n"
	"                     the job's headline metric, worst_lag_s)\n"
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

/* reason: one case per flag (format, metric, by, baseline, threshold,
 * series) and their checks, then one call of the report; nothing else. */
int cmd_report(int argc, char **argv)
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
	struct report_opts ro = { 0 };
	enum report_format fmt = REPORT_TEXT;
	struct report *rep = NULL;
	struct buf out = BUF_INIT, err = BUF_INIT;
	struct db *db = NULL;
	char *dbpath = NULL;
	const char *series_arg = NULL;
	struct series **revs = NULL;
	const struct series *thread = NULL;
	size_t nrevs = 0;
	bool email = false;
	int64_t job_id;
	int c, ret = 2, r;

	optind = 1;
	while ((c = cmd_getopt(argc, argv, "kcanary report", "h", opts)) != -1) {
		switch (c) {
		case 'm': ro.metric = optarg; break;
		case 'b': ro.by = optarg; break;
		case 'B': ro.baseline = optarg; break;
		case 't': {
			char *end;
			double v = strtod(optarg, &end);
			/* a run's summary values (lags, bytes, rates) are >= 0:
			 * a negative or non-finite threshold counts nothing useful */
			if ((end != optarg && !strcmp(end, "")) || parse_duration_s(&v, optarg) == 0) {
				ro.threshold = v;
			} else {
				fprintf(stderr, "kcanary report: --threshold '%s': expected a number,"
					" optionally with s, ms or m\n", optarg);
				goto out;
			}
			if (!isfinite(v) || v < 0) {
				fprintf(stderr, "kcanary report: --threshold '%s': expected a finite"
					" number >= 0 (summary values are not negative)\n", optarg);
				goto out;
			}
			ro.has_threshold = true;
			break;
		}
		case 's': series_arg = optarg; break;
		case 'f':
			if (!strcmp(optarg, "email")) {
				email = true;
			} else if (report_format_parse(&fmt, optarg)) {
				fprintf(stderr, "kcanary report: --format '%s': expected text, markdown,"
					" csv, json or email\n", optarg);
				goto out;
			}
			break;
		case 'h':
			fputs(usage_text, stdout);
			ret = 0;
			goto out;
		default:
			fputs(usage_text, stderr);
			goto out;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "kcanary report: expected one JOB\n");
		fputs(usage_text, stderr);
		goto out;
	}
	ret = 1;
	dbpath = cmd_db_path();
	if (access(dbpath, F_OK)) {
		/* reading must not create an empty store (cmd_open_existing_store) */
		db = cmd_open_existing_store("kcanary report");
		goto out;
	}
	if (db_open(&db, dbpath, &err)) {
		fprintf(stderr, "kcanary report: %s\n", buf_str(&err));
		goto out;
	}
	if ((r = db_job_resolve(db, &job_id, argv[optind], &err))) {
		fprintf(stderr, "kcanary report: %s\n", buf_str(&err));
		goto out;
	}
	if (email) {
		if (thread_of(&revs, &nrevs, &thread, db, job_id, series_arg, &err) ||
		    reply_mail(&out, db, job_id, &ro, thread, &err)) {
			fprintf(stderr, "kcanary report: %s\n", buf_str(&err));
			goto out;
		}
		fputs(buf_str(&out), stdout);
		ret = 0;
		goto out;
	}
	if (report_build(&rep, db, job_id, &ro, &err)) {
		fprintf(stderr, "kcanary report: cannot read job '%s': %s\n", argv[optind],
			buf_str(&err));
		goto out;
	}
	if (ro.metric && !report_nvalues(rep)) {
		fprintf(stderr, "kcanary report: no run of job '%s' has a value of metric '%s'"
			" (the agent's summary names them, e.g. worst_lag_s, mean_lag_s,"
			" lag_over_1s_s, written_bytes, rate_mbps)\n", argv[optind], ro.metric);
		goto out;
	}
	report_format(&out, rep, fmt);
	fputs(buf_str(&out), stdout);
	ret = 0;
out:
	series_free_all(revs, nrevs);
	report_free(rep);
	buf_release(&out);
	buf_release(&err);
	db_close(db);
	free(dbpath);
	return ret;
}
