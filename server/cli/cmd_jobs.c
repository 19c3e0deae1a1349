/* cmd_jobs.c - kcanary jobs (list) and kcanary status JOB (progress). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "exec/compare.h"
#include "judge/report.h"
#include "store/db.h"
#include "store/db_fleet.h"
#include "store/db_runs.h"
#include "store/db_compare.h"
#include "store/db_status.h"
#include "util.h"

static const char jobs_usage[] =
	"usage: kcanary jobs [--all]\n"
	"\n"
	"List the newest 20 jobs (all with --all): id, name, kind, status (\"no\n"
	"result\" for a job that ran to its end with every run failed), runs done\n"
	"of total and how many failed, the headline change and p (of the job's\n"
	"metric: the comparison with the smallest p, starred when there are\n"
	"several; \"-\" for a job with nothing to compare), and when each started.\n"
	"\n"
	"Exit status: 0 listed, 1 no store at the home or it cannot be read,\n"
	"2 usage.\n";

static const char status_usage[] =
	"usage: kcanary status JOB\n"
	"\n"
	"Print a job's progress from the store: variants (and which failed to\n"
	"apply or build), runs done of total by outcome, and the run in\n"
	"progress with its latest lag sample.\n"
	"\n"
	"Exit status: 0 printed, 1 no such job or no store at the home, 2 usage.\n";

/* The status column: a job that ran to its end ('done') but none of whose
 * runs gave a result (every one failed, timed out or was never run: its
 * kernel failed) is no success: "no result" (issue 35). A job of no runs
 * at all (kcanary build's) is what its status says. */
static const char *job_state(const struct db_job_row *j)
{
	if (!strcmp(j->status, "done") && j->runs_total && !j->runs_ok && !j->runs_incomplete)
		return "no result";
	return j->status;
}

int cmd_jobs(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct db_job_row *rows = NULL;
	struct buf err = BUF_INIT;
	size_t n = 0;
	bool all = argc > 1 && !strcmp(argv[1], "--all"), starred = false;
	struct db *db;

	if (cmd_wants_help(argc, argv)) {
		fputs(jobs_usage, stdout);
		return 0;
	}
	if (argc > 1 && !all) {
		fprintf(stderr, "kcanary jobs: unexpected '%s'\n%s", argv[1], jobs_usage);
		return 2;
	}
	if (!(db = cmd_open_existing_store(ctx, "kcanary jobs")))
		return 1;
	if (db_jobs_list(db, &rows, &n, all ? 0 : 20, &err)) {
		fprintf(stderr, "kcanary jobs: %s\n", buf_str(&err));
		buf_release(&err);
		db_close(db);
		return 1;
	}
	printf("%5s  %-28s %-8s %-11s %9s %7s %8s %7s  %s\n", "id", "name", "kind", "status",
	       "runs", "failed", "change", "p", "started");
	for (size_t i = 0; i < n; i++) {
		char runs[32], change[32], p[32];
		struct report_headline h;

		snprintf(runs, sizeof(runs), "%d/%d", rows[i].runs_done, rows[i].runs_total);
		/* a job without a report (no axis to compare) has no change */
		if (report_job_headline(&h, db, rows[i].id, NULL))
			h.has = false;
		report_headline_text(&h, change, p, sizeof(change));
		starred |= h.has && h.ncomparisons > 1;
		printf("%5lld  %-28.28s %-8s %-11s %9s %7d %8s %7s  %s\n", (long long)rows[i].id,
		       rows[i].name, rows[i].kind, job_state(&rows[i]), runs, rows[i].runs_failed,
		       change, p, rows[i].started_at ? rows[i].started_at : "-");
	}
	if (starred)
		puts("change, p: the job's metric, the comparison with the smallest p; *: of several"
		     " (kcanary report JOB has each)");
	db_jobs_free(rows, n);
	db_close(db);
	return 0;
}

/* The statuses counted as failed (db_status.h's runs_failed). */
static bool failed_status(const char *s)
{
	return !strcmp(s, "failed") || !strcmp(s, "timeout") || !strcmp(s, "kernel-panic") ||
	       !strcmp(s, "paused");
}

/* "  runs: 4/6 done: 1 ok, 2 failed (1 timeout, 1 kernel-panic), 1 skipped;
 * 0 running, 2 pending": every finished run counted under its own status
 * (issue 35: the old line lumped incomplete, interrupted, infra and skipped
 * runs as "other"). */
static int print_runs_line(struct db *db, const struct db_job_row *j, int running,
			   struct buf *err)
{
	struct db_status_count *c = NULL;
	size_t n = 0, kinds = 0;
	int r, pending = 0;

	if ((r = db_job_run_statuses(db, j->id, &c, &n, err)))
		return r;
	printf("  runs: %d/%d done: %d ok, %d failed", j->runs_done, j->runs_total, j->runs_ok,
	       j->runs_failed);
	for (size_t i = 0; i < n; i++)
		kinds += failed_status(c[i].status);
	/* which kinds of failure, unless the only kind is plain "failed" */
	for (size_t i = 0, k = 0; i < n; i++) {
		if (!failed_status(c[i].status) || (kinds == 1 && !strcmp(c[i].status, "failed")))
			continue;
		k++;
		printf("%s%d %s%s", k == 1 ? " (" : ", ", c[i].n, c[i].status, k == kinds ? ")" : "");
	}
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(c[i].status, "pending"))
			pending = c[i].n;
		else if (strcmp(c[i].status, "running") && strcmp(c[i].status, "ok") &&
			 !failed_status(c[i].status))
			printf(", %d %s", c[i].n, c[i].status);
	}
	printf("; %d running", running);
	if (pending)
		printf(", %d pending", pending);
	putchar('\n');
	db_status_counts_free(c, n);
	return 0;
}

/* The live passive runs of a fleet job (kcanary-agent daemon: one per host
 * and boot, 'running' while the host streams; issue 35: they read
 * "booting"), at most 10 of them. */
static int print_streams(struct db *db, int64_t job_id, struct buf *err)
{
	struct db_fleet_stream *s = NULL;
	size_t n = 0, total = 0;
	int r;

	if ((r = db_fleet_streams(db, job_id, 10, &s, &n, &total, err)))
		return r;
	printf("  now: %zu host%s streaming passive records:\n", total, total == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		printf("    run %lld %s (%s): streaming since %s", (long long)s[i].run_id,
		       s[i].host ? s[i].host : "?", s[i].kernel_release ? s[i].kernel_release : "?",
		       s[i].started_at ? s[i].started_at : "?");
		if (isnan(s[i].since_last_s))
			printf(", no record stamped yet\n");
		else
			printf(", last record %.0f s ago\n", s[i].since_last_s);
	}
	if (total > n)
		printf("    ... and %zu more\n", total - n);
	db_fleet_streams_free(s, n);
	return 0;
}

int cmd_status(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct db_job_row *j = NULL;
	struct buf err = BUF_INIT;
	struct db *db;
	int64_t id, run;
	char *variant = NULL, *cell = NULL, *owner = NULL, *jstatus = NULL;
	int rep, ret = 1, r, orphaned = 0;
	double t, v;

	if (cmd_wants_help(argc, argv)) {
		fputs(status_usage, stdout);
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-') {
		if (argc > 1 && argv[1][0] == '-')
			fprintf(stderr, "kcanary status: unrecognized option '%s'\n", argv[1]);
		fputs(status_usage, stderr);
		return 2;
	}
	if (!(db = cmd_open_existing_store(ctx, "kcanary status")))
		return 1;
	if (db_job_resolve(db, &id, argv[1], &err) || db_job_get(db, id, &j, &err)) {
		fprintf(stderr, "kcanary status: %s\n", buf_str(&err));
		goto out;
	}
	printf("job %lld '%s' (%s): %s\n", (long long)j->id, j->name, j->kind, j->status);
	if (j->error)
		printf("  error: %s\n", j->error);
	printf("  variants: %d (%d failed to apply or build)\n", j->nvariants, j->variants_failed);
	if (j->runs_running && db_job_owner(db, id, &owner, &jstatus, NULL) == 0 &&
	    !compare_owner_alive(owner))
		orphaned = j->runs_running;
	if (print_runs_line(db, j, j->runs_running - orphaned, &err)) {
		fprintf(stderr, "kcanary status: %s\n", buf_str(&err));
		goto out;
	}
	if (j->runs_interrupted)
		printf("  interrupted: %d; the newest, %s\n", j->runs_interrupted, j->last_interrupted);
	if (orphaned) {
		/* its coordinator is gone: what it left 'running' is not live */
		printf("  interrupted: the coordinator (pid %s) stopped during %d run%s;"
		       " 'kcanary resume %lld' runs %s again\n", owner, orphaned,
		       orphaned == 1 ? "" : "s", (long long)id, orphaned == 1 ? "it" : "them");
		ret = 0;
		goto out;
	}
	r = db_run_progress(db, id, "lag_s", &run, &variant, &cell, &rep, &t, &v, &err);
	if (r == 0 && !strcmp(cell, DB_PASSIVE_CELL)) {
		if ((r = print_streams(db, id, &err))) {
			fprintf(stderr, "kcanary status: %s\n", buf_str(&err));
			goto out;
		}
	} else if (r == 0) {
		if (isnan(t))
			printf("  now: run %lld %s %s r%d: booting\n", (long long)run, variant, cell, rep);
		else
			printf("  now: run %lld %s %s r%d: t=%.0fs lag %.1fs\n", (long long)run,
			       variant, cell, rep, t, v);
	} else if (r != -ENOENT) {      /* -ENOENT: no run is running */
		fprintf(stderr, "kcanary status: %s\n", buf_str(&err));
		goto out;
	}
	ret = 0;
out:
	buf_release(&err);
	free(variant);
	free(cell);
	free(owner);
	free(jstatus);
	db_jobs_free(j, j ? 1 : 0);
	db_close(db);
	return ret;
}
