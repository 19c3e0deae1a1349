/* cmd_canary.c - kcanary canary: is a canary kernel's cohort of runs worse
 * than the control's? The flags become a canary_run_opts, the verdict comes
 * from the judge (judge/canary_run.h: cohorts from the store or Prometheus,
 * per-host medians, canary.h) and is printed here; `simulate` measures the
 * judge on simulated cohorts (canary_sim.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/canary.h"
#include "judge/canary_run.h"
#include "judge/canary_sim.h"
#include "judge/stats.h"
#include "cli/cmd.h"
#include "store/db.h"
#include "util.h"

/* Exit statuses beyond cmd.h's 0 / 1 / 2. */
#define EXIT_MARGINAL 3
#define EXIT_NO_VERDICT 4

static const char usage_text[] =
	"usage: kcanary canary --control SEL --canary SEL [--metric SPEC]... [--job J]\n"
	"                      [--window DUR] [--per-host]\n"
	"                      [--prometheus URL --query NAME=PROMQL... [--step DUR]]\n"
	"                      [--format text|json] [--alpha A] [--pass N] [--marginal N]\n"
	"                      [--tolerance F] [--spread-tolerance F] [--no-spread]\n"
	"                      [--min-runs N] [--nodata ignore|fail|pass] [--seed S]\n"
	"       kcanary canary simulate [--trials N] [--runs N[,N...]] [--seed S]\n"
	"                      [--shift F] [--spread F] [--stall-rate F] [--alpha A]\n"
	"                      [--tolerance F] [--spread-tolerance F] [--no-spread]\n"
	"\n"
	"Judge a canary kernel against the control it replaces, Kayenta-style: per\n"
	"metric, a two-sided Mann-Whitney U test of the canary's runs against the\n"
	"control's with a direction and an effect-size tolerance (Hodges-Lehmann\n"
	"shift relative to the control median), and a dispersion check (a one-sided\n"
	"permutation test of the Brown-Forsythe spread) so that a wider or bimodal\n"
	"canary does not pass. Each metric is pass, high, low, spread or nodata;\n"
	"weights make a score 0..100; score >= --pass is pass, >= --marginal is\n"
	"marginal, else fail; a critical metric that does not pass fails the verdict.\n"
	"\n"
	"  --control SEL, --canary SEL\n"
	"                     the cohorts: runs matching every KEY=VALUE (comma-\n"
	"                     separated). kernel=R (runs.kernel_release, R or R\n"
	"                     with a local version: kernel=6.12.117 matches\n"
	"                     6.12.117+deb12-cloud-amd64), variant=NAME, job=NAME|ID,\n"
	"                     host=H, fs=FS, status=S, or any workload knob of the\n"
	"                     run (rate_mbps=250), since=ISO-TIME. A value with * ? [\n"
	"                     is a glob.\n"
	"  --job J            only runs of job J (both cohorts)\n"
	"  --per-host         one value per host (the median of its runs) instead of\n"
	"                     one per run, so a host with many runs does not weigh\n"
	"                     more than one with few (runs are not independent\n"
	"                     within a host); n is then hosts\n"
	"  --window DUR       only runs that finished (or started, while running) in\n"
	"                     the last DUR: 30m, 1h, 3600 (both cohorts)\n"
	"  --metric SPEC      a metric to judge, repeatable; default: every summary\n"
	"                     metric and probe total the cohorts have. SPEC is\n"
	"                     NAME[,OPTION...]; NAME is a summary metric (worst_lag_s)\n"
	"                     or probe:NAME:KEY (a probe's final count per run, e.g.\n"
	"                     probe:cgroup_writeback_by_id:-2). OPTIONs: critical,\n"
	"                     weight=W, direction=increase|decrease|either (which change\n"
	"                     is bad; default from the metric: lower-is-better metrics\n"
	"                     and probes 'increase', higher-is-better 'decrease',\n"
	"                     unknown 'either'), tolerance=F, spread-tolerance=F,\n"
	"                     nospread, nodata=RULE, min-runs=N\n"
	"  --alpha A          significance level of each test (default 0.02, Kayenta's\n"
	"                     98% confidence)\n"
	"  --pass N, --marginal N\n"
	"                     score thresholds (default 95 and 75)\n"
	"  --tolerance F      allowed shift as a fraction of the control median for\n"
	"                     every metric (default 0.10)\n"
	"  --spread-tolerance F\n"
	"                     allowed growth of the spread (default 0.5: up to 1.5x)\n"
	"  --no-spread        skip the dispersion check\n"
	"  --min-runs N       fewest values per cohort for a metric to be judged\n"
	"                     (default: the fewest with which p < alpha is possible,\n"
	"                     5 for 0.02); fewer is NODATA\n"
	"  --nodata RULE      what a NODATA metric does: ignore (left out of the\n"
	"                     score; default), fail, or pass. When half the metrics or\n"
	"                     more are ignored NODATA there is no verdict.\n"
	"  --seed S           seed of the permutations and bootstrap (same seed, same\n"
	"                     output)\n"
	"  --format FMT       text (default) or json\n"
	"  --prometheus URL   take the values from a Prometheus server's HTTP API\n"
	"                     instead of the store: /api/v1/query_range over --window\n"
	"                     every --step (default 15s), or /api/v1/query now\n"
	"                     without --window. Every sample of every series is a\n"
	"                     value (--per-host: the median of each series)\n"
	"  --query NAME=PROMQL\n"
	"                     a metric from Prometheus, repeatable; PROMQL holds\n"
	"                     $cohort where each cohort's selectors go as label\n"
	"                     matchers: k=v becomes k=\"v\", a glob k=~\"regex\",\n"
	"                     kernel=R kernel=~\"R([+-].*)?\" (R or R with a local\n"
	"                     version, as in the store), e.g. --query\n"
	"                     'x_s=kcanary_workload_sample{metric=\"x_s\",$cohort}'.\n"
	"                     --metric NAME,OPTIONS sets its options (default\n"
	"                     direction: either)\n"
	"\n"
	"simulate             the judge on simulated cohorts of per-host worst lag from\n"
	"                     the seed's good-kernel distribution: the A/A pass rate\n"
	"                     (one cohort split in two) and how often a canary with\n"
	"                     the shift, doubled spread or stalls is caught\n"
	"  --trials N         trials per cell (default 200)\n"
	"  --runs LIST        runs per cohort, comma-separated (default 5,10,20,40)\n"
	"  --shift F          relative shift of the shifted canary (default 0.25)\n"
	"  --spread F         spread factor of the wider canary (default 2)\n"
	"  --stall-rate F     share of a stalling canary's runs that stall at\n"
	"                     19-26 s (default 0.2)\n"
	"  --alpha, --tolerance, --spread-tolerance, --no-spread\n"
	"                     the judge's settings, as for a verdict\n"
	"\n"
	"Exit status: 0 pass, 1 fail, 2 usage, 3 marginal, 4 no verdict (a cohort\n"
	"matches no runs, half the metrics or more have too few values, or the\n"
	"store cannot be read).\n";

static int exit_status(enum canary_result r)
{
	switch (r) {
	case CANARY_RESULT_PASS:	return 0;
	case CANARY_RESULT_MARGINAL:	return EXIT_MARGINAL;
	case CANARY_RESULT_NO_VERDICT:	return EXIT_NO_VERDICT;
	case CANARY_RESULT_FAIL:	break;
	}
	return 1;
}

/* next_flag's return when the command is done: see *status. */
#define FLAG_EXIT (-2)

/* The next flag of argv (cmd_getopt with lopts and -h), --help and bad
 * flags handled: the flag's value, -1 after the last, or FLAG_EXIT with
 * *status 0 (--help: usage on stdout) or 2 (a bad flag: glibc's message,
 * then usage on stderr). */
static int next_flag(int argc, char **argv, const char *prog, const struct option *lopts,
		     int *status)
{
	int c = cmd_getopt(argc, argv, prog, "h", lopts);

	if (c == 'h' || c == '?' || c == ':') {
		fputs(usage_text, c == 'h' ? stdout : stderr);
		*status = c == 'h' ? 0 : 2;
		return FLAG_EXIT;
	}
	return c;
}

/* ---- simulate ---- */

/* One `canary simulate` flag c with value arg into so (runs: the cohort
 * sizes); -EINVAL when the value is bad. */
static int simulate_flag(struct canary_sim_opts *so, size_t *runs, size_t *nruns, int c,
			 const char *arg)
{
	size_t z;
	double d;

	switch (c) {
	case 't':
		if (canary_parse_size(&z, arg) || !z || z > 1000000)
			return -EINVAL;
		so->trials = (unsigned)z;
		break;
	case 'r': {
		char *copy = xstrdup(arg), *save = NULL, *tok;
		*nruns = 0;
		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (*nruns == 16 || canary_parse_size(&z, tok) || z < 2 || z > 10000) {
				free(copy);
				return -EINVAL;
			}
			runs[(*nruns)++] = z;
		}
		free(copy);
		return *nruns ? 0 : -EINVAL;
	}
	case 's':
		if (canary_parse_size(&z, arg))
			return -EINVAL;
		so->seed = z;
		break;
	case 'S':
		if (canary_parse_double(&d, arg) || d <= -1)
			return -EINVAL;
		so->shift = d;
		break;
	case 'w':
		if (canary_parse_double(&d, arg) || d <= 0)
			return -EINVAL;
		so->spread = d;
		break;
	case 'k':
		if (canary_parse_double(&d, arg) || d < 0 || d > 1)
			return -EINVAL;
		so->stall_rate = d;
		break;
	case 'a':
		if (canary_parse_double(&d, arg) || d <= 0 || d >= 1)
			return -EINVAL;
		so->judge.alpha = d;
		break;
	case 'T':
	case 'W':
		if (canary_parse_double(&d, arg) || d < 0)
			return -EINVAL;
		*(c == 'T' ? &so->metric.tolerance : &so->metric.spread_tolerance) = d;
		break;
	case 'n':
		so->metric.spread_check = false;
		break;
	}
	return 0;
}

/* The simulation's table: per cohort size, the A/A pass rate and how often
 * each bad canary is caught. Returns the exit status. */
static int print_simulation(struct canary_sim_opts *so, const size_t *runs, size_t nruns)
{
	char h1[32], h2[32], h3[32];

	printf("canary judge on simulated cohorts: %u trials per cell, seed %llu\n"
	       "per-host worst lag from the seed's good-kernel distribution (median %.2f s);\n"
	       "one metric (bad: increase), alpha %.3g, tolerance %.0f%%, ",
	       so->trials, (unsigned long long)so->seed, CANARY_SIM_MEDIAN_S, so->judge.alpha,
	       100 * so->metric.tolerance);
	if (so->metric.spread_check)
		printf("spread tolerance %.2fx,\n%u permutations\n\n", 1 + so->metric.spread_tolerance,
		       so->judge.permutations);
	else
		printf("no dispersion check\n(Mann-Whitney and effect size only, as Kayenta)\n\n");
	snprintf(h1, sizeof(h1), "shift %+.0f%%", 100 * so->shift);
	snprintf(h2, sizeof(h2), "spread x%.3g", so->spread);
	snprintf(h3, sizeof(h3), "stalls %.0f%%", 100 * so->stall_rate);
	printf("%11s  %9s  %13s  %13s  %13s\n", "runs/cohort", "A/A pass", h1, h2, h3);
	printf("%11s  %9s  %13s  %13s  %13s\n", "", "", "caught", "caught", "caught");
	for (size_t i = 0; i < nruns; i++) {
		struct canary_sim_stats st[4];
		so->runs = runs[i];
		for (int s = 0; s < 4; s++)
			if (canary_sim_run(&st[s], (enum canary_sim_scenario)s, so))
				return 1;
		double aa = 100.0 * st[0].result[CANARY_RESULT_PASS] / st[0].trials;
		double caught[3];
		/* caught: judged FAIL or MARGINAL; a NO VERDICT (too few runs to
		 * judge) detected nothing and is not a catch */
		for (int s = 1; s < 4; s++)
			caught[s - 1] = 100.0 * (st[s].result[CANARY_RESULT_FAIL] +
						 st[s].result[CANARY_RESULT_MARGINAL]) / st[s].trials;
		printf("%11zu  %8.1f%%  %12.1f%%  %12.1f%%  %12.1f%%\n", runs[i], aa, caught[0],
		       caught[1], caught[2]);
	}
	printf("\nA/A goal: >= 95%% pass. Caught: a FAIL or MARGINAL verdict (NO VERDICT is\n"
	       "not). Cohorts smaller than stats_runs_needed(alpha) are NODATA (%zu runs\n"
	       "at alpha %.3g: Mann-Whitney cannot reach p < alpha below that).\n",
	       stats_runs_needed(so->judge.alpha), so->judge.alpha);
	return 0;
}

/* `kcanary canary simulate`. */
static int do_simulate(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "trials", required_argument, NULL, 't' },
		{ "runs", required_argument, NULL, 'r' },
		{ "seed", required_argument, NULL, 's' },
		{ "shift", required_argument, NULL, 'S' },
		{ "spread", required_argument, NULL, 'w' },
		{ "stall-rate", required_argument, NULL, 'k' },
		{ "alpha", required_argument, NULL, 'a' },
		{ "tolerance", required_argument, NULL, 'T' },
		{ "spread-tolerance", required_argument, NULL, 'W' },
		{ "no-spread", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct canary_sim_opts so;
	size_t runs[16] = { 5, 10, 20, 40 }, nruns = 4;
	int c, status;
	(void)ctx;

	canary_sim_opts_default(&so);
	optind = 1;
	while ((c = next_flag(argc, argv, "kcanary canary simulate", lopts, &status)) >= 0)
		if (simulate_flag(&so, runs, &nruns, c, optarg))
			goto bad;
	if (c == FLAG_EXIT)
		return status;
	if (optind != argc) {
		fprintf(stderr, "kcanary canary simulate: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	return print_simulation(&so, runs, nruns);
bad:
	for (const struct option *o = lopts; o->name; o++)
		if (o->val == c)
			fprintf(stderr, "kcanary canary simulate: --%s '%s': expected %s\n", o->name,
				optarg, c == 'r' ? "numbers 2..10000, comma-separated" :
				c == 't' ? "a number 1..1000000" : c == 's' ? "a number" :
				c == 'k' ? "a fraction 0..1" : c == 'a' ? "a number in (0, 1)" :
				c == 'T' || c == 'W' ? "a fraction >= 0" : "a number > 0 (shift > -1)");
	return 2;
}

/* ---- the verdict ---- */

/* A number flag of the verdict (--alpha, --pass, --marginal, --tolerance,
 * --spread-tolerance, --min-runs, --seed) into o; -EINVAL with a message. */
static int verdict_number_flag(struct canary_run_opts *o, int c, const char *arg)
{
	double d;
	size_t z;

	switch (c) {
	case 'a':
		if (canary_parse_double(&o->judge.alpha, arg) || o->judge.alpha <= 0 || o->judge.alpha >= 1) {
			fprintf(stderr, "kcanary canary: --alpha '%s': expected a number in (0, 1)\n",
				arg);
			return -EINVAL;
		}
		break;
	case 'P':
	case 'M':
		if (canary_parse_double(&d, arg) || d < 0 || d > 100) {
			fprintf(stderr, "kcanary canary: --%s '%s': expected a score 0..100\n",
				c == 'P' ? "pass" : "marginal", arg);
			return -EINVAL;
		}
		*(c == 'P' ? &o->judge.pass_threshold : &o->judge.marginal_threshold) = d;
		break;
	case 't':
	case 'T':
		if (canary_parse_double(&d, arg) || d < 0) {
			fprintf(stderr, "kcanary canary: --%s '%s': expected a fraction >= 0\n",
				c == 't' ? "tolerance" : "spread-tolerance", arg);
			return -EINVAL;
		}
		*(c == 't' ? &o->tolerance : &o->spread_tol) = d;
		break;
	case 'r':
		if (canary_parse_size(&z, arg) || z < 2) {
			fprintf(stderr, "kcanary canary: --min-runs '%s': expected a number >= 2\n", arg);
			return -EINVAL;
		}
		o->judge.min_n = z;
		break;
	case 's':
		if (canary_parse_size(&z, arg)) {
			fprintf(stderr, "kcanary canary: --seed '%s': expected a number\n", arg);
			return -EINVAL;
		}
		o->judge.seed = z;
		break;
	}
	return 0;
}

/* One flag c of the verdict with value arg into o; -EINVAL with a message. */
static int verdict_flag(struct canary_run_opts *o, bool *json, int c, const char *arg)
{
	struct buf err = BUF_INIT;
	int r = 0;

	switch (c) {
	case 'c': o->control = arg; break;
	case 'k': o->canary = arg; break;
	case 'j': o->job = arg; break;
	case 'n': o->no_spread = true; break;
	case 'H': o->by_host = true; break;
	case 'p': o->prom.url = arg; break;
	case 'q':
		r = canary_prom_add_query(&o->prom, arg, &err);
		break;
	case 'm':
		o->specs = xrealloc(o->specs, (o->nspecs + 1) * sizeof(*o->specs));
		if ((r = canary_metric_spec_parse(&o->specs[o->nspecs], arg, &err)))
			canary_metric_spec_release(&o->specs[o->nspecs]);
		else
			o->nspecs++;
		break;
	case 'f':
		if (strcmp(arg, "text") && strcmp(arg, "json")) {
			fprintf(stderr, "kcanary canary: --format '%s': expected text or json\n", arg);
			return -EINVAL;
		}
		*json = !strcmp(arg, "json");
		break;
	case 'N':
		if (canary_nodata_parse(&o->nodata, arg)) {
			fprintf(stderr, "kcanary canary: --nodata '%s': expected ignore, fail or"
				" pass\n", arg);
			return -EINVAL;
		}
		o->has_nodata = true;
		break;
	case 'w':
		if (parse_duration_s(&o->window_s, arg) || !(o->window_s > 0)) {
			fprintf(stderr, "kcanary canary: --window '%s': expected a duration"
				" (30m, 1h, 3600)\n", arg);
			return -EINVAL;
		}
		break;
	case 'x':
		if (parse_duration_s(&o->prom.step_s, arg) || !(o->prom.step_s > 0)) {
			fprintf(stderr, "kcanary canary: --step '%s': expected a duration (15s)\n", arg);
			return -EINVAL;
		}
		break;
	default:
		return verdict_number_flag(o, c, arg);
	}
	if (r)
		fprintf(stderr, "kcanary canary: %s\n", buf_str(&err));
	buf_release(&err);
	return r;
}

/* The flags that only make sense together; -EINVAL with a message. */
static int verdict_check(const struct canary_run_opts *o, int argc)
{
	const struct canary_prom *pa = &o->prom;

	if (!pa->url != !pa->n) {
		fprintf(stderr, "kcanary canary: %s\n", pa->url ? "--prometheus needs at least one --query"
			: "--query needs --prometheus URL");
		return -EINVAL;
	}
	if (pa->url && o->job) {
		fprintf(stderr, "kcanary canary: --job selects runs in the store, not Prometheus series\n");
		return -EINVAL;
	}
	if (!o->control || !o->canary || optind != argc) {
		fprintf(stderr, "kcanary canary: %s\n", !o->control ? "--control is required" :
			!o->canary ? "--canary is required" : "unexpected argument");
		fputs(usage_text, stderr);
		return -EINVAL;
	}
	if (o->judge.marginal_threshold > o->judge.pass_threshold) {
		fprintf(stderr, "kcanary canary: --marginal %.3g is above --pass %.3g\n",
			o->judge.marginal_threshold, o->judge.pass_threshold);
		return -EINVAL;
	}
	return 0;
}

/* The verdict's flags into o. Returns -1 to go on, else the exit status
 * (0 for --help, 2 for bad usage). */
static int verdict_parse(struct canary_run_opts *o, bool *json, int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "control", required_argument, NULL, 'c' },
		{ "canary", required_argument, NULL, 'k' },
		{ "metric", required_argument, NULL, 'm' },
		{ "job", required_argument, NULL, 'j' },
		{ "format", required_argument, NULL, 'f' },
		{ "alpha", required_argument, NULL, 'a' },
		{ "pass", required_argument, NULL, 'P' },
		{ "marginal", required_argument, NULL, 'M' },
		{ "tolerance", required_argument, NULL, 't' },
		{ "spread-tolerance", required_argument, NULL, 'T' },
		{ "no-spread", no_argument, NULL, 'n' },
		{ "min-runs", required_argument, NULL, 'r' },
		{ "nodata", required_argument, NULL, 'N' },
		{ "seed", required_argument, NULL, 's' },
		{ "window", required_argument, NULL, 'w' },
		{ "per-host", no_argument, NULL, 'H' },
		{ "prometheus", required_argument, NULL, 'p' },
		{ "query", required_argument, NULL, 'q' },
		{ "step", required_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, status;

	optind = 1;
	while ((c = next_flag(argc, argv, "kcanary canary", lopts, &status)) >= 0)
		if (verdict_flag(o, json, c, optarg))
			return 2;
	if (c == FLAG_EXIT)
		return status;
	return verdict_check(o, argc) ? 2 : -1;
}

/* The verdict of run on stdout as text or JSON; its exit status. */
static int print_run(const struct canary_run *run, bool json)
{
	struct buf out = BUF_INIT;

	if (json)
		canary_format_json(&out, &run->verdict, &run->cohorts, run->weights);
	else
		canary_format_text(&out, &run->verdict, &run->cohorts, run->weights);
	fputs(buf_str(&out), stdout);
	buf_release(&out);
	return exit_status(run->verdict.result);
}

/* The exit status of a canary_run_*() error: 2 for bad settings, else 4
 * (no verdict), after err on stderr. */
static int run_failed(int r, struct buf *err)
{
	fprintf(stderr, "kcanary canary: %s\n", buf_str(err));
	return r == -EINVAL ? 2 : EXIT_NO_VERDICT;
}

/* The verdict with values from the store, or from Prometheus with
 * --prometheus. Returns the exit status. */
static int verdict(const struct cmd_ctx *ctx, struct canary_run_opts *o, bool json)
{
	struct canary_run run = { 0 };
	struct buf err = BUF_INIT;
	struct db *db = NULL;
	int r, ret;

	if (o->prom.url) {
		r = canary_run_prometheus(&run, o, &err);
	} else {
		if ((r = db_open(&db, ctx->db_path, &err)))
			r = -EIO;
		else
			r = canary_run_store(&run, db, o, &err);
	}
	ret = r ? run_failed(r, &err) : print_run(&run, json);
	canary_run_release(&run);
	db_close(db);
	buf_release(&err);
	return ret;
}

/* `kcanary canary --control SEL --canary SEL ...`: the verdict. */
static int do_verdict(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct canary_run_opts o;
	bool json = false;
	int ret;

	canary_run_opts_init(&o);
	if ((ret = verdict_parse(&o, &json, argc, argv)) < 0)
		ret = verdict(ctx, &o, json);
	canary_run_opts_release(&o);
	return ret;
}

static const struct cmd_verb verbs[] = {
	{ "simulate", do_simulate },
	{ NULL, do_verdict },
};

int cmd_canary(struct cmd_ctx *ctx, int argc, char **argv)
{
	return cmd_select(ctx, "kcanary canary", verbs, argc, argv);
}
