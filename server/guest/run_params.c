/* run_params.c - a run's stored params as guest settings (see run_params.h). */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "guest/run_params.h"

static const char *keep(struct run_params *p, char *s)
{
	p->owned = xrealloc(p->owned, (p->nowned + 1) * sizeof(*p->owned));
	p->owned[p->nowned++] = s;
	return s;
}

static const char *keep_text(struct run_params *p, json_t *v)
{
	return json_is_string(v) ? keep(p, xstrdup(json_string_value(v))) : NULL;
}

/* Keys of params_json that are not workload knobs. */
static bool not_a_knob(const char *k)
{
	return !strcmp(k, "workload") || !strcmp(k, "fs") || !strcmp(k, "sysctl") ||
	       !strcmp(k, "mkfs_opts") || !strcmp(k, "mount_opts") || !strcmp(k, "config");
}

int run_params_parse(struct run_params *out, const char *params_json, struct buf *err)
{
	json_t *doc = NULL, *sys, *v;
	json_error_t je;
	const char *k;

	memset(out, 0, sizeof(*out));
	out->knobs = xcalloc(1, sizeof(*out->knobs));
	out->sysctls = xcalloc(1, sizeof(*out->sysctls));
	out->workload = RUN_PARAMS_DEFAULT_WORKLOAD;
	if (!params_json || !*params_json)
		return 0;
	if (!(doc = json_loads(params_json, 0, &je)) || !json_is_object(doc)) {
		json_decref(doc);
		return err_setf(err, -EINVAL, "run params '%.80s' are not a JSON object%s%s",
				params_json, doc ? "" : ": ", doc ? "" : je.text);
	}
	if ((k = keep_text(out, json_object_get(doc, "workload"))))
		out->workload = k;
	out->mkfs_opts = keep_text(out, json_object_get(doc, "mkfs_opts"));
	out->mount_opts = keep_text(out, json_object_get(doc, "mount_opts"));
	sys = json_object_get(doc, "sysctl");
	out->knobs = xrealloc(out->knobs, (json_object_size(doc) + 1) * sizeof(*out->knobs));
	out->sysctls = xrealloc(out->sysctls, (json_object_size(sys) + 1) * sizeof(*out->sysctls));
	json_object_foreach(doc, k, v)
		if (!not_a_knob(k) && json_is_string(v))
			out->knobs[out->nknobs++] = keep(out, xasprintf("%s=%s", k, json_string_value(v)));
	json_object_foreach(sys, k, v)
		if (json_is_string(v))
			out->sysctls[out->nsysctls++] =
				keep(out, xasprintf("%s=%s", k, json_string_value(v)));
	out->knobs[out->nknobs] = NULL;
	out->sysctls[out->nsysctls] = NULL;
	json_decref(doc);
	return 0;
}

void run_params_release(struct run_params *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nowned; i++)
		free(p->owned[i]);
	free(p->owned);
	free(p->knobs);
	free(p->sysctls);
	memset(p, 0, sizeof(*p));
}
