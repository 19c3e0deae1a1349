/* api_bisect.c - GET /api/v1/jobs/{job}/bisect-log: a bisection job's
 * event log as text (bisect_log.c's format with '# candidate' lines), what
 * `kcanary bisect log JOB` prints; the web view draws it. */
#include <errno.h>
#include <stdlib.h>

#include "api/api_bisect.h"
#include "api/api_reply.h"
#include "store/db_bisect.h"
#include "util.h"

void api_job_bisect_log(struct api *api, struct http_req *req, struct http_resp *resp)
{
	struct buf err = BUF_INIT;
	struct buf b = BUF_INIT;
	char *log = NULL;
	int r;

	if ((r = db_bisect_log_get(api->db, req->id, &log, &err)))
		return api_db_error(resp, r, "no bisection log for this job", &err);
	buf_puts(&b, log);
	free(log);
	api_text(resp, 200, &b);
	buf_release(&b);
}
