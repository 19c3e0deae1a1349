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

#include "canary.h"
#include "canary_sim.h"
#include "cmd.h"
#include "db.h"
#include "db_canary.h"
#include "prometheus.h"
#include "stats.h"
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
	size_t nsel = 0;
	char *err = NULL;
	int r;

	if ((r = db_selectors_parse(&sel, &nsel, text, &err))) {
		fprintf(stderr, "kcanary canary: --%s: %s\n", which, err);
		free(err);
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
	r = db_cohort_runs(db, ids, n, sel, nsel);
	if (r)
		fprintf(stderr, "kcanary canary: --%s '%s': %s\n", which, text, db_errmsg(db));
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
	if (!db_kernel_releases(db, &rel, &nrel) && nrel) {
		fprintf(stderr, "  kernels in the store:");
		for (size_t i = 0; i < nrel; i++)
			fprintf(stderr, "%s %s", i ? "," : "", rel[i]);
		fprintf(stderr, "\n");
	} else if (!nrel) {
		fprintf(stderr, "  the store has no runs with a kernel release\n");
	}
	db_strings_free(rel, nrel);
}

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
	size_t runs[16] = { 5, 10, 20, 40 }, nruns = 4, z;
	double d;
	int c;

	canary_sim_opts_default(&so);
	optind = 1;
	while ((c = cmd_getopt(argc, argv, "kcanary canary simulate", "h", lopts)) != -1) {
		switch (c) {
		case 't':
			if (parse_size_t(&z, optarg) || !z || z > 1000000)
				goto bad;
			so.trials = (unsigned)z;
			break;
		case 'r': {
			char *copy = xstrdup(optarg), *save = NULL, *tok;
			nruns = 0;
			for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (nruns == 16 || parse_size_t(&z, tok) || z < 2 || z > 10000) {
					free(copy);
					goto bad;
				}
				runs[nruns++] = z;
			}
			free(copy);
			if (!nruns)
				goto bad;
			break;
		}
		case 's':
			if (parse_size_t(&z, optarg))
				goto bad;
			so.seed = z;
			break;
		case 'S':
			if (parse_double(&d, optarg) || d <= -1)
				goto bad;
			so.shift = d;
			break;
		case 'w':
			if (parse_double(&d, optarg) || d <= 0)
				goto bad;
			so.spread = d;
			break;
		case 'k':
			if (parse_double(&d, optarg) || d < 0 || d > 1)
				goto bad;
			so.stall_rate = d;
			break;
		case 'a':
			if (parse_double(&d, optarg) || d <= 0 || d >= 1)
				goto bad;
			so.judge.alpha = d;
			break;
		case 'T':
		case 'W':
			if (parse_double(&d, optarg) || d < 0)
				goto bad;
			*(c == 'T' ? &so.metric.tolerance : &so.metric.spread_tolerance) = d;
			break;
		case 'n':
			so.metric.spread_check = false;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fputs(usage_text, stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "kcanary canary simulate: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	printf("canary judge on simulated cohorts: %u trials per cell, seed %llu\n"
	       "per-host worst lag from the seed's good-kernel distribution (median %.2f s);\n"
	       "one metric (bad: increase), alpha %.3g, tolerance %.0f%%, ",
	       so.trials, (unsigned long long)so.seed, CANARY_SIM_MEDIAN_S, so.judge.alpha,
	       100 * so.metric.tolerance);
	if (so.metric.spread_check)
		printf("spread tolerance %.2fx,\n%u permutations\n\n", 1 + so.metric.spread_tolerance,
		       so.judge.permutations);
	else
		printf("no dispersion check\n(Mann-Whitney and effect size only, as Kayenta)\n\n");
	char h1[32], h2[32], h3[32];
	snprintf(h1, sizeof(h1), "shift %+.0f%%", 100 * so.shift);
	snprintf(h2, sizeof(h2), "spread x%.3g", so.spread);
	snprintf(h3, sizeof(h3), "stalls %.0f%%", 100 * so.stall_rate);
	printf("%11s  %9s  %13s  %13s  %13s\n", "runs/cohort", "A/A pass", h1, h2, h3);
	printf("%11s  %9s  %13s  %13s  %13s\n", "", "", "caught", "caught", "caught");
	for (size_t i = 0; i < nruns; i++) {
		struct canary_sim_stats st[4];
		so.runs = runs[i];
		for (int s = 0; s < 4; s++)
			if (canary_sim_run(&st[s], (enum canary_sim_scenario)s, &so))
				return 1;
		double aa = 100.0 * st[0].result[CANARY_RESULT_PASS] / st[0].trials;
		double caught[3];
		for (int s = 1; s < 4; s++)
			caught[s - 1] = 100.0 * (st[s].trials - st[s].result[CANARY_RESULT_PASS]) /
					st[s].trials;
		printf("%11zu  %8.1f%%  %12.1f%%  %12.1f%%  %12.1f%%\n", runs[i], aa, caught[0],
		       caught[1], caught[2]);
	}
	printf("\nA/A goal: >= 95%% pass. Cohorts smaller than stats_runs_needed(alpha) are\n"
	       "NODATA (%zu runs at alpha %.3g: Mann-Whitney cannot reach p < alpha below that).\n",
	       stats_runs_needed(so.judge.alpha), so.judge.alpha);
	return 0;
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
			   const int64_t *a, size_t na, const int64_t *b, size_t nb)
{
	char **ma = NULL, **mb = NULL;
	size_t nma = 0, nmb = 0;
	int r;

	if ((r = db_cohort_metrics(db, &ma, &nma, a, na)) ||
	    (r = db_cohort_metrics(db, &mb, &nmb, b, nb)))
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

struct prom_args {
	const char *url;
	char **names, **exprs;		/* --query NAME=PROMQL */
	size_t n;
	double step_s;
};

/* The verdict with values from Prometheus (--prometheus): each --query
 * per cohort, then the judge as for the store. Returns the exit status. */
static int prometheus_verdict(const struct prom_args *pa, const char *control,
			      const char *canary, struct metric_spec *specs, size_t nspecs,
			      const struct canary_opts *co, double window_s, bool by_host,
			      bool json, double tolerance, double spread_tol, bool no_spread,
			      bool has_nodata, enum canary_nodata nodata)
{
	const char *cohort_text[2] = { control, canary }, *which[2] = { "control", "canary" };
	char *match[2] = { NULL, NULL }, err[1024];
	struct canary_metric_input *in = xcalloc(pa->n, sizeof(*in));
	struct prom_result *res = xcalloc(2 * pa->n, sizeof(*res));
	struct metric_spec *ms = xcalloc(pa->n, sizeof(*ms));
	double *weights = xcalloc(pa->n, sizeof(*weights)), end_s = clock_wall_s();
	struct canary_verdict v = { 0 };
	struct buf out = BUF_INIT;
	size_t nvals[2] = { 0, 0 }, nseries[2] = { 0, 0 };
	int ret = 2;

	for (int c = 0; c < 2; c++) {
		struct db_selector *sel = NULL;
		size_t nsel = 0;
		char *perr = NULL;
		int r = db_selectors_parse(&sel, &nsel, cohort_text[c], &perr);
		if (!r && (r = prom_matchers(&match[c], sel, nsel, err, sizeof(err))))
			perr = xstrdup(err);
		db_selectors_free(sel, nsel);
		if (r) {
			fprintf(stderr, "kcanary canary: --%s '%s': %s\n", which[c], cohort_text[c], perr);
			free(perr);
			goto out;
		}
	}
	for (size_t i = 0; i < pa->n; i++) {
		struct metric_spec *m = NULL;
		for (size_t k = 0; k < nspecs && !m; k++)
			if (!strcmp(specs[k].name, pa->names[i]))
				m = &specs[k];
		if (m)
			ms[i] = *m;
		else
			canary_metric_config_default(&ms[i].cfg, pa->names[i]);
		if (!m || !m->has_direction)
			ms[i].cfg.direction = CANARY_DIR_EITHER;
		if ((!m || !m->has_tolerance) && !isnan(tolerance))
			ms[i].cfg.tolerance = tolerance;
		if ((!m || !m->has_spread_tol) && !isnan(spread_tol))
			ms[i].cfg.spread_tolerance = spread_tol;
		if ((!m || !m->has_nodata) && has_nodata)
			ms[i].cfg.nodata = nodata;
		if (no_spread)
			ms[i].cfg.spread_check = false;
		ms[i].cfg.name = pa->names[i];
		for (int c = 0; c < 2; c++) {
			struct buf q = BUF_INIT;
			const char *p = pa->exprs[i], *hit;
			while ((hit = strstr(p, "$cohort"))) {
				buf_append(&q, p, (size_t)(hit - p));
				buf_puts(&q, match[c]);
				p = hit + 7;
			}
			buf_puts(&q, p);
			struct prom_result *pr = &res[2 * i + c];
			int r = prom_query(pr, pa->url, buf_str(&q), end_s, window_s, pa->step_s,
					   err, sizeof(err));
			if (r) {
				fprintf(stderr, "kcanary canary: --query '%s': %s\n", pa->names[i], err);
				buf_release(&q);
				ret = 4;
				goto out;
			}
			buf_release(&q);
			size_t n = pr->n;
			if (by_host) {   /* one value per series: its median */
				double *tmp = xmalloc((pr->nseries ? pr->nseries : 1) * sizeof(*tmp));
				double *grp = xmalloc((n ? n : 1) * sizeof(*grp));
				size_t k = 0;
				for (size_t s = 0; s < pr->nseries; s++) {
					size_t ng = 0;
					for (size_t j = 0; j < n; j++)
						if (pr->series_of[j] == s)
							grp[ng++] = pr->values[j];
					if (ng)
						tmp[k++] = stats_median(grp, ng);
				}
				memcpy(pr->values, tmp, k * sizeof(*tmp));
				n = k;
				free(tmp);
				free(grp);
			}
			if (c == 0) {
				in[i].control = pr->values;
				in[i].ncontrol = n;
			} else {
				in[i].canary = pr->values;
				in[i].ncanary = n;
			}
			if (pr->n > nvals[c])
				nvals[c] = pr->n;
			if (pr->nseries > nseries[c])
				nseries[c] = pr->nseries;
		}
		in[i].cfg = ms[i].cfg;
		weights[i] = ms[i].cfg.weight;
	}
	if (canary_judge(&v, in, pa->n, co)) {
		fprintf(stderr, "kcanary canary: invalid judge settings\n");
		goto out;
	}
	struct canary_cohorts cc = {
		.control = control, .canary = canary, .control_runs = nvals[0],
		.canary_runs = nvals[1], .control_hosts = nseries[0], .canary_hosts = nseries[1],
		.unit = "samples",
	};
	ret = print_verdict(&out, &v, &cc, weights, json);
out:
	canary_verdict_release(&v);
	buf_release(&out);
	for (size_t i = 0; i < 2 * pa->n; i++)
		prom_result_release(&res[i]);
	free(res);
	free(in);
	free(ms);
	free(weights);
	free(match[0]);
	free(match[1]);
	return ret;
}

int cmd_canary(int argc, char **argv)
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
	const char *control = NULL, *canary = NULL, *job = NULL;
	struct metric_spec *specs = NULL;
	size_t nspecs = 0, nuser = 0;
	struct canary_opts co;
	bool json = false, no_spread = false, by_host = false;
	char **ctl_hosts = NULL, **can_hosts = NULL;
	size_t nctl_hosts = 0, ncan_hosts = 0;
	double tolerance = NAN, spread_tol = NAN, d, window_s = 0;
	char since[32] = "";
	bool has_nodata = false;
	enum canary_nodata nodata = CANARY_NODATA_IGNORE;
	struct db *db = NULL;
	char *dbpath = NULL;
	int64_t *ctl_ids = NULL, *can_ids = NULL;
	size_t nctl = 0, ncan = 0, z;
	struct canary_metric_input *in = NULL;
	double **vals = NULL, *weights = NULL;
	struct canary_verdict v = { 0 };
	struct buf out = BUF_INIT;
	struct prom_args pa = { .step_s = 15 };
	int c, ret = 2;

	if (argc > 1 && !strcmp(argv[1], "simulate"))
		return do_simulate(argc - 1, argv + 1);
	canary_opts_default(&co);
	optind = 1;
	while ((c = cmd_getopt(argc, argv, "kcanary canary", "h", lopts)) != -1) {
		switch (c) {
		case 'c': control = optarg; break;
		case 'k': canary = optarg; break;
		case 'j': job = optarg; break;
		case 'm':
			specs = xrealloc(specs, (nspecs + 1) * sizeof(*specs));
			if (parse_metric_spec(&specs[nspecs], optarg)) {
				metric_spec_release(&specs[nspecs]);
				goto out;
			}
			nspecs++;
			break;
		case 'f':
			if (strcmp(optarg, "text") && strcmp(optarg, "json")) {
				fprintf(stderr, "kcanary canary: --format '%s': expected text or json\n",
					optarg);
				goto out;
			}
			json = !strcmp(optarg, "json");
			break;
		case 'a':
			if (parse_double(&co.alpha, optarg) || co.alpha <= 0 || co.alpha >= 1) {
				fprintf(stderr, "kcanary canary: --alpha '%s': expected a number in (0, 1)\n",
					optarg);
				goto out;
			}
			break;
		case 'P':
		case 'M':
			if (parse_double(&d, optarg) || d < 0 || d > 100) {
				fprintf(stderr, "kcanary canary: --%s '%s': expected a score 0..100\n",
					c == 'P' ? "pass" : "marginal", optarg);
				goto out;
			}
			*(c == 'P' ? &co.pass_threshold : &co.marginal_threshold) = d;
			break;
		case 't':
		case 'T':
			if (parse_double(&d, optarg) || d < 0) {
				fprintf(stderr, "kcanary canary: --%s '%s': expected a fraction >= 0\n",
					c == 't' ? "tolerance" : "spread-tolerance", optarg);
				goto out;
			}
			*(c == 't' ? &tolerance : &spread_tol) = d;
			break;
		case 'n': no_spread = true; break;
		case 'H': by_host = true; break;
		case 'r':
			if (parse_size_t(&z, optarg) || z < 2) {
				fprintf(stderr, "kcanary canary: --min-runs '%s': expected a number >= 2\n",
					optarg);
				goto out;
			}
			co.min_n = z;
			break;
		case 'N':
			if (canary_nodata_parse(&nodata, optarg)) {
				fprintf(stderr, "kcanary canary: --nodata '%s': expected ignore, fail or"
					" pass\n", optarg);
				goto out;
			}
			has_nodata = true;
			break;
		case 's':
			if (parse_size_t(&z, optarg)) {
				fprintf(stderr, "kcanary canary: --seed '%s': expected a number\n", optarg);
				goto out;
			}
			co.seed = z;
			break;
		case 'w':
			if (parse_duration_s(&window_s, optarg) || !(window_s > 0)) {
				fprintf(stderr, "kcanary canary: --window '%s': expected a duration"
					" (30m, 1h, 3600)\n", optarg);
				goto out;
			}
			break;
		case 'p': pa.url = optarg; break;
		case 'q': {
			const char *eq = strchr(optarg, '=');
			if (!eq || eq == optarg || !strstr(eq + 1, "$cohort")) {
				fprintf(stderr, "kcanary canary: --query '%s': expected NAME=PROMQL with"
					" $cohort where the cohort's label matchers go, as in "
					"'x_s=kcanary_workload_sample{metric=\"x_s\",$cohort}'\n", optarg);
				goto out;
			}
			pa.names = xrealloc(pa.names, (pa.n + 1) * sizeof(*pa.names));
			pa.exprs = xrealloc(pa.exprs, (pa.n + 1) * sizeof(*pa.exprs));
			pa.names[pa.n] = xstrndup(optarg, (size_t)(eq - optarg));
			pa.exprs[pa.n++] = xstrdup(eq + 1);
			break;
		}
		case 'x':
			if (parse_duration_s(&pa.step_s, optarg) || !(pa.step_s > 0)) {
				fprintf(stderr, "kcanary canary: --step '%s': expected a duration (15s)\n",
					optarg);
				goto out;
			}
			break;
		case 'h':
			fputs(usage_text, stdout);
			ret = 0;
			goto out;
		default:
			fputs(usage_text, stderr);
			goto out;
		}
	}
	if (!pa.url != !pa.n) {
		fprintf(stderr, "kcanary canary: %s\n", pa.url ? "--prometheus needs at least one --query"
			: "--query needs --prometheus URL");
		goto out;
	}
	if (pa.url && job) {
		fprintf(stderr, "kcanary canary: --job selects runs in the store, not Prometheus series\n");
		goto out;
	}
	if (!control || !canary || optind != argc) {
		fprintf(stderr, "kcanary canary: %s\n", !control ? "--control is required" :
			!canary ? "--canary is required" : "unexpected argument");
		fputs(usage_text, stderr);
		goto out;
	}
	if (co.marginal_threshold > co.pass_threshold) {
		fprintf(stderr, "kcanary canary: --marginal %.3g is above --pass %.3g\n",
			co.marginal_threshold, co.pass_threshold);
		goto out;
	}

	if (pa.url) {
		ret = prometheus_verdict(&pa, control, canary, specs, nspecs, &co, window_s, by_host,
					 json, tolerance, spread_tol, no_spread, has_nodata, nodata);
		goto out;
	}
	ret = EXIT_NO_VERDICT;
	dbpath = cmd_db_path();
	if (db_open(&db, dbpath)) {
		fprintf(stderr, "kcanary canary: cannot open the store '%s'\n", dbpath);
		goto out;
	}
	if (window_s > 0)
		clock_iso8601(since, sizeof(since), clock_wall_s() - window_s);
	if (cohort_runs(db, &ctl_ids, &nctl, "control", control, job, window_s > 0 ? since : NULL) ||
	    cohort_runs(db, &can_ids, &ncan, "canary", canary, job, window_s > 0 ? since : NULL)) {
		ret = 2;
		goto out;
	}
	if (!nctl || !ncan) {
		no_runs_message(db, !nctl ? "control" : "canary", !nctl ? control : canary, job);
		if (window_s > 0)
			fprintf(stderr, "  (only runs since %s: --window)\n", since);
		goto out;
	}
	size_t shared = 0;
	for (size_t i = 0; i < nctl; i++)
		for (size_t j = 0; j < ncan; j++)
			shared += ctl_ids[i] == can_ids[j];
	if (shared) {
		fprintf(stderr, "kcanary canary: --control '%s' and --canary '%s' share %zu of"
			" their runs; a run can be in one cohort only\n", control, canary, shared);
		ret = 2;
		goto out;
	}
	nuser = nspecs;
	if (!nuser && default_metrics(db, &specs, &nspecs, ctl_ids, nctl, can_ids, ncan)) {
		fprintf(stderr, "kcanary canary: %s\n", db_errmsg(db));
		goto out;
	}
	if (!nspecs) {
		fprintf(stderr, "kcanary canary: the cohorts' runs have no summary metrics or probe"
			" totals to judge (NODATA): no verdict\n");
		goto out;
	}

	if (by_host && (db_cohort_hosts(db, &ctl_hosts, ctl_ids, nctl) ||
			db_cohort_hosts(db, &can_hosts, can_ids, ncan))) {
		fprintf(stderr, "kcanary canary: %s\n", db_errmsg(db));
		goto out;
	}
	in = xcalloc(nspecs, sizeof(*in));
	vals = xcalloc(2 * nspecs, sizeof(*vals));
	weights = xcalloc(nspecs, sizeof(*weights));
	for (size_t i = 0; i < nspecs; i++) {
		struct metric_spec *m = &specs[i];
		if (!m->has_direction) {
			char *better = NULL;
			if (!strncmp(m->name, "probe:", 6))
				m->cfg.direction = CANARY_DIR_INCREASE;
			else if (db_metric_better(db, &better, m->name) == 0 && better)
				m->cfg.direction = !strcmp(better, "higher") ? CANARY_DIR_DECREASE :
						   CANARY_DIR_INCREASE;
			else
				m->cfg.direction = CANARY_DIR_EITHER;
			free(better);
		}
		if (!m->has_tolerance && !isnan(tolerance))
			m->cfg.tolerance = tolerance;
		if (!m->has_spread_tol && !isnan(spread_tol))
			m->cfg.spread_tolerance = spread_tol;
		if (!m->has_nodata && has_nodata)
			m->cfg.nodata = nodata;
		if (no_spread)
			m->cfg.spread_check = false;
		if (db_cohort_values(db, &vals[2 * i], ctl_ids, nctl, m->name) ||
		    db_cohort_values(db, &vals[2 * i + 1], can_ids, ncan, m->name)) {
			fprintf(stderr, "kcanary canary: --metric '%s': %s\n", m->text, db_errmsg(db));
			ret = 2;
			goto out;
		}
		in[i].cfg = m->cfg;
		in[i].control = vals[2 * i];
		in[i].ncontrol = nctl;
		in[i].canary = vals[2 * i + 1];
		in[i].ncanary = ncan;
		if (by_host) {
			in[i].ncontrol = nctl_hosts = per_host(vals[2 * i], ctl_hosts, nctl);
			in[i].ncanary = ncan_hosts = per_host(vals[2 * i + 1], can_hosts, ncan);
		}
		weights[i] = m->cfg.weight;
	}
	if (canary_judge(&v, in, nspecs, &co)) {
		fprintf(stderr, "kcanary canary: invalid judge settings\n");
		ret = 2;
		goto out;
	}
	struct canary_cohorts cc = {
		.control = control, .canary = canary, .control_runs = nctl, .canary_runs = ncan,
		.control_hosts = nctl_hosts, .canary_hosts = ncan_hosts,
	};
	ret = print_verdict(&out, &v, &cc, weights, json);
out:
	canary_verdict_release(&v);
	buf_release(&out);
	if (vals)
		for (size_t i = 0; i < 2 * nspecs; i++)
			free(vals[i]);
	free(vals);
	free(in);
	free(weights);
	for (size_t i = 0; i < nspecs; i++)
		metric_spec_release(&specs[i]);
	free(specs);
	free(ctl_ids);
	free(can_ids);
	if (ctl_hosts)
		db_strings_free(ctl_hosts, nctl);
	if (can_hosts)
		db_strings_free(can_hosts, ncan);
	db_close(db);
	free(dbpath);
	for (size_t i = 0; i < pa.n; i++) {
		free(pa.names[i]);
		free(pa.exprs[i]);
	}
	free(pa.names);
	free(pa.exprs);
	return ret;
}
