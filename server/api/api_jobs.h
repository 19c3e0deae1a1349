/* api_jobs.h - the handlers of jobs (api_jobs.c): metrics, the job list,
 * one job, its variants, runs and curves, its report, submit and cancel
 * (docs/api.md). Called by the router (api.c).
 */
#ifndef KC_API_JOBS_H
#define KC_API_JOBS_H

#include <stdint.h>

#include "api/api_state.h"

api_fn api_metrics;        /* GET /api/v1/metrics */
api_fn api_jobs_list;      /* GET /api/v1/jobs?limit= */
api_fn api_jobs_submit;    /* POST /api/v1/jobs */
api_fn api_job_get;        /* GET /api/v1/jobs/{job} */
api_fn api_job_variants;   /* GET /api/v1/jobs/{job}/variants */
api_fn api_job_runs;       /* GET /api/v1/jobs/{job}/runs?metric= */
api_fn api_job_samples;    /* GET /api/v1/jobs/{job}/samples */
api_fn api_job_report;     /* GET /api/v1/jobs/{job}/report */
api_fn api_job_cancel;     /* POST /api/v1/jobs/{job}/cancel */

/* The curves of a job (run_id 0) or of one run: ?metric= (default lag_s),
 * ?max_points= (default 0: every point). Also api_runs.c's. */
void api_samples(struct api *api, struct http_req *req, struct http_resp *resp,
		 int64_t job_id, int64_t run_id);

#endif
