/* cmd_canary.c - kcanary canary: is a canary kernel's cohort of runs worse
 * than the control's? Cohorts come from the store by selectors
 * (db_canary.h), the verdict from the judge (canary.h); `simulate` measures
 * the judge on simulated cohorts (canary_sim.h). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/canary.h"
#include "judge/canary_sim.h"
#include "cli/cmd.h"
#include "store/db.h"
#include "store/db_canary.h"
#include "wrap/prometheus.h"
#include "judge/stats.h"
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

/* The verdict on stdout as text or JSON (out is the scratch buffer);
 * returns its exit status. */
static int print_verdict(struct buf *out, const struct canary_verdict *v,
			 const struct canary_cohorts *cc, const double *weights, bool json)
{
	if (json)
		canary_format_json(out, v, cc, weights);
	else
		canary_format_text(out, v, cc, weights);
	fputs(buf_str(out), stdout);
	return exit_status(v->result);
}

static int parse_double(double *out, const char *s)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v))
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_size_t(size_t *out, const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s || *end || errno || *s == '-')
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}

struct metric_spec {
	char *text;			/* NAME[,OPTION...] as given */
	char *name;
	bool has_direction, has_tolerance, has_spread_tol, has_nodata;
	struct canary_metric_config cfg;
};

/* Parse SPEC's options into m (name and explicit settings). -EINVAL with a
 * message on stderr. */
static int parse_metric_spec(struct metric_spec *m, const char *spec)
{
	char *copy = xstrdup(spec), *save = NULL;
	char *tok = strtok_r(copy, ",", &save);
	int r = -EINVAL;

	memset(m, 0, sizeof(*m));
	m->text = xstrdup(spec);
	if (!tok || !*tok) {
		fprintf(stderr, "kcanary canary: --metric '%s': expected NAME[,OPTION...]\n", spec);
		goto out;
	}
	m->name = xstrdup(tok);
	canary_metric_config_default(&m->cfg, m->name);
	while ((tok = strtok_r(NULL, ",", &save))) {
		char *eq = strchr(tok, '=');
		const char *val = eq ? eq + 1 : NULL;
		if (eq)
			*eq = '\0';
		double d;
		size_t z;
		if (!strcmp(tok, "critical") && !val) {
			m->cfg.critical = true;
		} else if (!strcmp(tok, "nospread") && !val) {
			m->cfg.spread_check = false;
		} else if (!strcmp(tok, "weight") && val && !parse_double(&d, val) && d > 0) {
			m->cfg.weight = d;
		} else if (!strcmp(tok, "direction") && val &&
			   !canary_direction_parse(&m->cfg.direction, val)) {
			m->has_direction = true;
		} else if (!strcmp(tok, "tolerance") && val && !parse_double(&d, val) && d >= 0) {
			m->cfg.tolerance = d;
			m->has_tolerance = true;
		} else if (!strcmp(tok, "spread-tolerance") && val && !parse_double(&d, val) &&
			   d >= 0) {
			m->cfg.spread_tolerance = d;
			m->has_spread_tol = true;
		} else if (!strcmp(tok, "nodata") && val && !canary_nodata_parse(&m->cfg.nodata, val)) {
			m->has_nodata = true;
		} else if (!strcmp(tok, "min-runs") && val && !parse_size_t(&z, val) && z >= 2) {
			m->cfg.min_n = z;
		} else {
			fprintf(stderr, "kcanary canary: --metric '%s': bad option '%s%s%s'; expected "
				"critical, nospread, weight=W (> 0), direction=increase|decrease|either,"
				" tolerance=F, spread-tolerance=F (>= 0), nodata=ignore|fail|pass or "
				"min-runs=N (>= 2)\n", spec, tok, val ? "=" : "", val ? val : "");
			goto out;
		}
	}
	r = 0;
out:
	free(copy);
	return r;
}

static void metric_spec_release(struct metric_spec *m)
{
	free(m->text);
	free(m->name);
}

/* The selectors of one cohort plus job=J when --job is given and since=T
 * when --window is. */
static int cohort_runs(struct db *db, int64_t **ids, size_t *n, const char *which,
		       const char *text, const char *job, const char *since)
{
	struct db_selector *sel = NULL;
	struct buf err = BUF_INIT;
	size_t nsel = 0;
	int r;

	if ((r = db_selectors_parse(&sel, &nsel, text, &err))) {
		fprintf(stderr, "kcanary canary: --%s: %s\n", which, buf_str(&err));
		buf_release(&err);
		return r;
	}
	if (job) {
		sel = xrealloc(sel, (nsel + 1) * sizeof(*sel));
		sel[nsel].key = xstrdup("job");
		sel[nsel].value = xstrdup(job);
		nsel++;
	}
	if (since) {
		sel = xrealloc(sel, (nsel + 1) * sizeof(*sel));
		sel[nsel].key = xstrdup("since");
		sel[nsel].value = xstrdup(since);
		nsel++;
	}
	r = db_cohort_runs(db, ids, n, sel, nsel, &err);
	if (r)
		fprintf(stderr, "kcanary canary: --%s '%s': %s\n", which, text, buf_str(&err));
	buf_release(&err);
	db_selectors_free(sel, nsel);
	return r;
}

static void no_runs_message(struct db *db, const char *which, const char *text,
			    const char *job)
{
	char **rel = NULL;
	size_t nrel = 0;

	fprintf(stderr, "kcanary canary: --%s '%s'%s%s%s matches no runs (NODATA): no verdict\n",
		which, text, job ? " in job '" : "", job ? job : "", job ? "'" : "");
	if (!db_kernel_releases(db, &rel, &nrel, NULL) && nrel) {
		fprintf(stderr, "  kernels in the store:");
		for (size_t i = 0; i < nrel; i++)
			fprintf(stderr, "%s %s", i ? "," : "", rel[i]);
		fprintf(stderr, "\n");
	} else if (!nrel) {
		fprintf(stderr, "  the store has no runs with a kernel release\n");
	}
	db_strings_free(rel, nrel);
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
		if (parse_size_t(&z, arg) || !z || z > 1000000)
			return -EINVAL;
		so->trials = (unsigned)z;
		break;
	case 'r': {
		char *copy = xstrdup(arg), *save = NULL, *tok;
		*nruns = 0;
		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (*nruns == 16 || parse_size_t(&z, tok) || z < 2 || z > 10000) {
				free(copy);
				return -EINVAL;
			}
			runs[(*nruns)++] = z;
		}
		free(copy);
		return *nruns ? 0 : -EINVAL;
	}
	case 's':
		if (parse_size_t(&z, arg))
			return -EINVAL;
		so->seed = z;
		break;
	case 'S':
		if (parse_double(&d, arg) || d <= -1)
			return -EINVAL;
		so->shift = d;
		break;
	case 'w':
		if (parse_double(&d, arg) || d <= 0)
			return -EINVAL;
		so->spread = d;
		break;
	case 'k':
		if (parse_double(&d, arg) || d < 0 || d > 1)
			return -EINVAL;
		so->stall_rate = d;
		break;
	case 'a':
		if (parse_double(&d, arg) || d <= 0 || d >= 1)
			return -EINVAL;
		so->judge.alpha = d;
		break;
	case 'T':
	case 'W':
		if (parse_double(&d, arg) || d < 0)
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
static int do_simulate(int argc, char **argv)
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

struct prom_args {
	const char *url;
	char **names, **exprs;		/* --query NAME=PROMQL */
	size_t n;
	double step_s;
};

/* A verdict's settings, from the flags. specs: --metric, in order (the
 * store's path adds the default metrics when there is none); tolerance,
 * spread_tol: NAN when not given (each metric keeps its own); nodata
 * counts only with has_nodata; window_s: 0 without --window. */
struct verdict_opts {
	const char *control, *canary, *job;
	struct metric_spec *specs;
	size_t nspecs;
	struct canary_opts judge;
	bool json, no_spread, by_host, has_nodata;
	double tolerance, spread_tol, window_s;
	enum canary_nodata nodata;
	struct prom_args prom;
};

static void verdict_opts_init(struct verdict_opts *o)
{
	memset(o, 0, sizeof(*o));
	canary_opts_default(&o->judge);
	o->tolerance = o->spread_tol = NAN;
	o->nodata = CANARY_NODATA_IGNORE;
	o->prom.step_s = 15;
}

static void verdict_opts_release(struct verdict_opts *o)
{
	for (size_t i = 0; i < o->nspecs; i++)
		metric_spec_release(&o->specs[i]);
	free(o->specs);
	for (size_t i = 0; i < o->prom.n; i++) {
		free(o->prom.names[i]);
		free(o->prom.exprs[i]);
	}
	free(o->prom.names);
	free(o->prom.exprs);
}

/* --query NAME=PROMQL into o->prom; -EINVAL with a message. */
static int add_query(struct prom_args *pa, const char *arg)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !strstr(eq + 1, "$cohort")) {
		fprintf(stderr, "kcanary canary: --query '%s': expected NAME=PROMQL with"
			" $cohort where the cohort's label matchers go, as in "
			"'x_s=kcanary_workload_sample{metric=\"x_s\",$cohort}'\n", arg);
		return -EINVAL;
	}
	pa->names = xrealloc(pa->names, (pa->n + 1) * sizeof(*pa->names));
	pa->exprs = xrealloc(pa->exprs, (pa->n + 1) * sizeof(*pa->exprs));
	pa->names[pa->n] = xstrndup(arg, (size_t)(eq - arg));
	pa->exprs[pa->n++] = xstrdup(eq + 1);
	return 0;
}

/* A number flag of the verdict (--alpha, --pass, --marginal, --tolerance,
 * --spread-tolerance, --min-runs, --seed) into o; -EINVAL with a message. */
static int verdict_number_flag(struct verdict_opts *o, int c, const char *arg)
{
	double d;
	size_t z;

	switch (c) {
	case 'a':
		if (parse_double(&o->judge.alpha, arg) || o->judge.alpha <= 0 || o->judge.alpha >= 1) {
			fprintf(stderr, "kcanary canary: --alpha '%s': expected a number in (0, 1)\n",
				arg);
			return -EINVAL;
		}
		break;
	case 'P':
	case 'M':
		if (parse_double(&d, arg) || d < 0 || d > 100) {
			fprintf(stderr, "kcanary canary: --%s '%s': expected a score 0..100\n",
				c == 'P' ? "pass" : "marginal", arg);
			return -EINVAL;
		}
		*(c == 'P' ? &o->judge.pass_threshold : &o->judge.marginal_threshold) = d;
		break;
	case 't':
	case 'T':
		if (parse_double(&d, arg) || d < 0) {
			fprintf(stderr, "kcanary canary: --%s '%s': expected a fraction >= 0\n",
				c == 't' ? "tolerance" : "spread-tolerance", arg);
			return -EINVAL;
		}
		*(c == 't' ? &o->tolerance : &o->spread_tol) = d;
		break;
	case 'r':
		if (parse_size_t(&z, arg) || z < 2) {
			fprintf(stderr, "kcanary canary: --min-runs '%s': expected a number >= 2\n", arg);
			return -EINVAL;
		}
		o->judge.min_n = z;
		break;
	case 's':
		if (parse_size_t(&z, arg)) {
			fprintf(stderr, "kcanary canary: --seed '%s': expected a number\n", arg);
			return -EINVAL;
		}
		o->judge.seed = z;
		break;
	}
	return 0;
}

/* One flag c of the verdict with value arg into o; -EINVAL with a message. */
static int verdict_flag(struct verdict_opts *o, int c, const char *arg)
{
	switch (c) {
	case 'c': o->control = arg; break;
	case 'k': o->canary = arg; break;
	case 'j': o->job = arg; break;
	case 'n': o->no_spread = true; break;
	case 'H': o->by_host = true; break;
	case 'p': o->prom.url = arg; break;
	case 'q': return add_query(&o->prom, arg);
	case 'm':
		o->specs = xrealloc(o->specs, (o->nspecs + 1) * sizeof(*o->specs));
		if (parse_metric_spec(&o->specs[o->nspecs], arg)) {
			metric_spec_release(&o->specs[o->nspecs]);
			return -EINVAL;
		}
		o->nspecs++;
		break;
	case 'f':
		if (strcmp(arg, "text") && strcmp(arg, "json")) {
			fprintf(stderr, "kcanary canary: --format '%s': expected text or json\n", arg);
			return -EINVAL;
		}
		o->json = !strcmp(arg, "json");
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
	return 0;
}

/* The flags that only make sense together; -EINVAL with a message. */
static int verdict_check(const struct verdict_opts *o, int argc)
{
	const struct prom_args *pa = &o->prom;

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
static int verdict_parse(struct verdict_opts *o, int argc, char **argv)
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
		if (verdict_flag(o, c, optarg))
			return 2;
	if (c == FLAG_EXIT)
		return status;
	return verdict_check(o, argc) ? 2 : -1;
}

/* The verdict's overrides (--tolerance, --spread-tolerance, --nodata,
 * --no-spread) on cfg, except where m (NULL: none) sets its own. */
static void metric_overrides(struct canary_metric_config *cfg, const struct metric_spec *m,
			     const struct verdict_opts *o)
{
	if ((!m || !m->has_tolerance) && !isnan(o->tolerance))
		cfg->tolerance = o->tolerance;
	if ((!m || !m->has_spread_tol) && !isnan(o->spread_tol))
		cfg->spread_tolerance = o->spread_tol;
	if ((!m || !m->has_nodata) && o->has_nodata)
		cfg->nodata = o->nodata;
	if (o->no_spread)
		cfg->spread_check = false;
}

/* The judge over n inputs, then the verdict printed. Returns the exit
 * status (2 when the judge refuses its settings). */
static int judge_and_print(const struct canary_metric_input *in, const double *weights,
			   size_t n, const struct verdict_opts *o, const struct canary_cohorts *cc)
{
	struct canary_verdict v = { 0 };
	struct buf out = BUF_INIT;
	int ret = 2;

	if (canary_judge(&v, in, n, &o->judge))
		fprintf(stderr, "kcanary canary: invalid judge settings\n");
	else
		ret = print_verdict(&out, &v, cc, weights, o->json);
	canary_verdict_release(&v);
	buf_release(&out);
	return ret;
}

/* ---- the verdict: values from the store ---- */

/* One cohort's runs in the store; hosts with --per-host (one per run). */
struct cohort {
	int64_t *ids;
	size_t n;
	char **hosts;
};

static void cohort_release(struct cohort *c)
{
	free(c->ids);
	if (c->hosts)
		db_strings_free(c->hosts, c->n);
}

/* --per-host: replace the n per-run values by one per host, the median of
 * that host's values (NAN when it has none), in first-seen order; runs
 * without a host count as hosts of their own. Returns the host count. */
static size_t per_host(double *v, char *const *hosts, size_t n)
{
	bool *done = xcalloc(n ? n : 1, sizeof(*done));
	double *tmp = xmalloc((n ? n : 1) * sizeof(*tmp)), *grp = xmalloc((n ? n : 1) * sizeof(*grp));
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (done[i])
			continue;
		size_t ng = 0;
		for (size_t j = i; j < n; j++) {
			if (done[j] || (j != i && (!hosts[i] || !hosts[j] || strcmp(hosts[i], hosts[j]))))
				continue;
			done[j] = true;
			if (!isnan(v[j]))
				grp[ng++] = v[j];
		}
		tmp[k++] = ng ? stats_median(grp, ng) : NAN;
	}
	memcpy(v, tmp, k * sizeof(*v));
	free(done);
	free(tmp);
	free(grp);
	return k;
}

/* Metric names to judge when --metric was not given: the union of what the
 * two cohorts have. */
static int default_metrics(struct db *db, struct metric_spec **specs, size_t *nspecs,
			   const int64_t *a, size_t na, const int64_t *b, size_t nb,
			   struct buf *err)
{
	char **ma = NULL, **mb = NULL;
	size_t nma = 0, nmb = 0;
	int r;

	if ((r = db_cohort_metrics(db, &ma, &nma, a, na, err)) ||
	    (r = db_cohort_metrics(db, &mb, &nmb, b, nb, err)))
		goto out;
	for (size_t k = 0; k < nma + nmb; k++) {
		const char *name = k < nma ? ma[k] : mb[k - nma];
		bool seen = false;
		for (size_t i = 0; i < *nspecs && !seen; i++)
			seen = !strcmp((*specs)[i].name, name);
		if (seen)
			continue;
		*specs = xrealloc(*specs, (*nspecs + 1) * sizeof(**specs));
		parse_metric_spec(&(*specs)[(*nspecs)++], name);
	}
out:
	db_strings_free(ma, nma);
	db_strings_free(mb, nmb);
	return r;
}

/* Both cohorts' runs (within --job and --window): -1 to go on, else the
 * exit status (no runs: 4; a bad selector or runs in both: 2). */
static int store_cohorts(struct db *db, const struct verdict_opts *o, struct cohort *ctl,
			 struct cohort *can)
{
	char since[32] = "";
	const char *since_p = NULL;
	size_t shared = 0;

	if (o->window_s > 0) {
		clock_iso8601(since, sizeof(since), clock_wall_s() - o->window_s);
		since_p = since;
	}
	if (cohort_runs(db, &ctl->ids, &ctl->n, "control", o->control, o->job, since_p) ||
	    cohort_runs(db, &can->ids, &can->n, "canary", o->canary, o->job, since_p))
		return 2;
	if (!ctl->n || !can->n) {
		no_runs_message(db, !ctl->n ? "control" : "canary", !ctl->n ? o->control : o->canary,
				o->job);
		if (since_p)
			fprintf(stderr, "  (only runs since %s: --window)\n", since);
		return EXIT_NO_VERDICT;
	}
	for (size_t i = 0; i < ctl->n; i++)
		for (size_t j = 0; j < can->n; j++)
			shared += ctl->ids[i] == can->ids[j];
	if (shared) {
		fprintf(stderr, "kcanary canary: --control '%s' and --canary '%s' share %zu of"
			" their runs; a run can be in one cohort only\n", o->control, o->canary, shared);
		return 2;
	}
	return -1;
}

/* The bad direction of metric m when --metric did not say: probes and
 * lower-is-better metrics 'increase', higher-is-better 'decrease', else
 * 'either'. 0, or the store's error with err (a direction it could not
 * read must not silently become 'either'). */
static int store_direction(enum canary_direction *dir, struct db *db,
			   const struct metric_spec *m, struct buf *err)
{
	char *better = NULL;
	int r = 0;

	*dir = CANARY_DIR_EITHER;
	if (!strncmp(m->name, "probe:", 6))
		*dir = CANARY_DIR_INCREASE;
	else if (!(r = db_metric_better(db, &better, m->name, err)) && better)
		*dir = !strcmp(better, "higher") ? CANARY_DIR_DECREASE : CANARY_DIR_INCREASE;
	free(better);
	return r;
}

/* The values of every metric of o for both cohorts: in[i] with weights[i];
 * vals[2i], vals[2i+1] own them. cc gets the host counts with --per-host.
 * Returns -1 to go on, else the exit status. */
static int store_values(struct db *db, struct verdict_opts *o, const struct cohort *ctl,
			const struct cohort *can, struct canary_metric_input *in, double **vals,
			double *weights, struct canary_cohorts *cc)
{
	struct buf err = BUF_INIT;
	size_t i;

	for (i = 0; i < o->nspecs; i++) {
		struct metric_spec *m = &o->specs[i];

		if (!m->has_direction && store_direction(&m->cfg.direction, db, m, &err))
			goto fail;
		metric_overrides(&m->cfg, m, o);
		if (db_cohort_values(db, &vals[2 * i], ctl->ids, ctl->n, m->name, &err) ||
		    db_cohort_values(db, &vals[2 * i + 1], can->ids, can->n, m->name, &err))
			goto fail;
		in[i].cfg = m->cfg;
		in[i].control = vals[2 * i];
		in[i].ncontrol = ctl->n;
		in[i].canary = vals[2 * i + 1];
		in[i].ncanary = can->n;
		if (o->by_host) {
			in[i].ncontrol = cc->control_hosts = per_host(vals[2 * i], ctl->hosts, ctl->n);
			in[i].ncanary = cc->canary_hosts = per_host(vals[2 * i + 1], can->hosts, can->n);
		}
		weights[i] = m->cfg.weight;
	}
	return -1;
fail:
	fprintf(stderr, "kcanary canary: --metric '%s': %s\n", o->specs[i].text, buf_str(&err));
	buf_release(&err);
	return 2;
}

/* The verdict with values from the store. Returns the exit status. */
static int store_verdict(struct verdict_opts *o)
{
	struct cohort ctl = { 0 }, can = { 0 };
	struct canary_metric_input *in = NULL;
	double **vals = NULL, *weights = NULL;
	struct buf err = BUF_INIT;
	struct db *db = NULL;
	char *dbpath = cmd_db_path();
	size_t nvals = 0;
	int ret = EXIT_NO_VERDICT;

	if (db_open(&db, dbpath, &err)) {
		fprintf(stderr, "kcanary canary: %s\n", buf_str(&err));
		goto out;
	}
	if ((ret = store_cohorts(db, o, &ctl, &can)) >= 0)
		goto out;
	ret = EXIT_NO_VERDICT;
	if (!o->nspecs && default_metrics(db, &o->specs, &o->nspecs, ctl.ids, ctl.n, can.ids,
					  can.n, &err)) {
		fprintf(stderr, "kcanary canary: %s\n", buf_str(&err));
		goto out;
	}
	if (!o->nspecs) {
		fprintf(stderr, "kcanary canary: the cohorts' runs have no summary metrics or probe"
			" totals to judge (NODATA): no verdict\n");
		goto out;
	}
	if (o->by_host && (db_cohort_hosts(db, &ctl.hosts, ctl.ids, ctl.n, &err) ||
			   db_cohort_hosts(db, &can.hosts, can.ids, can.n, &err))) {
		fprintf(stderr, "kcanary canary: %s\n", buf_str(&err));
		goto out;
	}
	struct canary_cohorts cc = {
		.control = o->control, .canary = o->canary, .control_runs = ctl.n,
		.canary_runs = can.n,
	};
	nvals = 2 * o->nspecs;
	in = xcalloc(o->nspecs, sizeof(*in));
	vals = xcalloc(nvals, sizeof(*vals));
	weights = xcalloc(o->nspecs, sizeof(*weights));
	if ((ret = store_values(db, o, &ctl, &can, in, vals, weights, &cc)) < 0)
		ret = judge_and_print(in, weights, o->nspecs, o, &cc);
out:
	for (size_t i = 0; i < nvals; i++)
		free(vals[i]);
	free(vals);
	free(in);
	free(weights);
	cohort_release(&ctl);
	cohort_release(&can);
	db_close(db);
	free(dbpath);
	buf_release(&err);
	return ret;
}

/* ---- the verdict: values from Prometheus ---- */

/* Each cohort's selectors as PromQL label matchers (match[0] control,
 * match[1] canary; caller frees). -EINVAL with a message. */
static int prom_cohort_matchers(char *match[2], const struct verdict_opts *o)
{
	const char *cohort_text[2] = { o->control, o->canary }, *which[2] = { "control", "canary" };

	for (int c = 0; c < 2; c++) {
		struct db_selector *sel = NULL;
		struct buf err = BUF_INIT;
		size_t nsel = 0;
		int r = db_selectors_parse(&sel, &nsel, cohort_text[c], &err);
		if (!r)
			r = prom_matchers(&match[c], sel, nsel, &err);
		db_selectors_free(sel, nsel);
		if (r) {
			fprintf(stderr, "kcanary canary: --%s '%s': %s\n", which[c], cohort_text[c],
				buf_str(&err));
			buf_release(&err);
			return -EINVAL;
		}
	}
	return 0;
}

/* The i-th --query with $cohort replaced by match, into pr. -EIO or
 * -EPROTO with a message. */
static int prom_query_cohort(struct prom_result *pr, const struct verdict_opts *o, size_t i,
			     const char *match, double end_s)
{
	const struct prom_args *pa = &o->prom;
	struct buf q = BUF_INIT;
	const char *p = pa->exprs[i], *hit;
	struct buf err = BUF_INIT;
	int r;

	while ((hit = strstr(p, "$cohort"))) {
		buf_append(&q, p, (size_t)(hit - p));
		buf_puts(&q, match);
		p = hit + 7;
	}
	buf_puts(&q, p);
	r = prom_query(pr, pa->url, buf_str(&q), end_s, o->window_s, pa->step_s, &err);
	if (r)
		fprintf(stderr, "kcanary canary: --query '%s': %s\n", pa->names[i], buf_str(&err));
	buf_release(&q);
	buf_release(&err);
	return r;
}

/* --per-host with Prometheus: one value per series, its median, in place.
 * Returns how many values pr->values now holds. */
static size_t series_medians(struct prom_result *pr)
{
	double *tmp = xmalloc((pr->nseries ? pr->nseries : 1) * sizeof(*tmp));
	double *grp = xmalloc((pr->n ? pr->n : 1) * sizeof(*grp));
	size_t k = 0;

	for (size_t s = 0; s < pr->nseries; s++) {
		size_t ng = 0;
		for (size_t j = 0; j < pr->n; j++)
			if (pr->series_of[j] == s)
				grp[ng++] = pr->values[j];
		if (ng)
			tmp[k++] = stats_median(grp, ng);
	}
	memcpy(pr->values, tmp, k * sizeof(*tmp));
	free(tmp);
	free(grp);
	return k;
}

/* The i-th query's configuration: its --metric NAME,OPTIONS when there is
 * one (default direction: either), the verdict's overrides. */
static struct canary_metric_config prom_metric_config(const struct verdict_opts *o, size_t i)
{
	const char *name = o->prom.names[i];
	const struct metric_spec *m = NULL;
	struct canary_metric_config cfg;

	for (size_t k = 0; k < o->nspecs && !m; k++)
		if (!strcmp(o->specs[k].name, name))
			m = &o->specs[k];
	if (m)
		cfg = m->cfg;
	else
		canary_metric_config_default(&cfg, name);
	if (!m || !m->has_direction)
		cfg.direction = CANARY_DIR_EITHER;
	metric_overrides(&cfg, m, o);
	cfg.name = name;
	return cfg;
}

/* The verdict with values from Prometheus (--prometheus): each --query
 * per cohort, then the judge as for the store. Returns the exit status. */
static int prometheus_verdict(const struct verdict_opts *o)
{
	const struct prom_args *pa = &o->prom;
	char *match[2] = { NULL, NULL };
	struct canary_metric_input *in = xcalloc(pa->n, sizeof(*in));
	struct prom_result *res = xcalloc(2 * pa->n, sizeof(*res));
	double *weights = xcalloc(pa->n, sizeof(*weights)), end_s = clock_wall_s();
	size_t nvals[2] = { 0, 0 }, nseries[2] = { 0, 0 };
	int ret = 2;

	if (prom_cohort_matchers(match, o))
		goto out;
	for (size_t i = 0; i < pa->n; i++) {
		in[i].cfg = prom_metric_config(o, i);
		weights[i] = in[i].cfg.weight;
		for (int c = 0; c < 2; c++) {
			struct prom_result *pr = &res[2 * i + c];
			if (prom_query_cohort(pr, o, i, match[c], end_s)) {
				ret = EXIT_NO_VERDICT;
				goto out;
			}
			size_t n = o->by_host ? series_medians(pr) : pr->n;
			*(c == 0 ? &in[i].control : &in[i].canary) = pr->values;
			*(c == 0 ? &in[i].ncontrol : &in[i].ncanary) = n;
			if (pr->n > nvals[c])
				nvals[c] = pr->n;
			if (pr->nseries > nseries[c])
				nseries[c] = pr->nseries;
		}
	}
	struct canary_cohorts cc = {
		.control = o->control, .canary = o->canary, .control_runs = nvals[0],
		.canary_runs = nvals[1], .control_hosts = nseries[0], .canary_hosts = nseries[1],
		.unit = "samples",
	};
	ret = judge_and_print(in, weights, pa->n, o, &cc);
out:
	for (size_t i = 0; i < 2 * pa->n; i++)
		prom_result_release(&res[i]);
	free(res);
	free(in);
	free(weights);
	free(match[0]);
	free(match[1]);
	return ret;
}

/* `kcanary canary --control SEL --canary SEL ...`: the verdict. */
static int do_verdict(int argc, char **argv)
{
	struct verdict_opts o;
	int ret;

	verdict_opts_init(&o);
	if ((ret = verdict_parse(&o, argc, argv)) < 0)
		ret = o.prom.url ? prometheus_verdict(&o) : store_verdict(&o);
	verdict_opts_release(&o);
	return ret;
}

static const struct cmd_verb verbs[] = {
	{ "simulate", do_simulate },
	{ NULL, do_verdict },
};

int cmd_canary(int argc, char **argv)
{
	return cmd_select("kcanary canary", verbs, argc, argv);
}
