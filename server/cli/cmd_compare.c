/* cmd_compare.c - kcanary compare, resume and rerun: a compare job from a
 * job file or flags, stored, carried out (compare.c) and reported. */
#define LOG_MODULE "compare"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/job_check.h"
#include "cli/cmd.h"
#include "exec/compare.h"
#include "judge/compare_sim.h"
#include "store/db.h"
#include "store/db_runs.h"
#include "store/db_compare.h"
#include "exec/job.h"
#include "log.h"
#include "judge/report.h"
#include "judge/report_scratch.h"
#include "kernel/series_source.h"
#include "util.h"

static const char compare_usage[] =
	"usage: kcanary compare [JOB.ini] [options]\n"
	"       kcanary compare simulate [--trials N] [--seed S] [--max-blocks N]\n"
	"                        [--margin PCT]   (--repeat auto on simulated jobs)\n"
	"\n"
	"Compare kernels on a workload: build (or take) one kernel per variant,\n"
	"boot each in fresh guests, run the workload on each filesystem and\n"
	"setting, repeat, and print the cover-letter table. Every job, variant\n"
	"and run is stored before the first build, so 'kcanary resume JOB'\n"
	"carries on after a crash and 'kcanary rerun JOB' repeats it exactly.\n"
	"Runs interleave variants (base r1, rev r1, base r2, ...) with the matrix\n"
	"shuffled by a stored seed, so that drift hits all variants alike.\n"
	"\n"
	"Variants (flags override the job file):\n"
	"  --repo DIR            kernel tree (git repository; see 'kcanary tree')\n"
	"  --base REV            base commit-ish: the first variant; 'auto': the\n"
	"                        series' base-commit (said plainly when the tree\n"
	"                        does not have it)\n"
	"  --series FILE[,FILE]  mbox of a series revision, or a message-id/URL\n"
	"                        (kcanary series show --help): one variant each\n"
	"  -v N                  revision N of each series (default the newest)\n"
	"  --all-revisions       one variant vN per revision of the one series\n"
	"                        (message-id) that 'kcanary series revisions' finds\n"
	"  --patches K           apply only patches K of each revision (2, 1-2)\n"
	"  --prefixes            also each patch prefix 1..k (parent-commit baselines)\n"
	"  --kernels IMG[,IMG]   prebuilt kernel images instead of a tree\n"
	"  --aa                  a second copy of the first variant (noise floor)\n"
	"  --config-fragment N   extra kernels/N.config (repeatable)\n"
	"  --distcc HOSTS        build the kernels on a distcc farm ([job] distcc):\n"
	"                        DISTCC_HOSTS ('10.0.0.2/8 10.0.0.3'), through ccache\n"
	"                        (CCACHE_PREFIX=distcc), make -j sized to the farm;\n"
	"                        recorded with each kernel (kcanary build --help)\n"
	"  --overlap-builds W    runs start while later kernels build ([job]\n"
	"                        overlap_builds): auto (default) on lab hosts other\n"
	"                        than this machine, whose runs wait for the builds;\n"
	"                        yes on every host; no: every run waits for them\n"
	"Workload and matrix:\n"
	"  --workload NAME       agent workload (default wb-handover)\n"
	"  --set KEY=V[,V...]    a knob; a list becomes a matrix dimension\n"
	"  --sysctl KEY=V[,V..]  a sysctl in the guest; a list is a dimension\n"
	"  --fs FS[,FS...]       filesystems (default ext4)\n"
	"  --repeat N            runs per variant and cell (default 3)\n"
	"  --repeat auto[:MAX]   whole blocks (one run of every variant x cell) until\n"
	"                        every comparison with the baseline is decided on the\n"
	"                        metric, at most MAX blocks (default 10, at least 3):\n"
	"                        a difference (anytime-valid e-value >= 20, valid\n"
	"                        however often it looks; from block 3 on) or no\n"
	"                        difference within --margin; the report says why\n"
	"                        each stopped ([job] repeat = auto:8)\n"
	"  --margin PCT          repeat auto's equivalence margin, in % of the\n"
	"                        baseline median (default 5%; [job] margin = 5%)\n"
	"Execution:\n"
	"  --name NAME           job name (default 'compare')\n"
	"  --seed N              run-order seed (default: from the clock, stored)\n"
	"  --metric NAME         headline metric (default worst_lag_s; with fio,\n"
	"                        stress-ng, perf-bench: the one most runs report),\n"
	"                        checked against the workload before anything is stored\n"
	"  --by AXIS[,AXIS]      the report's compared axis (default variant): fs,\n"
	"                        host, sysctl, a sysctl or a knob (mode) the job\n"
	"                        sets (checked before anything is stored); two give\n"
	"                        a 2-D table with the interaction\n"
	"  --baseline VALUE      the axis value compared against (default the first)\n"
	"  --watchdog DUR        per-run watchdog (default: the workload's phases\n"
	"                        plus 180s under TCG, 60s with KVM)\n"
	"  --rootfs debian[:PKG,...]  run the workload in a Debian 12 root filesystem\n"
	"                        with these packages (kcanary boot --help; [job] rootfs)\n"
	"  --rootfs host         this machine's / read-only over virtiofs (kcanary boot\n"
	"                        --help): not reproducible, marked so in the report;\n"
	"                        refused when --hosts/--connect place runs on a remote\n"
	"                        lab host (its filesystem is not this one); the\n"
	"                        guest can read every file here: trusted workloads\n"
	"  --files PATH[:GUEST_PATH]  copy a file into that root filesystem (repeat;\n"
	"                        [job] files); a relative GUEST_PATH (default: the base\n"
	"                        name) is in the workload's directory. Stored with the\n"
	"                        job: resume and rerun copy the file as it is then\n"
	"  --vcpus N, --memory-mb N  guest size (default 2, 2048)\n"
	"  --disk SIZE           every run's scratch disk, sparse ([job] disk; default:\n"
	"                        the largest any cell's workload needs, at least 4G;\n"
	"                        a cell that needs more than 64G, or more than SIZE\n"
	"                        holds, refuses the job: docs/compare.md)\n"
	"  --connect URI         libvirt URI of the default host 'local' (default\n"
	"                        $KCANARY_LIBVIRT_URI or qemu:///system); remote URIs work\n"
	"  --hosts all|NAME,NAME|KEY=VALUE  lab hosts to run on (kcanary lab; default:\n"
	"                        'local' alone); each takes whole blocks in parallel\n"
	"  --accel kvm|tcg       force the accelerator (default: probe)\n"
	"  --console             copy guest consoles to stderr\n"
	"  --dry-run             print variants and runs, store no job (a thread\n"
	"                        fetched to name them is kept)\n"
	"  -q, --quiet           no progress lines\n"
	"\n"
	"Exit status: 0 when the job ran to its end, 1 on failure, 2 on usage,\n"
	"130 when interrupted (the job stays resumable).\n";

struct exec_flags {
	const char *uri, *accel, *hosts;
	bool console, quiet, dry_run;
};

static int set_list(struct job_spec *s, const char *section, const char *kv, struct buf *err)
{
	const char *eq = strchr(kv, '=');
	if (!eq || eq == kv) {
		buf_printf(err, "'%s': expected KEY=VALUE", kv);
		return -EINVAL;
	}
	char *key = xstrndup(kv, (size_t)(eq - kv));
	const char *value = eq + 1;
	int r;
	if (strchr(value, ','))
		r = job_spec_set(s, "matrix", !strcmp(section, "sysctl") ?
				 (free(key), key = xasprintf("sysctl.%.*s", (int)(eq - kv), kv)) : key,
				 value, err);
	else
		r = job_spec_set(s, section, key, value, err);
	free(key);
	return r;
}

/* Whether job_id is a compare job: the only kind resume and rerun take. */
/* *yes when job_id is a compare job; 0, or the store's error with err. */
static int job_is_compare(struct db *db, int64_t job_id, bool *yes, struct buf *err)
{
	char *kind = NULL;
	int r = db_job_kind(db, job_id, &kind, err);

	*yes = !r && !strcmp(kind, "compare");
	free(kind);
	return r;
}

/* Carry a stored job out and print its report; shared by compare, resume
 * and rerun. */
static int execute_and_report(const struct cmd_ctx *ctx, struct db *db, int64_t job_id,
			      const struct exec_flags *f)
{
	struct guest_opts o = { .home = ctx->home, .uri = f->uri, .accel = f->accel, .hosts = f->hosts,
				.console = f->console, .quiet = f->quiet };
	struct buf err = BUF_INIT, out = BUF_INIT;
	struct report *rep = NULL;
	int r, rc;

	r = compare_execute(db, job_id, &o, &err);
	if (r && r != -EINTR)
		fprintf(stderr, "kcanary compare: job %lld: %s\n", (long long)job_id, buf_str(&err));
	if (r == -ENOSPC)
		fprintf(stderr, "kcanary compare: a disk is full: the runs finished so far and the"
			" records of the one stopped are kept; free space, then: kcanary resume %lld\n",
			(long long)job_id);
	buf_reset(&out);
	if (report_build(&rep, db, job_id, NULL, &out) == 0) {
		if (report_note(rep))
			fprintf(stderr, "kcanary compare: job %lld: %s\n", (long long)job_id,
				report_note(rep));
		buf_reset(&out);
		report_format(&out, rep, REPORT_TEXT);
		printf("\njob %lld\n\n%s", (long long)job_id, buf_str(&out));
	} else {
		fprintf(stderr, "kcanary compare: no report: %s\n", buf_str(&out));
	}
	if (r == -EINTR) {
		fprintf(stderr, "kcanary compare: %s: kcanary resume %lld\n", buf_str(&err),
			(long long)job_id);
		rc = 130;
	} else {
		rc = r ? 1 : 0;
	}
	report_free(rep);
	buf_release(&err);
	buf_release(&out);
	return rc;
}

enum { O_REPO = 256, O_BASE, O_SERIES, O_PATCHES, O_PREFIXES, O_KERNELS, O_AA, O_FRAG,
       O_WORKLOAD, O_SET, O_SYSCTL, O_FS, O_REPEAT, O_MARGIN, O_NAME, O_SEED, O_METRIC, O_BY, O_BASELINE,
	O_WATCHDOG, O_ROOTFS, O_FILES, O_VCPUS, O_MEM, O_DISK, O_CONNECT, O_HOSTS, O_ACCEL, O_CONSOLE, O_DRY,
	O_ALLREV, O_DISTCC, O_OVERLAP };
static const struct option compare_opts[] = {
	{ "repo", required_argument, NULL, O_REPO },
	{ "base", required_argument, NULL, O_BASE },
	{ "series", required_argument, NULL, O_SERIES },
	{ "all-revisions", no_argument, NULL, O_ALLREV },
	{ "patches", required_argument, NULL, O_PATCHES },
	{ "prefixes", no_argument, NULL, O_PREFIXES },
	{ "kernels", required_argument, NULL, O_KERNELS },
	{ "aa", no_argument, NULL, O_AA },
	{ "config-fragment", required_argument, NULL, O_FRAG },
	{ "distcc", required_argument, NULL, O_DISTCC },
	{ "overlap-builds", required_argument, NULL, O_OVERLAP },
	{ "workload", required_argument, NULL, O_WORKLOAD },
	{ "set", required_argument, NULL, O_SET },
	{ "sysctl", required_argument, NULL, O_SYSCTL },
	{ "fs", required_argument, NULL, O_FS },
	{ "repeat", required_argument, NULL, O_REPEAT },
	{ "margin", required_argument, NULL, O_MARGIN },
	{ "name", required_argument, NULL, O_NAME },
	{ "seed", required_argument, NULL, O_SEED },
	{ "metric", required_argument, NULL, O_METRIC },
	{ "by", required_argument, NULL, O_BY },
	{ "baseline", required_argument, NULL, O_BASELINE },
	{ "watchdog", required_argument, NULL, O_WATCHDOG },
	{ "rootfs", required_argument, NULL, O_ROOTFS },
	{ "files", required_argument, NULL, O_FILES },
	{ "vcpus", required_argument, NULL, O_VCPUS },
	{ "memory-mb", required_argument, NULL, O_MEM },
	{ "disk", required_argument, NULL, O_DISK },
	{ "connect", required_argument, NULL, O_CONNECT },
	{ "hosts", required_argument, NULL, O_HOSTS },
	{ "accel", required_argument, NULL, O_ACCEL },
	{ "console", no_argument, NULL, O_CONSOLE },
	{ "dry-run", no_argument, NULL, O_DRY },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The job file among argv's operands (the first one), read into spec
 * before the flags so that they override it; *fs_given when it has a
 * matrix of its own. 0, or a negative errno after saying why.
 * The operands are found by getopt_long itself, silently, so that what it
 * accepts (an abbreviated --kern, --set=K=V, -q) is what is skipped here:
 * comparing names by hand took the value of an abbreviation for the job
 * file. When that pass meets a bad option it reads no file: the flag loop
 * then says what is wrong. */
static int load_job_file(struct job_spec *spec, int argc, char **argv, bool *fs_given,
			 struct buf *err)
{
	int saved_opterr = opterr, bad = 0, c;

	opterr = 0;
	optind = 0;   /* glibc: start afresh */
	while ((c = getopt_long(argc, argv, "qhv:", compare_opts, NULL)) != -1)
		bad |= c == '?' || c == ':';
	opterr = saved_opterr;
	if (bad)
		return 0;
	for (int i = optind; i < argc; i++) {
		char *text = NULL;
		int r = read_file(&text, NULL, argv[i], 1 << 20);
		if (r) {
			fprintf(stderr, "kcanary compare: cannot read job file '%s': %s\n", argv[i],
				strerror(-r));
			return r;
		}
		r = job_spec_parse_ini(spec, text, argv[i], err);
		free(text);
		if (r) {
			fprintf(stderr, "kcanary compare: %s\n", buf_str(err));
			return r;
		}
		*fs_given = true;   /* the file's matrix decides the filesystems */
		break;
	}
	return 0;
}

/* --dry-run: the job's variants, cells and run count, and the scratch
 * disk chk sized, nothing stored. */
static void print_dry_run(const struct job_spec *spec, const struct job_check *chk)
{
	struct db_job_scratch sc = { .bytes = (int64_t)chk->disk_bytes, .cell = chk->disk_cell,
				     .data_bytes = chk->disk_data, .asked = chk->disk_asked };
	struct buf disk = BUF_INIT;

	struct variant *v = NULL;
	size_t nv = job_variants(spec, &v), nc = job_ncells(spec);

	if (spec->repeat_auto)
		printf("job '%s': %zu variant%s x %zu cell%s x repeat auto: blocks of %zu runs until"
		       " every comparison is decided (difference, or none within ±%g%%), at most"
		       " %d blocks = %zu runs (seed %llu)\n", spec->name, nv, nv == 1 ? "" : "s", nc,
		       nc == 1 ? "" : "s", nv * nc, spec->margin_pct, spec->repeat,
		       nv * nc * (size_t)spec->repeat, (unsigned long long)spec->seed);
	else
		printf("job '%s': %zu variant%s x %zu cell%s x %d repeat%s = %zu runs (seed %llu)\n",
		       spec->name, nv, nv == 1 ? "" : "s", nc, nc == 1 ? "" : "s", spec->repeat,
		       spec->repeat == 1 ? "" : "s", nv * nc * (size_t)spec->repeat,
		       (unsigned long long)spec->seed);
	for (size_t i = 0; i < nv; i++)
		printf("  variant %zu: %s\n", i, v[i].name);
	for (size_t i = 0; i < nc; i++) {
		char *cell = job_cell_text(spec, i), *p = job_cell_params(spec, i);
		printf("  cell %zu: %s  %s\n", i, cell, p);
		free(cell);
		free(p);
	}
	if (spec->rootfs)
		printf("  root filesystem: %s\n", spec->rootfs);
	if (spec->distcc)
		printf("  kernels built on distcc hosts: %s\n", spec->distcc);
	for (size_t i = 0; i < spec->nfiles; i++)
		printf("  file: %s\n", spec->files[i]);
	scratch_text(&disk, &sc);
	if (disk.len)
		printf("  %s", buf_str(&disk));
	buf_release(&disk);
	printf("  report: compared along %s%s%s\n", spec->by ? spec->by : "variant",
	       spec->baseline ? ", baseline " : "", spec->baseline ? spec->baseline : "");
	job_variants_free(v, nv);
}

/* A / b as a percentage, "-" when b is 0. */
static double pct(unsigned a, unsigned b)
{
	return b ? 100.0 * a / b : 0;
}

/* `kcanary compare simulate`: --repeat auto on simulated jobs
 * (compare_sim.h), with the targets bench/b_compare_auto.sh reports. */
static int do_simulate(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "trials", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 's' },
		{ "max-blocks", required_argument, NULL, 'b' },
		{ "margin", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	struct compare_sim_opts o = { .trials = 3000, .seed = 1, .max_blocks = JOB_REPEAT_AUTO_MAX,
				      .margin_pct = JOB_MARGIN_PCT };
	struct compare_sim_stats st;
	int c;
	(void)ctx;

	while ((c = cmd_getopt(argc, argv, "kcanary compare simulate", "", lopts)) != -1) {
		char *end = NULL;
		double v = c == '?' || c == 'h' ? 0 : strtod(optarg, &end);
		if (c == '?' || c == 'h' || end == optarg || (*end && strcmp(end, "%")) || v <= 0) {
			fprintf(stderr, "%s", compare_usage);
			return 2;
		}
		if (c == 't')
			o.trials = (unsigned)v;
		else if (c == 's')
			o.seed = (uint64_t)v;
		else if (c == 'b')
			o.max_blocks = (int)v;
		else
			o.margin_pct = v;
	}
	if (compare_sim_run(&st, &o)) {
		fprintf(stderr, "kcanary compare simulate: --max-blocks must be 3 to 1000 and --trials"
			" at least 1\n");
		return 2;
	}
	printf("compare --repeat auto:%d --margin %g%% on simulated jobs (seed %llu): one variant"
	       " against the baseline, one cell; worst lag from the seed's stall model"
	       " (server/judge/bisect_sim.h); a look after every block, e >= %g stops\n",
	       o.max_blocks, o.margin_pct, (unsigned long long)o.seed, 1 / REPORT_SEQ_ALPHA);
	printf("A/A (good/good, clean/clean, flaky/flaky in turn): %u jobs: difference %u (%.2f%%:"
	       " %u, %u, %u), no difference within %g%% %u, cap %u; %.1f runs a job\n", st.aa_trials,
	       st.aa_different, pct(st.aa_different, st.aa_trials), st.aa_different_kind[0],
	       st.aa_different_kind[1], st.aa_different_kind[2], o.margin_pct, st.aa_equivalent,
	       st.aa_capped, st.aa_runs_sum / st.aa_trials);
	double power = (double)st.ab_different / st.ab_trials, runs = st.ab_runs_sum / st.ab_trials;
	printf("A/B (good against bad, clean or flaky 1/2 each): %u jobs: difference %u (%.1f%%),"
	       " %.2f runs a job (%.2f blocks)\n", st.ab_trials, st.ab_different, 100 * power, runs,
	       runs / 2);
	size_t need = 0;
	printf("fixed repeats (Mann-Whitney p < 0.05), power / A/A rate:");
	for (size_t n = 2; n <= COMPARE_SIM_MAX_FIXED; n++) {
		if (n <= 12 || n % 4 == 0)
			printf(" %zu: %.1f%%/%.1f%%", n, pct(st.fixed_power[n], o.trials),
			       pct(st.fixed_aa[n], o.trials));
		if (!need && (double)st.fixed_power[n] / o.trials >= power)
			need = n;
	}
	printf("\n");
	double aa = (double)st.aa_different / st.aa_trials;
	printf("target: A/A false-positive rate of --repeat auto over %u jobs <= 5%%: %.2f%%: %s\n",
	       st.aa_trials, 100 * aa, aa <= 0.05 ? "met" : "NOT met");
	if (need)
		printf("target: mean runs of --repeat auto / runs of the fewest fixed repeats with its"
		       " power (%.1f%%: %zu repeats, %zu runs) < 1.0: %.2f / %zu = %.2f: %s\n",
		       100 * power, need, 2 * need, runs, 2 * need, runs / (double)(2 * need),
		       runs / (double)(2 * need) < 1 ? "met" : "NOT met");
	else
		printf("target: mean runs of --repeat auto / runs of the fewest fixed repeats with its"
		       " power (%.1f%%) < 1.0: no fixed count up to %d reaches it; %.2f / %d = %.2f: %s\n",
		       100 * power, COMPARE_SIM_MAX_FIXED, runs, 2 * COMPARE_SIM_MAX_FIXED,
		       runs / (2 * COMPARE_SIM_MAX_FIXED), runs / (2 * COMPARE_SIM_MAX_FIXED) < 1 ?
		       "met (against the largest simulated)" : "NOT met");
	return 0;
}

/* The flags into spec (over its job file) and f; *fs_given when --fs
 * was given. Returns -1 to go on, else the exit status (0 for --help, 2
 * for a bad flag or value, after saying why). */
static int parse_flags(struct job_spec *spec, struct exec_flags *f, bool *fs_given, int argc,
		       char **argv)
{
	struct buf err = BUF_INIT, frags = BUF_INIT;
	bool files_given = false;
	int c, ret = -1;

	optind = 0;   /* afresh after load_job_file's pass (glibc keeps state) */
	while ((c = cmd_getopt(argc, argv, "kcanary compare", "qhv:", compare_opts)) != -1) {
		int r = 0;
		switch (c) {
		case O_REPO: r = job_spec_set(spec, "job", "tree", optarg, &err); break;
		case O_BASE: r = job_spec_set(spec, "job", "base", optarg, &err); break;
		case O_SERIES: r = job_spec_set(spec, "job", "series", optarg, &err); break;
		case 'v': r = job_spec_set(spec, "job", "version", optarg, &err); break;
		case O_ALLREV: r = job_spec_set(spec, "job", "all_revisions", "yes", &err); break;
		case O_PATCHES: r = job_spec_set(spec, "job", "patches", optarg, &err); break;
		case O_PREFIXES: r = job_spec_set(spec, "job", "prefixes", "yes", &err); break;
		case O_KERNELS: r = job_spec_set(spec, "job", "kernels", optarg, &err); break;
		case O_AA: r = job_spec_set(spec, "job", "aa", "yes", &err); break;
		case O_FRAG:
			buf_printf(&frags, "%s%s", frags.len ? " " : "", optarg);
			r = job_spec_set(spec, "job", "config", buf_str(&frags), &err);
			break;
		case O_WORKLOAD: r = job_spec_set(spec, "workload", "type", optarg, &err); break;
		case O_SET: r = set_list(spec, "workload", optarg, &err); break;
		case O_SYSCTL: r = set_list(spec, "sysctl", optarg, &err); break;
		case O_FS:
			r = job_spec_set(spec, "matrix", "fs", optarg, &err);
			*fs_given = true;
			break;
		case O_REPEAT: r = job_spec_set(spec, "job", "repeat", optarg, &err); break;
		case O_MARGIN: r = job_spec_set(spec, "job", "margin", optarg, &err); break;
		case O_NAME: r = job_spec_set(spec, "job", "name", optarg, &err); break;
		case O_SEED: r = job_spec_set(spec, "job", "seed", optarg, &err); break;
		case O_METRIC: r = job_spec_set(spec, "job", "metric", optarg, &err); break;
		case O_BY: r = job_spec_set(spec, "job", "by", optarg, &err); break;
		case O_BASELINE: r = job_spec_set(spec, "job", "baseline", optarg, &err); break;
		case O_WATCHDOG: r = job_spec_set(spec, "job", "watchdog_s", optarg, &err); break;
		case O_ROOTFS: r = job_spec_set(spec, "job", "rootfs", optarg, &err); break;
		case O_DISTCC: r = job_spec_set(spec, "job", "distcc", optarg, &err); break;
		case O_OVERLAP: r = job_spec_set(spec, "job", "overlap_builds", optarg, &err); break;
		case O_FILES:   /* the first --files replaces the job file's list */
			r = files_given ? 0 : job_spec_set(spec, "job", "files", "", &err);
			if (!r)
				r = job_spec_add_file(spec, optarg, &err);
			files_given = true;
			break;
		case O_VCPUS: r = job_spec_set(spec, "job", "vcpus", optarg, &err); break;
		case O_MEM: r = job_spec_set(spec, "job", "memory_mb", optarg, &err); break;
		case O_DISK: r = job_spec_set(spec, "job", "disk", optarg, &err); break;
		case O_CONNECT: f->uri = optarg; break;
		case O_HOSTS: f->hosts = optarg; break;
		case O_ACCEL:
			if (strcmp(optarg, "kvm") && strcmp(optarg, "tcg")) {
				fprintf(stderr, "kcanary compare: --accel '%s': expected kvm or tcg\n", optarg);
				ret = 2;
				goto out;
			}
			f->accel = optarg;
			break;
		case O_CONSOLE: f->console = true; break;
		case O_DRY: f->dry_run = true; break;
		case 'q': f->quiet = true; break;
		case 'h':
			fputs(compare_usage, stdout);
			ret = 0;
			goto out;
		default:
			fputs(compare_usage, stderr);
			ret = 2;
			goto out;
		}
		if (r) {
			fprintf(stderr, "kcanary compare: %s\n", buf_str(&err));
			ret = 2;
			goto out;
		}
	}
out:
	buf_release(&err);
	buf_release(&frags);
	return ret;
}

/* The store the names are checked against (job_check_names): the home's,
 * opened (and made) as the run will; for --dry-run, which stores nothing,
 * the home's when there is one, else a fresh one in memory (the built-in
 * metrics). NULL after saying why. */
static struct db *names_store(const struct cmd_ctx *ctx, bool dry_run)
{
	struct buf err = BUF_INIT;
	struct db *db = NULL;

	if (!dry_run || !access(ctx->db_path, F_OK))
		return cmd_open_store(ctx, "kcanary compare");
	if (db_open(&db, ":memory:", &err))
		fprintf(stderr, "kcanary compare: %s\n", buf_str(&err));
	buf_release(&err);
	return db;
}

/* spec made whole and checked: a message-id's thread (revisions,
 * base-commit) read through the store (opened into *db), the default fs,
 * the agent's check of every cell, the report's names (by, metric: the
 * same check for --dry-run and the run). 0, or -1 after saying why. */
static int complete_spec(const struct cmd_ctx *ctx, struct job_spec *spec, bool fs_given,
			 bool dry_run, struct job_check *chk, struct db **db)
{
	bool needs_mail = spec->all_revisions || spec->version ||
			  (spec->base && !strcmp(spec->base, "auto"));
	struct buf err = BUF_INIT;
	int r = -1;

	if (needs_mail && series_source_any_ref(spec->series, spec->nseries) &&
	    !(*db = cmd_open_store(ctx, "kcanary compare")))
		return -1;
	if ((needs_mail && job_spec_resolve_series(spec, *db, &err)) ||
	    (!fs_given && job_spec_set(spec, "matrix", "fs", "ext4", &err)) ||
	    job_spec_check(spec, &err) || job_check_cells(chk, spec, NULL, &err)) {
		fprintf(stderr, "kcanary compare: %s\n", buf_str(&err));
		goto out;
	}
	if (!*db && !(*db = names_store(ctx, dry_run)))
		goto out;
	if (job_check_names(*db, spec, &err))
		fprintf(stderr, "kcanary compare: %s\n", buf_str(&err));
	else
		r = 0;
out:
	buf_release(&err);
	return r;
}

/* Store the checked spec as a job, carry it out and print its report.
 * Returns the exit status. */
static int store_and_run(const struct cmd_ctx *ctx, struct db **db, const struct job_spec *spec,
			 const struct job_check *chk, const struct exec_flags *f)
{
	struct buf err = BUF_INIT;
	char *me = compare_owner_self();
	int64_t job_id;
	int ret = 1;

	if (!*db && !(*db = cmd_open_store(ctx, "kcanary compare")))
		goto out;
	/* stored as ours: serve's queue (on the same store) leaves it alone */
	if (job_store(*db, spec, me, &job_id, &err)) {
		fprintf(stderr, "kcanary compare: %s\n", buf_str(&err));
		goto out;
	}
	job_check_store(*db, job_id, chk);	/* its runs' lengths; logged when it fails */
	if (!f->quiet)
		fprintf(stderr, "job %lld '%s' stored: kcanary status %lld\n", (long long)job_id,
			spec->name, (long long)job_id);
	ret = execute_and_report(ctx, *db, job_id, f);
out:
	free(me);
	buf_release(&err);
	return ret;
}

/* `kcanary compare [JOBFILE] [flags]`: the job file, then the flags over
 * it, the spec checked, then stored and carried out (compare.c). */
static int do_compare(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct job_spec *spec = job_spec_new();
	struct job_check chk = { 0 };
	struct exec_flags f = { 0 };
	struct buf err = BUF_INIT;
	struct db *db = NULL;
	bool fs_given = false;
	int ret = 2;

	/* the job file first, so that flags override it */
	if (load_job_file(spec, argc, argv, &fs_given, &err) ||
	    (ret = parse_flags(spec, &f, &fs_given, argc, argv)) >= 0)
		goto out;
	ret = 2;
	if (complete_spec(ctx, spec, fs_given, f.dry_run, &chk, &db))
		goto out;
	if (f.dry_run) {
		print_dry_run(spec, &chk);
		ret = 0;
		goto out;
	}
	ret = store_and_run(ctx, &db, spec, &chk, &f);
out:
	job_check_release(&chk);
	db_close(db);
	job_spec_free(spec);
	buf_release(&err);
	return ret;
}

static const struct cmd_verb compare_verbs[] = {
	{ "simulate", do_simulate },
	{ NULL, do_compare },
};

int cmd_compare(struct cmd_ctx *ctx, int argc, char **argv)
{
	return cmd_select(ctx, "kcanary compare", compare_verbs, argc, argv);
}

static int resume_or_rerun(struct cmd_ctx *ctx, int argc, char **argv, bool rerun)
{
	struct exec_flags f = { 0 };
	struct buf err = BUF_INIT;
	struct db *db = NULL;
	const char *job = NULL;
	int64_t job_id;
	int ret = 2;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf(rerun ?
			       "usage: kcanary rerun JOB [--connect URI] [--hosts SPEC] [--accel kvm|tcg] [-q]\n\n"
			       "Store a new job with JOB's exact spec (same variants, matrix, repeats and\n"
			       "run-order seed) and carry it out; prints the new job's report.\n" :
			       "usage: kcanary resume JOB [--connect URI] [--hosts SPEC] [--accel kvm|tcg] [-q]\n\n"
			       "Carry on a job whose coordinator stopped: runs left 'running' become\n"
			       "'interrupted' (their samples are kept) and each gets a fresh repeat at\n"
			       "the end; finished runs are never redone. Their guests were destroyed by\n"
			       "libvirt when the coordinator's connection closed (autodestroy).\n");
			return 0;
		} else if (!strcmp(argv[i], "--connect") && i + 1 < argc) {
			f.uri = argv[++i];
		} else if (!strcmp(argv[i], "--hosts") && i + 1 < argc) {
			f.hosts = argv[++i];
		} else if (!strcmp(argv[i], "--accel") && i + 1 < argc) {
			f.accel = argv[++i];
		} else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) {
			f.quiet = true;
		} else if (!job && argv[i][0] != '-') {
			job = argv[i];
		} else {
			fprintf(stderr, "kcanary %s: unexpected '%s'\n", argv[0], argv[i]);
			return 2;
		}
	}
	if (!job) {
		fprintf(stderr, "kcanary %s: expected a JOB (id or name)\n", argv[0]);
		return 2;
	}
	ret = 1;
	if (!(db = cmd_open_store(ctx, rerun ? "kcanary rerun" : "kcanary resume")))
		goto out;
	if (db_job_resolve(db, &job_id, job, &err)) {
		fprintf(stderr, "kcanary %s: %s\n", argv[0], buf_str(&err));
		goto out;
	}
	bool is_compare = false;
	if (job_is_compare(db, job_id, &is_compare, &err)) {
		fprintf(stderr, "kcanary %s: %s\n", argv[0], buf_str(&err));
		goto out;
	}
	if (!is_compare) {
		fprintf(stderr, "kcanary %s: job '%s' is not a compare job (it was made by ingest,"
			" boot, build or the fleet): nothing to %s\n", argv[0], job, argv[0]);
		ret = 2;
		goto out;
	}
	if (rerun) {
		char *me = compare_owner_self();
		int rr = compare_rerun(db, job_id, NULL, me, &job_id, &err);
		free(me);
		if (rr) {
			fprintf(stderr, "kcanary rerun: job '%s': %s\n", job, buf_str(&err));
			goto out;
		}
		fprintf(stderr, "job %lld stored as a rerun of '%s'\n", (long long)job_id, job);
	} else {
		size_t n = 0;
		int rr = compare_resume(db, job_id, &n, &err);
		if (rr) {
			fprintf(stderr, "kcanary resume: %s\n", buf_str(&err));
			if (rr == -EBUSY || rr == -EINVAL)
				ret = 2;
			goto out;
		}
		fprintf(stderr, "job %lld: %zu interrupted run%s rescheduled\n", (long long)job_id, n,
			n == 1 ? "" : "s");
	}
	ret = execute_and_report(ctx, db, job_id, &f);
out:
	db_close(db);
	buf_release(&err);
	return ret;
}

int cmd_resume(struct cmd_ctx *ctx, int argc, char **argv)
{
	return resume_or_rerun(ctx, argc, argv, false);
}

int cmd_rerun(struct cmd_ctx *ctx, int argc, char **argv)
{
	return resume_or_rerun(ctx, argc, argv, true);
}
