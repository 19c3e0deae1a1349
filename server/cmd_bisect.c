/* cmd_bisect.c - kcanary bisect: find the commit where a metric changed.
 * `replay LOG` and `simulate` work today; the real bisection over a kernel
 * tree needs the build/guest pipeline (issue 6) and says so. */
#define LOG_MODULE "bisect"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bisect.h"
#include "bisect_sim.h"
#include "cmd.h"
#include "log.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kcanary bisect replay LOG\n"
		"       kcanary bisect simulate [--commits N] [--trials N] [--seed S]\n"
		"                               [--history clean|flaky|mixed|all]\n"
		"                               [--strategy NAME|all] [--find-fix]\n"
		"                               [--skip-rate F] [--log FILE]\n"
		"       kcanary bisect --repo DIR --good REV --bad REV ...   (not available yet)\n"
		"\n"
		"Find the commit where a noisy metric changed, measuring as few runs as\n"
		"it can: endpoints first (stop if they do not differ), then binary\n"
		"search with repeats or probabilistic bisection over a posterior of the\n"
		"culprit's position, then a culprit check against its parent.\n"
		"\n"
		"replay LOG     run a bisection's event log back through the engine without\n"
		"               measuring anything; exit 0 when it reaches the same result.\n"
		"simulate       benchmark the strategies on a synthetic history whose runs\n"
		"               are drawn from the seed's good/bad worst-lag distributions;\n"
		"               prints accuracy and mean guest runs per strategy.\n"
		"  --commits N    candidates incl. both endpoints (default 1000)\n"
		"  --trials N     bisections per strategy and history (default 1000)\n"
		"  --seed S       RNG seed (default 1); same seed, same table\n"
		"  --history H    clean (bad stalls every run), flaky (7 of 9), mixed, or all\n"
		"                 (default all)\n"
		"  --strategy S   git (1 run/step), fixed3, fixed5, fixed10, adaptive, prob,\n"
		"                 prob-check, or all (default)\n"
		"  --find-fix     the history goes bad -> good; look for the fix\n"
		"  --skip-rate F  chance that a commit does not build (default 0)\n"
		"  --log FILE     write the event log of every bisection to FILE (with\n"
		"                 --trials 1 it is one log that 'replay' takes)\n"
		"\n"
		"The real bisection (--repo, --good, --bad, --kernels, --workload, --metric,\n"
		"--first-parent, --find-fix, --confidence) is not available yet: it needs the\n"
		"build/guest pipeline (issue 6).\n");
}

static const char *const strategy_keys[] = {
	"git", "fixed3", "fixed5", "fixed10", "adaptive", "prob", "prob-check",
};

static int do_replay(int argc, char **argv)
{
	struct bisect_result r;
	struct buf relog = BUF_INIT;
	char *text = NULL, *err = NULL;
	int rc;

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
		fprintf(stderr, "kcanary bisect replay: '%s': %s\n", argv[1],
			err ? err : strerror(-rc));
		rc = 1;
		goto out;
	}
	printf("replayed %u runs and %u skips over %u commits without measuring: same result\n",
	       r.runs_total, r.skips, r.commits_tested);
	struct buf table = BUF_INIT;

	if (!bisect_log_table(&table, text))
		fputs(buf_str(&table), stdout);
	buf_release(&table);
	printf("%s: %s\n", bisect_outcome_name(r.outcome), r.message);
	for (size_t i = 0; i < r.ntop; i++) {
		if (r.top[i].first == r.top[i].last)
			printf("  candidate %zu: p = %.4f\n", r.top[i].first, r.top[i].prob);
		else
			printf("  candidates %zu..%zu (range): p = %.4f\n", r.top[i].first,
			       r.top[i].last, r.top[i].prob);
	}
	if (r.check_done)
		printf("culprit check: parent %zu median %.4g (%u runs), culprit %zu median %.4g "
		       "(%u runs), shift %+.4g (Hodges-Lehmann), Mann-Whitney p = %.3g: %s\n",
		       r.check_parent, r.check_median_parent, r.check_n_parent, r.check_culprit,
		       r.check_median_culprit, r.check_n_culprit, r.check_shift, r.check_p,
		       r.check_passed ? "passed" : "FAILED");
out:
	free(err);
	free(text);
	buf_release(&relog);
	return rc;
}

static void print_row(const char *name, const struct bisect_sim_stats *s)
{
	printf("%-30s %7.1f%% %9.1f%% %10.1f %9u", name, 100.0 * s->correct / s->trials,
	       100.0 * s->confident / s->trials, s->runs_sum / s->trials, s->runs_max);
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

static int do_simulate(int argc, char **argv)
{
	static const struct option lopts[] = {
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
	struct bisect_sim_opts so = { .commits = 1000, .trials = 1000, .seed = 1 };
	struct bisect_sim_strategy strat[16];
	size_t nstrat = bisect_sim_strategies(strat, 16);
	const char *history = "all", *only = "all", *log_path = NULL;
	enum bisect_sim_history hist[3] = { SIM_CLEAN, SIM_FLAKY, SIM_MIXED };
	size_t nhist = 3;
	int c, rc = 0;
	char *end;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			so.commits = strtoul(optarg, &end, 10);
			if (*end || so.commits < 3 || so.commits > 10000000)
				goto bad_value;
			break;
		case 't':
			so.trials = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !so.trials)
				goto bad_value;
			break;
		case 's':
			so.seed = strtoull(optarg, &end, 0);
			if (*end)
				goto bad_value;
			break;
		case 'H':
			history = optarg;
			break;
		case 'S':
			only = optarg;
			break;
		case 'f':
			so.find_fix = true;
			break;
		case 'k':
			so.skip_rate = strtod(optarg, &end);
			if (*end || so.skip_rate < 0 || so.skip_rate >= 1)
				goto bad_value;
			break;
		case 'l':
			log_path = optarg;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "kcanary bisect simulate: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (strcmp(history, "all")) {
		nhist = 1;
		if (bisect_sim_history_parse(&hist[0], history)) {
			fprintf(stderr, "kcanary bisect simulate: unknown history '%s': expected "
				"clean, flaky, mixed or all\n", history);
			return 2;
		}
	}
	if (strcmp(only, "all")) {
		size_t i;

		for (i = 0; i < nstrat && strcmp(strategy_keys[i], only); i++)
			;
		if (i == nstrat) {
			fprintf(stderr, "kcanary bisect simulate: unknown strategy '%s': expected "
				"git, fixed3, fixed5, fixed10, adaptive, prob, prob-check or all\n",
				only);
			return 2;
		}
		strat[0] = strat[i];
		nstrat = 1;
	}
	struct buf log = BUF_INIT;

	if (log_path)
		so.log = &log;
	for (size_t h = 0; h < nhist; h++) {
		struct bisect_sim_stats st[16];
		clock_t t0 = clock();

		so.history = hist[h];
		printf("history: %s%s, %zu commits, %u trials per strategy, seed %llu\n",
		       bisect_sim_history_name(so.history), so.find_fix ? " (find-fix)" : "",
		       so.commits, so.trials, (unsigned long long)so.seed);
		printf("%-30s %8s %10s %10s %9s\n", "strategy", "accuracy", "confident",
		       "mean runs", "max runs");
		for (size_t i = 0; i < nstrat; i++) {
			strat[i].opts.find_fix = so.find_fix;
			rc = bisect_sim_run(&st[i], &so, &strat[i].opts);
			if (rc) {
				fprintf(stderr, "kcanary bisect simulate: %s\n", strerror(-rc));
				goto out;
			}
			print_row(strat[i].name, &st[i]);
		}
		/* The goal: probabilistic >= 95% with at most half the runs
		 * of the cheapest fixed-repeat strategy as accurate. */
		for (size_t i = 0; i < nstrat; i++) {
			double acc, best = 0;
			const char *who = NULL;

			if (strcmp(strat[i].name, "probabilistic"))
				continue;
			acc = (double)st[i].correct / st[i].trials;
			for (size_t j = 0; j < nstrat; j++) {
				double a = (double)st[j].correct / st[j].trials;
				double runs = st[j].runs_sum / st[j].trials;

				if (strat[j].opts.strategy != BISECT_BINARY ||
				    !strat[j].opts.fixed_repeats || a < acc)
					continue;
				if (!who || runs < best) {
					best = runs;
					who = strat[j].name;
				}
			}
			double mine = st[i].runs_sum / st[i].trials;

			if (who)
				printf("goal: probabilistic %.1f%% in %.1f runs; cheapest fixed-repeat "
				       "as accurate: %s, %.1f runs; ratio %.2f: %s\n", 100 * acc, mine,
				       who, best, mine / best,
				       acc >= 0.95 && mine <= best / 2 ? "met" : "NOT met");
			else
				printf("goal: probabilistic %.1f%% in %.1f runs; no fixed-repeat strategy "
				       "here is as accurate: %s\n", 100 * acc, mine,
				       acc >= 0.95 ? "met" : "NOT met (accuracy below 95%)");
		}
		printf("(%.1f s CPU)\n\n", (double)(clock() - t0) / CLOCKS_PER_SEC);
	}
	if (log_path) {
		FILE *f = fopen(log_path, "w");

		if (!f || fputs(buf_str(&log), f) == EOF || fclose(f)) {
			fprintf(stderr, "kcanary bisect simulate: cannot write '%s': %s\n", log_path,
				strerror(errno));
			rc = 1;
		}
	}
out:
	buf_release(&log);
	return rc ? 1 : 0;
bad_value:
	fprintf(stderr, "kcanary bisect simulate: bad value '%s' for --%s\n", optarg,
		lopts[c == 'n' ? 0 : c == 't' ? 1 : c == 's' ? 2 : 6].name);
	return 2;
}

int cmd_bisect(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "replay")) {
		if (cmd_wants_help(argc - 1, argv + 1)) {
			usage(stdout);
			return 0;
		}
		return do_replay(argc - 1, argv + 1);
	}
	if (!strcmp(argv[1], "simulate")) {
		if (cmd_wants_help(argc - 1, argv + 1)) {
			usage(stdout);
			return 0;
		}
		return do_simulate(argc - 1, argv + 1);
	}
	if (cmd_wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	if (argv[1][0] == '-' || !strcmp(argv[1], "log")) {
		fprintf(stderr, "kcanary bisect: not available yet: needs the build/guest "
			"pipeline (issue 6); 'kcanary bisect simulate' and 'kcanary bisect "
			"replay LOG' work today\n");
		return 1;
	}
	fprintf(stderr, "kcanary bisect: unknown subcommand '%s'; see 'kcanary bisect --help'\n",
		argv[1]);
	return 2;
}
