/* cmd_bisect.c - kcanary bisect: find the commit where a metric changed,
 * over a kernel tree's history or a list of prebuilt kernels (real guests,
 * bisect_exec.h); `log JOB`, `replay LOG` and `simulate` (bisect_sim.h).
 * The verbs are dispatched from verbs[] at the end (cmd_select); without
 * one the options start a bisection (do_run). */
#define LOG_MODULE "bisect"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "judge/bisect.h"
#include "exec/bisect_exec.h"
#include "judge/bisect_sim.h"
#include "judge/metric_check.h"
#include "exec/job_check.h"
#include "store/db_bisect.h"
#include "store/db_runs.h"
#include "cli/cmd.h"
#include "error.h"
#include "log.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kcanary bisect (--repo DIR --good REV --bad REV [--first-parent] |\n"
		"                       --kernels OLD[,...] ... NEW) [--find-fix]\n"
		"                      [--workload W] [--set K=V]... [--sysctl K=V]... [--fs FS]\n"
		"                      [--config FRAG]... [--distcc HOSTS] [--metric M]\n"
		"                      [--higher-is-better]\n"
		"                      [--strategy prob|adaptive|fixed] [--repeats K]\n"
		"                      [--confidence C] [--max-runs N] [--endpoint-runs MIN,MAX]\n"
		"                      [--step-max-runs N] [--check-runs N] [--name NAME]\n"
		"                      [--watchdog S] [--vcpus N] [--memory MB]\n"
		"                      [--connect URI] [--hosts SPEC] [--accel kvm|tcg]\n"
		"                      [--console] [-q]\n"
		"       kcanary bisect log JOB\n"
		"       kcanary bisect replay LOG\n"
		"       kcanary bisect simulate [--commits N] [--trials N] [--seed S]\n"
		"                               [--history clean|flaky|mixed|all]\n"
		"                               [--strategy NAME|all] [--find-fix]\n"
		"                               [--skip-rate F] [--log FILE]\n"
		"\n"
		"Find the commit where a noisy metric changed, measuring as few runs as\n"
		"it can: endpoints first (stop if they do not differ), then binary\n"
		"search with repeats or probabilistic bisection over a posterior of the\n"
		"culprit's position, then a culprit check against its parent.\n"
		"\n"
		"The range: --repo with --good and --bad takes every commit between them\n"
		"(libgit2 revwalk, topological order). A range with merges is walked on\n"
		"the bad end's first-parent chain, a merge standing for its branch, as\n"
		"git bisect --first-parent does (the engine needs a linear history; a\n"
		"warning says so and how to bisect a culprit merge's branch);\n"
		"--first-parent asks for that always. --kernels takes\n"
		"prebuilt images in history order, old first, separated by commas or\n"
		"as the arguments after it (nothing is built). --distcc HOSTS builds\n"
		"the commits on a distcc farm (kcanary build --help).\n"
		"--find-fix: the old end is bad and the new end good; the culprit is the\n"
		"fix (with --repo: --bad names the older commit).\n"
		"Each run boots the candidate's kernel with the workload and knobs\n"
		"(default wb-handover, fs ext4) and reads --metric from the run: a summary\n"
		"metric (default worst_lag_s), a `command` workload's 'metric NAME VALUE'\n"
		"lines (largest value), or probe:NAME:KEY (final count, e.g.\n"
		"probe:cgroup_writeback_by_id:-2). Direction: from the metrics table\n"
		"(higher is worse unless it says otherwise, or --higher-is-better).\n"
		"A patch, build or boot failure, a paused or timed-out guest, or a run\n"
		"without the metric is a skip: never evidence either way (a timed-out,\n"
		"paused or metric-less run is tried once more first).\n"
		"Strategies: prob (default; probabilistic bisection, one run at a time;\n"
		"found means one commit holds --confidence of the posterior), adaptive\n"
		"(binary search, SPRT repeats), fixed (binary, --repeats K runs per\n"
		"commit and per endpoint, default K=3, no endpoint test; K=1 is git\n"
		"bisect run). A binary strategy's found means, as git bisect's, that the\n"
		"search converged on an adjacent good/bad pair; the posterior p printed\n"
		"with the culprit says how sure the runs make it.\n"
		"Defaults: --confidence 0.999, --max-runs 200, --endpoint-runs 5,16,\n"
		"--step-max-runs 8, --check-runs 5 (0: no culprit check; else at least\n"
		"2, the fewest with which its Mann-Whitney test at p <= 0.05 can pass).\n"
		"--max-runs caps the search: no search run starts once N runs with a\n"
		"value, endpoint runs included, were measured. The endpoint runs always\n"
		"complete (up to 2 x the --endpoint-runs MAX, or 2 x --repeats) and the\n"
		"culprit check's runs (up to 4 x --check-runs) come on top; skips are\n"
		"not counted. A budget spent below the confidence names a best guess\n"
		"only when it is more likely than not (p >= 0.5); else it lists the top\n"
		"candidates and says no commit is likely.\n"
		"--metric: a summary metric the store knows (its metrics table: the\n"
		"built-in ones and every name a run has reported), probe:NAME:KEY, or\n"
		"with --workload command any name its script prints. Workload, knobs\n"
		"(the agent's check) and metric are checked before anything is stored.\n"
		"--hosts all|NAME,NAME|KEY=VALUE runs on lab hosts (kcanary lab; as\n"
		"compare --hosts; default: the --connect host alone, one run at a time):\n"
		"the endpoint rounds and the culprit check's rounds, whose runs do not\n"
		"depend on each other, run in parallel, an old/new pair a host slot (a\n"
		"round smaller than the pool gets more pairs; the engine uses them in\n"
		"its next rounds); search steps one at a time. A run a host failed\n"
		"(infra) is run again on a live host, never a result. The log keeps the\n"
		"order the engine asked in, so replay is the same.\n"
		"Stored as a job of kind 'bisect' (one variant per tested candidate) with\n"
		"its event log: 'kcanary bisect log JOB' prints it, 'replay' replays it.\n"
		"Exit 0 when a culprit (or a range split only by skips) was found and\n"
		"passed its check (or no check was asked for); 3 when the bisection ran\n"
		"but names none (endpoints do not differ or differ the other way, an\n"
		"endpoint cannot be measured, budget spent), or the culprit failed its\n"
		"check, or the check asked for could not run (too many of its runs\n"
		"were skips); 1 on errors (bad range, store); 2 on usage errors.\n"
		"\n"
		"log JOB        print a stored bisection's event log (never creates a store).\n"
		"replay LOG     run a bisection's event log back through the engine without\n"
		"               measuring anything; exit 0 when it reaches the same result\n"
		"               and final verdicts; the table printed is the replay's own.\n"
		"simulate       benchmark the strategies on a synthetic history whose runs\n"
		"               are drawn from the seed's good/bad worst-lag distributions;\n"
		"               prints accuracy and mean guest runs per strategy (and\n"
		"               their split: endpoint + search runs);\n"
		"               'confident' is the share of trials whose named culprit\n"
		"               holds >= 0.999 of the posterior (for every strategy: a\n"
		"               binary search always converges, confident or not).\n"
		"  --commits N    candidates incl. both endpoints (default 1000)\n"
		"  --trials N     bisections per strategy and history (default 1000)\n"
		"  --seed S       RNG seed (default 1); same seed, same table\n"
		"  --history H    clean (bad stalls every run), flaky (7 of 9), mixed, or all\n"
		"                 (default all)\n"
		"  --strategy S   git (1 run/step), fixed3, fixed5, fixed10, adaptive, prob,\n"
		"                 prob-check, prob-no-early (without the endpoints' early\n"
		"                 stop), prob-laplace (without the good side's sharp\n"
		"                 share), or all (default)\n"
		"  --find-fix     the history goes bad -> good; look for the fix\n"
		"  --skip-rate F  chance that a commit does not build (default 0)\n"
		"  --log FILE     write the event log of every bisection to FILE (with\n"
		"                 --trials 1 it is one log that 'replay' takes)\n"
	);
}

/* Help for a verb is the whole command's usage. */
static bool help_asked(int argc, char **argv)
{
	if (!cmd_wants_help(argc, argv))
		return false;
	usage(stdout);
	return true;
}

static const char *const strategy_keys[] = {
	"git", "fixed3", "fixed5", "fixed10", "adaptive", "prob", "prob-check", "prob-no-early",
	"prob-laplace",
};

/* The culprit check's line, as run or replayed: done, or asked for but
 * abandoned for skips. Nothing when no check was asked for or reached. */
static void print_check(const struct bisect_result *r)
{
	if (r->check_done)
		printf("culprit check: parent %zu median %.4g (%u runs), culprit %zu median %.4g "
		       "(%u runs), shift %+.4g (Hodges-Lehmann), Mann-Whitney p = %.3g: %s\n",
		       r->check_parent, r->check_median_parent, r->check_n_parent, r->check_culprit,
		       r->check_median_culprit, r->check_n_culprit, r->check_shift, r->check_p,
		       r->check_passed ? "passed" : "FAILED");
	else if (r->check_abandoned)
		printf("culprit check: not run: %u of %u runs skipped (parent %zu, culprit %zu)\n",
		       r->check_skips, r->check_attempts, r->check_parent, r->check_culprit);
}

/* The '# candidate' lines of a stored log (names for the table). */
static void candidate_lines(struct buf *b, const char *text)
{
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");

		if (!strncmp(p, "# candidate ", 12))
			buf_printf(b, "%.*s\n", (int)len, p);
		p += len + (p[len] == '\n');
	}
}

static int do_replay(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct bisect_result r;
	struct buf relog = BUF_INIT;
	char *text = NULL;
	struct buf err = BUF_INIT;
	int rc;
	(void)ctx;

	if (help_asked(argc, argv))
		return 0;
	if (argc != 2) {
		fprintf(stderr, "kcanary bisect replay: expected one LOG argument\n");
		return 2;
	}
	rc = read_file(&text, NULL, argv[1], 64 << 20);
	if (rc) {
		fprintf(stderr, "kcanary bisect replay: cannot read '%s': %s\n", argv[1],
			strerror(-rc));
		return 1;
	}
	rc = bisect_replay(&r, text, &relog, &err);
	if (rc) {
		fprintf(stderr, "kcanary bisect replay: '%s': %s\n", argv[1], buf_str(&err));
		rc = 1;
		goto out;
	}
	printf("replayed %u runs and %u skips over %u commits without measuring: same result\n",
	       r.runs_total, r.skips, r.commits_tested);
	/* the table of the replay's own log, named by the log's candidates */
	struct buf table = BUF_INIT, src = BUF_INIT;

	candidate_lines(&src, text);
	buf_puts(&src, buf_str(&relog));
	if (!bisect_log_table(&table, buf_str(&src)))
		fputs(buf_str(&table), stdout);
	buf_release(&table);
	buf_release(&src);
	printf("%s: %s\n", bisect_outcome_name(r.outcome), r.message);
	for (size_t i = 0; i < r.ntop; i++) {
		if (r.top[i].first == r.top[i].last)
			printf("  candidate %zu: p = %.4f\n", r.top[i].first, r.top[i].prob);
		else
			printf("  candidates %zu..%zu (range): p = %.4f\n", r.top[i].first,
			       r.top[i].last, r.top[i].prob);
	}
	print_check(&r);
out:
	buf_release(&err);
	free(text);
	buf_release(&relog);
	return rc;
}

static void print_row(const char *name, const struct bisect_sim_stats *s)
{
	printf("%-30s %7.1f%% %9.1f%% %10.1f %9u %5.1f+%-5.1f", name,
	       100.0 * s->correct / s->trials, 100.0 * s->confident / s->trials,
	       s->runs_sum / s->trials, s->runs_max, s->endpoint_runs_sum / s->trials,
	       s->search_runs_sum / s->trials);
	if (s->checked)
		printf("   +%.1f runs, passed %.1f%% (passed on a wrong culprit %u, failed a right one %u)",
		       s->check_runs_sum / s->trials, 100.0 * s->check_passed / s->checked,
		       s->check_passed_wrong, s->check_failed_right);
	if (s->in_range)
		printf("   ranges holding the culprit %.1f%%", 100.0 * s->in_range / s->trials);
	if (s->stopped)
		printf("   stopped at endpoints %u", s->stopped);
	printf("\n");
}

/* A whole number 0..max in decimal digits only (strtoul alone takes " 5"
 * and "-1"). */
static int parse_unsigned(const char *s, unsigned *out, unsigned max)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')	/* strtoul takes " 5" and "-1" */
		return -EINVAL;
	v = strtoul(s, &end, 10);
	if (*end || v > max)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

/* The flags of `kcanary bisect simulate`, as parsed. */
struct sim_args {
	struct bisect_sim_opts so;
	struct bisect_sim_strategy strat[16];
	size_t nstrat;
	enum bisect_sim_history hist[3];
	size_t nhist;
	const char *history, *only, *log_path;
};

static const struct option sim_lopts[] = {
	{ "commits", required_argument, NULL, 'n' },
	{ "trials", required_argument, NULL, 't' },
	{ "seed", required_argument, NULL, 's' },
	{ "history", required_argument, NULL, 'H' },
	{ "strategy", required_argument, NULL, 'S' },
	{ "find-fix", no_argument, NULL, 'f' },
	{ "skip-rate", required_argument, NULL, 'k' },
	{ "log", required_argument, NULL, 'l' },
	{ NULL, 0, NULL, 0 },
};

/* One simulate option: 0, or -1 for a bad value (the caller names it). */
static int sim_opt(struct sim_args *a, int c, const char *arg)
{
	struct bisect_sim_opts *so = &a->so;
	unsigned n;
	char *end;

	switch (c) {
	case 'n':
		if (parse_unsigned(arg, &n, 10000000) || n < 3)
			return -1;
		so->commits = n;
		return 0;
	case 't':
		return parse_unsigned(arg, &so->trials, 100000000) || !so->trials ? -1 : 0;
	case 's':
		if (*arg < '0' || *arg > '9')
			return -1;
		errno = 0;
		so->seed = strtoull(arg, &end, 0);
		return *end || errno ? -1 : 0;
	case 'H': a->history = arg; return 0;
	case 'S': a->only = arg; return 0;
	case 'f': so->find_fix = true; return 0;
	case 'l': a->log_path = arg; return 0;
	default:        /* 'k' */
		so->skip_rate = strtod(arg, &end);
		return *end || so->skip_rate < 0 || so->skip_rate >= 1 ? -1 : 0;
	}
}

/* The histories and strategies asked for: 0, or 2 printed. */
static int sim_select(struct sim_args *a)
{
	a->nhist = 3;
	a->hist[0] = SIM_CLEAN;
	a->hist[1] = SIM_FLAKY;
	a->hist[2] = SIM_MIXED;
	if (strcmp(a->history, "all")) {
		a->nhist = 1;
		if (bisect_sim_history_parse(&a->hist[0], a->history)) {
			fprintf(stderr, "kcanary bisect simulate: unknown history '%s': expected "
				"clean, flaky, mixed or all\n", a->history);
			return 2;
		}
	}
	if (strcmp(a->only, "all")) {
		size_t i;

		for (i = 0; i < a->nstrat && strcmp(strategy_keys[i], a->only); i++)
			;
		if (i == a->nstrat) {
			fprintf(stderr, "kcanary bisect simulate: unknown strategy '%s': expected "
				"git, fixed3, fixed5, fixed10, adaptive, prob, prob-check, prob-no-early, "
				"prob-laplace or all\n",
				a->only);
			return 2;
		}
		a->strat[0] = a->strat[i];
		a->nstrat = 1;
	}
	return 0;
}

static int parse_sim_args(struct sim_args *a, int argc, char **argv)
{
	int c;

	*a = (struct sim_args){ .so = { .commits = 1000, .trials = 1000, .seed = 1 },
				.history = "all", .only = "all" };
	a->nstrat = bisect_sim_strategies(a->strat, 16);
	optind = 1;
	while ((c = cmd_getopt(argc, argv, "kcanary bisect simulate", "", sim_lopts)) != -1) {
		if (c == '?' || c == ':') {
			usage(stderr);
			return 2;
		}
		if (sim_opt(a, c, optarg)) {
			const struct option *o = sim_lopts;

			while (o->name && o->val != c)
				o++;
			fprintf(stderr, "kcanary bisect simulate: bad value '%s' for --%s\n", optarg,
				o->name ? o->name : "?");
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "kcanary bisect simulate: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	return sim_select(a);
}

/* The goal when print_goal_early() has no target for the history (no
 * fixed-repeat strategy simulated, or a flaky or mixed history without
 * fixed 10): probabilistic >= 95% with at most half the runs of
 * the cheapest fixed-repeat strategy as accurate. A reference below 95% is
 * no reference: with probabilistic below 95% the reference is the
 * cheapest fixed-repeat strategy reaching 95%. Without a reference the
 * ratio is not measured and the goal is not met. */
static void print_goal(const struct sim_args *a, const struct bisect_sim_stats *st)
{
	for (size_t i = 0; i < a->nstrat; i++) {
		double acc, best = 0, mine;
		const char *who = NULL;
		size_t nfixed = 0;

		if (strcmp(a->strat[i].name, "probabilistic"))
			continue;
		acc = (double)st[i].correct / st[i].trials;
		for (size_t j = 0; j < a->nstrat; j++) {
			double acc_j = (double)st[j].correct / st[j].trials;
			double runs = st[j].runs_sum / st[j].trials;

			if (a->strat[j].opts.strategy != BISECT_BINARY || !a->strat[j].opts.fixed_repeats)
				continue;
			nfixed++;
			if (acc_j < acc || acc_j < 0.95)
				continue;
			if (!who || runs < best) {
				best = runs;
				who = a->strat[j].name;
			}
		}
		mine = st[i].runs_sum / st[i].trials;
		if (!nfixed)
			printf("goal: not judged: no fixed-repeat strategy simulated "
			       "(--strategy all)\n");
		else if (who)
			printf("goal: probabilistic %.1f%% in %.1f runs; cheapest fixed-repeat "
			       "%s: %s, %.1f runs; ratio %.2f: %s\n", 100 * acc, mine,
			       acc >= 0.95 ? "as accurate" : "reaching 95%", who, best, mine / best,
			       acc >= 0.95 && mine <= best / 2 ? "met" : "NOT met");
		else if (acc >= 0.95)
			/* no reference to halve: the ratio cannot be measured, so
			 * the goal is not shown met (more --repeats would give one) */
			printf("goal: probabilistic %.1f%% in %.1f runs; no fixed-repeat strategy "
			       "here is as accurate, no ratio to judge: NOT met\n", 100 * acc, mine);
		else
			printf("goal: probabilistic %.1f%% in %.1f runs; no fixed-repeat strategy "
			       "here reaches 95%% (nor does probabilistic): NOT met\n", 100 * acc, mine);
	}
}

static const struct bisect_sim_stats *sim_row(const struct sim_args *a,
					      const struct bisect_sim_stats *st, const char *name)
{
	for (size_t i = 0; i < a->nstrat; i++)
		if (!strcmp(a->strat[i].name, name))
			return &st[i];
	return NULL;
}

static double sim_acc(const struct bisect_sim_stats *s)
{
	return (double)s->correct / s->trials;
}

static double sim_runs(const struct bisect_sim_stats *s)
{
	return s->runs_sum / s->trials;
}

/* The simulator's goal lines (set in issue 19; each says what it measures,
 * not the issue): before and after (the probabilistic row without the
 * endpoints' early stop, without the good side's sharp share, and with
 * both, side by side in this run), then the history's goal with its
 * target, the ratio from this run and met / not met: clean, runs <= 0.5x
 * the cheapest fixed-repeat strategy as accurate (within one trial); flaky and
 * mixed, accuracy >= 99% with <= 0.5x fixed 10's runs. Returns whether it
 * printed the history's target line: each history has one rule (issue 35:
 * print_goal()'s older one was printed as well, and on the mixed history
 * the two disagreed); false leaves it to print_goal(). */
static bool print_goal_early(const struct sim_args *a, const struct bisect_sim_stats *st)
{
	const struct bisect_sim_stats *now = sim_row(a, st, "probabilistic");
	const struct bisect_sim_stats *before = sim_row(a, st, BISECT_SIM_BEFORE_EARLY);
	const struct bisect_sim_stats *laplace = sim_row(a, st, BISECT_SIM_BEFORE_SHARP);
	const struct bisect_sim_stats *f10 = sim_row(a, st, "fixed 10 repeats");
	const char *h = bisect_sim_history_name(a->so.history);
	unsigned long long seed = (unsigned long long)a->so.seed;

	if (!now)
		return false;
	if (before)
		printf("endpoints' early stop: before %.1f%% in %.1f runs, after "
		       "%.1f%% in %.1f runs (%.2fx the runs)\n", 100 * sim_acc(before),
		       sim_runs(before), 100 * sim_acc(now), sim_runs(now),
		       now->runs_sum / before->runs_sum);
	if (laplace)
		printf("good side's sharp share: before %.1f%% in %.1f runs (%.1f + "
		       "%.1f search), after %.1f%% in %.1f runs (%.1f + %.1f search; %.2fx the "
		       "runs)\n", 100 * sim_acc(laplace), sim_runs(laplace),
		       laplace->endpoint_runs_sum / laplace->trials,
		       laplace->search_runs_sum / laplace->trials, 100 * sim_acc(now),
		       sim_runs(now), now->endpoint_runs_sum / now->trials,
		       now->search_runs_sum / now->trials, now->runs_sum / laplace->runs_sum);
	if (a->so.history == SIM_CLEAN) {
		const struct bisect_sim_stats *ref = NULL;
		const char *who = NULL;

		for (size_t j = 0; j < a->nstrat; j++) {
			const struct bisect_sim_stats *sj = &st[j];

			/* as accurate: at most one trial fewer right (fixed 3 at
			 * 999 of 1000 is no reason to judge against fixed 5);
			 * below 95% no reference (print_goal() says so) */
			if (a->strat[j].opts.strategy != BISECT_BINARY ||
			    !a->strat[j].opts.fixed_repeats || sj->correct + 1 < now->correct ||
			    sim_acc(sj) < 0.95)
				continue;
			if (!ref || sim_runs(sj) < sim_runs(ref)) {
				ref = sj;
				who = a->strat[j].name;
			}
		}
		if (ref)   /* else print_goal() says why there is no reference */
			printf("target: probabilistic bisection cost, clean history, seed %llu: "
			       "runs <= 0.5x the cheapest fixed-repeat strategy as accurate "
			       "(%s, %.1f%% in %.1f runs): %.1f%% in %.1f runs, %.2fx: %s\n", seed,
			       who, 100 * sim_acc(ref), sim_runs(ref), 100 * sim_acc(now),
			       sim_runs(now), now->runs_sum / ref->runs_sum,
			       now->runs_sum <= 0.5 * ref->runs_sum ? "met" : "NOT met");
		return ref != NULL;
	} else if (f10) {
		double acc = sim_acc(now), ratio = now->runs_sum / f10->runs_sum;

		printf("target: probabilistic bisection accuracy and cost, %s history, seed %llu: "
		       "accuracy >= 99%% with <= 0.5x fixed 10's runs (%.1f%% in %.1f runs): "
		       "%.1f%%, %.2fx: %s\n", h, seed, 100 * sim_acc(f10), sim_runs(f10),
		       100 * acc, ratio, acc >= 0.99 && ratio <= 0.5 ? "met" : "NOT met");
		return true;
	}
	return false;
}

/* Every strategy on history h: the table and the goal line. 0, or the
 * simulator's negative errno (printed). */
static int simulate_history(struct sim_args *a, size_t h)
{
	struct bisect_sim_stats st[16];
	clock_t t0 = clock();
	int r;

	a->so.history = a->hist[h];
	printf("history: %s%s, %zu commits, %u trials per strategy, seed %llu\n",
	       bisect_sim_history_name(a->so.history), a->so.find_fix ? " (find-fix)" : "",
	       a->so.commits, a->so.trials, (unsigned long long)a->so.seed);
	printf("%-30s %8s %10s %10s %9s %11s\n", "strategy", "accuracy", "confident",
	       "mean runs", "max runs", "ends+search");
	for (size_t i = 0; i < a->nstrat; i++) {
		a->strat[i].opts.find_fix = a->so.find_fix;
		if ((r = bisect_sim_run(&st[i], &a->so, &a->strat[i].opts))) {
			fprintf(stderr, "kcanary bisect simulate: %s\n", strerror(-r));
			return r;
		}
		print_row(a->strat[i].name, &st[i]);
	}
	printf("(confident: the named culprit holds >= %.2f of the posterior; binary "
	       "strategies always converge, confident or not)\n",
	       a->nstrat ? a->strat[0].opts.confidence : 0.95);
	if (!print_goal_early(a, st))
		print_goal(a, st);
	printf("(%.1f s CPU)\n\n", (double)(clock() - t0) / CLOCKS_PER_SEC);
	return 0;
}

static int do_simulate(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct sim_args a;
	struct buf log = BUF_INIT;
	FILE *logf = NULL;
	int rc;
	(void)ctx;

	if (help_asked(argc, argv))
		return 0;
	if ((rc = parse_sim_args(&a, argc, argv)))
		return rc;
	/* open the log first: a path that cannot be written fails before the
	 * simulation, not after it */
	if (a.log_path) {
		if (!(logf = fopen(a.log_path, "w"))) {
			fprintf(stderr, "kcanary bisect simulate: cannot write '%s': %s\n", a.log_path,
				strerror(errno));
			return 1;
		}
		a.so.log = &log;
	}
	for (size_t h = 0; h < a.nhist && !rc; h++)
		rc = simulate_history(&a, h);
	if (logf && rc) {
		fclose(logf);
	} else if (logf) {
		int bad = fputs(buf_str(&log), logf) == EOF;

		bad |= fclose(logf) != 0;
		if (bad) {
			fprintf(stderr, "kcanary bisect simulate: cannot write '%s': %s\n", a.log_path,
				strerror(errno));
			rc = 1;
		}
	}
	buf_release(&log);
	return rc ? 1 : 0;
}

static int do_log(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct buf err = BUF_INIT;
	struct db *db;
	int64_t id;
	char *log = NULL;
	int rc = 1;

	if (help_asked(argc, argv))
		return 0;
	if (argc != 2) {
		fprintf(stderr, "kcanary bisect log: expected one JOB argument\n");
		return 2;
	}
	/* reading a log must not create an empty store */
	if (access(ctx->db_path, F_OK)) {
		fprintf(stderr, "kcanary bisect log: no store at '%s' (no job has run with "
			"this home): no job '%s'\n", ctx->db_path, argv[1]);
		return 1;
	}
	if (!(db = cmd_open_store(ctx, "kcanary bisect")))
		return 1;
	if (db_job_resolve(db, &id, argv[1], &err) || db_bisect_log_get(db, id, &log, &err))
		fprintf(stderr, "kcanary bisect log: %s\n", err_text(&err));
	else {
		fputs(log, stdout);
		rc = 0;
	}
	free(log);
	buf_release(&err);
	db_close(db);
	return rc;
}

static void fmt_date(char *out, size_t size, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(out, size, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

static void print_cand(const struct bisect_cands *cs, size_t i, const char *indent)
{
	const struct bisect_cand *c = &cs->c[i];
	char date[64];

	if (!*c->sha) {
		printf("%s%s (candidate %zu)\n", indent, c->kernel, i);
		return;
	}
	fmt_date(date, sizeof(date), c->date_s);
	printf("%scommit %s (candidate %zu)\n%s  subject: %s\n%s  author:  %s\n%s  date:    %s\n",
	       indent, c->sha, i, indent, c->subject, indent, c->author, indent, date);
}

static void print_result(const struct bisect_cands *cs, const struct bisect_result *r,
			 const enum bisect_verdict *verdicts, const struct bisect_totals *t,
			 const char *metric, int64_t job_id)
{
	/* an undecided best guess is named only when more likely than not;
	 * else the posterior's top candidates below are all there is */
	const char *what = r->outcome == BISECT_FOUND ? "culprit" :
			   r->outcome == BISECT_RANGE ? "culprit range" :
			   r->outcome == BISECT_UNDECIDED && r->culprit_prob >= BISECT_LIKELY ?
			   "best guess (undecided)" : NULL;

	printf("bisect job %lld: %s: %s\n", (long long)job_id, bisect_outcome_name(r->outcome),
	       r->message);
	if (what) {
		printf("%s (p = %.4f)%s:\n", what, r->culprit_prob,
		       r->check_done && !r->check_passed ? " -- FAILED the culprit check, not a result" : "");
		for (size_t i = r->culprit_first; i <= r->culprit_last && i < cs->n; i++)
			print_cand(cs, i, "  ");
	}
	printf("tested candidates (%s):\n", metric);
	printf("  %-4s %-52s %4s %5s  %-7s %s\n", "idx", "candidate", "runs", "skips", "verdict",
	       "values");
	for (size_t i = 0; i < cs->n; i++) {
		const struct bisect_cand *c = &cs->c[i];

		if (!c->nvalues && !c->nskips)
			continue;
		/* an endpoint that could not be measured stops the engine before
		 * it gives verdicts: it is a skip all the same; endpoints that do
		 * not differ are neither good nor bad: old and new (as
		 * bisect_log_table() prints them) */
		const char *vd = bisect_verdict_name(verdicts[i]);

		if (verdicts[i] == BISECT_UNTESTED)
			vd = c->nskips ? "skip" : i == 0 ? "old" : i + 1 == cs->n ? "new" : vd;
		printf("  %-4zu %-52.52s %4u %5u  %-7s", i, c->name, c->nvalues, c->nskips, vd);
		for (unsigned k = 0; k < c->nvalues; k++)
			printf(" %.4g", c->values[k]);
		if (c->why)
			printf(" (%s)", c->why);
		printf("\n");
	}
	if (r->ntop) {
		printf("posterior, top candidates%s:\n", r->outcome == BISECT_UNDECIDED &&
		       r->culprit_prob < BISECT_LIKELY ? " (no commit is likely)" : "");
		for (size_t i = 0; i < r->ntop; i++) {
			const struct bisect_candidate *k = &r->top[i];
			const struct bisect_cand *c = &cs->c[k->first];

			if (k->first == k->last)
				printf("  p = %.4f  %zu %s\n", k->prob, k->first, c->name);
			else
				printf("  p = %.4f  %zu..%zu (range, split only by skips) %s ..\n",
				       k->prob, k->first, k->last, c->name);
		}
	}
	print_check(r);
	printf("totals: %u builds (%u failed), %u boots, %u runs with a value, %u skips, "
	       "wall %.1f s\n", t->builds, t->build_failures, t->boots, t->runs, t->skips,
	       t->wall_s);
}

/* The flags of a bisection over real guests (`kcanary bisect --repo ...`
 * or `--kernels ...`), as parsed. */
struct run_args {
	struct job_spec *spec;          /* tree, workload, knobs, fs, config, guest size */
	struct bisect_opts bo;
	struct guest_opts o;
	const char *repo, *good, *bad, *metric, *strategy, *name;
	char **kernels;                 /* borrowed from kcopies or argv */
	size_t nkernels;
	char **kcopies;                 /* --kernels values, split at commas in place */
	size_t nkcopies;
	bool first_parent, hib, fs_given, repeats_given;
};

static void run_args_release(struct run_args *a)
{
	job_spec_free(a->spec);
	free(a->kernels);
	for (size_t i = 0; i < a->nkcopies; i++)
		free(a->kcopies[i]);
	free(a->kcopies);
}

enum { O_REPO = 256, O_GOOD, O_BAD, O_FP, O_KERNELS, O_FIX, O_WORKLOAD, O_SET, O_SYSCTL,
       O_FS, O_CONFIG, O_METRIC, O_HIB, O_STRATEGY, O_REPEATS, O_CONF, O_MAXRUNS,
       O_EPRUNS, O_STEPMAX, O_CHECK, O_NAME, O_WATCHDOG, O_VCPUS, O_MEM, O_CONNECT,
       O_ACCEL, O_CONSOLE, O_DISTCC, O_HOSTS };

static const struct option run_lopts[] = {
	{ "repo", required_argument, NULL, O_REPO },
	{ "good", required_argument, NULL, O_GOOD },
	{ "bad", required_argument, NULL, O_BAD },
	{ "first-parent", no_argument, NULL, O_FP },
	{ "kernels", required_argument, NULL, O_KERNELS },
	{ "find-fix", no_argument, NULL, O_FIX },
	{ "workload", required_argument, NULL, O_WORKLOAD },
	{ "set", required_argument, NULL, O_SET },
	{ "sysctl", required_argument, NULL, O_SYSCTL },
	{ "fs", required_argument, NULL, O_FS },
	{ "config", required_argument, NULL, O_CONFIG },
	{ "distcc", required_argument, NULL, O_DISTCC },
	{ "metric", required_argument, NULL, O_METRIC },
	{ "higher-is-better", no_argument, NULL, O_HIB },
	{ "strategy", required_argument, NULL, O_STRATEGY },
	{ "repeats", required_argument, NULL, O_REPEATS },
	{ "confidence", required_argument, NULL, O_CONF },
	{ "max-runs", required_argument, NULL, O_MAXRUNS },
	{ "endpoint-runs", required_argument, NULL, O_EPRUNS },
	{ "step-max-runs", required_argument, NULL, O_STEPMAX },
	{ "check-runs", required_argument, NULL, O_CHECK },
	{ "name", required_argument, NULL, O_NAME },
	{ "watchdog", required_argument, NULL, O_WATCHDOG },
	{ "vcpus", required_argument, NULL, O_VCPUS },
	{ "memory", required_argument, NULL, O_MEM },
	{ "connect", required_argument, NULL, O_CONNECT },
	{ "hosts", required_argument, NULL, O_HOSTS },
	{ "accel", required_argument, NULL, O_ACCEL },
	{ "console", no_argument, NULL, O_CONSOLE },
	{ "quiet", no_argument, NULL, 'q' },
	{ NULL, 0, NULL, 0 },
};

/* What one option did: taken, a bad value for it (the caller names it),
 * or an exit status already printed. */
enum { OPT_OK = 0, OPT_BAD_VALUE = -1 };

/* --kernels a,b --kernels c: every image, in order. */
static void add_kernels(struct run_args *a, const char *arg)
{
	char *copy = xstrdup(arg);

	a->kcopies = xrealloc(a->kcopies, (a->nkcopies + 1) * sizeof(*a->kcopies));
	a->kcopies[a->nkcopies++] = copy;
	for (char *save = NULL, *t = strtok_r(copy, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		a->kernels = xrealloc(a->kernels, (a->nkernels + 1) * sizeof(*a->kernels));
		a->kernels[a->nkernels++] = t;
	}
}

/* The options that go into the job spec (job_spec_set checks them as a
 * job file's). err says what is wrong with a refused one (-EINVAL). */
static int job_opt(struct run_args *a, int c, const char *arg, struct buf *err)
{
	const char *eq;
	char *k;
	int r;

	switch (c) {
	case O_WORKLOAD: return job_spec_set(a->spec, "workload", "type", arg, err);
	case O_CONFIG: return job_spec_set(a->spec, "job", "config", arg, err);
	case O_DISTCC: return job_spec_set(a->spec, "job", "distcc", arg, err);
	case O_WATCHDOG: return job_spec_set(a->spec, "job", "watchdog_s", arg, err);
	case O_VCPUS: return job_spec_set(a->spec, "job", "vcpus", arg, err);
	case O_MEM: return job_spec_set(a->spec, "job", "memory_mb", arg, err);
	case O_FS:
		/* a bisection measures one setting: no matrix of filesystems */
		if (strpbrk(arg, ", \t"))
			return err_setf(err, -EINVAL, "--fs takes one filesystem, not '%s' (a "
					"bisection measures one setting)", arg);
		a->fs_given = true;
		return job_spec_set(a->spec, "matrix", "fs", arg, err);
	default:        /* O_SET, O_SYSCTL */
		if (!(eq = strchr(arg, '=')) || eq == arg)
			return err_setf(err, -EINVAL, "'%s': expected KEY=VALUE", arg);
		k = xstrndup(arg, (size_t)(eq - arg));
		r = job_spec_set(a->spec, c == O_SET ? "workload" : "sysctl", k, eq + 1, err);
		free(k);
		return r;
	}
}

/* --endpoint-runs MIN,MAX: 2 <= MIN <= MAX <= 1000. */
static int parse_endpoint_runs(struct bisect_opts *bo, const char *arg)
{
	const char *comma = strchr(arg, ',');
	unsigned lo, hi;
	char *first;
	int bad;

	if (!comma)
		return OPT_BAD_VALUE;
	first = xstrndup(arg, (size_t)(comma - arg));
	bad = parse_unsigned(first, &lo, 1000) || parse_unsigned(comma + 1, &hi, 1000);
	free(first);
	if (bad || lo < 2 || hi < lo)
		return OPT_BAD_VALUE;
	bo->endpoint_min_runs = lo;
	bo->endpoint_max_runs = hi;
	return OPT_OK;
}

/* The engine's options (bisect.h). OPT_OK, OPT_BAD_VALUE, or 2 printed. */
static int engine_opt(struct run_args *a, int c, const char *arg)
{
	struct bisect_opts *bo = &a->bo;
	char *end;

	switch (c) {
	case O_REPEATS:
		a->repeats_given = true;
		return parse_unsigned(arg, &bo->fixed_repeats, 1000) || !bo->fixed_repeats ?
		       OPT_BAD_VALUE : OPT_OK;
	case O_CONF:
		bo->confidence = strtod(arg, &end);
		return *end || !(bo->confidence > 0.5 && bo->confidence < 1) ? OPT_BAD_VALUE : OPT_OK;
	case O_MAXRUNS:
		return parse_unsigned(arg, &bo->max_runs, 100000) || !bo->max_runs ?
		       OPT_BAD_VALUE : OPT_OK;
	case O_EPRUNS:
		return parse_endpoint_runs(bo, arg);
	case O_STEPMAX:
		return parse_unsigned(arg, &bo->step_max_runs, 1000) || !bo->step_max_runs ?
		       OPT_BAD_VALUE : OPT_OK;
	default:        /* O_CHECK */
		if (parse_unsigned(arg, &bo->check_runs, 1000))
			return OPT_BAD_VALUE;
		if (bo->check_runs && bo->check_runs < bisect_check_runs_min()) {
			fprintf(stderr, "kcanary bisect: --check-runs %u: the culprit check could "
				"never pass (its Mann-Whitney test at p <= 0.05, grown to 2 x N "
				"runs a side, needs --check-runs %u at least; 0 turns it off)\n",
				bo->check_runs, bisect_check_runs_min());
			return 2;
		}
		return OPT_OK;
	}
}

/* One option c with its argument arg: OPT_OK, OPT_BAD_VALUE, or an exit
 * status (2) already printed. */
static int run_opt(struct run_args *a, int c, const char *arg)
{
	struct buf err = BUF_INIT;
	int r = OPT_OK;

	switch (c) {
	case O_REPO: a->repo = arg; break;
	case O_GOOD: a->good = arg; break;
	case O_BAD: a->bad = arg; break;
	case O_FP: a->first_parent = true; break;
	case O_KERNELS: add_kernels(a, arg); break;
	case O_FIX: a->bo.find_fix = true; break;
	case O_METRIC: a->metric = arg; break;
	case O_HIB: a->hib = true; break;
	case O_STRATEGY: a->strategy = arg; break;
	case O_NAME: a->name = arg; break;
	case O_CONNECT: a->o.uri = arg; break;
	case O_HOSTS: a->o.hosts = arg; break;
	case O_CONSOLE: a->o.console = true; break;
	case 'q': a->o.quiet = true; break;
	case O_ACCEL:
		if (strcmp(arg, "kvm") && strcmp(arg, "tcg"))
			return OPT_BAD_VALUE;
		a->o.accel = arg;
		break;
	case O_WORKLOAD: case O_SET: case O_SYSCTL: case O_FS: case O_CONFIG: case O_DISTCC:
	case O_WATCHDOG: case O_VCPUS: case O_MEM:
		if (job_opt(a, c, arg, &err)) {
			fprintf(stderr, "kcanary bisect: %s\n", buf_str(&err));
			r = 2;
		}
		break;
	case O_REPEATS: case O_CONF: case O_MAXRUNS: case O_EPRUNS: case O_STEPMAX:
	case O_CHECK:
		r = engine_opt(a, c, arg);
		break;
	default:
		usage(stderr);
		r = 2;
	}
	buf_release(&err);
	return r;
}

static const char *run_opt_name(int c)
{
	for (const struct option *o = run_lopts; o->name; o++)
		if (o->val == c)
			return o->name;
	return "?";
}

/* The strategy and how its options combine: 0, or 2 printed. */
static int pick_strategy(struct run_args *a)
{
	const char *s = a->strategy;

	if (!strcmp(s, "prob")) {
		a->bo.strategy = BISECT_PROBABILISTIC;
	} else if (!strcmp(s, "adaptive")) {
		a->bo.strategy = BISECT_BINARY;
	} else if (!strcmp(s, "fixed")) {
		a->bo.strategy = BISECT_BINARY;
		if (!a->repeats_given)
			a->bo.fixed_repeats = 3;
	} else {
		fprintf(stderr, "kcanary bisect: unknown strategy '%s': expected prob, adaptive or "
			"fixed\n", s);
		return 2;
	}
	if (strcmp(s, "fixed"))
		a->bo.fixed_repeats = 0;
	if (a->repeats_given && strcmp(s, "fixed")) {
		fprintf(stderr, "kcanary bisect: --repeats goes with --strategy fixed\n");
		return 2;
	}
	return 0;
}

/* Parse argv into a (a->spec and a->bo made here): 0, or the exit status
 * (2, 1) with the message printed. */
static int parse_run_args(struct run_args *a, int argc, char **argv)
{
	struct buf err = BUF_INIT;
	int c, r;

	a->spec = job_spec_new();
	a->metric = "worst_lag_s";
	a->strategy = "prob";
	bisect_opts_init(&a->bo);
	optind = 1;
	while ((c = cmd_getopt(argc, argv, "kcanary bisect", "q", run_lopts)) != -1) {
		if ((r = run_opt(a, c, optarg)) == OPT_BAD_VALUE) {
			fprintf(stderr, "kcanary bisect: bad value '%s' for --%s\n", optarg,
				run_opt_name(c));
			return 2;
		}
		if (r)
			return r;
	}
	/* --kernels A B C: the images after the first are arguments (getopt
	 * keeps their order); as git bisect start takes its revisions */
	if (optind != argc && !a->kernels) {
		fprintf(stderr, "kcanary bisect: unexpected argument '%s' (kernel images go after "
			"--kernels)\n", argv[optind]);
		return 2;
	}
	for (; optind < argc; optind++) {
		a->kernels = xrealloc(a->kernels, (a->nkernels + 1) * sizeof(*a->kernels));
		a->kernels[a->nkernels++] = argv[optind];
	}
	if ((r = pick_strategy(a)))
		return r;
	if (!!a->repo + !!a->nkernels != 1 || (a->repo && (!a->good || !a->bad)) ||
	    (a->nkernels && (a->good || a->bad))) {
		fprintf(stderr, "kcanary bisect: give either --repo DIR --good REV --bad REV, or "
			"--kernels OLD ... NEW\n");
		return 2;
	}
	if (!strncmp(a->metric, "probe:", 6) && !strchr(a->metric + 6, ':')) {
		fprintf(stderr, "kcanary bisect: bad metric '%s': expected probe:NAME:KEY\n",
			a->metric);
		return 2;
	}
	if (!a->fs_given && job_spec_set(a->spec, "matrix", "fs", "ext4", &err)) {
		fprintf(stderr, "kcanary bisect: %s\n", buf_str(&err));
		buf_release(&err);
		return 1;
	}
	return 0;
}

/* The old end: good for a regression, bad for a fix; the new end the other. */
static const char *old_end(const struct run_args *a)
{
	return a->bo.find_fix ? a->bad : a->good;
}

static const char *new_end(const struct run_args *a)
{
	return a->bo.find_fix ? a->good : a->bad;
}

/* The candidates: the tree's range, or the images. -EINVAL and the like
 * with err (an exit-1 error). */
static int load_candidates(struct run_args *a, struct bisect_cands *cs, struct buf *err)
{
	int r;

	if (!a->repo)
		return bisect_cands_from_kernels(cs, a->kernels, a->nkernels, err);
	if ((r = job_spec_set(a->spec, "job", "tree", a->repo, err)))
		return r;
	r = bisect_cands_from_repo(cs, a->repo, old_end(a), new_end(a), a->first_parent, err);
	if (r && a->bo.find_fix && strstr(err_text(err), "not an ancestor"))
		buf_puts(err, " (with --find-fix, --bad names the older end)");
	return r;
}

/* What kcanary compare checks before anything is stored or built: the
 * spec (job_spec_check, on a shallow copy given the range's ends as its
 * variants; it only reads), one setting, and the workload and its knobs
 * (the agent's check, kept in *check for the job: its runs' length).
 * -EINVAL with err (a usage error). */
static int check_before_store(const struct run_args *a, struct job_check *check,
			      struct buf *err)
{
	struct job_spec chk = *a->spec;

	if (a->repo) {
		chk.tree = (char *)a->repo;
		chk.base = (char *)old_end(a);
	} else {
		chk.kernels = a->kernels;
		chk.nkernels = a->nkernels;
	}
	if (job_spec_check(&chk, err) || job_check_cells(check, a->spec, NULL, err))
		return -EINVAL;
	if (job_ncells(a->spec) != 1)
		return err_setf(err, -EINVAL, "a bisection measures one setting: give single values "
				"to --set and --sysctl (no lists)");
	return 0;
}

/* The metric's direction: the store's metrics table, or --higher-is-better.
 * -EINVAL (usage) or -EIO with err. */
static int metric_direction(struct run_args *a, struct db *db, struct buf *err)
{
	int r;

	if ((r = metric_check(db, a->metric, a->spec->workload, err)))
		return r;
	if ((r = db_metric_higher_is_worse(db, a->metric, &a->bo.higher_is_worse, err)))
		return r;
	if (a->hib)
		a->bo.higher_is_worse = false;
	return 0;
}

/* Run the bisection (bisect_exec.h) and print its result; the exit
 * status: 0 a culprit that passed its check, 3 none named (or it failed
 * or could not run its check), 1 an error (printed). */
static int run_bisection(struct run_args *a, struct db *db, struct bisect_cands *cs,
			 const struct job_check *chk)
{
	enum bisect_verdict *verdicts = xcalloc(cs->n, sizeof(*verdicts));
	char *jname = a->name ? xstrdup(a->name) :
		      a->repo ? xasprintf("bisect %s..%s", old_end(a), new_end(a)) :
		      xasprintf("bisect %zu kernels", cs->n);
	struct bisect_exec_opts xo = { .spec = a->spec, .name = jname, .metric = a->metric,
				       .engine = &a->bo, .guest = &a->o, .check = chk };
	struct bisect_exec_out xr;
	struct buf err = BUF_INIT;
	int rc;

	if (!a->o.quiet)
		fprintf(stderr, "bisecting %zu candidates (%s, metric %s, %s is worse%s)\n", cs->n,
			a->strategy, a->metric, a->bo.higher_is_worse ? "higher" : "lower",
			a->bo.find_fix ? ", looking for the fix" : "");
	if (bisect_execute(db, cs, &xo, &xr, verdicts, &err)) {
		fprintf(stderr, "kcanary bisect: %s\n", buf_str(&err));
		rc = 1;
		goto out;
	}
	print_result(cs, &xr.res, verdicts, &xr.totals, a->metric, xr.job_id);
	rc = xr.res.outcome == BISECT_FOUND || xr.res.outcome == BISECT_RANGE ?
	     ((xr.res.check_done && !xr.res.check_passed) || xr.res.check_abandoned ? 3 : 0) : 3;
out:
	free(jname);
	free(verdicts);
	buf_release(&err);
	return rc;
}

/* `kcanary bisect --repo ... | --kernels ...`: the flags, the checks
 * kcanary compare makes, then the bisection. */
static int do_run(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct run_args a = { 0 };
	struct bisect_cands cs = { 0 };
	struct job_check chk = { 0 };
	struct buf err = BUF_INIT;
	struct db *db = NULL;
	int r, rc;

	if ((rc = parse_run_args(&a, argc, argv)))
		goto out;
	rc = 1;
	if (load_candidates(&a, &cs, &err))
		goto fail;
	if (check_before_store(&a, &chk, &err)) {
		rc = 2;
		goto fail;
	}
	if (!(db = cmd_open_store(ctx, "kcanary bisect")))
		goto out;
	if ((r = metric_direction(&a, db, &err))) {
		rc = r == -EINVAL ? 2 : 1;
		goto fail;
	}
	a.o.home = ctx->home;
	rc = run_bisection(&a, db, &cs, &chk);
	goto out;
fail:
	fprintf(stderr, "kcanary bisect: %s\n", buf_str(&err));
out:
	bisect_cands_release(&cs);
	job_check_release(&chk);
	run_args_release(&a);
	buf_release(&err);
	db_close(db);
	return rc;
}

/* No verb: options start a bisection over real guests. */
static int do_default(struct cmd_ctx *ctx, int argc, char **argv)
{
	if (help_asked(argc, argv))
		return 0;
	if (argv[1][0] == '-')
		return do_run(ctx, argc, argv);
	fprintf(stderr, "kcanary bisect: unknown subcommand '%s'; see 'kcanary bisect --help'\n",
		argv[1]);
	return 2;
}

static const struct cmd_verb verbs[] = {
	{ "log", do_log },
	{ "replay", do_replay },
	{ "simulate", do_simulate },
	{ NULL, do_default },
};

int cmd_bisect(struct cmd_ctx *ctx, int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	return cmd_select(ctx, "kcanary bisect", verbs, argc, argv);
}
