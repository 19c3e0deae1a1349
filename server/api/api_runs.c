/* api_runs.c - /api/v1/runs/ID…: one run, its curves, probe counters and
 * console log, and a kernel's build log (docs/api.md). */
#define LOG_MODULE "api"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api_runs.h"
#include "api/api_jobs.h"
#include "api/api_view.h"
#include "api/api_reply.h"
#include "store/db.h"
#include "store/db_api.h"
#include "store/db_overhead.h"
#include "judge/report_overhead.h"
#include "log.h"

/* Logs are served as their last bytes up to this many (?max_bytes may ask
 * for less). A kernel build log or a console can be hundreds of MiB. */
#define API_LOG_MAX_BYTES (1L << 20)

void api_run_get(struct api *api, struct http_req *req, struct http_resp *resp)
{
	struct buf err = BUF_INIT;
	json_t *v;
	int r;

	struct db_overhead ov;

	if ((r = api_view_run(api->db, &v, req->id, &err)))
		return api_db_error(resp, r, "no such run", &err);
	/* where its wall time went (db_overhead.h); null: not booted here */
	r = db_run_overhead(api->db, &ov, req->id, &err);
	if (r && r != -ENOENT) {
		json_decref(v);
		return api_db_error(resp, r, "cannot read the run's overhead", &err);
	}
	json_object_set_new(v, "overhead", r ? json_null() : overhead_run_json(&ov));
	buf_release(&err);
	api_json(resp, 200, v);
}

void api_run_samples(struct api *api, struct http_req *req, struct http_resp *resp)
{
	api_samples(api, req, resp, 0, req->id);
}

void api_run_probes(struct api *api, struct http_req *req, struct http_resp *resp)
{
	struct buf err = BUF_INIT;
	json_t *v;
	int r;

	if ((r = api_view_run_probes(api->db, &v, req->id, &err)))
		return api_db_error(resp, r, "no such run", &err);
	api_json_exact(resp, 200, v);
}

/* Answer with the last max_bytes of the file at path (or of fallback when
 * the file is gone). X-Kcanary-Skipped-Bytes says how much was left out. */
static void send_log_tail(struct http_resp *resp, const char *path, const char *fallback,
			  long max_bytes, const char *what)
{
	struct buf out = BUF_INIT;
	char skipped[32];
	off_t from = 0;
	struct stat st;
	int fd = -1;

	if (path && (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0 && !fstat(fd, &st)) {
		if (st.st_size > max_bytes)
			from = st.st_size - max_bytes;
		if (lseek(fd, from, SEEK_SET) == from) {
			char chunk[65536];
			ssize_t n;
			while ((n = read(fd, chunk, sizeof(chunk))) > 0 &&
			       out.len < (size_t)max_bytes)
				buf_append(&out, chunk, (size_t)n > (size_t)max_bytes - out.len ?
					   (size_t)max_bytes - out.len : (size_t)n);
		}
		close(fd);
	} else if (fallback) {
		size_t n = strlen(fallback);
		if (fd >= 0)
			close(fd);
		if ((long)n > max_bytes) {
			from = (off_t)(n - (size_t)max_bytes);
			n = (size_t)max_bytes;
		}
		buf_append(&out, fallback + from, n);
	} else {
		if (fd >= 0)
			close(fd);
		if (path)
			api_error(resp, 404, "%s '%s' cannot be read: %s", what, path, strerror(errno));
		else
			api_error(resp, 404, "no %s is stored for this one", what);
		return;
	}
	snprintf(skipped, sizeof(skipped), "%lld", (long long)from);
	http_resp_header(resp, "X-Kcanary-Skipped-Bytes", skipped);
	api_text(resp, 200, &out);
}

void api_run_console(struct api *api, struct http_req *req, struct http_resp *resp)
{
	struct buf err = BUF_INIT;
	char *path = NULL, *tail = NULL;
	long max_bytes = API_LOG_MAX_BYTES;
	int r;

	if (api_query_uint(resp, req, "max_bytes", 1, API_LOG_MAX_BYTES, &max_bytes))
		return;
	if ((r = db_api_run_console(api->db, &path, &tail, req->id, &err)))
		return api_db_error(resp, r, "no such run", &err);
	send_log_tail(resp, path, tail, max_bytes, "console log");
	free(path);
	free(tail);
}

void api_kernel_build_log(struct api *api, struct http_req *req, struct http_resp *resp)
{
	struct buf err = BUF_INIT;
	char *path = NULL;
	long max_bytes = API_LOG_MAX_BYTES;
	int r;

	if (api_query_uint(resp, req, "max_bytes", 1, API_LOG_MAX_BYTES, &max_bytes))
		return;
	if ((r = db_api_kernel_build_log(api->db, &path, req->id, &err)))
		return api_db_error(resp, r, "no such kernel", &err);
	send_log_tail(resp, path, NULL, max_bytes, "build log");
	free(path);
}
