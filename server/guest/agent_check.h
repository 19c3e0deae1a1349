/* agent_check.h - what the agent says about a workload and its knobs
 * before anything is built or booted. kcanary runs `kcanary-agent check
 * WORKLOAD knob=value... --json` (the same agent that goes into the guest
 * image) and reads its one-line reply with jansson (docs/records.md, "The
 * agent's check"): whether every knob parses, which knob is at fault, and
 * how long a run of the workload takes with those knobs, the base of the
 * guest's watchdog. So the coordinator neither copies the agent's knob
 * table nor parses its messages.
 */
#ifndef KC_AGENT_CHECK_H
#define KC_AGENT_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "guest/run_params.h"
#include "util.h"

/* The watchdog's base when the agent cannot tell a run's length
 * (expected_s null: the `command` workload without timeout_s): 153 s,
 * wb-handover's length with its default knobs (30 + 3 + 0 + 120 s), what
 * every workload got before the agent said. docs/guests.md, "How a run ends". */
#define AGENT_CHECK_UNKNOWN_S 153.0

struct agent_check {
	bool ok;              /* every knob parsed */
	double expected_s;    /* ok: start to done with these knobs; < 0 unknown */
	int64_t disk_bytes;   /* ok: file data it writes on the test filesystem at
			       * most, bytes; < 0 unknown (scratch.h sizes the disk) */
	int64_t disk_files;   /* ok: in how many files; < 0 unknown */
	char *disk_knobs;     /* ok: the knobs the size grows with; NULL: not said */
	char *knob;           /* !ok: the knob at fault; NULL when none is named */
	char *error;          /* !ok: the agent's one-line message */
};

/*
 * agent_check - ask the agent at agent (NULL: image_default_agent()) about
 * rp's workload (NULL: wb-handover) with rp's knobs, each one "key=value"
 * word of the agent's argv (rp NULL: the default workload alone; its
 * sysctls and filesystem options are the guest's, not the agent's).
 * Knobs that do not parse are a result (out->ok false), not an
 * error. Returns 0 with *out filled (release with agent_check_release()),
 * -ENOENT/-EACCES when the agent cannot be started, -EIO when it gave no
 * reply that parses (err says, quoting its exit status). Any thread may
 * call it (proc.h).
 */
int agent_check(struct agent_check *out, const char *agent, const struct run_params *rp,
		struct buf *err);
void agent_check_release(struct agent_check *c);

#endif
