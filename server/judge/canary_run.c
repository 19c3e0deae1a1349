/* canary_run.c - from cohort selectors to a canary verdict: cohorts of runs
 * in the store or series in Prometheus, per-host medians, the judge
 * (canary_run.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "judge/canary_run.h"
#include "judge/stats.h"
#include "store/db.h"
#include "store/db_canary.h"
#include "wrap/prometheus.h"
#include "util.h"

int canary_parse_double(double *out, const char *s)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v))
		return -EINVAL;
	*out = v;
	return 0;
}

int canary_parse_size(size_t *out, const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s || *end || errno || *s == '-')
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}

/* One OPTION of a metric spec (tok, its value val or NULL) into m;
 * -EINVAL when it is not one. */
static int metric_option(struct canary_metric_spec *m, const char *tok, const char *val)
{
	double d;
	size_t z;

	if (!strcmp(tok, "critical") && !val) {
		m->cfg.critical = true;
	} else if (!strcmp(tok, "nospread") && !val) {
		m->cfg.spread_check = false;
	} else if (!strcmp(tok, "weight") && val && !canary_parse_double(&d, val) && d > 0) {
		m->cfg.weight = d;
	} else if (!strcmp(tok, "direction") && val &&
		   !canary_direction_parse(&m->cfg.direction, val)) {
		m->has_direction = true;
	} else if (!strcmp(tok, "tolerance") && val && !canary_parse_double(&d, val) && d >= 0) {
		m->cfg.tolerance = d;
		m->has_tolerance = true;
	} else if (!strcmp(tok, "spread-tolerance") && val && !canary_parse_double(&d, val) &&
		   d >= 0) {
		m->cfg.spread_tolerance = d;
		m->has_spread_tol = true;
	} else if (!strcmp(tok, "nodata") && val && !canary_nodata_parse(&m->cfg.nodata, val)) {
		m->has_nodata = true;
	} else if (!strcmp(tok, "min-runs") && val && !canary_parse_size(&z, val) && z >= 2) {
		m->cfg.min_n = z;
	} else {
		return -EINVAL;
	}
	return 0;
}

int canary_metric_spec_parse(struct canary_metric_spec *m, const char *spec, struct buf *err)
{
	char *copy = xstrdup(spec), *save = NULL;
	char *tok = strtok_r(copy, ",", &save);
	int r = -EINVAL;

	memset(m, 0, sizeof(*m));
	m->text = xstrdup(spec);
	if (!tok || !*tok) {
		err_setf(err, -EINVAL, "--metric '%s': expected NAME[,OPTION...]", spec);
		goto out;
	}
	m->name = xstrdup(tok);
	canary_metric_config_default(&m->cfg, m->name);
	while ((tok = strtok_r(NULL, ",", &save))) {
		char *eq = strchr(tok, '=');
		const char *val = eq ? eq + 1 : NULL;
		if (eq)
			*eq = '\0';
		if (metric_option(m, tok, val)) {
			err_setf(err, -EINVAL, "--metric '%s': bad option '%s%s%s'; expected critical, "
				   "nospread, weight=W (> 0), direction=increase|decrease|either,"
				   " tolerance=F, spread-tolerance=F (>= 0), nodata=ignore|fail|pass "
				   "or min-runs=N (>= 2)", spec, tok, val ? "=" : "", val ? val : "");
			goto out;
		}
	}
	r = 0;
out:
	free(copy);
	return r;
}

void canary_metric_spec_release(struct canary_metric_spec *m)
{
	free(m->text);
	free(m->name);
}

int canary_prom_add_query(struct canary_prom *p, const char *arg, struct buf *err)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !strstr(eq + 1, "$cohort")) {
		err_setf(err, -EINVAL, "--query '%s': expected NAME=PROMQL with $cohort where the "
			   "cohort's label matchers go, as in "
			   "'x_s=kcanary_workload_sample{metric=\"x_s\",$cohort}'", arg);
		return -EINVAL;
	}
	p->names = xrealloc(p->names, (p->n + 1) * sizeof(*p->names));
	p->exprs = xrealloc(p->exprs, (p->n + 1) * sizeof(*p->exprs));
	p->names[p->n] = xstrndup(arg, (size_t)(eq - arg));
	p->exprs[p->n++] = xstrdup(eq + 1);
	return 0;
}

void canary_run_opts_init(struct canary_run_opts *o)
{
	memset(o, 0, sizeof(*o));
	canary_opts_default(&o->judge);
	o->tolerance = o->spread_tol = NAN;
	o->nodata = CANARY_NODATA_IGNORE;
	o->prom.step_s = 15;
}

void canary_run_opts_release(struct canary_run_opts *o)
{
	for (size_t i = 0; i < o->nspecs; i++)
		canary_metric_spec_release(&o->specs[i]);
	free(o->specs);
	for (size_t i = 0; i < o->prom.n; i++) {
		free(o->prom.names[i]);
		free(o->prom.exprs[i]);
	}
	free(o->prom.names);
	free(o->prom.exprs);
}

void canary_run_release(struct canary_run *r)
{
	canary_verdict_release(&r->verdict);
	free(r->weights);
	memset(r, 0, sizeof(*r));
}

/* The verdict's overrides (--tolerance, --spread-tolerance, --nodata,
 * --no-spread) on cfg, except where m (NULL: none) sets its own. */
static void metric_overrides(struct canary_metric_config *cfg, const struct canary_metric_spec *m,
			     const struct canary_run_opts *o)
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

/* The judge over n inputs into out (which takes weights). -EINVAL when the
 * judge refuses its settings. */
static int judge(struct canary_run *out, const struct canary_metric_input *in, double *weights,
		 size_t n, const struct canary_run_opts *o, const struct canary_cohorts *cc,
		 struct buf *err)
{
	struct canary_run run = { .cohorts = *cc, .weights = weights, .n = n };

	if (canary_judge(&run.verdict, in, n, &o->judge)) {
		err_setf(err, -EINVAL, "invalid judge settings");
		canary_verdict_release(&run.verdict);
		free(weights);
		return -EINVAL;
	}
	*out = run;
	return 0;
}

/* ---- values from the store ---- */

/* One cohort's runs in the store; hosts with by_host (one per run). */
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

/* by_host: replace the n per-run values by one per host, the median of
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

/* The runs of one cohort (which: "control"), its selectors text plus
 * job=J and since=T when given. -EINVAL with err, whatever failed. */
static int cohort_runs(struct db *db, struct cohort *c, const char *which, const char *text,
		       const char *job, const char *since, struct buf *err)
{
	struct db_selector *sel = NULL;
	struct buf why = BUF_INIT;
	size_t nsel = 0;
	int r;

	if (db_selectors_parse(&sel, &nsel, text, &why)) {
		err_setf(err, -EINVAL, "--%s: %s", which, buf_str(&why));
		r = -EINVAL;
		goto out;
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
	if ((r = db_cohort_runs(db, &c->ids, &c->n, sel, nsel, &why))) {
		err_setf(err, -EINVAL, "--%s '%s': %s", which, text, buf_str(&why));
		r = -EINVAL;
	}
out:
	buf_release(&why);
	db_selectors_free(sel, nsel);
	return r;
}

/* A cohort (which, its selectors text) that matches no runs: -ENODATA
 * with err saying so and which kernels the store has. */
static int no_runs(struct db *db, const char *which, const char *text, const char *job,
		   const char *since, struct buf *err)
{
	struct buf msg = BUF_INIT;
	char **rel = NULL;
	size_t nrel = 0;
	int r;

	buf_printf(&msg, "--%s '%s'%s%s%s matches no runs (NODATA): no verdict", which, text,
		   job ? " in job '" : "", job ? job : "", job ? "'" : "");
	if (!db_kernel_releases(db, &rel, &nrel, NULL) && nrel) {
		buf_puts(&msg, "\n  kernels in the store:");
		for (size_t i = 0; i < nrel; i++)
			buf_printf(&msg, "%s %s", i ? "," : "", rel[i]);
	} else if (!nrel) {
		buf_puts(&msg, "\n  the store has no runs with a kernel release");
	}
	db_strings_free(rel, nrel);
	if (since)
		buf_printf(&msg, "\n  (only runs since %s: --window)", since);
	r = err_setf(err, -ENODATA, "%s", buf_str(&msg));
	buf_release(&msg);
	return r;
}

/* Both cohorts' runs (within job and window): 0, -EINVAL (a bad selector,
 * runs in both) or -ENODATA (a cohort has none). */
static int store_cohorts(struct db *db, const struct canary_run_opts *o, struct cohort *ctl,
			 struct cohort *can, struct buf *err)
{
	char since[32] = "";
	const char *since_p = NULL;
	size_t shared = 0;
	int r;

	if (o->window_s > 0) {
		clock_iso8601(since, sizeof(since), clock_wall_s() - o->window_s);
		since_p = since;
	}
	if ((r = cohort_runs(db, ctl, "control", o->control, o->job, since_p, err)) ||
	    (r = cohort_runs(db, can, "canary", o->canary, o->job, since_p, err)))
		return r;
	if (!ctl->n || !can->n)
		return no_runs(db, !ctl->n ? "control" : "canary", !ctl->n ? o->control : o->canary,
			       o->job, since_p, err);
	for (size_t i = 0; i < ctl->n; i++)
		for (size_t j = 0; j < can->n; j++)
			shared += ctl->ids[i] == can->ids[j];
	if (shared) {
		err_setf(err, -EINVAL, "--control '%s' and --canary '%s' share %zu of their runs; a run"
			   " can be in one cohort only", o->control, o->canary, shared);
		return -EINVAL;
	}
	return 0;
}

/* Metric names to judge when none was given: the union of what the two
 * cohorts have, appended to o->specs. -ENODATA when there is none. */
static int default_metrics(struct db *db, struct canary_run_opts *o, const struct cohort *ctl,
			   const struct cohort *can, struct buf *err)
{
	char **ma = NULL, **mb = NULL;
	size_t nma = 0, nmb = 0;
	int r;

	if ((r = db_cohort_metrics(db, &ma, &nma, ctl->ids, ctl->n, err)) ||
	    (r = db_cohort_metrics(db, &mb, &nmb, can->ids, can->n, err)))
		goto out;
	for (size_t k = 0; k < nma + nmb; k++) {
		const char *name = k < nma ? ma[k] : mb[k - nma];
		struct buf ignored = BUF_INIT;
		bool seen = false;
		for (size_t i = 0; i < o->nspecs && !seen; i++)
			seen = !strcmp(o->specs[i].name, name);
		if (seen)
			continue;
		o->specs = xrealloc(o->specs, (o->nspecs + 1) * sizeof(*o->specs));
		canary_metric_spec_parse(&o->specs[o->nspecs++], name, &ignored);
		buf_release(&ignored);
	}
	if (!o->nspecs) {
		err_setf(err, -ENODATA, "the cohorts' runs have no summary metrics or probe totals"
			 " to judge (NODATA): no verdict");
		r = -ENODATA;
	}
out:
	db_strings_free(ma, nma);
	db_strings_free(mb, nmb);
	return r;
}

/* The bad direction of metric m when its spec did not say: probes and
 * lower-is-better metrics 'increase', higher-is-better 'decrease', else
 * 'either'. 0, or the store's error with err (a direction it could not
 * read must not silently become 'either'). */
static int store_direction(enum canary_direction *dir, struct db *db,
			   const struct canary_metric_spec *m, struct buf *err)
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
 * vals[2i], vals[2i+1] own them. cc gets the host counts with by_host.
 * -EINVAL with err naming the metric when the store gives none. */
static int store_values(struct db *db, struct canary_run_opts *o, const struct cohort *ctl,
			const struct cohort *can, struct canary_metric_input *in, double **vals,
			double *weights, struct canary_cohorts *cc, struct buf *err)
{
	struct buf why = BUF_INIT;
	size_t i;

	for (i = 0; i < o->nspecs; i++) {
		struct canary_metric_spec *m = &o->specs[i];

		if (!m->has_direction && store_direction(&m->cfg.direction, db, m, &why))
			goto fail;
		metric_overrides(&m->cfg, m, o);
		if (db_cohort_values(db, &vals[2 * i], ctl->ids, ctl->n, m->name, &why) ||
		    db_cohort_values(db, &vals[2 * i + 1], can->ids, can->n, m->name, &why))
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
	return 0;
fail:
	err_setf(err, -EINVAL, "--metric '%s': %s", o->specs[i].text, buf_str(&why));
	buf_release(&why);
	return -EINVAL;
}

/* The cohorts' runs, their metrics and (by_host) hosts: 0 or an error of
 * canary_run_store(). */
static int store_load(struct db *db, struct canary_run_opts *o, struct cohort *ctl,
		      struct cohort *can, struct buf *err)
{
	int r;

	if ((r = store_cohorts(db, o, ctl, can, err)))
		return r;
	if (!o->nspecs && (r = default_metrics(db, o, ctl, can, err)))
		return r;
	if (o->by_host && ((r = db_cohort_hosts(db, &ctl->hosts, ctl->ids, ctl->n, err)) ||
			   (r = db_cohort_hosts(db, &can->hosts, can->ids, can->n, err))))
		return r;
	return 0;
}

int canary_run_store(struct canary_run *out, struct db *db, struct canary_run_opts *o,
		     struct buf *err)
{
	struct cohort ctl = { 0 }, can = { 0 };
	struct canary_metric_input *in = NULL;
	double **vals = NULL, *weights = NULL;
	size_t nvals = 0;
	int r;

	if ((r = store_load(db, o, &ctl, &can, err)))
		goto out;
	struct canary_cohorts cc = {
		.control = o->control, .canary = o->canary, .control_runs = ctl.n,
		.canary_runs = can.n,
	};
	nvals = 2 * o->nspecs;
	in = xcalloc(o->nspecs, sizeof(*in));
	vals = xcalloc(nvals, sizeof(*vals));
	weights = xcalloc(o->nspecs, sizeof(*weights));
	if (!(r = store_values(db, o, &ctl, &can, in, vals, weights, &cc, err)))
		r = judge(out, in, weights, o->nspecs, o, &cc, err);
	else
		free(weights);
out:
	for (size_t i = 0; i < nvals; i++)
		free(vals[i]);
	free(vals);
	free(in);
	cohort_release(&ctl);
	cohort_release(&can);
	return r;
}

/* ---- values from Prometheus ---- */

/* Each cohort's selectors as PromQL label matchers (match[0] control,
 * match[1] canary; caller frees). -EINVAL with err. */
static int prom_cohort_matchers(char *match[2], const struct canary_run_opts *o,
				struct buf *err)
{
	const char *cohort_text[2] = { o->control, o->canary }, *which[2] = { "control", "canary" };

	for (int c = 0; c < 2; c++) {
		struct db_selector *sel = NULL;
		struct buf why = BUF_INIT;
		size_t nsel = 0;
		int r = db_selectors_parse(&sel, &nsel, cohort_text[c], &why);
		if (!r)
			r = prom_matchers(&match[c], sel, nsel, &why);
		db_selectors_free(sel, nsel);
		if (r)
			err_setf(err, -EINVAL, "--%s '%s': %s", which[c], cohort_text[c], buf_str(&why));
		buf_release(&why);
		if (r)
			return -EINVAL;
	}
	return 0;
}

/* The i-th query with $cohort replaced by match, into pr. -EIO or -EPROTO
 * with err. */
static int prom_query_cohort(struct prom_result *pr, const struct canary_run_opts *o, size_t i,
			     const char *match, double end_s, struct buf *err)
{
	const struct canary_prom *pa = &o->prom;
	struct buf q = BUF_INIT, why = BUF_INIT;
	const char *p = pa->exprs[i], *hit;
	int r;

	while ((hit = strstr(p, "$cohort"))) {
		buf_append(&q, p, (size_t)(hit - p));
		buf_puts(&q, match);
		p = hit + 7;
	}
	buf_puts(&q, p);
	r = prom_query(pr, pa->url, buf_str(&q), end_s, o->window_s, pa->step_s, &why);
	if (r)
		err_setf(err, r, "--query '%s': %s", pa->names[i], buf_str(&why));
	buf_release(&q);
	buf_release(&why);
	return r;
}

/* by_host with Prometheus: one value per series, its median, in place.
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

/* The i-th query's configuration: its spec of the same name when there is
 * one (default direction: either), the verdict's overrides. */
static struct canary_metric_config prom_metric_config(const struct canary_run_opts *o, size_t i)
{
	const char *name = o->prom.names[i];
	const struct canary_metric_spec *m = NULL;
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

int canary_run_prometheus(struct canary_run *out, const struct canary_run_opts *o,
			  struct buf *err)
{
	const struct canary_prom *pa = &o->prom;
	char *match[2] = { NULL, NULL };
	struct canary_metric_input *in = xcalloc(pa->n, sizeof(*in));
	struct prom_result *res = xcalloc(2 * pa->n, sizeof(*res));
	double *weights = xcalloc(pa->n, sizeof(*weights)), end_s = clock_wall_s();
	size_t nvals[2] = { 0, 0 }, nseries[2] = { 0, 0 };
	int r;

	if ((r = prom_cohort_matchers(match, o, err)))
		goto fail;
	for (size_t i = 0; i < pa->n; i++) {
		in[i].cfg = prom_metric_config(o, i);
		weights[i] = in[i].cfg.weight;
		for (int c = 0; c < 2; c++) {
			struct prom_result *pr = &res[2 * i + c];
			if ((r = prom_query_cohort(pr, o, i, match[c], end_s, err)))
				goto fail;
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
	r = judge(out, in, weights, pa->n, o, &cc, err);
	weights = NULL;
fail:
	for (size_t i = 0; i < 2 * pa->n; i++)
		prom_result_release(&res[i]);
	free(res);
	free(in);
	free(weights);
	free(match[0]);
	free(match[1]);
	return r;
}
