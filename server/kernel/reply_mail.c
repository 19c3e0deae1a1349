/* reply_mail.c - see reply_mail.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "store/db.h"
#include "store/db_compare.h"
#include "store/db_report.h"
#include "store/db_status.h"
#include "error.h"
#include "judge/report.h"
#include "kernel/reply_mail.h"
#include "kernel/series.h"
#include "util.h"

/* "[PATCH RFC net-next v3 0/2]": the tags git format-patch writes. */
static void subject_tags(struct buf *b, const struct series *s)
{
	buf_puts(b, "[PATCH");
	if (s->rfc)
		buf_puts(b, " RFC");
	if (*s->prefix_tags)
		buf_printf(b, " %s", s->prefix_tags);
	if (s->version > 1)
		buf_printf(b, " v%d", s->version);
	if (s->cover_subject)
		buf_printf(b, " 0/%d]", s->m ? s->m : (int)s->npatches);
	else if (s->npatches && s->patches[0].m > 1)
		buf_printf(b, " %d/%d]", s->patches[0].k, s->patches[0].m);
	else
		buf_puts(b, "]");
}

static void headers(struct buf *b, const struct series *s, const char *job)
{
	const char *id = s ? (s->cover_message_id ? s->cover_message_id :
			      s->npatches ? s->patches[0].message_id : NULL) : NULL;

	if (!s) {
		buf_printf(b, "Subject: kcanary report: %s\n", job);
	} else {
		buf_puts(b, "Subject: Re: ");
		subject_tags(b, s);
		buf_printf(b, " %s\n", s->cover_subject ? s->cover_subject :
			   s->npatches ? s->patches[0].subject : "");
	}
	if (id && *id)
		buf_printf(b, "In-Reply-To: <%s>\nReferences: <%s>\n", id, id);
	buf_puts(b, "Content-Type: text/plain; charset=UTF-8\n\n");
}

/* "k=v k=v" of a params_json object, keys in stored order. */
static void knobs(struct buf *b, const char *params_json)
{
	json_t *o = json_loads(params_json, 0, NULL);
	const char *k;
	json_t *v;
	bool first = true;

	json_object_foreach(o, k, v) {
		buf_printf(b, "%s%s=", first ? "" : " ", k);
		if (json_is_string(v))
			buf_puts(b, json_string_value(v));
		else {
			char *t = json_dumps(v, JSON_ENCODE_ANY);
			buf_puts(b, t ? t : "?");
			free(t);
		}
		first = false;
	}
	if (first)
		buf_puts(b, "(defaults)");
	json_decref(o);
}

/* The job spec's config fragments, when it names any. */
static void fragments(struct buf *b, struct db *db, int64_t job_id)
{
	char *spec = NULL;
	json_t *j, *cfg, *f;
	size_t i;

	if (db_job_spec(db, job_id, &spec, NULL))
		return;
	j = json_loads(spec, 0, NULL);
	cfg = json_object_get(j, "config");
	if (json_array_size(cfg)) {
		buf_puts(b, "  config:      default fragments +");
		json_array_foreach(cfg, i, f)
			buf_printf(b, " %s", json_string_value(f) ? json_string_value(f) : "?");
		buf_puts(b, "\n");
	}
	json_decref(j);
	free(spec);
}

static int environment(struct buf *b, struct db *db, int64_t job_id, struct buf *err)
{
	struct db_env_row *v = NULL;
	size_t n = 0;
	bool tcg = false;
	int r;

	if ((r = db_report_env(db, job_id, &v, &n, err)))
		return r;
	buf_puts(b, "\nenvironment:\n");
	for (size_t i = 0; i < n; i++) {
		buf_printf(b, "  %-20s %lld run%s: kernel %s, host %s, accel %s, fs %s\n", v[i].variant,
			   (long long)v[i].nruns, v[i].nruns == 1 ? "" : "s",
			   *v[i].kernel_release ? v[i].kernel_release : "(not recorded)",
			   *v[i].host ? v[i].host : "(not recorded)",
			   *v[i].accel ? v[i].accel : "(not recorded)", *v[i].fs ? v[i].fs : "-");
		buf_puts(b, "  ");
		buf_printf(b, "%-20s knobs: ", "");
		knobs(b, v[i].params_json);
		buf_puts(b, "\n");
		tcg |= !strcmp(v[i].accel, "tcg");
	}
	fragments(b, db, job_id);
	if (tcg)
		buf_puts(b, "  note: runs under TCG (software emulation): the timings are not the"
			 " host's\n");
	db_env_rows_free(v, n);
	return 0;
}

int reply_mail(struct buf *out, struct db *db, int64_t job_id, const struct report_opts *ro,
		 const struct series *thread, struct buf *err)
{
	struct report *rep = NULL;
	struct db_job_row *job = NULL;
	int r;

	if ((r = db_job_get(db, job_id, &job, err)))
		return r;
	if ((r = report_build(&rep, db, job_id, ro, err)))
		goto out;
	headers(out, thread, job->name);
	buf_puts(out, "Hi,\n\nkcanary measured ");
	if (thread)
		buf_printf(out, "v%d of this series", thread->version);
	else
		buf_printf(out, "job '%s'", job->name);
	buf_printf(out, " (job '%s', %d runs, %d ok):\n\n", job->name, job->runs_total, job->runs_ok);
	report_format(out, rep, REPORT_TEXT);
	r = environment(out, db, job_id, err);
	buf_puts(out, "\n-- \nkcanary\n");
out:
	report_free(rep);
	db_jobs_free(job, 1);
	return r;
}
