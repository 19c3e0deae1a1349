/* stress_ng.c - the workload `stress-ng`: run stressors for a while and
 * store each one's bogo-ops rate from stress-ng's YAML metrics (see
 * stress_ng.h). stress-ng must be installed (--rootfs debian:stress-ng).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define LOG_MODULE "stress-ng"
#include "error.h"
#include "log.h"
#include "stress_ng.h"
#include "tool_run.h"
#include "util.h"
#include "workload.h"

/* ---- parser ---- */

static yaml_node_t *map_get(yaml_document_t *d, yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *p;

	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(d, p->key);

		if (k && k->type == YAML_SCALAR_NODE && !strcmp((char *)k->data.scalar.value, key))
			return yaml_document_get_node(d, p->value);
	}
	return NULL;
}

static bool scalar_num(yaml_node_t *n, double *out)
{
	char *end;

	if (!n || n->type != YAML_SCALAR_NODE)
		return false;
	*out = strtod((char *)n->data.scalar.value, &end);
	return end != (char *)n->data.scalar.value && !*end && isfinite(*out);
}

int sng_parse_yaml(const char *text, size_t len, sng_metric_fn *emit, void *ud,
		   struct buf *err)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *metrics;
	yaml_node_item_t *it;
	int n = 0;

	if (!yaml_parser_initialize(&parser)) {
		return err_setf(err, -ENOMEM, "cannot initialize libyaml");
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		n = err_setf(err, -EINVAL, "stress-ng's YAML does not parse: %s (line %zu)",
			     parser.problem ? parser.problem : "?", parser.problem_mark.line + 1);
		yaml_parser_delete(&parser);
		return n;
	}
	metrics = map_get(&doc, yaml_document_get_root_node(&doc), "metrics");
	if (!metrics || metrics->type != YAML_SEQUENCE_NODE) {
		n = err_setf(err, -EINVAL, "stress-ng's YAML has no metrics sequence");
		goto out;
	}
	for (it = metrics->data.sequence.items.start; it < metrics->data.sequence.items.top; it++) {
		yaml_node_t *m = yaml_document_get_node(&doc, *it), *s = map_get(&doc, m, "stressor");
		char name[192];
		double v;

		if (!s || s->type != YAML_SCALAR_NODE)
			continue;
		if (scalar_num(map_get(&doc, m, "bogo-ops-per-second-real-time"), &v)) {
			snprintf(name, sizeof(name), "stress-ng:%s:bogo_ops_s", s->data.scalar.value);
			emit(ud, name, v, "ops/s", "higher");
		}
		if (scalar_num(map_get(&doc, m, "bogo-ops"), &v)) {
			snprintf(name, sizeof(name), "stress-ng:%s:bogo_ops", s->data.scalar.value);
			emit(ud, name, v, "ops", "higher");
		}
		n++;
	}
out:
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return n;
}

/* ---- the workload ---- */

static const struct knob_def knobs[] = {
	{ "stressors", KNOB_STRING, "", "cpu:1", "STRESSOR:INSTANCES,... (stress-ng --STRESSOR INSTANCES)", NULL },
	{ "timeout_s", KNOB_SECONDS, "s", "10", "how long they run (--timeout)", NULL },
	{ "args", KNOB_STRING, "", "", "more stress-ng options, space-separated (--vm-bytes 64M)", NULL },
	{ "dir", KNOB_STRING, "path", ".", "working directory (--temp-path; not tmpfs)", NULL },
};

/* stress-ng's argv, or NULL with err when stressors does not parse. */
static char **sng_argv(struct wl_ctx *ctx, const char *yaml_path, struct buf *err)
{
	const struct knobs *k = ctx->knobs;
	char *list = xstrdup(knobs_str(k, "stressors")), *save = NULL, *tok;
	struct argv_buf a = { 0 };

	argv_push(&a, xstrdup("stress-ng"));
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');

		if (!colon || colon == tok || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
		    strspn(tok, "abcdefghijklmnopqrstuvwxyz0123456789-") != (size_t)(colon - tok)) {
			err_setf(err, -EINVAL,
				 "knob 'stressors': '%s' is not STRESSOR:INSTANCES (cpu:1)", tok);
			argv_free(a.v);
			a.v = NULL;
			goto out;
		}
		*colon = '\0';
		argv_push(&a, xasprintf("--%s", tok));
		argv_push(&a, xstrdup(colon + 1));
	}
	argv_push(&a, xasprintf("--timeout=%.0f", ceil(knobs_double(k, "timeout_s"))));
	argv_push(&a, xstrdup("--metrics-brief"));
	argv_push(&a, xasprintf("--yaml=%s", yaml_path));
	argv_push(&a, xasprintf("--temp-path=%s", knobs_str(k, "dir")));
	argv_push_words(&a, knobs_str(k, "args"));
out:
	free(list);
	return a.v;
}

static int sng_check(struct wl_ctx *ctx, struct buf *err)
{
	char *cgroot = NULL;
	char **argv;
	int ret = wl_check_common(&cgroot, "", knobs_str(ctx->knobs, "dir"), err);

	free(cgroot);
	if (ret < 0)
		return ret;
	if (!(argv = sng_argv(ctx, "x", err)))
		return -EINVAL;
	argv_free(argv);
	return 0;
}

static int sng_run(struct wl_ctx *ctx, struct buf *err)
{
	struct tool_run tr = { 0 };
	struct tool_cmd cmd = {
		.prog = "stress-ng", .hint = "--rootfs debian:stress-ng", .label = "stress-ng",
		.phase = "stress-ng", .dir = knobs_str(ctx->knobs, "dir"),
		.timeout_s = knobs_double(ctx->knobs, "timeout_s") + 120,
	};
	char *yaml_path = NULL, *text = NULL;
	size_t len = 0;
	int ret;

	if ((ret = sng_check(ctx, err)) < 0 || (ret = tr_begin(&tr, ctx, "kcsng", err)) < 0)
		goto out;
	yaml_path = xasprintf("%s/out.yaml", tr.tmp);
	cmd.argv = sng_argv(ctx, yaml_path, err);
	if ((ret = tr_exec(&tr, &cmd, err)) < 0 ||
	    (ret = tr_read(&tr, &text, &len, "out.yaml", 16 << 20, "stress-ng", err)) < 0)
		goto out;
	if ((ret = sng_parse_yaml(text, len, tr_metric, &tr, err)) < 0)
		goto out;
	tr_summary(&tr);
	ret = 0;
out:
	tr_end(&tr);
	argv_free(cmd.argv);
	free(yaml_path);
	free(text);
	return ret;
}

static double sng_expected_s(const struct knobs *k)
{
	return knobs_double(k, "timeout_s") + 30;
}

const struct workload wl_stress_ng = {
	.name = "stress-ng",
	.summary = "stress-ng stressors for timeout_s; each one's bogo-ops/s from its YAML metrics",
	.notes = "  metrics: stress-ng:STRESSOR:bogo_ops_s (ops/s, higher), :bogo_ops (ops, higher).\n"
		 "  Needs stress-ng.",
	.knobs = knobs,
	.nknobs = sizeof(knobs) / sizeof(knobs[0]),
	.check = sng_check,
	.run = sng_run,
	.expected_s = sng_expected_s,
};
