/* run_params.c - a run's stored params as guest settings (see run_params.h). */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "guest/run_params.h"

static const char *text_of(json_t *doc, const char *key)
{
	return json_string_value(json_object_get(doc, key));
}

/* Keys of params_json that are not workload knobs. */
static bool not_a_knob(const char *k)
{
	return !strcmp(k, "workload") || !strcmp(k, "fs") || !strcmp(k, "sysctl") ||
	       !strcmp(k, "mkfs_opts") || !strcmp(k, "mount_opts") || !strcmp(k, "config");
}

int run_params_parse(struct run_params *out, const char *params_json, struct buf *err)
{
	json_t *doc, *sys, *v;
	json_error_t je;
	struct knob *kn, *sc;
	const char *k;

	memset(out, 0, sizeof(*out));
	out->workload = RUN_PARAMS_DEFAULT_WORKLOAD;
	out->knobs = out->sysctls = out->own = xcalloc(1, sizeof(*out->own));
	if (!params_json || !*params_json)
		return 0;
	if (!(doc = json_loads(params_json, 0, &je)) || !json_is_object(doc)) {
		json_decref(doc);
		return err_setf(err, -EINVAL, "run params '%.80s' are not a JSON object%s%s",
				params_json, doc ? "" : ": ", doc ? "" : je.text);
	}
	out->doc = doc;
	if (text_of(doc, "workload"))
		out->workload = text_of(doc, "workload");
	out->mkfs_opts = text_of(doc, "mkfs_opts");
	out->mount_opts = text_of(doc, "mount_opts");
	sys = json_object_get(doc, "sysctl");
	/* one array: the knobs, then the sysctls */
	free(out->own);
	kn = out->own = xcalloc(json_object_size(doc) + json_object_size(sys) + 1, sizeof(*kn));
	json_object_foreach(doc, k, v)
		if (!not_a_knob(k) && json_is_string(v))
			kn[out->nknobs++] = (struct knob){ k, json_string_value(v) };
	sc = kn + out->nknobs;
	json_object_foreach(sys, k, v)
		if (json_is_string(v))
			sc[out->nsysctls++] = (struct knob){ k, json_string_value(v) };
	out->knobs = kn;
	out->sysctls = sc;
	return 0;
}

void run_params_release(struct run_params *p)
{
	if (!p)
		return;
	json_decref(p->doc);
	free(p->own);
	memset(p, 0, sizeof(*p));
}
