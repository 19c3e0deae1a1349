/* bisect_log.c - replaying a bisection's event log through the engine.
 *
 * The log (written by bisect_run(), format in bisect.h's users' doc in
 * cmd_bisect.c) is line-based text: "kcanary-bisect-log 1", a "config" line,
 * then in order "run idx=I phase=P value=V" and "skip idx=I phase=P code=C"
 * lines (the oracle's answers) interleaved with informational lines
 * (endpoints, model, verdict, posterior, check), and one "result" line.
 * Replay only needs config, run/skip and result.
 */
#define LOG_MODULE "bisect"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
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
	return 0;
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

int bisect_replay(struct bisect_result *out, const char *text, struct buf *relog, char **err)
{
	struct replay rp = { 0 };
	struct bisect_opts o;
	struct bisect_result r;
	struct buf mine = BUF_INIT;
	char *logged_result = NULL, *why = NULL;
	bool have_header = false, have_config = false;
	size_t n = 0, lineno = 0;
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
				why = xasprintf("line %zu: expected 'kcanary-bisect-log 1', found '%.40s'",
						lineno, line);
				rc = -EINVAL;
			}
			have_header = true;
		} else if (!strncmp(line, "config ", 7)) {
			if (have_config || parse_config(line, &o, &n)) {
				why = xasprintf("line %zu: bad or repeated config line", lineno);
				rc = -EINVAL;
			}
			have_config = true;
		} else if (!strncmp(line, "run ", 4) || !strncmp(line, "skip ", 5)) {
			struct replay_event ev = { 0 };
			unsigned long long idx;
			double code;

			if (field_uint(line, "idx", &idx) || idx >= n ||
			    (line[0] == 'r' ? field_double(line, "value", &ev.value) :
			     field_double(line, "code", &code) || code >= 0)) {
				why = xasprintf("line %zu: bad %s line '%.60s'", lineno,
						line[0] == 'r' ? "run" : "skip", line);
				rc = -EINVAL;
			} else {
				ev.idx = (size_t)idx;
				ev.code = line[0] == 'r' ? 0 : (int)code;
				if (rp.nev == rp.cap) {
					rp.cap = rp.cap ? 2 * rp.cap : 64;
					rp.ev = xrealloc(rp.ev, rp.cap * sizeof(*rp.ev));
				}
				rp.ev[rp.nev++] = ev;
			}
		} else if (!strncmp(line, "result ", 7) && !logged_result) {
			logged_result = line;
			line = NULL;
		}
		free(line);
		if (rc)
			goto out;
	}
	if (!have_header || !have_config) {
		why = xasprintf("not a bisect log: %s missing", have_header ? "config line" :
				"'kcanary-bisect-log 1' header");
		rc = -EINVAL;
		goto out;
	}
	rc = bisect_run(&r, n, &o, replay_measure, &rp, relog, NULL);
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
	*out = r;
out:
	if (err)
		*err = why;
	else
		free(why);
	free(rp.why);
	free(rp.ev);
	free(logged_result);
	buf_release(&mine);
	return rc;
}
