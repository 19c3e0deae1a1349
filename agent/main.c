/* main.c - kcanary-agent: runs a workload in a test guest (or on a fleet
 * host) and streams its records (record.h). The workloads are registered
 * in workloads[] below; to add one, write agent/<name>.c defining a
 * struct workload (workload.h) and add a row. Its verbs (run, daemon, list,
 * check, help) are the rows of verbs[], which --help lists.
 *
 * Exit codes: 0 done; 1 the workload failed while running; 2 bad usage,
 * bad knobs or a precondition (root, cgroup v2, controllers, test dir).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define LOG_MODULE "main"
#include "bpftrace.h"
#include "daemon.h"
#include "error.h"
#include "knob.h"
#include "log.h"
#include "probes.h"
#include "record.h"
#include "util.h"
#include "workload.h"


static const struct workload *const workloads[] = {
	&wl_wb_handover,
	&wl_command,
	&wl_fio,
	&wl_stress_ng,
	&wl_perf_bench,
};

/* Knobs every workload takes, handled here rather than by the workload:
 *   bpftrace=PROGRAM  run PROGRAM beside the workload, its maps stored as
 *                     probe counts (bpftrace.h)
 * take_common() removes them from the workload's knob arguments. */
#define BT_ATTACH_TIMEOUT_S 120.0
static void take_common(int *kargc, char **kargv, const char **bpftrace)
{
	int n = 1;

	*bpftrace = NULL;
	for (int i = 1; i < *kargc; i++) {
		if (!strncmp(kargv[i], "bpftrace=", 9))
			*bpftrace = kargv[i] + 9;
		else
			kargv[n++] = kargv[i];
	}
	*kargc = n;
	kargv[n] = NULL;
}
#define NWORKLOADS (sizeof(workloads) / sizeof(workloads[0]))

/* When the process started (clock_mono_s()): the hello's startup_s. */
static double started_s;

static void usage(FILE *f);

static const struct workload *find_workload(const char *name)
{
	for (size_t i = 0; i < NWORKLOADS; i++)
		if (!strcmp(workloads[i]->name, name))
			return workloads[i];
	return NULL;
}

static int cmd_list(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	for (size_t i = 0; i < NWORKLOADS; i++) {
		const struct workload *w = workloads[i];

		printf("%s%s: %s\n", i ? "\n" : "", w->name, w->summary);
		printf("  %-14s %-9s %-6s %-8s %s\n", "knob", "type", "unit", "default", "meaning");
		for (size_t k = 0; k < w->nknobs; k++) {
			const struct knob_def *d = &w->knobs[k];

			printf("  %-14s %-9s %-6s %-8s %s", d->name, knob_type_name(d->type),
			       d->unit, !d->def ? "required" : *d->def ? d->def : "\"\"", d->help);
			if (d->type == KNOB_ENUM) {
				printf(" [");
				for (size_t c = 0; d->choices[c]; c++)
					printf("%s%s", c ? "|" : "", d->choices[c]);
				printf("]");
			}
			printf("\n");
		}
		if (w->notes)
			printf("%s\n", w->notes);
	}
	printf("\nevery workload also takes:\n");
	printf("  %-14s %-9s %-6s %-8s %s\n", "bpftrace", "string", "", "\"\"",
	       "bpftrace program run beside it (-f json); its maps become probe counts");
	printf("  %-14s %-9s %-6s %-8s %s\n", "", "", "", "",
	       "bpftrace:MAP with the map key (@ret[-2] -> probe bpftrace:ret key -2)");
	printf("\nSizes take K, M, G, T (binary) suffixes; seconds take s, m, h; bools 0/1.\n");
	return 0;
}

static void on_signal(int sig)
{
	wl_stop = sig;
}

static json_t *params_json(const struct knobs *k)
{
	json_t *o = json_object();

	for (size_t i = 0; i < k->n; i++)
		json_object_set_new(o, k->defs[i].name, json_string(k->vals[i].text));
	return o;
}

static int emit_hello(struct rec_out *rec, const struct workload *w, const struct knobs *k,
		      const char *probes_state, double startup_s)
{
	struct utsname u;
	char *fs = NULL, *opts = NULL;
	const char *dir = NULL;
	json_t *o;

	uname(&u);
	for (size_t i = 0; i < k->n; i++)
		if (!strcmp(k->defs[i].name, "dir"))
			dir = k->vals[i].text;
	if (dir)
		wl_fs_of(&fs, &opts, dir);
	o = json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "hello",
		      "agent_version", KC_AGENT_VERSION, "kernel_release", u.release,
		      "host", u.nodename, "workload", w->name);
	if (dir) {
		json_object_set_new(o, "dir", json_string(dir));
		json_object_set_new(o, "fs_type", fs ? json_string(fs) : json_null());
		json_object_set_new(o, "mount_options", opts ? json_string(opts) : json_null());
	}
	json_object_set_new(o, "params", params_json(k));
	json_object_set_new(o, "probes", json_string(probes_state));
	json_object_set_new(o, "startup_s", json_real(rec_ms(startup_s)));
	/* /init's time for mkfs and mount of the scratch disk (kernels/init) */
	const char *mk = getenv("KC_MKFS_S");
	char *end = NULL;
	double mkfs_s = mk ? strtod(mk, &end) : -1;
	if (mk && end != mk && !*end && mkfs_s >= 0 && mkfs_s < 1e6)
		json_object_set_new(o, "mkfs_s", json_real(mkfs_s));
	free(fs);
	free(opts);
	return rec_emit(rec, o);
}

/* A one-line error: on stderr and, when the stream is open, as a record. */
static int die(struct rec_out *rec, int code, const char *msg)
{
	fprintf(stderr, "kcanary-agent: error: %s\n", msg);
	if (rec)
		rec_error(rec, msg);
	rec_close(rec);
	return code;
}

/* The workload, with bt_prog (bpftrace=, may be NULL) attached before it
 * and its maps stored after it. *setup_failed: bpftrace could not start
 * (a precondition, exit 2). 0 or -errno with err. */
static int run_workload(struct wl_ctx *ctx, const struct workload *w, const char *bt_prog,
			bool *setup_failed, struct buf *err)
{
	struct bt *bt = NULL;
	int ret;

	*setup_failed = false;
	if (bt_prog && *bt_prog) {
		rec_phase(ctx->rec, 0, "bpftrace-attach");
		if ((ret = bt_start(&bt, bt_prog, BT_ATTACH_TIMEOUT_S, err)) < 0) {
			*setup_failed = true;
			return ret;
		}
	}
	ctx->t0_s = clock_mono_s();
	ret = w->run(ctx, err);
	if (bt) {
		/* the workload's own error, when it has one, is the one told */
		int n = bt_stop(bt, ctx->rec, wl_t(ctx), ret >= 0 ? err : NULL);

		if (n < 0 && ret >= 0)
			ret = n;
	}
	return ret;
}

/* run's flags: --out DEST, --require-probes, -v, -q; the rest (WORKLOAD
 * knob=value ...) into kargv (*kargc). Returns -1 to go on, else the exit
 * status (0 after --help, 2 for an unknown option). */
static int run_flags(int argc, char **argv, const char **out_spec, bool *require_probes,
		     char **kargv, int *kargc)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--out") && i + 1 < argc) {
			*out_spec = argv[++i];
		} else if (!strncmp(argv[i], "--out=", 6)) {
			*out_spec = argv[i] + 6;
		} else if (!strcmp(argv[i], "--require-probes")) {
			*require_probes = true;
		} else if (!strcmp(argv[i], "-v")) {
			log_level = LOG_DEBUG;
		} else if (!strcmp(argv[i], "-q")) {
			log_level = LOG_ERROR;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "kcanary-agent: error: unknown option '%s' (see kcanary-agent --help)\n", argv[i]);
			return 2;
		} else {
			kargv[(*kargc)++] = argv[i];
		}
	}
	if (*kargc < 1) {
		usage(stderr);
		return 2;
	}
	return -1;
}

/* Load the probes (ctx->probes) and emit the hello, and the probes that
 * are missing. 0, or -ENOENT with err when some are missing and
 * require_probes says that is fatal. */
static int run_probes(struct wl_ctx *ctx, const struct workload *w, bool require_probes,
		      struct buf *err)
{
	struct buf missing = BUF_INIT, reason = BUF_INIT;
	const char *probes_state = "loaded";
	int ret = probes_open(&ctx->probes, &missing, &reason);

	if (ret < 0)
		probes_state = "unavailable";
	else if (missing.len)
		probes_state = "partial";
	emit_hello(ctx->rec, w, ctx->knobs, probes_state, clock_mono_s() - started_s);
	ret = 0;
	if (missing.len) {
		rec_emit(ctx->rec, json_pack("{s:s, s:f, s:s, s:s}", "type", "probes_unavailable",
					     "t", 0.0, "missing", buf_str(&missing),
					     "reason", err_text(&reason)));
		log_warn("probes unavailable: %s: %s", buf_str(&missing), err_text(&reason));
		if (require_probes)
			ret = err_setf(err, -ENOENT, "probes unavailable (%s): %s; run without --require-probes to go on without them",
				       buf_str(&missing), err_text(&reason));
	}
	buf_release(&missing);
	buf_release(&reason);
	return ret;
}

static int cmd_run(int argc, char **argv)
{
	const struct workload *w;
	const char *out_spec = NULL, *bt_prog = NULL;
	bool require_probes = false, setup_failed = false;
	char **kargv = xcalloc((size_t)argc + 1, sizeof(*kargv));
	int kargc = 0, ret;
	struct rec_out *rec = NULL;
	struct knobs k = { NULL, 0, NULL };
	struct wl_ctx ctx = { 0 };
	struct buf err = BUF_INIT;
	struct sigaction sa;

	if ((ret = run_flags(argc, argv, &out_spec, &require_probes, kargv, &kargc)) >= 0) {
		free(kargv);
		return ret;
	}
	take_common(&kargc, kargv, &bt_prog);
	if (rec_open(&rec, out_spec, &err) < 0) {
		ret = die(NULL, 2, buf_str(&err));
		goto out;
	}
	if (!(w = find_workload(kargv[0]))) {
		err_setf(&err, -EINVAL, "unknown workload '%s' (see 'kcanary-agent list')", kargv[0]);
		ret = die(rec, 2, buf_str(&err));
		goto out;
	}
	if (knobs_parse(&k, w->name, w->knobs, w->nknobs, kargc - 1, kargv + 1, &err) < 0) {
		ret = die(rec, 2, buf_str(&err));
		goto out;
	}

	ctx.rec = rec;
	ctx.knobs = &k;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;     /* no SA_RESTART: sleeps end early */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (w->check(&ctx, &err) < 0) {
		emit_hello(rec, w, &k, "not loaded", clock_mono_s() - started_s);
		ret = die(rec, 2, buf_str(&err));
		goto out;
	}
	if (run_probes(&ctx, w, require_probes, &err) < 0) {
		ret = die(rec, 2, buf_str(&err));
		goto out;
	}
	ret = run_workload(&ctx, w, bt_prog, &setup_failed, &err);
	if (ret < 0) {
		ret = die(rec, setup_failed ? 2 : 1, err.len ? buf_str(&err) : strerror(-ret));
		goto out;
	}
	rec_done(rec);
	rec_close(rec);
	ret = 0;
out:
	probes_close(ctx.probes);
	knobs_release(&k);
	buf_release(&err);
	free(kargv);
	return ret;
}

/* check --json's reply (the usage text documents it); printed on stdout. */
static void check_reply(const char *workload, const struct workload *w, const struct knobs *k,
			const char *knob, const char *error, double extra_s)
{
	json_t *o = json_object();
	char *text;

	json_object_set_new(o, "ok", json_boolean(!error));
	json_object_set_new(o, "workload", json_string(workload));
	if (error) {
		json_object_set_new(o, "knob", knob && *knob ? json_string(knob) : json_null());
		json_object_set_new(o, "error", json_string(error));
	} else {
		double s = w->expected_s ? w->expected_s(k) : -1;

		if (s >= 0)
			s += extra_s;     /* bpftrace's attach, at most */

		if (s < 0)
			json_object_set_new(o, "expected_s", json_null());
		else if (s == (double)(json_int_t)s)
			json_object_set_new(o, "expected_s", json_integer((json_int_t)s));
		else
			json_object_set_new(o, "expected_s", json_real(s));
		uint64_t bytes = 0, files = 0;
		bool disk = w->disk_use && w->disk_use(k, &bytes, &files);

		/* a JSON integer is signed: more than INT64_MAX is said as
		 * INT64_MAX (far above any disk), never as a negative "unknown" */
		bytes = bytes > INT64_MAX ? INT64_MAX : bytes;
		files = files > INT64_MAX ? INT64_MAX : files;
		json_object_set_new(o, "disk_bytes", disk ? json_integer((json_int_t)bytes) : json_null());
		json_object_set_new(o, "disk_files", disk ? json_integer((json_int_t)files) : json_null());
		json_object_set_new(o, "disk_knobs", disk && w->disk_knobs ? json_string(w->disk_knobs)
									     : json_null());
		json_object_set_new(o, "knobs", params_json(k));
	}
	text = json_dumps(o, JSON_COMPACT);
	printf("%s\n", text);
	free(text);
	json_decref(o);
}

/* kcanary-agent check WORKLOAD knob=value... [--json]: parse, touch
 * nothing. Exit 0 when every knob parses, 2 when one does not. */
static int cmd_check(int argc, char **argv)
{
	const struct workload *w;
	struct knobs k = { NULL, 0, NULL };
	struct knob_fault f = { "" };
	struct buf err = BUF_INIT;
	char **kargv = xcalloc((size_t)argc + 1, sizeof(*kargv));
	int kargc = 0, ret;
	bool json = false;
	const char *bt_prog = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else
			kargv[kargc++] = argv[i];
	}
	if (kargc < 1) {
		usage(stderr);
		free(kargv);
		return 2;
	}
	take_common(&kargc, kargv, &bt_prog);
	if (!(w = find_workload(kargv[0]))) {
		ret = err_setf(&err, -EINVAL, "unknown workload '%s' (see 'kcanary-agent list')",
			       kargv[0]);
	} else {
		ret = knobs_parse_fault(&k, w->name, w->knobs, w->nknobs, kargc - 1, kargv + 1, &f,
					&err);
	}
	if (json)
		check_reply(kargv[0], w, &k, f.knob, ret < 0 ? err_text(&err) : NULL,
			    bt_prog && *bt_prog ? BT_ATTACH_TIMEOUT_S : 0);
	else if (ret < 0)
		fprintf(stderr, "kcanary-agent: error: %s\n", err_text(&err));
	free(kargv);
	buf_release(&err);
	if (ret < 0)
		return 2;
	knobs_release(&k);
	return 0;
}

/* The verbs, in --help's order. fn gets argv from the verb on (argv[0] is
 * the verb) and returns the exit status. */
struct verb {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *synopsis;    /* what follows "kcanary-agent" in the usage line */
	const char *summary;
};

static int cmd_daemon(int argc, char **argv)
{
	return daemon_main(argc, argv, find_workload);
}

static int cmd_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usage(stdout);
	return 0;
}

static const struct verb verbs[] = {
	{ "run", cmd_run, "run WORKLOAD [knob=value ...] [--out DEST] [--require-probes] [-v|-q]",
	  "run a workload and write its records" },
	{ "daemon", cmd_daemon, "daemon --server URL --token-file FILE [...] (see daemon --help)",
	  "stream a fleet host's records to kcanary serve" },
	{ "list", cmd_list, "list", "list the workloads and their knobs" },
	{ "check", cmd_check, "check WORKLOAD [knob=value ...] [--json]",
	  "parse a workload's knobs, run nothing" },
	{ "help", cmd_help, "--help", "show this help" },
	{ NULL, NULL, NULL, NULL },
};

static void usage(FILE *f)
{
	for (const struct verb *v = verbs; v->name; v++)
		fprintf(f, "%s kcanary-agent %s\n", v == verbs ? "usage:" : "      ", v->synopsis);
	fprintf(f, "\ncommands:\n");
	for (const struct verb *v = verbs; v->name; v++)
		fprintf(f, "  %-8s %s\n", v->name, v->summary);
	fprintf(f,
		"\n"
		"Runs WORKLOAD (see 'kcanary-agent list' for workloads and their knobs) and\n"
		"writes its records, one JSON object per line, to DEST:\n"
		"  -                 stdout (the default)\n"
		"  PATH              a file (truncated) or a character device\n"
		"  port:NAME         the virtio-serial port named NAME (found under\n"
		"                    /sys/class/virtio-ports, as guests have no udev)\n"
		"\n"
		"Probes (BPF: cgroup_writeback_by_id return values, balance_dirty_pages\n"
		"pauses, writeback:flush_foreign, writeback:inode_switch_wbs) load when\n"
		"the kernel allows; otherwise a probes_unavailable record says which are\n"
		"missing and the run goes on, unless --require-probes is given.\n"
		"\n"
		"'check' only parses WORKLOAD's knobs (exit 0, or 2 with the error): the\n"
		"coordinator uses it to refuse a bad knob before it builds anything, and\n"
		"to learn how long a run takes (its watchdog). With --json it prints one\n"
		"line on stdout and nothing on stderr (docs/records.md, \"The agent's check\"):\n"
		"  {\"ok\":true,\"workload\":\"wb-handover\",\"expected_s\":153,\"disk_bytes\":...,\n"
		"   \"disk_files\":1000,\"disk_knobs\":\"rate_mbps, old_s, measure_s\",\"knobs\":{...}}\n"
		"  {\"ok\":false,\"workload\":\"wb-handover\",\"knob\":\"rate\",\"error\":\"unknown knob ...\"}\n"
		"expected_s: seconds from the workload's start to done with these knobs\n"
		"(wb-handover: old_s + settle_s + pod_hop + measure_s; command: timeout_s),\n"
		"null when the knobs do not say; disk_bytes, disk_files: the file data and\n"
		"files it writes on the test filesystem at most (the scratch disk's size;\n"
		"null when the knobs do not say), disk_knobs: the knobs that size grows\n"
		"with; knobs: every knob's value, given or\n"
		"defaulted; knob: the knob at fault, null when none is named.\n"
		"\n"
		"Needs root and cgroup v2 with the memory (and, for wb-handover, io)\n"
		"controller; the test directory must not be on tmpfs.\n"
		"Exit status: 0 done, 1 the workload failed, 2 bad usage or a precondition.\n");
}

int main(int argc, char **argv)
{
	started_s = clock_mono_s();
	log_set_prog("kcanary-agent");
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(argc - 1, argv + 1);
	for (const struct verb *v = verbs; v->name; v++)
		if (!strcmp(v->name, argv[1]))
			return v->fn(argc - 1, argv + 1);
	fprintf(stderr, "kcanary-agent: error: unknown command '%s' (expected run, daemon or list; see kcanary-agent --help)\n", argv[1]);
	return 2;
}
