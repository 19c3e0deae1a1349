/* api_lab.h - the lab's libvirt hosts (api_lab.c), called by the router
 * (api.c).
 */
#ifndef KC_API_LAB_H
#define KC_API_LAB_H

#include <stdint.h>

#include "api/api_state.h"

api_fn api_lab_list;   /* GET /api/v1/lab */

#endif
