/* run_params.h - a run's stored params (runs.params_json, as job.c's
 * job_cell_params() writes them) read back as what the guest gets: the
 * workload, its knobs, sysctls, mkfs and mount options (image.h's
 * struct guest_settings takes them as they are here). The agent's check
 * (agent_check.h) and the run service (guest_run.h) both read them so.
 *
 * Keys: "workload" (text), "fs" (text; the run's fs column is what is
 * booted), "sysctl" ({key: text}), "mkfs_opts", "mount_opts" (text),
 * "config" (the kernel's, not the guest's); every other key with a text
 * value is a workload knob.
 */
#ifndef KC_RUN_PARAMS_H
#define KC_RUN_PARAMS_H

#include <stddef.h>

#include "util.h"

/* The workload a run gets when its params name none. */
#define RUN_PARAMS_DEFAULT_WORKLOAD "wb-handover"

struct run_params {
	const char *workload;        /* never NULL: RUN_PARAMS_DEFAULT_WORKLOAD */
	const char **knobs;          /* NULL-ended "key=value", in the document's order */
	const char **sysctls;        /* NULL-ended "key=value" */
	const char *mkfs_opts;       /* NULL when not given */
	const char *mount_opts;      /* NULL when not given */
	size_t nknobs, nsysctls;
	/* private: every string above is owned here */
	char **owned;
	size_t nowned;
};

/*
 * run_params_parse - read params_json (NULL or "" reads as {}) into *out.
 * Returns 0, or -EINVAL with err saying the text is not a JSON object;
 * *out is then empty but may still be released. Release with
 * run_params_release() (accepts a zeroed or released struct).
 */
int run_params_parse(struct run_params *out, const char *params_json, struct buf *err);
void run_params_release(struct run_params *p);

#endif
