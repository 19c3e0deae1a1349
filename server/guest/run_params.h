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

/* One setting as the spec gave it: a workload knob or a sysctl. Neither
 * string is split or joined on its way to the guest: image_cmdline()
 * writes "key=value" once, encoded, and agent_check() passes "key=value"
 * words to the agent. */
struct knob {
	const char *key;
	const char *value;
};

/* A run's settings, the one typed value every consumer reads: the run
 * service (guest_run.h, through image.h's struct guest_settings), the
 * kernel command line (image_cmdline()) and the agent's check
 * (agent_check()). Filled by run_params_parse() from the stored params, or
 * by hand from flags (cmd_boot.c), the strings then the caller's. */
struct run_params {
	const char *workload;        /* NULL: RUN_PARAMS_DEFAULT_WORKLOAD */
	const struct knob *knobs;    /* nknobs workload knobs, in the document's order */
	const struct knob *sysctls;  /* nsysctls sysctls, in the document's order */
	size_t nknobs, nsysctls;
	const char *mkfs_opts;       /* NULL when not given */
	const char *mount_opts;      /* NULL when not given */
	/* private to run_params_parse(): the parsed document every string
	 * above points into, and the two arrays */
	void *doc;
	struct knob *own;
};

/*
 * run_params_parse - read params_json (NULL or "" reads as {}) into *out;
 * out->workload is then never NULL. Returns 0, or -EINVAL with err saying
 * the text is not a JSON object; *out is then empty but may still be
 * released. Every string is owned by *out until run_params_release()
 * (accepts a zeroed or released struct; not for a struct filled by hand).
 */
int run_params_parse(struct run_params *out, const char *params_json, struct buf *err);
void run_params_release(struct run_params *p);

#endif
