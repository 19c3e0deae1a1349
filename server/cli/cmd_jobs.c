/* cmd_jobs.c - kcanary jobs (list) and kcanary status JOB (progress). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "exec/compare.h"
#include "store/db.h"
#include "store/db_fleet.h"
#include "store/db_runs.h"
#include "store/db_compare.h"
#include "store/db_status.h"
#include "util.h"

static const char jobs_usage[] =
	"usage: kcanary jobs [--all]\n"
	"\n"
	"List the newest 20 jobs (all with --all): id, name, kind, status, runs\n"
	"done of total and how many failed, and when each started.\n"
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

int cmd_jobs(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct db_job_row *rows = NULL;
	struct buf err = BUF_INIT;
	size_t n = 0;
	bool all = argc > 1 && !strcmp(argv[1], "--all");
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
	printf("%5s  %-28s %-8s %-11s %9s %7s  %s\n", "id", "name", "kind", "status", "runs",
	       "failed", "started");
	for (size_t i = 0; i < n; i++) {
		char runs[32];
		snprintf(runs, sizeof(runs), "%d/%d", rows[i].runs_done, rows[i].runs_total);
		printf("%5lld  %-28.28s %-8s %-11s %9s %7d  %s\n", (long long)rows[i].id,
		       rows[i].name, rows[i].kind, rows[i].status, runs, rows[i].runs_failed,
		       rows[i].started_at ? rows[i].started_at : "-");
	}
	db_jobs_free(rows, n);
	db_close(db);
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
	printf("  runs: %d/%d done: %d ok, %d failed, %d other; %d running\n", j->runs_done,
	       j->runs_total, j->runs_ok, j->runs_failed,
	       j->runs_done - j->runs_ok - j->runs_failed, j->runs_running - orphaned);
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
