/* api_runs.h - the handlers of one run (api_runs.c): the run, its curves,
 * probe counters and console log, and a kernel's build log (docs/api.md).
 * Called by the router (api.c).
 */
#ifndef KC_API_RUNS_H
#define KC_API_RUNS_H

#include <stdint.h>

#include "api/api_state.h"

api_fn api_run_get;            /* GET /api/v1/runs/{id} */
api_fn api_run_samples;        /* GET /api/v1/runs/{id}/samples */
api_fn api_run_probes;         /* GET /api/v1/runs/{id}/probes */
api_fn api_run_console;        /* GET /api/v1/runs/{id}/console */
api_fn api_kernel_build_log;   /* GET /api/v1/kernels/{id}/build-log */

#endif
