/* cmd_ingest.c - kcanary ingest: store one run's agent record stream. */
#define LOG_MODULE "ingest"
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cmd.h"
#include "store/db.h"
#include "store/db_runs.h"
#include "store/db_compare.h"
#include "store/db_lab.h"
#include "guest/ingest.h"
#include "log.h"
#include "util.h"

static const char usage_text[] =
	"usage: kcanary ingest --job JOB --variant VARIANT [--repeat N] [--fs FS]\n"
	"                      [--param KEY=VALUE]... [--lab-host NAME] FILE|-\n"
	"\n"
	"Store one run: read an agent record stream (newline-delimited JSON,\n"
	"see docs/records.md) from FILE or stdin.\n"
	"\n"
	"  --job JOB          job name or id; a new ad-hoc job is made when no\n"
	"                     job has that name\n"
	"  --variant NAME     variant in the job (created in first-seen order;\n"
	"                     the first is the report's baseline)\n"
	"  --repeat N         repeat index (default: the next one); a run that\n"
	"                     is already stored is never replaced\n"
	"  --fs FS            filesystem the run used (part of its matrix cell)\n"
	"  --param KEY=VALUE  a workload knob of the run (part of its matrix cell)\n"
	"  --lab-host NAME    the lab host the run ran on (runs.lab_host: not part\n"
	"                     of its cell; the report stratifies by it)\n"
	"\n"
	"Lines that do not parse or break the stream's order are kept raw and\n"
	"counted, each named on stderr; a stream without a \"done\" record\n"
	"leaves the run 'incomplete' with every sample it had. A stream that is\n"
	"mostly not records is cut off after 1000 bad lines (or 8 MiB of them)\n"
	"and its run fails.\n"
	"Exit status: 0 stored (even with skipped lines), 1 store error or a stream\n"
	"that is not records, 2 usage.\n";

/* The matrix cell text: "fs=ext4 k1=v1 k2=v2" in the order given. */
static void add_cell(struct buf *cell, const char *kv)
{
	if (cell->len)
		buf_puts(cell, " ");
	buf_puts(cell, kv);
}

/* reason: flags, the store's run (db_ingest_start) and the stream's loop
 * read best in one piece; the run's pipeline itself lives in db and ingest. */
int cmd_ingest(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "job", required_argument, NULL, 'j' },
		{ "variant", required_argument, NULL, 'V' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "fs", required_argument, NULL, 'f' },
		{ "param", required_argument, NULL, 'p' },
		{ "lab-host", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *job = NULL, *variant = NULL, *fs = NULL, *lab_host = NULL;
	struct buf cell = BUF_INIT, err = BUF_INIT;
	json_t *params = json_object();
	struct db *db = NULL;
	struct ingest *in = NULL;
	struct ingest_stats st;
	FILE *f = NULL;
	char *dbpath = NULL, *params_json = NULL, *writer = NULL;
	int repeat = 0, c, ret = 2, r;
	int64_t job_id, run_id;

	optind = 1;
	while ((c = cmd_getopt(argc, argv, "kcanary ingest", "h", opts)) != -1) {
		switch (c) {
		case 'j': job = optarg; break;
		case 'V': variant = optarg; break;
		case 'r':
			repeat = atoi(optarg);
			if (repeat < 1) {
				fprintf(stderr, "kcanary ingest: --repeat '%s': expected a number >= 1\n", optarg);
				goto out;
			}
			break;
		case 'f': fs = optarg; break;
		case 'L':
			if (!*optarg || strpbrk(optarg, ",= \t\n")) {
				fprintf(stderr, "kcanary ingest: --lab-host '%s': expected a host name"
					" (no ',', '=' or spaces)\n", optarg);
				goto out;
			}
			lab_host = optarg;
			break;
		case 'p': {
			const char *eq = strchr(optarg, '=');
			if (!eq || eq == optarg) {
				fprintf(stderr, "kcanary ingest: --param '%s': expected KEY=VALUE\n", optarg);
				goto out;
			}
			char *key = xstrndup(optarg, (size_t)(eq - optarg));
			json_object_set_new(params, key, json_string(eq + 1));
			free(key);
			add_cell(&cell, optarg);
			break;
		}
		case 'h':
			fputs(usage_text, stdout);
			ret = 0;
			goto out;
		default:
			fputs(usage_text, stderr);
			goto out;
		}
	}
	if (!job || !variant || optind != argc - 1) {
		fprintf(stderr, "kcanary ingest: %s\n", !job ? "--job is required" :
			!variant ? "--variant is required" : "expected one FILE (or - for stdin)");
		fputs(usage_text, stderr);
		goto out;
	}
	if (fs) {
		struct buf tmp = BUF_INIT;
		buf_printf(&tmp, "fs=%s", fs);
		if (cell.len)
			buf_printf(&tmp, " %s", cell.ptr);
		buf_release(&cell);
		cell = tmp;
	}
	const char *file = argv[optind];
	f = strcmp(file, "-") ? fopen(file, "rb") : stdin;
	if (!f) {
		fprintf(stderr, "kcanary ingest: cannot open '%s': %s\n", file, strerror(errno));
		ret = 1;
		goto out;
	}
	{
		struct stat stb;
		if (fstat(fileno(f), &stb) == 0 && S_ISDIR(stb.st_mode)) {
			fprintf(stderr, "kcanary ingest: '%s' is a directory: expected a record"
				" stream file (or - for stdin)\n", file);
			goto out;
		}
	}
	ret = 1;
	dbpath = cmd_db_path();
	if (db_open(&db, dbpath, &err)) {
		fprintf(stderr, "kcanary ingest: %s\n", buf_str(&err));
		goto out;
	}
	struct db_ingest_target t = { .job = job, .variant = variant, .repeat_idx = repeat, .fs = fs };
	struct db_ingest_start started;
	if (job[strspn(job, "0123456789")] == '\0') {
		/* an all-digit JOB is an id: a mistyped id must not make a job */
		r = db_job_resolve(db, &t.job_id, job, &err);
		if (r == -ENOENT) {
			fprintf(stderr, "kcanary ingest: no job with id %s; give a name to start a new job\n",
				job);
			ret = 2;
			goto out;
		} else if (r) {
			fprintf(stderr, "kcanary ingest: job '%s': %s\n", job, buf_str(&err));
			goto out;
		}
	}
	params_json = json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS);
	writer = proc_identity();
	t.cell = buf_str(&cell);
	t.params_json = params_json;
	t.writer = writer;
	if (db_ingest_start(db, &t, &started, &err)) {
		fprintf(stderr, "kcanary ingest: job '%s' variant '%s': %s\n", job, variant,
			buf_str(&err));
		goto out;
	}
	bool created = started.job_created;
	job_id = started.job_id;
	run_id = started.run_id;
	if (started.replaced_run_id)
		fprintf(stderr, "kcanary ingest: replacing run %" PRId64 " (repeat %d), which its"
			" writer left interrupted\n", started.replaced_run_id, repeat);
	if (lab_host && db_run_set_lab_host(db, run_id, lab_host, &err)) {
		fprintf(stderr, "kcanary ingest: %s\n", buf_str(&err));
		goto out;
	}
	if (ingest_open(&in, db, run_id, &err)) {
		fprintf(stderr, "kcanary ingest: %s\n", buf_str(&err));
		goto out;
	}
	char chunk[1 << 16];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (ingest_feed(in, chunk, n, NULL) || ingest_stats(in)->refused)
			break;   /* not a record stream: the rest is not read */
	/* a store error in feed is said again by close */
	r = ingest_close(in, &st, &err);
	in = NULL;
	if (r) {
		fprintf(stderr, "kcanary ingest: %s; batches before it are kept\n", buf_str(&err));
		/* not left 'running': interrupted, with the reason, so the same
		 * repeat can be ingested again once the store is fixed (when the
		 * store takes even that; else the next command finds the writer
		 * gone, db_runs_reap) */
		struct buf why = BUF_INIT;
		buf_printf(&why, "the store failed during ingest: %s; ingest the stream again"
			   " to replace this run", buf_str(&err));
		db_run_set_status(db, run_id, "interrupted", buf_str(&why), NULL);
		buf_release(&why);
		goto out;
	}
	for (int i = 0; i < st.n_bad_shown; i++)
		fprintf(stderr, "kcanary ingest: %s: kept raw\n", st.bad_shown[i]);
	if (st.bad_lines > st.n_bad_shown)
		fprintf(stderr, "kcanary ingest: ... and %" PRId64 " more lines kept raw\n",
			st.bad_lines - st.n_bad_shown);
	if (st.refused) {
		fprintf(stderr, "kcanary ingest: run %" PRId64 " failed: %s\n", run_id, st.error);
		goto out;
	}
	/* an ad-hoc job is whatever was ingested into it: done after each run */
	char *kind = NULL;
	if ((created || (db_job_kind(db, job_id, &kind, NULL) == 0 && !strcmp(kind, "adhoc"))) &&
	    db_job_set_status(db, job_id, "done", NULL, &err))
		fprintf(stderr, "kcanary ingest: %s\n", buf_str(&err));
	free(kind);
	printf("run %" PRId64 " (job %" PRId64 ", variant '%s'): %s, %" PRId64 " records,"
	       " %" PRId64 " samples, %" PRId64 " probe counts, %" PRId64 " lines kept raw\n",
	       run_id, job_id, variant, st.status, st.records, st.samples, st.probes,
	       st.bad_lines);
	if (st.bad_lines)
		printf("  skipped lines are in raw_lines; list them with:\n"
		       "  sqlite3 %s \"SELECT line_no, reason FROM raw_lines WHERE run_id = %" PRId64 "\"\n",
		       dbpath, run_id);
	if (st.saw_error)
		printf("  agent error: %s\n", st.error);
	ret = 0;
out:
	if (in)
		ingest_close(in, NULL, NULL);
	if (f && f != stdin)
		fclose(f);
	db_close(db);
	free(dbpath);
	free(params_json);
	free(writer);
	json_decref(params);
	buf_release(&cell);
	buf_release(&err);
	return ret;
}
