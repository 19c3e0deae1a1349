/* db_runs.c - jobs, variants and runs in the store (see db_runs.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/db.h"
#include "store/db_runs.h"
#include "store/db_internal.h"
#include "error.h"
#include "util.h"

#define NOW_SQL "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')"

int db_job_create(struct db *db, int64_t *out_id, const char *name,
		  const char *kind, const char *spec_json, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st,
			    "INSERT INTO jobs (name, kind, spec_json) VALUES (?, ?, ?)", err)))
		return r;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, kind ? kind : "adhoc", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, spec_json ? spec_json : "{}", -1, SQLITE_TRANSIENT);
	if (!(r = db_step_done(db, st, err, "cannot store job '%s'", name)))
		*out_id = sqlite3_last_insert_rowid(db->h);
	sqlite3_finalize(st);
	return r;
}

int db_job_resolve(struct db *db, int64_t *out_id, const char *id_or_name, struct buf *err)
{
	const char *p = id_or_name;
	int r;

	while (*p >= '0' && *p <= '9')
		p++;
	if (*id_or_name && !*p) {
		/* a store error here is met again, with err, by the name query */
		r = db_query_int64(db, out_id, "SELECT id FROM jobs WHERE id = ?",
				   id_or_name, NULL);
		if (!r)
			return 0;
	}
	r = db_query_int64(db, out_id,
			   "SELECT id FROM jobs WHERE name = ? ORDER BY id DESC LIMIT 1",
			   id_or_name, err);
	if (r == -ENOENT)
		err_setf(err, r, "no job '%s' in the store", id_or_name);
	return r;
}

static bool is_terminal(const char *status)
{
	return strcmp(status, "pending") && strcmp(status, "running") &&
	       strcmp(status, "building");
}

int db_job_set_status(struct db *db, int64_t job_id, const char *status,
		      const char *error, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st,
			    "UPDATE jobs SET status = ?1, error = ?2,"
			    " started_at = CASE WHEN ?1 IN ('running','building')"
			    "   THEN coalesce(started_at, " NOW_SQL ") ELSE started_at END,"
			    " finished_at = CASE WHEN ?3 THEN " NOW_SQL " ELSE NULL END"
			    " WHERE id = ?4", err)))
		return r;
	sqlite3_bind_text(st, 1, status, -1, SQLITE_TRANSIENT);
	db_bind_text_or_null(st, 2, error);
	sqlite3_bind_int(st, 3, is_terminal(status));
	sqlite3_bind_int64(st, 4, job_id);
	r = db_step_done(db, st, err, "cannot set job %lld's status to '%s'", (long long)job_id, status);
	if (!r && sqlite3_changes(db->h) == 0)
		r = err_setf(err, -ENOENT, "no job %lld in the store", (long long)job_id);
	sqlite3_finalize(st);
	return r;
}

int db_variant_get(struct db *db, int64_t *out_id, int64_t job_id,
		   const char *name, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st,
			    "INSERT INTO variants (job_id, idx, name) VALUES (?1,"
			    " (SELECT coalesce(max(idx) + 1, 0) FROM variants WHERE job_id = ?1), ?2)"
			    " ON CONFLICT (job_id, name) DO NOTHING", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
	r = db_step_done(db, st, err, "cannot store variant '%s' of job %lld", name, (long long)job_id);
	sqlite3_finalize(st);
	st = NULL;
	if (r)
		return r;
	if ((r = db_prepare(db, &st,
			    "SELECT id FROM variants WHERE job_id = ? AND name = ?", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW)
		*out_id = sqlite3_column_int64(st, 0);
	else
		r = db_fail(db, 0, err, "cannot read variant '%s' of job %lld", name, (long long)job_id);
	sqlite3_finalize(st);
	return r;
}

int db_run_create(struct db *db, int64_t *out_id, int64_t job_id,
		  int64_t variant_id, const char *cell, int repeat_idx,
		  const char *fs, const char *params_json, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st,
			    "INSERT INTO runs (job_id, variant_id, cell, repeat_idx, fs,"
			    " params_json, seq) VALUES (?1, ?2, ?3,"
			    " CASE WHEN ?4 > 0 THEN ?4 ELSE (SELECT coalesce(max(repeat_idx), 0) + 1"
			    "   FROM runs WHERE variant_id = ?2 AND cell = ?3) END,"
			    " ?5, ?6, (SELECT coalesce(max(seq), 0) + 1 FROM runs WHERE job_id = ?1))", err)))
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int64(st, 2, variant_id);
	sqlite3_bind_text(st, 3, cell ? cell : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 4, repeat_idx);
	db_bind_text_or_null(st, 5, fs);
	sqlite3_bind_text(st, 6, params_json ? params_json : "{}", -1, SQLITE_TRANSIENT);
	r = db_step_done(db, st, err, "cannot store a run of job %lld", (long long)job_id);
	if (r == -EEXIST)
		err_setf(err, r, "run %d of this variant and cell is already stored; stored runs are never replaced",
			 repeat_idx);
	if (!r)
		*out_id = sqlite3_last_insert_rowid(db->h);
	sqlite3_finalize(st);
	return r;
}

int db_run_set_status(struct db *db, int64_t run_id, const char *status,
		      const char *error, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st,
			    "UPDATE runs SET status = ?1, error = coalesce(?2, error),"
			    " started_at = CASE WHEN ?1 = 'running'"
			    "   THEN coalesce(started_at, " NOW_SQL ") ELSE started_at END,"
			    " finished_at = CASE WHEN ?1 NOT IN ('pending', 'running')"
			    "   THEN " NOW_SQL " ELSE finished_at END"
			    " WHERE id = ?3", err)))
		return r;
	sqlite3_bind_text(st, 1, status, -1, SQLITE_TRANSIENT);
	db_bind_text_or_null(st, 2, error);
	sqlite3_bind_int64(st, 3, run_id);
	r = db_step_done(db, st, err, "cannot set run %lld's status to '%s'", (long long)run_id, status);
	if (!r && sqlite3_changes(db->h) == 0)
		r = err_setf(err, -ENOENT, "no run %lld in the store", (long long)run_id);
	sqlite3_finalize(st);
	return r;
}

int db_job_set_meta(struct db *db, int64_t job_id, int64_t seed, const char *metric, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, "UPDATE jobs SET seed = ?, metric = ? WHERE id = ?", err)))
		return r;
	sqlite3_bind_int64(st, 1, seed);
	sqlite3_bind_text(st, 2, metric, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, job_id);
	r = db_step_done(db, st, err, "cannot store job %lld's seed and metric", (long long)job_id);
	sqlite3_finalize(st);
	return r;
}

int db_variant_set_spec(struct db *db, int64_t variant_id, const char *base_rev,
			const char *patches, const char *spec_json, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st,
			    "UPDATE variants SET base_rev = ?, patches = ?, spec_json = coalesce(?, spec_json)"
			    " WHERE id = ?", err)))
		return r;
	db_bind_text_or_null(st, 1, base_rev);
	db_bind_text_or_null(st, 2, patches);
	db_bind_text_or_null(st, 3, spec_json);
	sqlite3_bind_int64(st, 4, variant_id);
	r = db_step_done(db, st, err, "cannot store variant %lld's spec", (long long)variant_id);
	sqlite3_finalize(st);
	return r;
}

/* A fresh pending run of the same variant and cell, next repeat index, at
 * the end of the job's run order. */
#define RESCHEDULE_SQL \
	"INSERT INTO runs (job_id, variant_id, kernel_id, cell, fs, params_json," \
	" repeat_idx, seq)" \
	" SELECT job_id, variant_id, kernel_id, cell, fs, params_json," \
	"  (SELECT max(repeat_idx) + 1 FROM runs x WHERE x.variant_id = r.variant_id" \
	"   AND x.cell = r.cell)," \
	"  (SELECT max(seq) + 1 FROM runs y WHERE y.job_id = r.job_id)" \
	" FROM runs r WHERE r.id = ?"

int db_run_reschedule(struct db *db, int64_t run_id, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st, RESCHEDULE_SQL, err)))
		return r;
	sqlite3_bind_int64(st, 1, run_id);
	r = db_step_done(db, st, err, "cannot schedule a fresh repeat of run %lld", (long long)run_id);
	sqlite3_finalize(st);
	return r;
}

int db_run_reschedule_id(struct db *db, int64_t run_id, int64_t *new_id, struct buf *err)
{
	int r = db_run_reschedule(db, run_id, err);

	if (!r)
		*new_id = sqlite3_last_insert_rowid(db->h);
	return r;
}

int db_job_interrupt_running(struct db *db, int64_t job_id, int64_t **out, size_t *n, struct buf *err)
{
	sqlite3_stmt *sel = NULL, *ins = NULL;
	int64_t *ids = NULL;
	size_t k = 0;
	int r, rc;

	*out = NULL;
	*n = 0;
	if ((r = db_begin(db, err)))
		return r;
	if ((r = db_prepare(db, &sel, "SELECT id FROM runs WHERE job_id = ? AND status = 'running'"
			    " ORDER BY seq", err)) ||
	    (r = db_prepare(db, &ins, RESCHEDULE_SQL, err)))
		goto fail;
	sqlite3_bind_int64(sel, 1, job_id);
	while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
		ids = xrealloc(ids, (k + 1) * sizeof(*ids));
		ids[k++] = sqlite3_column_int64(sel, 0);
	}
	if (rc != SQLITE_DONE) {
		r = db_fail(db, 0, err, "cannot read job %lld's running runs", (long long)job_id);
		goto fail;
	}
	for (size_t i = 0; i < k; i++) {
		if ((r = db_run_set_status(db, ids[i], "interrupted",
					   "the coordinator stopped during this run; a fresh repeat was scheduled", err)))
			goto fail;
		sqlite3_bind_int64(ins, 1, ids[i]);
		if (sqlite3_step(ins) != SQLITE_DONE) {
			r = db_fail(db, 0, err, "cannot schedule a fresh repeat of run %lld", (long long)ids[i]);
			goto fail;
		}
		sqlite3_reset(ins);
	}
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	if ((r = db_commit(db, err))) {
		db_rollback(db);
		free(ids);
		return r;
	}
	*out = ids;
	*n = k;
	return 0;
fail:
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	db_rollback(db);
	free(ids);
	return r;
}

int db_variant_set_result(struct db *db, int64_t variant_id, const char *status,
			  const char *error, const char *commit_oid, int64_t kernel_id, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st,
			    "UPDATE variants SET status = ?, error = ?, commit_oid = coalesce(?, commit_oid),"
			    " kernel_id = CASE WHEN ? > 0 THEN ? ELSE kernel_id END,"
			    " kernel_at = CASE WHEN ?1 = 'pending' THEN kernel_at ELSE " NOW_SQL " END"
			    " WHERE id = ?", err)))
		return r;
	sqlite3_bind_text(st, 1, status, -1, SQLITE_TRANSIENT);
	db_bind_text_or_null(st, 2, error);
	db_bind_text_or_null(st, 3, commit_oid);
	sqlite3_bind_int64(st, 4, kernel_id);
	sqlite3_bind_int64(st, 5, kernel_id);
	sqlite3_bind_int64(st, 6, variant_id);
	r = db_step_done(db, st, err, "cannot store variant %lld's result", (long long)variant_id);
	if (!r && sqlite3_changes(db->h) == 0)
		r = err_setf(err, -ENOENT, "no variant %lld in the store", (long long)variant_id);
	sqlite3_finalize(st);
	return r;
}

int db_runs_skip_pending(struct db *db, int64_t job_id, int64_t variant_id, const char *why,
			 int *n_out, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st,
			    "UPDATE runs SET status = 'skipped', error = ?1, finished_at = " NOW_SQL
			    " WHERE job_id = ?2 AND status = 'pending' AND (?3 = 0 OR variant_id = ?3)",
			    err)))
		return r;
	sqlite3_bind_text(st, 1, why, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, job_id);
	sqlite3_bind_int64(st, 3, variant_id);
	r = db_step_done(db, st, err, "cannot mark job %lld's runs that will not run as skipped",
			 (long long)job_id);
	if (!r && n_out)
		*n_out = sqlite3_changes(db->h);
	sqlite3_finalize(st);
	return r;
}

/* Mark run_id (left 'running' by the dead writer pid) interrupted, with
 * what it kept; inside the caller's transaction. */
static int reap_one(struct db *db, int64_t run_id, int pid, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	if ((r = db_prepare(db, &st,
			    "UPDATE runs SET status = 'interrupted', finished_at = " NOW_SQL ","
			    " records = (SELECT count(*) FROM samples WHERE run_id = ?1)"
			    "  + (SELECT count(*) FROM probes WHERE run_id = ?1)"
			    "  + (SELECT count(*) FROM phases WHERE run_id = ?1),"
			    " bad_lines = (SELECT count(*) FROM raw_lines WHERE run_id = ?1),"
			    " error = printf('its writer (kcanary ingest, pid %d) stopped before the"
			    " end of the stream: killed, crashed or stopped by an error; the %d"
			    " samples it committed are kept; ingest the stream again to replace it',"
			    " ?2, (SELECT count(*) FROM samples WHERE run_id = ?1))"
			    " WHERE id = ?1 AND status = 'running'", err)))
		return r;
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int(st, 2, pid);
	r = db_step_done(db, st, err, "cannot mark run %lld as interrupted", (long long)run_id);
	sqlite3_finalize(st);
	if (r)
		return r;
	/* an ad-hoc job is whatever was ingested into it: done when no run is live */
	if ((r = db_prepare(db, &st,
			    "UPDATE jobs SET status = 'done', finished_at = " NOW_SQL
			    " WHERE id = (SELECT job_id FROM runs WHERE id = ?1) AND kind = 'adhoc'"
			    " AND status IN ('pending', 'running') AND NOT EXISTS (SELECT 1 FROM runs x"
			    "  WHERE x.job_id = jobs.id AND x.status = 'running')", err)))
		return r;
	sqlite3_bind_int64(st, 1, run_id);
	r = db_step_done(db, st, err, "cannot finish the job of run %lld", (long long)run_id);
	sqlite3_finalize(st);
	return r;
}

int db_runs_reap(struct db *db, int *n_out, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int64_t *ids = NULL;
	int *pids = NULL, rc, r = 0;
	size_t k = 0;

	if (n_out)
		*n_out = 0;
	/* read first, outside a transaction: most calls find nothing to do */
	if ((r = db_prepare(db, &st, "SELECT id, writer FROM runs"
			    " WHERE status = 'running' AND writer IS NOT NULL", err)))
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int pid;
		if (proc_identity_alive((const char *)sqlite3_column_text(st, 1), &pid))
			continue;
		ids = xrealloc(ids, (k + 1) * sizeof(*ids));
		pids = xrealloc(pids, (k + 1) * sizeof(*pids));
		ids[k] = sqlite3_column_int64(st, 0);
		pids[k++] = pid;
	}
	if (rc != SQLITE_DONE)
		r = db_fail(db, 0, err, "cannot read the running runs");
	sqlite3_finalize(st);
	if (r || !k)
		goto out;
	if ((r = db_begin(db, err)))
		goto out;
	for (size_t i = 0; i < k && !r; i++)
		r = reap_one(db, ids[i], pids[i], err);
	if (!r)
		r = db_commit(db, err);
	if (r)
		db_rollback(db);
	else if (n_out)
		*n_out = (int)k;
out:
	free(ids);
	free(pids);
	return r;
}

/* Delete the run of (variant, cell, repeat) if it was interrupted by a dead
 * writer; *out its id, 0 when there was none. */
static int drop_interrupted(struct db *db, int64_t *out, int64_t variant_id, const char *cell,
			    int repeat_idx, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int r;

	*out = 0;
	if ((r = db_prepare(db, &st, "SELECT id FROM runs WHERE variant_id = ? AND cell = ?"
			    " AND repeat_idx = ? AND status = 'interrupted' AND writer IS NOT NULL", err)))
		return r;
	sqlite3_bind_int64(st, 1, variant_id);
	sqlite3_bind_text(st, 2, cell, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 3, repeat_idx);
	switch (sqlite3_step(st)) {
	case SQLITE_ROW:
		*out = sqlite3_column_int64(st, 0);
		break;
	case SQLITE_DONE:
		break;
	default:
		r = db_fail(db, 0, err, "cannot read repeat %d of variant %lld", repeat_idx,
			    (long long)variant_id);
	}
	sqlite3_finalize(st);
	if (r || !*out)
		return r;
	if ((r = db_prepare(db, &st, "DELETE FROM runs WHERE id = ?", err)))
		return r;
	sqlite3_bind_int64(st, 1, *out);
	r = db_step_done(db, st, err, "cannot delete interrupted run %lld", (long long)*out);
	sqlite3_finalize(st);
	return r;
}

/* The job t names, created (kind adhoc) when no job has its name. */
static int find_or_create_job(struct db *db, const struct db_ingest_target *t,
			      struct db_ingest_start *out, struct buf *err)
{
	int r;

	if (t->job_id > 0) {
		out->job_id = t->job_id;
		return 0;
	}
	r = db_query_int64(db, &out->job_id,
			   "SELECT id FROM jobs WHERE name = ? ORDER BY id DESC LIMIT 1", t->job, err);
	if (r != -ENOENT)
		return r;
	if ((r = db_job_create(db, &out->job_id, t->job, "adhoc", NULL, err)))
		return r;
	out->job_created = true;
	return 0;
}

int db_ingest_start(struct db *db, const struct db_ingest_target *t, struct db_ingest_start *out,
		    struct buf *err)
{
	struct db_ingest_start o = { 0 };
	sqlite3_stmt *st = NULL;
	const char *cell = t->cell ? t->cell : "";
	int r;

	if ((r = db_runs_reap(db, NULL, err)))
		return r;
	/* IMMEDIATE: the name lookup and the job it creates are one step for
	 * every other writer (two ingests of a new name make one job) */
	if ((r = db_begin(db, err)))
		return r;
	if ((r = find_or_create_job(db, t, &o, err)) ||
	    (r = db_variant_get(db, &o.variant_id, o.job_id, t->variant, err)))
		goto fail;
	if (t->repeat_idx > 0 &&
	    (r = drop_interrupted(db, &o.replaced_run_id, o.variant_id, cell, t->repeat_idx, err)))
		goto fail;
	if ((r = db_run_create(db, &o.run_id, o.job_id, o.variant_id, cell, t->repeat_idx, t->fs,
			       t->params_json, err)) ||
	    (r = db_run_set_status(db, o.run_id, "running", NULL, err)) ||
	    /* an ingested variant has what it needs: its runs are its results */
	    (r = db_variant_set_result(db, o.variant_id, "ok", NULL, NULL, 0, err)))
		goto fail;
	if ((r = db_prepare(db, &st, "UPDATE runs SET writer = ? WHERE id = ?", err)))
		goto fail;
	db_bind_text_or_null(st, 1, t->writer);
	sqlite3_bind_int64(st, 2, o.run_id);
	r = db_step_done(db, st, err, "cannot store run %lld's writer", (long long)o.run_id);
	sqlite3_finalize(st);
	st = NULL;
	if (r)
		goto fail;
	/* the job started with its first run (the jobs lists said "not started") */
	if ((r = db_prepare(db, &st, "UPDATE jobs SET started_at = coalesce(started_at, "
			    NOW_SQL ") WHERE id = ?", err)))
		goto fail;
	sqlite3_bind_int64(st, 1, o.job_id);
	r = db_step_done(db, st, err, "cannot stamp job %lld's start", (long long)o.job_id);
	sqlite3_finalize(st);
	if (r || (r = db_commit(db, err)))
		goto fail;
	*out = o;
	return 0;
fail:
	db_rollback(db);
	return r;
}
