/* job_check.c - a job spec's cells through the agent's check (job_check.h). */
#define LOG_MODULE "job"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "exec/job_check.h"
#include "guest/agent_check.h"
#include "guest/run_params.h"
#include "log.h"
#include "store/db_cells.h"

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

/* Cell i through the agent: *expected_s its run's length (< 0: the agent
 * cannot tell); -EINVAL with err when its knobs do not parse. */
static int check_cell(const struct job_spec *spec, size_t i, const char *agent,
		      const char *params, double *expected_s, struct buf *err)
{
	char *where = NULL, *cell = NULL;
	struct run_params rp;
	struct agent_check c;
	int r;

	if ((r = run_params_parse(&rp, params, err)) ||
	    (r = agent_check(&c, agent, &rp, err)))
		goto out;
	*expected_s = c.expected_s;
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
	free(where);
	free(cell);
	return r;
}

int job_check_cells(struct job_check *out, const struct job_spec *spec, const char *agent,
		    struct buf *err)
{
	size_t nc = job_ncells(spec);
	int r = 0;

	out->ncells = nc;
	out->params = xcalloc(nc ? nc : 1, sizeof(*out->params));
	out->expected_s = xcalloc(nc ? nc : 1, sizeof(*out->expected_s));
	for (size_t i = 0; i < nc && !r; i++) {
		out->params[i] = job_cell_params(spec, i);
		r = check_cell(spec, i, agent, out->params[i], &out->expected_s[i], err);
	}
	return r;
}

void job_check_store(struct db *db, int64_t job_id, const struct job_check *c)
{
	struct buf err = BUF_INIT;
	int r = 0;

	for (size_t i = 0; i < c->ncells && !r; i++)
		r = db_cell_expected_set(db, job_id, c->params[i], c->expected_s[i], &err);
	if (r)
		log_warn("job %lld: its runs will ask the agent for their length: %s",
			 (long long)job_id, buf_str(&err));
	buf_release(&err);
}

void job_check_release(struct job_check *c)
{
	if (!c || !c->params)
		return;
	for (size_t i = 0; i < c->ncells; i++)
		free(c->params[i]);
	free(c->params);
	free(c->expected_s);
	c->params = NULL;
	c->expected_s = NULL;
	c->ncells = 0;
}
