/* report_lines.c - the lines under a cell's table that the one-axis and
 * the two-axis text share (report_lines.h): wrapping at 80 columns, the
 * lab-host strata of a p, and the probe evidence. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/report_data.h"
#include "judge/report_lines.h"

/* Append line and a newline, wrapped at 80 columns after ", " with a
 * six-space indent (no wrapping in markdown, where the viewer wraps). */
void rep_append_wrapped(struct buf *b, const char *line, bool markdown)
{
	size_t col = 0, width = 80;
	const char *p = line;

	if (markdown || strlen(line) <= width) {
		buf_printf(b, "%s\n", line);
		return;
	}
	while (*p) {
		const char *next = strstr(p, ", ");
		size_t piece = next ? (size_t)(next - p) + 1 : strlen(p);
		if (col && col + piece + 1 > width) {
			buf_puts(b, "\n      ");
			col = 6;
			if (*p == ' ') {
				p++;
				piece--;
			}
		}
		buf_append(b, p, piece);
		col += piece;
		p += piece;
	}
	buf_puts(b, "\n");
}

/* Return-value histograms name their keys by errno ("-2" -> "-ENOENT"). */
static void probe_key(char *out, size_t size, const char *name, const char *key)
{
	char *end;
	long v = strtol(key, &end, 10);
	const char *en = NULL;

	if (!strcmp(name, "cgroup_writeback_by_id") && *key && !*end && v < 0 && v > -4096)
		en = strerrorname_np((int)-v);
	if (en)
		snprintf(out, size, "-%s", en);
	else if (!strcmp(name, "cgroup_writeback_by_id") && !strcmp(key, "0"))
		snprintf(out, size, "0 (wb found)");   /* the flush found its wb */
	else
		snprintf(out, size, "%s", key);
}

/* 41211 -> "41,211", as cover letters write counts. */
static void fmt_count(char *out, size_t size, long long n)
{
	char digits[32];
	int len = snprintf(digits, sizeof(digits), "%lld", n < 0 ? -n : n);
	size_t o = 0;

	if (n < 0 && o + 1 < size)
		out[o++] = '-';
	for (int i = 0; i < len && o + 2 < size; i++) {
		if (i && (len - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = digits[i];
	}
	out[o] = '\0';
}

/* A run's final count of probe (name, key): 1 and *count when stored; 0
 * (count 0) when the run counted that probe but never saw the key; -1
 * when the run has no count of that probe at all (no evidence). */
static int run_probe(const struct report *r, int64_t run_id, const char *name,
		     const char *key, int64_t *count)
{
	int seen = -1;
	*count = 0;
	for (size_t i = rep_run_probes_first(r, run_id);
	     i < r->d.nrun_probes && r->d.run_probes[i].run_id == run_id; i++) {
		const struct db_report_run_probe *p = &r->d.run_probes[i];
		if (strcmp(p->name, name))
			continue;
		seen = 0;
		if (!strcmp(p->key, key)) {
			*count = p->count;
			return 1;
		}
	}
	return seen;
}

/* The evidence lines show cgroup_writeback_by_id return values (a foreign
 * flush that missed a dying wb is -ENOENT) and balance_dirty_pages pauses;
 * every probe is in the JSON. */
static bool probe_shown(const struct db_report_run_probe *p)
{
	return !strcmp(p->name, "cgroup_writeback_by_id") ||
	       (!strcmp(p->name, "balance_dirty_pages") && !strcmp(p->key, "pauses"));
}

static int cmp_probe_key(const void *a, const void *b)
{
	const struct db_report_run_probe *x = *(const struct db_report_run_probe *const *)a;
	const struct db_report_run_probe *y = *(const struct db_report_run_probe *const *)b;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->key, y->key);
}

/* The distinct shown (name, key) pairs of a cell's usable runs, sorted;
 * has[g] tells whether group g's runs counted any probe. */
static size_t cell_probe_keys(const struct report *r, const struct rep_cell *cell,
			      const struct db_report_run_probe ***out, bool *has)
{
	const struct db_report_run_probe **keys = NULL;
	size_t n = 0;

	for (size_t g = 0; g < r->ngroups; g++)
		for (size_t i = 0; i < cell->groups[g].nruns; i++) {
			const struct db_report_run *run = cell->groups[g].runs[i].run;
			for (size_t q = rep_run_probes_first(r, run->id);
			     q < r->d.nrun_probes && r->d.run_probes[q].run_id == run->id; q++) {
				const struct db_report_run_probe *p = &r->d.run_probes[q];
				has[g] = true;
				if (!probe_shown(p))
					continue;
				size_t k = 0;
				while (k < n && cmp_probe_key(&keys[k], &p))
					k++;
				if (k == n) {
					keys = xrealloc(keys, (n + 1) * sizeof(*keys));
					keys[n++] = p;
				}
			}
		}
	if (n)
		qsort(keys, n, sizeof(*keys), cmp_probe_key);
	*out = keys;
	return n;
}

/* One probe key's three lines: the totals per value, every run's count
 * in the table's run order ("-": the run counted no such probe), and in
 * how many runs of each value it was seen at all: "-ENOENT in 4 of 4
 * removed runs, 0 of 4 alive runs", the sentence a reviewer checks first. */
static void probe_key_lines(struct buf *b, const struct report *r, const struct rep_cell *cell,
			    const struct db_report_run_probe *pk, const bool *has, bool markdown)
{
	struct buf tot = BUF_INIT, per = BUF_INIT, kofn = BUF_INIT;
	char k[64], cnt[40];
	bool first = true;

	probe_key(k, sizeof(k), pk->name, pk->key);
	buf_printf(&tot, "%s %s:", pk->name, k);
	buf_puts(&per, "  per run:");
	buf_printf(&kofn, "  %s in", k);
	for (size_t g = 0; g < r->ngroups; g++) {
		const struct rep_group *grp = &cell->groups[g];
		long long total = 0;
		size_t seen = 0, n = 0;
		if (!has[g])
			continue;
		buf_printf(&per, "%s %s", first ? "" : ",", grp->say);
		for (size_t i = 0; i < grp->nruns; i++) {
			const struct db_report_run *run = grp->runs[i].run;
			int64_t c;
			int got = rep_run_usable(run) ? run_probe(r, run->id, pk->name, pk->key, &c) : -1;
			if (got < 0) {
				buf_puts(&per, " -");
				continue;
			}
			total += c;
			n++;
			seen += c > 0;
			fmt_count(cnt, sizeof(cnt), c);
			buf_printf(&per, " %s", cnt);
		}
		fmt_count(cnt, sizeof(cnt), total);
		buf_printf(&tot, "%s %s %s", first ? "" : ",", grp->say, cnt);
		buf_printf(&kofn, "%s %zu of %zu %s run%s", first ? "" : ",", seen, n,
			   grp->say, n == 1 ? "" : "s");
		first = false;
	}
	rep_append_wrapped(b, buf_str(&tot), markdown);
	if (markdown)
		buf_puts(b, "\n");
	rep_append_wrapped(b, buf_str(&per), markdown);
	if (markdown)
		buf_puts(b, "\n");
	rep_append_wrapped(b, buf_str(&kofn), markdown);
	if (markdown)
		buf_puts(b, "\n");
	buf_release(&tot);
	buf_release(&per);
	buf_release(&kofn);
}

void rep_probe_lines(struct buf *b, const struct report *r, const struct rep_cell *cell,
			bool markdown)
{
	bool *has = xcalloc(r->ngroups + 1, sizeof(*has));
	const struct db_report_run_probe **keys = NULL;
	size_t nkeys = cell_probe_keys(r, cell, &keys, has);

	if (nkeys)
		buf_puts(b, "\n");
	for (size_t i = 0; i < nkeys; i++)
		probe_key_lines(b, r, cell, keys[i], has, markdown);
	free(keys);
	free(has);
}

/* "p: van Elteren, stratified by lab host (kvm1: 4+4 runs, local: 4+4)":
 * one line per stratified comparison, naming the group when the cell has
 * several; the counts are baseline+compared runs with a value. */
void rep_strata_lines(struct buf *b, const struct rep_cell *cell, size_t ngroups,
			 bool markdown)
{
	size_t compared = 0;

	for (size_t j = 1; j < ngroups; j++)
		compared += cell->groups[j].has_cmp;
	for (size_t j = 1; j < ngroups; j++) {
		const struct rep_group *g = &cell->groups[j];
		struct buf line = BUF_INIT;
		if (!g->stratified && !g->confounded)
			continue;
		if (compared > 1)
			buf_printf(&line, "p of %s: ", g->say);
		else
			buf_puts(&line, "p: ");
		buf_puts(&line, g->stratified ? "van Elteren, stratified by lab host (" :
			 "Mann-Whitney, pooled: no lab host ran both sides, host and change are"
			 " confounded (");
		for (size_t h = 0; h < g->nstrata; h++)
			buf_printf(&line, "%s%s: %zu+%zu%s", h ? ", " : "", g->strata[h].host,
				   g->strata[h].n, g->strata[h].m, h ? "" : " runs");
		buf_puts(&line, ")");
		rep_append_wrapped(b, buf_str(&line), markdown);
		buf_release(&line);
		if (markdown)
			buf_puts(b, "\n");
	}
}
