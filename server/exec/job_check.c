/* job_check.c - a job spec's cells through the agent's check (job_check.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "exec/job_check.h"
#include "guest/agent_check.h"
#include "guest/run_params.h"

/* Where the spec set knob: the job file's line, "--set knob" when the CLI
 * did, NULL when neither (a default). Caller frees. */
static char *knob_where(const struct job_spec *spec, const char *knob)
{
	const char *w;

	if (!knob)
		return NULL;
	if ((w = job_spec_where(spec, knob)))
		return xstrdup(w);
	for (size_t i = 0; i < spec->nknobs; i++)
		if (!strcmp(spec->knobs[i].key, knob))
			return xasprintf("--set %s", knob);
	for (size_t i = 0; i < spec->ndims; i++)
		if (!strcmp(spec->dims[i].key, knob))
			return xasprintf("--set %s", knob);
	return NULL;
}

/* One cell through the agent; -EINVAL with err when its knobs do not parse. */
static int check_cell(const struct job_spec *spec, size_t i, const char *agent, struct buf *err)
{
	char *params = job_cell_params(spec, i), *where = NULL, *cell = NULL;
	struct run_params rp;
	struct agent_check c;
	int r;

	if ((r = run_params_parse(&rp, params, err)) ||
	    (r = agent_check(&c, agent, rp.workload, rp.knobs, err)))
		goto out;
	if (!c.ok) {
		cell = job_cell_text(spec, i);
		if ((where = knob_where(spec, c.knob)))
			r = err_setf(err, -EINVAL, "%s: %s", where, c.error);
		else
			r = err_setf(err, -EINVAL, "%s%s%s%s", *cell ? "matrix cell '" : "", cell,
				     *cell ? "': " : "", c.error);
	}
	agent_check_release(&c);
out:
	run_params_release(&rp);
	free(params);
	free(where);
	free(cell);
	return r;
}

int agent_check_spec(const struct job_spec *spec, const char *agent, struct buf *err)
{
	size_t nc = job_ncells(spec);
	int r = 0;

	for (size_t i = 0; i < nc && !r; i++)
		r = check_cell(spec, i, agent, err);
	return r;
}
