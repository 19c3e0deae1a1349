/* db_canary.c - the queries behind a canary verdict: cohorts of runs by
 * selectors and per-run metric values (see db_canary.h). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/db_canary.h"
#include "store/db_internal.h"
#include "error.h"
#include "util.h"

static bool key_ok(const char *k)
{
	if (!*k)
		return false;
	for (; *k; k++)
		if (!isalnum((unsigned char)*k) && *k != '_' && *k != '-' && *k != '.')
			return false;
	return true;
}

int db_selectors_parse(struct db_selector **out, size_t *n, const char *text, struct buf *err)
{
	struct db_selector *s = NULL;
	size_t ns = 0;
	const char *p = text;

	while (*p) {
		size_t len = strcspn(p, ", \t");
		if (!len) {
			p++;
			continue;
		}
		char *part = xstrndup(p, len);
		char *eq = strchr(part, '=');
		if (eq)
			*eq = '\0';
		if (!eq || !key_ok(part)) {
			err_setf(err, -EINVAL, "selector '%.*s': expected KEY=VALUE with KEY of "
				 "letters, digits, '_', '-' or '.'", (int)len, p);
			free(part);
			db_selectors_free(s, ns);
			return -EINVAL;
		}
		s = xrealloc(s, (ns + 1) * sizeof(*s));
		s[ns].key = xstrdup(part);
		s[ns].value = xstrdup(eq + 1);
		ns++;
		free(part);
		p += len;
	}
	if (!ns)
		return err_setf(err, -EINVAL, "selector '%s': expected KEY=VALUE", text);
	*out = s;
	*n = ns;
	return 0;
}

void db_selectors_free(struct db_selector *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(s[i].key);
		free(s[i].value);
	}
	free(s);
}

void db_strings_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static bool is_glob(const char *v)
{
	return strpbrk(v, "*?[") != NULL;
}

int db_cohort_runs(struct db *db, int64_t **out, size_t *n, const struct db_selector *sel,
		   size_t nsel, struct buf *err)
{
	struct buf sql = BUF_INIT;
	sqlite3_stmt *st = NULL;
	void *ids;
	int r, arg = 1;

	buf_puts(&sql, "SELECT r.id FROM runs r JOIN variants v ON v.id = r.variant_id"
		       " JOIN jobs j ON j.id = r.job_id WHERE 1");
	for (size_t i = 0; i < nsel; i++) {
		const char *k = sel[i].key, *op = is_glob(sel[i].value) ? "GLOB" : "=";
		if (!strcmp(k, "kernel")) {
			if (is_glob(sel[i].value))
				buf_printf(&sql, " AND r.kernel_release GLOB ?%d", arg);
			else	/* exact, or followed by a local version */
				buf_printf(&sql, " AND (r.kernel_release = ?%d OR"
					   " r.kernel_release GLOB ?%d || '[+-]*')", arg, arg);
		} else if (!strcmp(k, "variant")) {
			buf_printf(&sql, " AND v.name %s ?%d", op, arg);
		} else if (!strcmp(k, "job")) {
			buf_printf(&sql, " AND (j.name %s ?%d OR CAST(j.id AS TEXT) = ?%d)", op, arg, arg);
		} else if (!strcmp(k, "since")) {
			/* ISO 8601 UTC text compares in time order */
			buf_printf(&sql, " AND coalesce(r.finished_at, r.started_at) >= ?%d", arg);
		} else if (!strcmp(k, "host") || !strcmp(k, "fs") || !strcmp(k, "status")) {
			buf_printf(&sql, " AND r.%s %s ?%d", k, op, arg);
		} else {
			/* key_ok() keeps the key to characters safe inside the path */
			buf_printf(&sql, " AND CAST(json_extract(r.params_json, '$.\"%s\"') AS TEXT)"
				   " %s ?%d", k, op, arg);
		}
		arg++;
	}
	buf_puts(&sql, " ORDER BY r.id");
	if ((r = db_prepare(db, &st, buf_str(&sql), err)))
		goto out;
	for (size_t i = 0; i < nsel; i++)
		sqlite3_bind_text(st, (int)i + 1, sel[i].value, -1, SQLITE_STATIC);
	r = db_rows(db, st, sizeof(**out), db_read_int64, NULL, &ids, n, err,
		    "cannot select the cohort's runs");
	st = NULL;   /* db_rows finalized it */
	if (!r)
		*out = ids;
out:
	sqlite3_finalize(st);
	buf_release(&sql);
	return r;
}

/* " IN (1,2,3)" for the run ids (integers: safe to inline). */
static void in_list(struct buf *b, const int64_t *runs, size_t n)
{
	buf_puts(b, " IN (");
	for (size_t i = 0; i < n; i++)
		buf_printf(b, "%s%" PRId64, i ? "," : "", runs[i]);
	buf_puts(b, ")");
}

static long find_run(const int64_t *runs, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (runs[i] == id)
			return (long)i;
	return -1;
}

/* Run pre + " IN (runs)" + post binding text args a1, a2 (may be NULL);
 * each row is (run_id, value): store it where v is NAN, or store `fixed`
 * instead of the value when fixed is not NAN. */
static int fill(struct db *db, double *v, const int64_t *runs, size_t nruns, const char *pre,
		const char *post, const char *a1, const char *a2, double fixed, struct buf *err)
{
	struct buf sql = BUF_INIT;
	sqlite3_stmt *st = NULL;
	int r;

	buf_puts(&sql, pre);
	in_list(&sql, runs, nruns);
	buf_puts(&sql, post);
	r = db_prepare(db, &st, buf_str(&sql), err);
	buf_release(&sql);
	if (r)
		return r;
	if (a1)
		sqlite3_bind_text(st, 1, a1, -1, SQLITE_STATIC);
	if (a2)
		sqlite3_bind_text(st, 2, a2, -1, SQLITE_STATIC);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		long i = find_run(runs, nruns, sqlite3_column_int64(st, 0));
		if (i < 0 || !isnan(v[i]))
			continue;
		if (!isnan(fixed))
			v[i] = fixed;
		else if (sqlite3_column_type(st, 1) != SQLITE_NULL)
			v[i] = sqlite3_column_double(st, 1);
	}
	r = r == SQLITE_DONE ? 0 : db_fail(db, 0, err, "cannot read the cohort's values");
	sqlite3_finalize(st);
	return r;
}

int db_cohort_values(struct db *db, double **out, const int64_t *runs, size_t nruns,
		     const char *metric, struct buf *err)
{
	double *v = xmalloc((nruns ? nruns : 1) * sizeof(*v));
	char *name = NULL;
	int r = 0;

	for (size_t i = 0; i < nruns; i++)
		v[i] = NAN;
	if (!nruns)
		goto done;
	if (!strncmp(metric, "probe:", 6)) {
		const char *colon = strchr(metric + 6, ':');
		if (!colon || colon == metric + 6) {
			r = err_setf(err, -EINVAL, "metric '%s': expected probe:NAME:KEY", metric);
			goto done;
		}
		name = xstrndup(metric + 6, (size_t)(colon - metric - 6));
		if ((r = fill(db, v, runs, nruns,
			      "SELECT run_id, coalesce(max(CASE WHEN t_s IS NULL THEN count END),"
			      " max(count)) FROM probes WHERE name = ?1 AND key = ?2 AND run_id",
			      " GROUP BY run_id", name, colon + 1, NAN, err)) ||
		    (r = fill(db, v, runs, nruns,
			      "SELECT DISTINCT run_id, 0 FROM probes WHERE name = ?1 AND run_id", "",
			      name, NULL, 0, err)))
			goto done;
		goto done;
	}
	if ((r = fill(db, v, runs, nruns,
		      "SELECT run_id, value FROM run_summary WHERE metric = ?1 AND run_id", "",
		      metric, NULL, NAN, err)))
		goto done;
	/* worst_X / mean_X from the samples of X, for runs without a summary */
	bool worst = !strncmp(metric, "worst_", 6), mean = !strncmp(metric, "mean_", 5);
	if (worst || mean)
		r = fill(db, v, runs, nruns,
			 worst ? "SELECT s.run_id, max(s.value) FROM samples s JOIN metrics m"
				 " ON m.id = s.metric_id WHERE m.name = ?1 AND s.run_id" :
				 "SELECT s.run_id, avg(s.value) FROM samples s JOIN metrics m"
				 " ON m.id = s.metric_id WHERE m.name = ?1 AND s.run_id",
			 " GROUP BY s.run_id", worst ? metric + 6 : metric + 5, NULL, NAN, err);
done:
	free(name);
	if (r) {
		free(v);
		return r;
	}
	*out = v;
	return 0;
}

static int strings(struct db *db, char ***out, size_t *n, const char *sql, const char *what, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	char **v = NULL;
	size_t nv = 0;
	int r;

	if ((r = db_prepare(db, &st, sql, err)))
		return r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);
		if (!t)
			continue;
		v = xrealloc(v, (nv + 1) * sizeof(*v));
		v[nv++] = xstrdup((const char *)t);
	}
	sqlite3_finalize(st);
	if (r != SQLITE_DONE) {
		db_strings_free(v, nv);
		return db_fail(db, r, err, "cannot %s", what);
	}
	*out = v;
	*n = nv;
	return 0;
}

int db_cohort_metrics(struct db *db, char ***out, size_t *n, const int64_t *runs,
		      size_t nruns, struct buf *err)
{
	struct buf in = BUF_INIT;
	int r;

	if (!nruns) {
		*out = NULL;
		*n = 0;
		return 0;
	}
	in_list(&in, runs, nruns);
	char *sql = xasprintf(
		"SELECT m FROM (SELECT DISTINCT metric AS m, 0 AS k FROM run_summary WHERE run_id%s"
		" UNION SELECT DISTINCT 'probe:' || name || ':' || key, 1 FROM probes WHERE run_id%s)"
		" ORDER BY k, m", buf_str(&in), buf_str(&in));
	buf_release(&in);
	r = strings(db, out, n, sql, "list the cohort's metrics", err);
	free(sql);
	return r;
}

int db_cohort_hosts(struct db *db, char ***out, const int64_t *runs, size_t nruns, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	char **h = xcalloc(nruns ? nruns : 1, sizeof(*h));
	int r;

	if ((r = db_prepare(db, &st, "SELECT host FROM runs WHERE id = ?", err))) {
		free(h);
		return r;
	}
	for (size_t i = 0; i < nruns; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, runs[i]);
		r = sqlite3_step(st);
		if (r == SQLITE_ROW) {
			const unsigned char *t = sqlite3_column_text(st, 0);
			h[i] = t ? xstrdup((const char *)t) : NULL;
		} else if (r != SQLITE_DONE) {
			r = db_fail(db, 0, err, "cannot read the runs' hosts");
			sqlite3_finalize(st);
			db_strings_free(h, nruns);
			return r;
		}
	}
	sqlite3_finalize(st);
	*out = h;
	return 0;
}

int db_kernel_releases(struct db *db, char ***out, size_t *n, struct buf *err)
{
	return strings(db, out, n,
		       "SELECT DISTINCT kernel_release FROM runs WHERE kernel_release IS NOT NULL"
		       " ORDER BY kernel_release", "select kernel releases", err);
}

int db_metric_better(struct db *db, char **out, const char *metric, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	*out = NULL;
	if ((r = db_prepare(db, &st, "SELECT better FROM metrics WHERE name = ?", err)))
		return r;
	sqlite3_bind_text(st, 1, metric, -1, SQLITE_STATIC);
	r = sqlite3_step(st);
	if (r == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);
		*out = t ? xstrdup((const char *)t) : NULL;
		r = 0;
	} else {
		r = r == SQLITE_DONE ? 0 : db_fail(db, 0, err, "cannot read metric '%s''s direction", metric);
	}
	sqlite3_finalize(st);
	return r;
}
