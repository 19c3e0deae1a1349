/* api_fleet.h - the fleet's agents and hosts (api_fleet.c), called by the
 * router (api.c).
 */
#ifndef KC_API_FLEET_H
#define KC_API_FLEET_H

#include <stdint.h>

#include "api/api_state.h"

api_fn api_hosts_list;        /* GET /api/v1/hosts */
api_fn api_agent_register;    /* POST /api/v1/agents/register */
api_fn api_agent_heartbeat;   /* POST /api/v1/agents/{host}/heartbeat */
api_fn api_agent_records;     /* POST /api/v1/agents/{host}/records */

#endif
