/* api_state.c - the API's state: what the server's threads share (the
 * store's path, the report cache behind a lock), each thread's own store
 * connection (api_state.h). It calls nothing of the API above it.
 */
#define LOG_MODULE "api"
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "api/api_state.h"
#include "store/db.h"
#include "store/db_runs.h"
#include "error.h"
#include "http.h"
#include "util.h"

int api_shared_init(struct api_shared *sh, const char *db_path, struct buf *err)
{
	struct db *db = NULL;
	int r;

	memset(sh, 0, sizeof(*sh));
	/* open (and migrate) the store once here; the threads open their own */
	if ((r = db_open(&db, db_path, err)))
		return r;
	/* runs left 'running' by a dead kcanary ingest are shown as interrupted
	 * (a store that cannot take it now is no reason not to serve) */
	db_runs_reap(db, NULL, NULL);
	db_close(db);
	pthread_mutex_init(&sh->lock, NULL);
	pthread_mutex_init(&sh->fleet_write, NULL);
	sh->db_path = xstrdup(db_path);
	return 0;
}

int api_thread_init(void *payload, void **out, struct buf *err)
{
	struct api_shared *sh = payload;
	struct api *api = xcalloc(1, sizeof(*api));
	int r;

	api->shared = sh;
	if ((r = db_open(&api->db, sh->db_path, err))) {
		free(api);
		return r;
	}
	*out = api;
	return 0;
}

void api_thread_free(void *payload, void *state)
{
	struct api *api = state;

	(void)payload;
	if (!api)
		return;
	db_close(api->db);
	free(api);
}

/*
 * Built reports, kept because building one is the expensive part of the
 * comparison page (the Hodges-Lehmann bootstrap CI resamples n1 x n2
 * differences; seconds for hundreds of runs). An entry is reused only
 * while the job's fingerprint is unchanged, so a live job's report follows
 * its data; the least recently used entry goes first.
 */
#define REPORT_CACHE_SLOTS 16

struct report_cache {
	struct {
		char *key;              /* "job|format|metric|threshold" */
		char *fingerprint;
		char *body;
		size_t len;
		uint64_t used;          /* LRU clock */
	} slot[REPORT_CACHE_SLOTS];
	uint64_t clock;
};

void api_shared_release(struct api_shared *sh)
{
	struct report_cache *c = sh->reports;

	for (size_t i = 0; i < sh->njob_dirs; i++)
		free(sh->job_dirs[i]);
	free(sh->job_dirs);
	sh->job_dirs = NULL;
	sh->njob_dirs = 0;
	if (!sh->db_path)
		return;
	for (int i = 0; c && i < REPORT_CACHE_SLOTS; i++) {
		free(c->slot[i].key);
		free(c->slot[i].fingerprint);
		free(c->slot[i].body);
	}
	free(c);
	sh->reports = NULL;
	pthread_mutex_destroy(&sh->lock);
	pthread_mutex_destroy(&sh->fleet_write);
	free(sh->db_path);
	sh->db_path = NULL;
}

int api_report_cache_get(struct api_shared *sh, struct buf *out, const char *key,
			 const char *fp)
{
	struct report_cache *c;
	int r = -ENOENT;

	pthread_mutex_lock(&sh->lock);
	c = sh->reports;
	for (int i = 0; c && i < REPORT_CACHE_SLOTS; i++) {
		if (!c->slot[i].key || strcmp(c->slot[i].key, key) ||
		    strcmp(c->slot[i].fingerprint, fp))
			continue;
		c->slot[i].used = ++c->clock;
		r = buf_append(out, c->slot[i].body, c->slot[i].len);
		break;
	}
	pthread_mutex_unlock(&sh->lock);
	return r;
}

void api_report_cache_put(struct api_shared *sh, const char *key, const char *fp,
			  const struct buf *body)
{
	struct report_cache *c;
	int victim = 0;

	pthread_mutex_lock(&sh->lock);
	if (!(c = sh->reports))
		c = sh->reports = xcalloc(1, sizeof(*c));
	for (int i = 0; i < REPORT_CACHE_SLOTS; i++) {
		if (c->slot[i].key && !strcmp(c->slot[i].key, key)) {
			victim = i;
			break;
		}
		if (c->slot[i].used < c->slot[victim].used)
			victim = i;
	}
	free(c->slot[victim].key);
	free(c->slot[victim].fingerprint);
	free(c->slot[victim].body);
	c->slot[victim].key = xstrdup(key);
	c->slot[victim].fingerprint = xstrdup(fp);
	c->slot[victim].body = xmalloc(body->len + 1);
	memcpy(c->slot[victim].body, buf_str(body), body->len + 1);
	c->slot[victim].len = body->len;
	c->slot[victim].used = ++c->clock;
	pthread_mutex_unlock(&sh->lock);
}

int api_shared_add_job_dir(struct api_shared *sh, const char *dir, struct buf *err)
{
	char *real = realpath(dir, NULL);
	struct stat st;

	if (!real)
		return err_setf(err, -errno, "--job-dir '%s': %s", dir, strerror(errno));
	if (stat(real, &st) || !S_ISDIR(st.st_mode)) {
		free(real);
		return err_setf(err, -ENOTDIR, "--job-dir '%s' is not a directory", dir);
	}
	sh->job_dirs = xrealloc(sh->job_dirs, (sh->njob_dirs + 1) * sizeof(*sh->job_dirs));
	sh->job_dirs[sh->njob_dirs++] = real;
	return 0;
}
