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
#include "kernel/series_source.h"
#include "kernel/variant.h"
#include "util.h"
#include "wrap/mbox.h"

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

/* "Cc: a, b\n": the lists a and b (either may be "") joined, as GMime
 * writes an address header (mbox.h: names outside ASCII encoded, folded
 * before 78 columns); nothing when neither holds an address. */
static void address_header(struct buf *b, const char *key, const char *a, const char *c)
{
	char *all = xasprintf("%s%s%s", a, *a && *c ? ", " : "", c);
	char *line = mail_address_header(key, all);

	if (line)
		buf_puts(b, line);
	free(line);
	free(all);
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
	if (s && s->mail_from && *s->mail_from)
		address_header(b, "To", s->mail_from, "");
	if (s && ((s->mail_to && *s->mail_to) || (s->mail_cc && *s->mail_cc)))
		address_header(b, "Cc", s->mail_to ? s->mail_to : "", s->mail_cc ? s->mail_cc : "");
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

/* The revision's identity: its cover's message-id, else patch 1's; "" when
 * the mail had none. */
static const char *revision_id(const struct series *s)
{
	const char *id = s->cover_message_id ? s->cover_message_id :
			 s->npatches ? s->patches[0].message_id : NULL;
	return id ? id : "";
}

/* Whether variant v (a series variant) applied revision thread: its series
 * read again as the job read it (revision v->version, else the newest)
 * is the same mail (message-id) and version. 1 yes, 0 no, negative errno
 * when the series cannot be read now (why says so). */
static int variant_applied(struct db *db, const struct variant *v, const struct series *thread,
			   struct buf *why)
{
	struct series_source_opts so = { .db = db, .version = v->version };
	struct series **revs = NULL, *rev = NULL;
	size_t n = 0;
	int r;

	if ((r = series_source_load(&revs, &n, &v->series, 1, &so, why)))
		return r;
	for (size_t i = 0; i < n; i++)
		if (!revs[i]->report && (v->version ? revs[i]->version == v->version :
					 !rev || revs[i]->version > rev->version))
			rev = revs[i];
	r = rev && rev->version == thread->version &&
	    (*revision_id(thread) ? !strcmp(revision_id(rev), revision_id(thread)) :
	     !strcmp(rev->name ? rev->name : "", thread->name ? thread->name : ""));
	series_free_all(revs, n);
	return r;
}

/* Whether the job measured revision thread: one of its variants applied it
 * (variant_applied). 1 yes, 0 no, negative when a series variant's series
 * cannot be read now and none matched: why names it. */
static int job_measured(struct db *db, int64_t job_id, const struct series *thread,
			struct buf *why)
{
	struct db_variant_row *rows = NULL;
	size_t n = 0;
	int r, ret = 0;

	if ((r = db_job_variants(db, job_id, &rows, &n, why)))
		return r;
	for (size_t i = 0; i < n && ret != 1; i++) {
		struct variant v;
		struct buf e = BUF_INIT;
		if (variant_from_json(&v, rows[i].name, rows[i].spec_json, &e) == 0) {
			if (v.kind == VARIANT_SERIES) {
				buf_reset(&e);
				r = variant_applied(db, &v, thread, &e);
				if (r < 0 && !ret) {
					buf_reset(why);
					buf_printf(why, "variant '%s': %s", rows[i].name, buf_str(&e));
				}
				ret = r == 1 ? 1 : r < 0 && !ret ? r : ret;
			}
			variant_release(&v);
		}
		buf_release(&e);
	}
	db_variant_rows_free(rows, n);
	return ret;
}

/* "kcanary measured ...": the job once, and "vN of this series" only when
 * the job applied that revision; else what it did not, and why unknown. */
static void opening(struct buf *b, struct db *db, const struct db_job_row *job,
		    const struct series *thread)
{
	struct buf why = BUF_INIT;
	int m = thread ? job_measured(db, job->id, thread, &why) : 0;

	buf_puts(b, "Hi,\n\nkcanary measured ");
	if (m == 1)
		buf_printf(b, "v%d of this series (job '%s', %d runs, %d ok):\n\n", thread->version,
			   job->name, job->runs_total, job->runs_ok);
	else if (!thread)
		buf_printf(b, "job '%s' (%d runs, %d ok):\n\n", job->name, job->runs_total,
			   job->runs_ok);
	else if (m == 0)
		buf_printf(b, "job '%s' (%d runs, %d ok). The job did not apply v%d of\n"
			   "this series: what it ran is in the environment below.\n\n", job->name,
			   job->runs_total, job->runs_ok, thread->version);
	else
		buf_printf(b, "job '%s' (%d runs, %d ok). Whether it applied v%d of\n"
			   "this series cannot be told now (%s).\n\n", job->name, job->runs_total,
			   job->runs_ok, thread->version, buf_str(&why));
	buf_release(&why);
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
	opening(out, db, job, thread);
	report_format(out, rep, REPORT_TEXT);
	r = environment(out, db, job_id, err);
	buf_puts(out, "\n-- \nkcanary\n");
out:
	report_free(rep);
	db_jobs_free(job, 1);
	return r;
}
