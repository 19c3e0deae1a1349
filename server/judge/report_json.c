/* report_json.c - the report as JSON, what GET /api/v1/jobs/ID/report
 * returns (report_json.h). */
#include <jansson.h>
#include <stdlib.h>

#include "judge/report.h"
#include "judge/report_data.h"
#include "judge/report_json.h"
#include "judge/report_scratch.h"
#include "judge/report_seq.h"
#include "judge/report_text.h"

/* A run's final probe counts, {"name": {"key": count}}; NULL when none. */
static json_t *json_run_probes(const struct report *r, int64_t run_id)
{
	json_t *o = NULL;
	for (size_t i = rep_run_probes_first(r, run_id);
	     i < r->d.nrun_probes && r->d.run_probes[i].run_id == run_id; i++) {
		const struct db_report_run_probe *p = &r->d.run_probes[i];
		if (!o)
			o = json_object();
		json_t *byname = json_object_get(o, p->name);
		if (!byname)
			json_object_set_new(o, p->name, byname = json_object());
		json_object_set_new(byname, p->key, json_integer((json_int_t)p->count));
	}
	return o;
}

static json_t *json_group(const struct report *r, const struct rep_cell *cell,
			  const struct rep_group *rv)
{
	json_t *runs = json_array(), *jv;

	for (size_t i = 0; i < rv->nruns; i++) {
		const struct db_report_run *run = rv->runs[i].run;
		json_t *jr = json_pack("{s:I,s:i,s:s,s:o,s:b,s:s?}",
			"run_id", (json_int_t)run->id, "repeat", run->repeat_idx,
			"status", run->status,
			"value", run->has_value ? json_real(run->value) : json_null(),
			"derived", run->derived, "accel", run->accel);
		if (run->rootfs)
			json_object_set_new(jr, "rootfs", json_string(run->rootfs));
		if (run->median)   /* a passive fleet run (db_report.h) */
			json_object_set_new(jr, "value_is", json_string("median of samples"));
		if (run->passive && run->host)   /* which fleet host */
			json_object_set_new(jr, "host", json_string(run->host));
		json_t *probes = json_run_probes(r, run->id);
		if (probes)
			json_object_set_new(jr, "probes", probes);
		json_array_append_new(runs, jr);
	}
	if (rv->v)
		jv = json_pack("{s:I,s:i,s:s,s:s,s:s?}",
			"variant_id", (json_int_t)rv->v->id, "idx", rv->v->idx,
			"name", rv->v->name, "status", rv->v->status, "error", rv->v->error);
	else
		jv = json_pack("{s:s,s:s}", "name", rv->label, "value", rv->value);
	json_object_set_new(jv, "runs", runs);
	json_object_set_new(jv, "n", json_integer((json_int_t)rv->nvalues));
	json_object_set_new(jv, "median", rep_num_or_null(rv->sum.median));
	json_object_set_new(jv, "min", rep_num_or_null(rv->sum.min));
	json_object_set_new(jv, "max", rep_num_or_null(rv->sum.max));
	json_object_set_new(jv, "mean", rep_num_or_null(rv->sum.mean));
	if (r->has_threshold)
		json_object_set_new(jv, "worse_than_threshold", json_integer((json_int_t)rv->k_worse));
	if (rv->has_cmp) {
		json_object_set_new(jv, "change_pct", rep_num_or_null(rv->change_pct));
		json_object_set_new(jv, "p", json_real(rv->mwu.p));
		if (rv->stratified)
			json_object_set_new(jv, "p_method", json_string(
				rv->ve.method == MWU_EXACT ? "van-elteren-exact" : "van-elteren-normal"));
		else
			json_object_set_new(jv, "p_method", json_string(
				rv->mwu.method == MWU_EXACT ? "mwu-exact" : "mwu-normal"));
		if (rv->stratified) {
			json_object_set_new(jv, "stratified_by_host", json_true());
			json_t *strata = json_array();
			for (size_t h = 0; h < rv->nstrata; h++)
				json_array_append_new(strata, json_pack("{s:s,s:I,s:I}",
					"host", rv->strata[h].host,
					"n_baseline", (json_int_t)rv->strata[h].n,
					"n", (json_int_t)rv->strata[h].m));
			json_object_set_new(jv, "strata", strata);
			json_object_set_new(jv, "p_unstratified", json_real(rv->mwu_plain_p));
		} else if (rv->confounded) {
			json_object_set_new(jv, "stratified_by_host", json_false());
			json_object_set_new(jv, "hosts_confounded", json_true());
		}
		json_object_set_new(jv, "u", json_real(rv->mwu.u));
		json_object_set_new(jv, "hl_shift", rep_num_or_null(rv->hl));
		json_object_set_new(jv, "hl_ci95", json_pack("[o,o]",
			rep_num_or_null(rv->hl_lo), rep_num_or_null(rv->hl_hi)));
		json_object_set_new(jv, "min_possible_p", json_real(
			stats_mwu_min_p(cell->groups[0].nvalues, rv->nvalues)));
	}
	return jv;
}

static json_t *json_interactions(const struct report *r, const struct rep_cell *cell)
{
	json_t *a = json_array();
	size_t nb = r->axis2.n;
	for (size_t i = 1; i < r->axis.n; i++)
		for (size_t j = 1; j < nb; j++) {
			const struct rep_inter *x = &cell->inter[i * nb + j];
			if (!x->has)
				continue;
			json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:o,s:o,s:o}",
				"a", r->axis.values[i], "a0", r->axis.values[0],
				"b", r->axis2.values[j], "b0", r->axis2.values[0],
				"effect_at_b0", rep_num_or_null(x->eff0), "effect_at_b", rep_num_or_null(x->eff1),
				"difference_of_differences", rep_num_or_null(x->dod));
			if (x->tested) {
				json_object_set_new(o, "p", json_real(x->p));
				json_object_set_new(o, "p_method", json_string("permutation-freedman-lane"));
			}
			json_array_append_new(a, o);
		}
	return a;
}

/* The report as JSON: "by" names the axis; each cell lists its groups
 * under "variants" on the variant axis (the API's shape since v1) and
 * under "groups" on any other (each with "name", its label, and "value"). */
json_t *rep_json_report(const struct report *r)
{
	json_t *cells = json_array(), *values = json_array(), *jlabels = json_array();
	bool variant_axis = report_axis_is_variant(r->axis.name);
	char *by = r->two_d ? xasprintf("%s,%s", r->axis.name, r->axis2.name) :
		   xstrdup(r->axis.name);

	for (size_t j = 0; j < r->axis.n; j++) {
		json_array_append_new(values, json_string(r->axis.values[j]));
		json_array_append_new(jlabels, json_string(r->axis.labels[j]));
	}
	json_t *values2 = json_array();
	for (size_t j = 0; r->two_d && j < r->axis2.n; j++)
		json_array_append_new(values2, json_string(r->axis2.values[j]));
	for (size_t c = 0; c < r->ncells; c++) {
		const struct rep_cell *cell = &r->cells[c];
		json_t *groups = json_array();
		for (size_t j = 0; j < r->ngroups; j++) {
			if (!rep_group_shown(&cell->groups[j]))
				continue;
			json_t *jg = json_group(r, cell, &cell->groups[j]);
			if (r->two_d) {
				json_object_set_new(jg, "a", json_string(r->axis.values[j / r->axis2.n]));
				json_object_set_new(jg, "b", json_string(r->axis2.values[j % r->axis2.n]));
			}
			json_array_append_new(groups, jg);
		}
		json_t *jc = json_pack("{s:s,s:s,s:o}", "cell", cell->cell, "title", cell->title,
				       variant_axis && !r->two_d ? "variants" : "groups", groups);
		if (r->two_d)
			json_object_set_new(jc, "interactions", json_interactions(r, cell));
		json_array_append_new(cells, jc);
	}
	json_t *probes = json_array();
	for (size_t i = 0; i < r->d.nprobes; i++) {
		const struct db_report_probe *p = &r->d.probes[i];
		json_array_append_new(probes, json_pack("{s:I,s:s,s:s,s:s,s:I}",
			"variant_id", (json_int_t)p->variant_id, "cell", p->cell ? p->cell : "",
			"name", p->name, "key", p->key, "count", (json_int_t)p->count));
	}
	struct buf text = BUF_INIT;
	rep_text_report(&text, r, false);
	json_t *root = json_pack("{s:{s:I,s:s,s:s,s:s},s:s,s:o,s:o,s:s,s:s?,s:s,s:o,s:o,s:o,s:i,s:b,s:s}",
		"job", "id", (json_int_t)r->d.job_id, "name", r->d.job_name,
		"kind", r->d.job_kind, "status", r->d.job_status,
		"by", by, "values", values, "labels", jlabels,
		"metric", r->metric, "unit", r->unit,
		"better", r->better == BETTER_LOWER ? "lower" : "higher",
		"threshold", r->has_threshold ? json_real(r->threshold) : json_null(),
		"cells", cells, "probes", probes,
		"runs_needed_for_p05", (int)stats_runs_needed(0.05),
		"tcg", r->any_tcg, "text", buf_str(&text));
	buf_release(&text);
	free(by);
	if (r->hostfs_hash)
		json_object_set_new(root, "rootfs", json_pack("{s:s,s:b,s:s,s:s,s:b}",
			"spec", REPORT_ROOTFS_HOST, "reproducible", 0, "mark", REPORT_ROOTFS_HOST_MARK,
			"packages_sha256", r->hostfs_hash, "changed_during_job", r->hostfs_mixed));
	if (r->two_d)
		json_object_set_new(root, "values_b", values2);
	else
		json_decref(values2);
	json_object_set_new(root, "overhead", overhead_json(&r->ov));
	if (r->scratch.bytes > 0)	/* absent for a job stored before it was */
		json_object_set_new(root, "scratch_disk", scratch_json(&r->scratch));
	json_object_set_new(root, "sequential", rep_seq_json(r));
	if (r->also) {
		/* the workload's headline beside the decided metric (report.c) */
		json_t *a = rep_json_report(r->also), *also = json_array();
		json_array_append_new(also, json_pack("{s:O?,s:s,s:O?,s:O?,s:O?,s:O?,s:b}",
			"metric", json_object_get(a, "metric"),
			"title", rep_metric_title(r->also->metric),
			"unit", json_object_get(a, "unit"), "better", json_object_get(a, "better"),
			"threshold", json_object_get(a, "threshold"), "cells", json_object_get(a, "cells"),
			"decision_metric", 0));
		json_decref(a);
		json_object_set_new(root, "also_measured", also);
	}
	return root;
}
