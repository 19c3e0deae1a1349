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
#include <unistd.h>

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
	"see docs/records.md) from FILE or stdin. A pipe (an agent's live\n"
	"stream) is stored as it arrives, each read committed.\n"
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

/* ingest's flags, as parsed: cell is the run's matrix cell ("fs=ext4
 * k1=v1 k2=v2"), params its knobs as a JSON object (both owned). */
struct ingest_args {
	const char *job, *variant, *fs, *lab_host, *file;
	int repeat;			/* 0: the next one */
	struct buf cell;
	json_t *params;
};

static void ingest_args_release(struct ingest_args *a)
{
	buf_release(&a->cell);
	json_decref(a->params);
}

/* One flag c with value arg into a; -EINVAL after saying why. */
static int ingest_flag(struct ingest_args *a, int c, const char *arg)
{
	switch (c) {
	case 'j': a->job = arg; break;
	case 'V': a->variant = arg; break;
	case 'f': a->fs = arg; break;
	case 'r':
		a->repeat = atoi(arg);
		if (a->repeat < 1) {
			fprintf(stderr, "kcanary ingest: --repeat '%s': expected a number >= 1\n", arg);
			return -EINVAL;
		}
		break;
	case 'L':
		if (!*arg || strpbrk(arg, ",= \t\n")) {
			fprintf(stderr, "kcanary ingest: --lab-host '%s': expected a host name"
				" (no ',', '=' or spaces)\n", arg);
			return -EINVAL;
		}
		a->lab_host = arg;
		break;
	case 'p': {
		const char *eq = strchr(arg, '=');
		if (!eq || eq == arg) {
			fprintf(stderr, "kcanary ingest: --param '%s': expected KEY=VALUE\n", arg);
			return -EINVAL;
		}
		char *key = xstrndup(arg, (size_t)(eq - arg));
		json_object_set_new(a->params, key, json_string(eq + 1));
		free(key);
		add_cell(&a->cell, arg);
		break;
	}
	}
	return 0;
}

/* The flags and the FILE operand into a. Returns -1 to go on, else the
 * exit status (0 for --help, 2 for bad usage). */
static int parse_args(struct ingest_args *a, int argc, char **argv)
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
	int c;

	optind = 1;
	while ((c = cmd_getopt(argc, argv, "kcanary ingest", "h", opts)) != -1) {
		if (c == 'h' || c == '?' || c == ':') {
			fputs(usage_text, c == 'h' ? stdout : stderr);
			return c == 'h' ? 0 : 2;
		}
		if (ingest_flag(a, c, optarg))
			return 2;
	}
	if (!a->job || !a->variant || optind != argc - 1) {
		fprintf(stderr, "kcanary ingest: %s\n", !a->job ? "--job is required" :
			!a->variant ? "--variant is required" : "expected one FILE (or - for stdin)");
		fputs(usage_text, stderr);
		return 2;
	}
	a->file = argv[optind];
	if (a->fs) {
		struct buf tmp = BUF_INIT;
		buf_printf(&tmp, "fs=%s", a->fs);
		if (a->cell.len)
			buf_printf(&tmp, " %s", a->cell.ptr);
		buf_release(&a->cell);
		a->cell = tmp;
	}
	return -1;
}

/* FILE (or - for stdin) open for reading into *out. Returns -1 to go on,
 * else the exit status (1: cannot open, 2: a directory). */
static int open_stream(FILE **out, const char *file)
{
	FILE *f = strcmp(file, "-") ? fopen(file, "rb") : stdin;
	struct stat stb;

	if (!f) {
		fprintf(stderr, "kcanary ingest: cannot open '%s': %s\n", file, strerror(errno));
		return 1;
	}
	if (fstat(fileno(f), &stb) == 0 && S_ISDIR(stb.st_mode)) {
		fprintf(stderr, "kcanary ingest: '%s' is a directory: expected a record"
			" stream file (or - for stdin)\n", file);
		if (f != stdin)
			fclose(f);
		return 2;
	}
	*out = f;
	return -1;
}

/* The run the stream goes to, in the store (db_ingest_start), with its lab
 * host. Returns -1 to go on, else the exit status (2: no job with that id). */
static int start_run(struct db *db, const struct ingest_args *a, struct db_ingest_start *started)
{
	struct db_ingest_target t = { .job = a->job, .variant = a->variant,
				      .repeat_idx = a->repeat, .fs = a->fs };
	struct buf err = BUF_INIT;
	char *params_json = NULL, *writer = NULL;
	int r, ret = 1;

	if (a->job[strspn(a->job, "0123456789")] == '\0') {
		/* an all-digit JOB is an id: a mistyped id must not make a job */
		r = db_job_resolve(db, &t.job_id, a->job, &err);
		if (r == -ENOENT) {
			fprintf(stderr, "kcanary ingest: no job with id %s; give a name to start a new"
				" job\n", a->job);
			ret = 2;
			goto out;
		} else if (r) {
			fprintf(stderr, "kcanary ingest: job '%s': %s\n", a->job, buf_str(&err));
			goto out;
		}
	}
	params_json = json_dumps(a->params, JSON_COMPACT | JSON_SORT_KEYS);
	writer = proc_identity();
	t.cell = buf_str(&a->cell);
	t.params_json = params_json;
	t.writer = writer;
	if (db_ingest_start(db, &t, started, &err)) {
		fprintf(stderr, "kcanary ingest: job '%s' variant '%s': %s\n", a->job, a->variant,
			buf_str(&err));
		goto out;
	}
	if (started->replaced_run_id)
		fprintf(stderr, "kcanary ingest: replacing run %" PRId64 " (repeat %d), which its"
			" writer left interrupted\n", started->replaced_run_id, a->repeat);
	if (a->lab_host && db_run_set_lab_host(db, started->run_id, a->lab_host, &err)) {
		fprintf(stderr, "kcanary ingest: %s\n", buf_str(&err));
		goto out;
	}
	ret = -1;
out:
	free(params_json);
	free(writer);
	buf_release(&err);
	return ret;
}

/* Up to size bytes of f, as soon as some are there (fread() would wait
 * for size bytes from a pipe); 0 at the end; -1 on a read error, said on
 * stderr (the run then ends as its stream does: incomplete without done). */
static ssize_t read_some(FILE *f, char *buf, size_t size)
{
	for (;;) {
		ssize_t n = read(fileno(f), buf, size);
		if (n >= 0)
			return n;
		if (errno != EINTR) {
			fprintf(stderr, "kcanary ingest: cannot read the stream: %s; what was read"
				" is stored\n", strerror(errno));
			return -1;
		}
	}
}

/* The stream f into run run_id; *st its counts. 0, or -EIO after saying
 * why (the run is then left interrupted, its batches so far kept). */
static int feed_stream(struct db *db, int64_t run_id, FILE *f, struct ingest_stats *st)
{
	struct ingest *in = NULL;
	struct buf err = BUF_INIT;
	char chunk[1 << 16];
	ssize_t n;
	int r;

	if ((r = ingest_open(&in, db, run_id, &err))) {
		fprintf(stderr, "kcanary ingest: %s\n", buf_str(&err));
		goto out;
	}
	/* a pipe or a socket (an agent's live stream: `kcanary-agent run ... |
	 * kcanary ingest -`) is stored as it comes, each read committed, so
	 * no write lock is held while we wait for the next line; a file is
	 * stored INGEST_BATCH records a transaction */
	struct stat sb;
	if (fstat(fileno(f), &sb) == 0 && !S_ISREG(sb.st_mode))
		ingest_set_live(in);
	while ((n = read_some(f, chunk, sizeof(chunk))) > 0)
		if (ingest_feed(in, chunk, (size_t)n, NULL) || ingest_stats(in)->refused)
			break;   /* not a record stream: the rest is not read */
	/* a store error in feed is said again by close */
	if ((r = ingest_close(in, st, &err))) {
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
	}
out:
	buf_release(&err);
	return r ? -EIO : 0;
}

/* The stored run's summary on stdout, its kept-raw lines on stderr; an
 * ad-hoc job is marked done. Returns the exit status. */
static int print_result(const struct cmd_ctx *ctx, struct db *db, const struct ingest_args *a,
			const struct db_ingest_start *started, const struct ingest_stats *st)
{
	struct buf err = BUF_INIT;
	char *kind = NULL;

	for (int i = 0; i < st->n_bad_shown; i++)
		fprintf(stderr, "kcanary ingest: %s: kept raw\n", st->bad_shown[i]);
	if (st->bad_lines > st->n_bad_shown)
		fprintf(stderr, "kcanary ingest: ... and %" PRId64 " more lines kept raw\n",
			st->bad_lines - st->n_bad_shown);
	if (st->refused) {
		fprintf(stderr, "kcanary ingest: run %" PRId64 " failed: %s\n", started->run_id,
			st->error);
		return 1;
	}
	/* an ad-hoc job is whatever was ingested into it: done after each run */
	if ((started->job_created || (db_job_kind(db, started->job_id, &kind, NULL) == 0 &&
				      !strcmp(kind, "adhoc"))) &&
	    db_job_set_status(db, started->job_id, "done", NULL, &err))
		fprintf(stderr, "kcanary ingest: %s\n", buf_str(&err));
	free(kind);
	buf_release(&err);
	printf("run %" PRId64 " (job %" PRId64 ", variant '%s'): %s, %" PRId64 " records,"
	       " %" PRId64 " samples, %" PRId64 " probe counts, %" PRId64 " lines kept raw\n",
	       started->run_id, started->job_id, a->variant, st->status, st->records, st->samples,
	       st->probes, st->bad_lines);
	if (st->bad_lines)
		printf("  skipped lines are in raw_lines; list them with:\n"
		       "  sqlite3 %s \"SELECT line_no, reason FROM raw_lines WHERE run_id = %" PRId64 "\"\n",
		       ctx->db_path, started->run_id);
	if (st->saw_error)
		printf("  agent error: %s\n", st->error);
	return 0;
}

int cmd_ingest(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct ingest_args a = { .cell = BUF_INIT, .params = json_object() };
	struct db_ingest_start started;
	struct ingest_stats st;
	struct buf err = BUF_INIT;
	struct db *db = NULL;
	FILE *f = NULL;
	int ret;

	if ((ret = parse_args(&a, argc, argv)) >= 0 || (ret = open_stream(&f, a.file)) >= 0)
		goto out;
	ret = 1;
	if (db_open(&db, ctx->db_path, &err)) {
		fprintf(stderr, "kcanary ingest: %s\n", buf_str(&err));
		goto out;
	}
	if ((ret = start_run(db, &a, &started)) >= 0)
		goto out;
	ret = 1;
	if (!feed_stream(db, started.run_id, f, &st))
		ret = print_result(ctx, db, &a, &started, &st);
out:
	if (f && f != stdin)
		fclose(f);
	db_close(db);
	ingest_args_release(&a);
	buf_release(&err);
	return ret;
}
