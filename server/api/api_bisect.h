/* api_bisect.h - a bisection's log (api_bisect.c), called by the router
 * (api.c).
 */
#ifndef KC_API_BISECT_H
#define KC_API_BISECT_H

#include <stdint.h>

#include "api/api_state.h"

api_fn api_job_bisect_log;   /* GET /api/v1/jobs/{job}/bisect-log */

#endif
