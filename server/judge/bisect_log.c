/* bisect_log.c - a bisection's event log read back: replay through the
 * engine (bisect_replay), the table of tested commits (bisect_log_table)
 * and the whole log as one value (bisect_log_read, bisect_log.h).
 *
 * The log, written by bisect_run(), is line-based text, one event per line
 * as space-separated key=value fields after a keyword:
 *   kcanary-bisect-log 1                      the header
 *   config n=.. strategy=.. find_fix=.. ...   every bisect_opts field
 *   run idx=I phase=endpoint|search|check value=V     an oracle answer (%.17g)
 *   skip idx=I phase=.. code=C                the oracle said skip (C < 0)
 *   endpoints n_old=.. n_new=.. p=.. effect=.. compare=same|different|unknown
 *   model h_old=.. h_new=.. w_old=.. w_new=..         (re)fitted densities
 *   verdict idx=I runs=.. llr=.. [p_new=..] verdict=good|bad|skip|unsure
 *   posterior J:P J1-J2:P ...                 the top culprit classes
 *   check parent=.. culprit=.. ... p=.. passed=0|1
 *   verdict idx=I final=1 runs=.. verdict=..  each tested commit at the end
 *   result outcome=.. first=.. last=.. prob=.. runs=.. ...
 * '#' lines are comments. Replay needs only config, run/skip and result.
 */
#define LOG_MODULE "bisect"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/bisect.h"
#include "judge/bisect_log.h"
#include "judge/stats.h"
#include "error.h"
#include "log.h"
#include "util.h"

struct replay_event {
	size_t idx;
	int code;	/* 0: run with value; < 0: skip */
	double value;
};

struct replay {
	struct replay_event *ev;
	size_t nev, cap, pos;
	int failure;	/* -EPROTO / -ENODATA once the oracle gave up */
	char *why;
};

/* Value of key in a line of space-separated key=value tokens, or NULL.
 * Points into line; the value ends at the next space or end of line. */
static const char *field(const char *line, const char *key, size_t *len)
{
	size_t kl = strlen(key);

	for (const char *p = line; (p = strstr(p, key)); p += kl) {
		if ((p == line || p[-1] == ' ') && p[kl] == '=') {
			const char *v = p + kl + 1;

			*len = strcspn(v, " \n");
			return v;
		}
	}
	return NULL;
}

static int field_double(const char *line, const char *key, double *out)
{
	size_t len;
	const char *v = field(line, key, &len);
	char tmp[64], *end;

	if (!v || !len || len >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, v, len);
	tmp[len] = 0;
	*out = strtod(tmp, &end);
	return *end ? -EINVAL : 0;
}

static int field_uint(const char *line, const char *key, unsigned long long *out)
{
	size_t len;
	const char *v = field(line, key, &len);
	char tmp[32], *end;

	if (!v || !len || len >= sizeof(tmp) || *v == '-')
		return -EINVAL;
	memcpy(tmp, v, len);
	tmp[len] = 0;
	*out = strtoull(tmp, &end, 10);
	return *end ? -EINVAL : 0;
}

static int parse_config(const char *line, struct bisect_opts *o, size_t *n)
{
	static const char *const ukeys[] = {
		"n", "find_fix", "higher_is_worse", "max_runs", "endpoint_min_runs",
		"endpoint_max_runs", "fixed_repeats", "step_max_runs", "check_runs",
	};
	unsigned long long u[9];
	size_t len;
	const char *s;

	for (size_t i = 0; i < 9; i++)
		if (field_uint(line, ukeys[i], &u[i]) || u[i] > 1000000000ULL)
			return -EINVAL;
	bisect_opts_init(o);
	if (field_double(line, "confidence", &o->confidence))
		return -EINVAL;
	s = field(line, "strategy", &len);
	if (s && len == 6 && !strncmp(s, "binary", 6))
		o->strategy = BISECT_BINARY;
	else if (s && len == 13 && !strncmp(s, "probabilistic", 13))
		o->strategy = BISECT_PROBABILISTIC;
	else
		return -EINVAL;
	*n = (size_t)u[0];
	o->find_fix = u[1] != 0;
	o->higher_is_worse = u[2] != 0;
	o->max_runs = (unsigned)u[3];
	o->endpoint_min_runs = (unsigned)u[4];
	o->endpoint_max_runs = (unsigned)u[5];
	o->fixed_repeats = (unsigned)u[6];
	o->step_max_runs = (unsigned)u[7];
	o->check_runs = (unsigned)u[8];
	/* absent in logs written before the early stop (issue 19): off */
	unsigned long long early = 0;
	if (field(line, "early_endpoints", &len) && field_uint(line, "early_endpoints", &early))
		return -EINVAL;
	o->early_endpoints = early != 0;
	/* absent in logs written before the good side's sharp share: off */
	unsigned long long sharp = 0;
	if (field(line, "sharp_good", &len) && field_uint(line, "sharp_good", &sharp))
		return -EINVAL;
	o->sharp_good = sharp != 0;
	return 0;
}

/* The log's final verdict lines ("verdict idx=I final=1 ..."), one a line,
 * as a string to compare (caller frees). */
static char *final_verdicts(const char *text)
{
	struct buf b = BUF_INIT;

	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");

		if (!strncmp(p, "verdict ", 8)) {
			char *line = xstrndup(p, len);
			size_t flen;
			const char *f = field(line, "final", &flen);

			if (f && flen == 1 && *f == '1')
				buf_printf(&b, "%s\n", line);
			free(line);
		}
		p += len + (p[len] == '\n');
	}
	return buf_detach(&b);
}

static int replay_measure(void *ctx, size_t idx, double *value_out)
{
	struct replay *rp = ctx;
	const struct replay_event *ev;

	if (rp->pos >= rp->nev) {
		rp->failure = -ENODATA;
		rp->why = xasprintf("log ends after %zu runs and skips, but the engine asks "
				    "for another run of commit %zu", rp->nev, idx);
		return -ECANCELED;
	}
	ev = &rp->ev[rp->pos];
	if (ev->idx != idx) {
		rp->failure = -EPROTO;
		rp->why = xasprintf("replay diverges at event %zu: the engine asks for commit "
				    "%zu, the log ran commit %zu", rp->pos + 1, idx, ev->idx);
		return -ECANCELED;
	}
	rp->pos++;
	if (ev->code < 0)
		return ev->code;
	*value_out = ev->value;
	return 0;
}

/*
 * Read a bisect log's lines into the engine's options (*o, *n candidates),
 * the replay's events (rp) and the logged result line (*result, new
 * string or NULL). 0, or -EINVAL with *why (new string) naming the line.
 */
static int parse_log(const char *text, struct bisect_opts *o, size_t *n, struct replay *rp,
		     char **result, char **why)
{
	bool have_header = false, have_config = false;
	char *logged_result = NULL;
	size_t lineno = 0;
	int rc = 0;

	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");
		char *line = xstrndup(p, len);

		lineno++;
		p += len + (p[len] == '\n');
		if (!*line || *line == '#') {
			free(line);
			continue;
		}
		if (!have_header) {
			if (strcmp(line, "kcanary-bisect-log 1")) {
				*why = xasprintf("line %zu: expected 'kcanary-bisect-log 1', found '%.40s'",
						lineno, line);
				rc = -EINVAL;
			}
			have_header = true;
		} else if (!strncmp(line, "config ", 7)) {
			if (have_config || parse_config(line, o, n)) {
				*why = xasprintf("line %zu: bad or repeated config line", lineno);
				rc = -EINVAL;
			}
			have_config = true;
		} else if (!strncmp(line, "run ", 4) || !strncmp(line, "skip ", 5)) {
			struct replay_event ev = { 0 };
			unsigned long long idx;
			double code;

			if (field_uint(line, "idx", &idx) || idx >= *n ||
			    (line[0] == 'r' ? field_double(line, "value", &ev.value) :
			     field_double(line, "code", &code) || code >= 0)) {
				*why = xasprintf("line %zu: bad %s line '%.60s'", lineno,
						line[0] == 'r' ? "run" : "skip", line);
				rc = -EINVAL;
			} else {
				ev.idx = (size_t)idx;
				ev.code = line[0] == 'r' ? 0 : (int)code;
				if (rp->nev == rp->cap) {
					rp->cap = rp->cap ? 2 * rp->cap : 64;
					rp->ev = xrealloc(rp->ev, rp->cap * sizeof(*rp->ev));
				}
				rp->ev[rp->nev++] = ev;
			}
		} else if (!strncmp(line, "result ", 7) && !logged_result) {
			logged_result = line;
			line = NULL;
		}
		free(line);
		if (rc)
			break;
	}
	if (!rc && (!have_header || !have_config)) {
		*why = xasprintf("not a bisect log: %s missing", have_header ? "config line" :
				"'kcanary-bisect-log 1' header");
		rc = -EINVAL;
	}
	if (rc)
		free(logged_result);
	else
		*result = logged_result;
	return rc;
}

int bisect_replay(struct bisect_result *out, const char *text, struct buf *relog,
		  struct buf *err)
{
	struct replay rp = { 0 };
	struct bisect_opts o;
	struct bisect_result r;
	struct buf mine = BUF_INIT, own = BUF_INIT;
	char *logged_result = NULL, *why = NULL, *fv_log = NULL, *fv_mine = NULL;
	size_t n = 0;
	int rc = 0;

	if ((rc = parse_log(text, &o, &n, &rp, &logged_result, &why)))
		goto out;
	rc = bisect_run(&r, n, &o, replay_measure, &rp, &own, NULL);
	if (rc == -ECANCELED && rp.failure) {
		rc = rp.failure;
		why = rp.why;
		rp.why = NULL;
		goto out;
	}
	if (rc) {
		why = xasprintf("the log's config is not valid: %s", strerror(-rc));
		goto out;
	}
	if (rp.pos != rp.nev) {
		why = xasprintf("replay finished after %zu of the log's %zu runs and skips",
				rp.pos, rp.nev);
		rc = -EPROTO;
		goto out;
	}
	bisect_result_line(&mine, &r);
	if (!logged_result) {
		why = xasprintf("the log has no result line (bisection interrupted?); "
				"replay gives: %s", buf_str(&mine));
		rc = -ENODATA;
		goto out;
	}
	if (strcmp(logged_result, buf_str(&mine))) {
		why = xasprintf("replay ends on a different result:\n  log:    %s\n  replay: %s",
				logged_result, buf_str(&mine));
		rc = -EPROTO;
		goto out;
	}
	fv_log = final_verdicts(text);
	fv_mine = final_verdicts(buf_str(&own));
	if (strcmp(fv_log, fv_mine)) {
		why = xasprintf("replay ends with different final verdicts:\n  log:\n%s  replay:\n%s",
				fv_log, fv_mine);
		rc = -EPROTO;
		goto out;
	}
	if (relog)
		buf_puts(relog, buf_str(&own));
	*out = r;
out:
	if (rc)
		err_setf(err, rc, "%s", why ? why : strerror(-rc));
	free(why);
	free(rp.why);
	free(rp.ev);
	free(logged_result);
	free(fv_log);
	free(fv_mine);
	buf_release(&mine);
	buf_release(&own);
	return rc;
}

struct table_row {
	size_t idx;
	unsigned nvals, nskips;
	double vals[12];	/* the first 12 values; "..." after */
	char verdict[12];	/* the last verdict line's, "" before one */
	bool final;		/* verdict is the final one: later lines do not change it */
};

static int row_cmp(const void *a, const void *b)
{
	const struct table_row *x = a, *y = b;

	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static struct table_row *row_get(struct table_row **rows, size_t *nrows, size_t *cap,
				 size_t idx)
{
	for (size_t i = 0; i < *nrows; i++)
		if ((*rows)[i].idx == idx)
			return &(*rows)[i];
	if (*nrows == *cap) {
		*cap = *cap ? 2 * *cap : 32;
		*rows = xrealloc(*rows, *cap * sizeof(**rows));
	}
	memset(&(*rows)[*nrows], 0, sizeof(**rows));
	(*rows)[*nrows].idx = idx;
	return &(*rows)[(*nrows)++];
}

/* '# candidate I SHA NAME' (bisect_exec.c writes them above the log):
 * NAME of candidate idx, or NULL. Borrowed from text; *len is its length. */
static const char *cand_name(const char *text, size_t idx, size_t *len)
{
	for (const char *p = text; (p = strstr(p, "# candidate ")); p++) {
		char *end;
		unsigned long long i;
		const char *q;

		if (p != text && p[-1] != '\n')
			continue;
		i = strtoull(p + 12, &end, 10);
		if (end == p + 12 || *end != ' ' || i != idx)
			continue;
		q = end + 1 + strcspn(end + 1, " \n");	/* past the sha (or '-') */
		if (*q != ' ')
			return NULL;
		q++;
		*len = strcspn(q, "\n");
		return q;
	}
	return NULL;
}

int bisect_log_table(struct buf *b, const char *text)
{
	struct table_row *rows = NULL;
	size_t nrows = 0, cap = 0, n = 0, nlen;
	struct bisect_opts o;
	bool have_config = false, names = false;

	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");
		char *line = xstrndup(p, len);
		unsigned long long idx;
		size_t vlen, flen;
		const char *v, *f;

		p += len + (p[len] == '\n');
		if (!strncmp(line, "config ", 7) && !have_config)
			have_config = !parse_config(line, &o, &n);
		else if (have_config && !field_uint(line, "idx", &idx) && idx < n) {
			struct table_row *r = row_get(&rows, &nrows, &cap, (size_t)idx);
			double x;

			if (!strncmp(line, "run ", 4) && !field_double(line, "value", &x)) {
				if (r->nvals < 12)
					r->vals[r->nvals] = x;
				r->nvals++;
			} else if (!strncmp(line, "skip ", 5)) {
				r->nskips++;
			} else if (!strncmp(line, "verdict ", 8) && !r->final &&
				   (v = field(line, "verdict", &vlen))) {
				snprintf(r->verdict, sizeof(r->verdict), "%.*s", (int)vlen, v);
				f = field(line, "final", &flen);
				r->final = f && flen == 1 && *f == '1';
			}
		}
		free(line);
	}
	if (!have_config) {
		free(rows);
		return -EINVAL;
	}
	qsort(rows, nrows, sizeof(*rows), row_cmp);
	for (size_t i = 0; i < nrows && !names; i++)
		names = cand_name(text, rows[i].idx, &nlen) != NULL;
	buf_printf(b, "%8s %5s %-9s ", "commit", "runs", "verdict");
	if (names)
		buf_printf(b, "%-40s ", "candidate");
	buf_puts(b, "values\n");
	for (size_t i = 0; i < nrows; i++) {
		const struct table_row *r = &rows[i];
		const char *verdict = r->verdict, *name;

		/* no verdict: the engine stopped first (an endpoint that cannot be
		 * measured, endpoints that do not differ) or the commit only skipped */
		if (!*verdict)
			verdict = r->nskips ? "skip" : r->idx == 0 ? "old" :
				  r->idx == n - 1 ? "new" : "untested";
		buf_printf(b, "%8zu %5u %-9s", r->idx, r->nvals, verdict);
		if (names) {
			name = cand_name(text, r->idx, &nlen);
			buf_printf(b, " %-40.*s", (int)(name ? (nlen < 40 ? nlen : 40) : 1),
				   name ? name : "?");
		}
		for (unsigned k = 0; k < r->nvals && k < 12; k++)
			buf_printf(b, " %.3g", r->vals[k]);
		if (r->nvals > 12)
			buf_printf(b, " ...");
		if (r->nskips)
			buf_printf(b, " (%u skip%s)", r->nskips, r->nskips > 1 ? "s" : "");
		buf_puts(b, "\n");
	}
	free(rows);
	return 0;
}

/* ---- the log as one value (bisect_log.h) ---- */

static struct bisect_log_cand *view_cand(struct bisect_log_view *v, size_t *cap, size_t idx)
{
	for (size_t i = 0; i < v->ncands; i++)
		if (v->cands[i].idx == idx)
			return &v->cands[i];
	if (v->ncands == *cap) {
		*cap = *cap ? 2 * *cap : 32;
		v->cands = xrealloc(v->cands, *cap * sizeof(*v->cands));
	}
	memset(&v->cands[v->ncands], 0, sizeof(*v->cands));
	v->cands[v->ncands].idx = idx;
	v->cands[v->ncands].sha = xstrdup("");
	return &v->cands[v->ncands++];
}

static void fields_free(struct bisect_log_fields *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->key[i]);
		free(f->value[i]);
	}
	free(f->key);
	free(f->value);
	memset(f, 0, sizeof(*f));
}

/* f = the key=value tokens of line after its keyword (replacing f's). */
static void fields_read(struct bisect_log_fields *f, const char *line)
{
	const char *p = line + strcspn(line, " ");

	fields_free(f);
	while (*p) {
		size_t len, eq;

		p += strspn(p, " ");
		len = strcspn(p, " ");
		eq = strcspn(p, "=");
		if (eq > 0 && eq < len) {
			f->key = xrealloc(f->key, (f->n + 1) * sizeof(*f->key));
			f->value = xrealloc(f->value, (f->n + 1) * sizeof(*f->value));
			f->key[f->n] = xstrndup(p, eq);
			f->value[f->n] = xstrndup(p + eq + 1, len - eq - 1);
			f->n++;
		}
		p += len;
	}
}

/* '# candidate I SHA NAME' into its candidate. */
static void view_cand_line(struct bisect_log_view *v, size_t *cap, const char *line)
{
	const char *p = line + 12, *sha, *name;
	unsigned long long i;
	size_t shalen;
	char *end;
	struct bisect_log_cand *c;

	if (*p < '0' || *p > '9')
		return;
	i = strtoull(p, &end, 10);
	if (*end != ' ')
		return;
	sha = end + 1;
	shalen = strcspn(sha, " ");
	if (!shalen || sha[shalen] != ' ')
		return;
	name = sha + shalen + 1;
	c = view_cand(v, cap, (size_t)i);
	free(c->sha);
	free(c->name);
	free(c->subject);
	c->sha = shalen == 1 && *sha == '-' ? xstrdup("") : xstrndup(sha, shalen);
	c->name = xstrdup(name);
	/* "<sha12> <subject>" for a commit, "k<i> <path>" for an image */
	c->subject = xstrdup(*c->sha && strlen(c->sha) >= 12 && !strncmp(name, c->sha, 12) &&
			     name[12] == ' ' ? name + 13 : name);
}

/* A "posterior J:P J1-J2:P ..." line's classes (replacing v's). */
static void view_posterior(struct bisect_log_view *v, const char *line)
{
	const char *p = line + 9;

	v->npost = 0;
	while (*p) {
		unsigned long long a, b;
		double prob;
		char *end;
		size_t len;

		p += strspn(p, " ");
		len = strcspn(p, " ");
		if (*p >= '0' && *p <= '9') {
			a = b = strtoull(p, &end, 10);
			if (*end == '-' && end[1] >= '0' && end[1] <= '9')
				b = strtoull(end + 1, &end, 10);
			if (*end == ':' && end[1] && end[1] != ' ') {
				prob = strtod(end + 1, &end);
				if (end == p + len) {
					v->post = xrealloc(v->post, (v->npost + 1) * sizeof(*v->post));
					v->post[v->npost++] = (struct bisect_log_class){
						.first = (size_t)a, .last = (size_t)b, .prob = prob };
				}
			}
		}
		p += len;
	}
}

/* A run, skip or verdict line of a candidate below v->n. */
static void view_event(struct bisect_log_view *v, size_t *cap, const char *line)
{
	unsigned long long idx;
	struct bisect_log_cand *c;
	const char *s;
	size_t len;
	double x;

	if (field_uint(line, "idx", &idx) || idx >= v->n)
		return;
	if (!strncmp(line, "run ", 4)) {
		if (field_double(line, "value", &x))
			return;
		c = view_cand(v, cap, (size_t)idx);
		c->runs = xrealloc(c->runs, (c->nruns + 1) * sizeof(*c->runs));
		c->runs[c->nruns].value = x;
		s = field(line, "phase", &len);
		snprintf(c->runs[c->nruns].phase, sizeof(c->runs[c->nruns].phase), "%.*s",
			 s ? (int)len : 0, s ? s : "");
		c->nruns++;
	} else if (!strncmp(line, "skip ", 5)) {
		view_cand(v, cap, (size_t)idx)->skips++;
	} else if (!strncmp(line, "verdict ", 8) && (s = field(line, "verdict", &len))) {
		c = view_cand(v, cap, (size_t)idx);
		snprintf(c->verdict, sizeof(c->verdict), "%.*s", (int)len, s);
	}
}

static int cand_cmp(const void *a, const void *b)
{
	const struct bisect_log_cand *x = a, *y = b;

	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int bisect_log_read(struct bisect_log_view *v, const char *text, struct buf *err)
{
	bool have_config = false;
	size_t cap = 0;

	memset(v, 0, sizeof(*v));
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");
		char *line = xstrndup(p, len);

		p += len + (p[len] == '\n');
		if (!strncmp(line, "# candidate ", 12))
			view_cand_line(v, &cap, line);
		else if (*line == '#')
			;
		else if (!strncmp(line, "config ", 7) && !have_config)
			have_config = !parse_config(line, &v->opts, &v->n);
		else if (!have_config)
			;
		else if (!strncmp(line, "run ", 4) || !strncmp(line, "skip ", 5) ||
			 !strncmp(line, "verdict ", 8))
			view_event(v, &cap, line);
		else if (!strncmp(line, "endpoints ", 10))
			fields_read(&v->endpoints, line);
		else if (!strncmp(line, "check ", 6))
			fields_read(&v->check, line);
		else if (!strncmp(line, "result ", 7))
			fields_read(&v->result, line);
		else if (!strncmp(line, "posterior ", 10))
			view_posterior(v, line);
		free(line);
	}
	if (!have_config)
		return err_setf(err, -EINVAL, "not a bisect log: no valid config line");
	qsort(v->cands, v->ncands, sizeof(*v->cands), cand_cmp);
	for (size_t i = 0; i < v->ncands; i++) {
		struct bisect_log_cand *c = &v->cands[i];
		double *x = xmalloc((c->nruns ? c->nruns : 1) * sizeof(*x));

		for (size_t k = 0; k < c->nruns; k++)
			x[k] = c->runs[k].value;
		c->median = stats_median(x, c->nruns);
		free(x);
	}
	return 0;
}

void bisect_log_view_free(struct bisect_log_view *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->ncands; i++) {
		free(v->cands[i].sha);
		free(v->cands[i].name);
		free(v->cands[i].subject);
		free(v->cands[i].runs);
	}
	free(v->cands);
	free(v->post);
	fields_free(&v->endpoints);
	fields_free(&v->check);
	fields_free(&v->result);
	memset(v, 0, sizeof(*v));
}
