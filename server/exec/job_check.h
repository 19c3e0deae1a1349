/* job_check.h - a job spec's knobs checked by the agent before anything is
 * stored or built: every matrix cell through agent_check() (guest/
 * agent_check.h), an error naming where the bad knob was set.
 */
#ifndef KC_JOB_CHECK_H
#define KC_JOB_CHECK_H

#include "exec/job.h"
#include "util.h"

/*
 * agent_check_spec - agent_check() every matrix cell of spec, so that an
 * unknown knob or a bad value fails before anything is stored or built.
 * Returns 0; -EINVAL when a cell's knobs do not parse, err naming where
 * the knob was set ("job.ini:6: [workload] nfiles", "--set nfiles") or
 * else the cell, then the agent's message; or agent_check()'s codes.
 */
int agent_check_spec(const struct job_spec *spec, const char *agent, struct buf *err);

#endif
