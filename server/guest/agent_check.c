/* agent_check.c - `kcanary-agent check --json`, run and read (see
 * agent_check.h). */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "guest/agent_check.h"
#include "error.h"
#include "guest/image.h"
#include "proc.h"

/* The agent's reply is one line; anything longer is not a reply. */
#define REPLY_MAX (256 << 10)

/* Run argv with its stdout into out (at most REPLY_MAX bytes kept); stderr
 * is ours. *status gets its exit status (-1: killed by a signal). */
static int spawn_read(char *const argv[], struct buf *out, int *status, struct buf *err)
{
	struct proc_spec s = { .argv = (const char *const *)argv, .out = PROC_CAPTURE,
			       .out_buf = out, .err = PROC_INHERIT };
	struct proc_outcome o;
	int r;

	out->max_bytes = REPLY_MAX;
	if ((r = proc_run(&o, &s, err)))
		return err_setf(err, r, "cannot run the agent '%s': %s", argv[0], strerror(-r));
	*status = o.status;
	return 0;
}

/* v, a count of 0 or more, into *out, or -1 for absent or null; false
 * when it is something else. */
static bool int_or_null(int64_t *out, json_t *v)
{
	*out = -1;
	if (!v || json_is_null(v))
		return true;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = json_integer_value(v);
	return true;
}

/* The reply's fields into *out; -EIO when it is not the documented shape. */
static int read_reply(struct agent_check *out, const char *text)
{
	json_t *o = json_loads(text, 0, NULL), *ok, *s;
	int r = -EIO;

	if (!json_is_object(o) || !json_is_boolean(ok = json_object_get(o, "ok")))
		goto out;
	out->ok = json_is_true(ok);
	if (out->ok) {
		s = json_object_get(o, "expected_s");
		if (!json_is_null(s) && !json_is_number(s))
			goto out;
		out->expected_s = json_is_number(s) ? json_number_value(s) : -1;
		/* absent (an older agent) or null: the agent cannot size the disk */
		if (!int_or_null(&out->disk_bytes, json_object_get(o, "disk_bytes")) ||
		    !int_or_null(&out->disk_files, json_object_get(o, "disk_files")))
			goto out;
		s = json_object_get(o, "disk_knobs");
		out->disk_knobs = json_is_string(s) ? xstrdup(json_string_value(s)) : NULL;
	} else {
		const char *k = json_string_value(json_object_get(o, "knob"));
		const char *e = json_string_value(json_object_get(o, "error"));

		if (!e)
			goto out;
		out->knob = k ? xstrdup(k) : NULL;
		out->error = xstrdup(e);
	}
	r = 0;
out:
	json_decref(o);
	return r;
}

int agent_check(struct agent_check *out, const char *agent, const struct run_params *rp,
		struct buf *err)
{
	static const struct run_params none;
	char *path = agent ? xstrdup(agent) : image_default_agent();
	struct buf reply = BUF_INIT;
	char **argv;
	size_t nk;
	int status = 0, r;

	memset(out, 0, sizeof(*out));
	if (!rp)
		rp = &none;
	nk = rp->nknobs;
	argv = xcalloc(nk + 5, sizeof(*argv));
	argv[0] = path;
	argv[1] = (char *)"check";
	argv[2] = (char *)(rp->workload ? rp->workload : RUN_PARAMS_DEFAULT_WORKLOAD);
	/* the agent's argv is where a knob becomes one "key=value" word */
	for (size_t i = 0; i < nk; i++)
		argv[3 + i] = xasprintf("%s=%s", rp->knobs[i].key, rp->knobs[i].value);
	argv[3 + nk] = (char *)"--json";
	if ((r = spawn_read(argv, &reply, &status, err)))
		goto out;
	if ((status != 0 && status != 2) || read_reply(out, buf_str(&reply))) {
		agent_check_release(out);
		r = err_setf(err, -EIO, "the agent '%s' gave no check reply (exit status %d%s%.*s)",
			     path, status, reply.len ? ", stdout: " : "",
			     (int)strcspn(buf_str(&reply), "\n"), buf_str(&reply));
	}
out:
	buf_release(&reply);
	for (size_t i = 0; i < nk; i++)
		free(argv[3 + i]);
	free(argv);
	free(path);
	return r;
}

void agent_check_release(struct agent_check *c)
{
	if (!c)
		return;
	free(c->knob);
	free(c->error);
	free(c->disk_knobs);
	c->knob = c->error = c->disk_knobs = NULL;
}
