/* cmd_boot.c - kcanary boot: one run of a workload in one fresh guest,
 * stored like any other run (job 'adhoc-boot', variant = kernel file).
 * Flags and printing only: the run service (guest_run.h) stores and runs
 * it. */
#define LOG_MODULE "boot"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest/agent_check.h"
#include "cli/cmd.h"
#include "store/db.h"
#include "guest/guest_run.h"
#include "log.h"
#include "guest/runner.h"
#include "guest/scratch.h"
#include "util.h"
#include "wrap/vm.h"

#define MAX_LIST 128

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kcanary boot --kernel PATH [--fs ext4|xfs|btrfs] [--set KNOB=VALUE]...\n"
		"                    [--sysctl KEY=VALUE]... [--job NAME] [--variant NAME]\n"
		"                    [--console] [options]\n"
		"\n"
		"Boot PATH (a bzImage) in a fresh guest through libvirt, run the agent's\n"
		"workload on a freshly made filesystem, and store the run: every record\n"
		"as it arrives, the accelerator, the console log and its last %d lines.\n"
		"\n"
		"  --kernel PATH        kernel image (bzImage) to boot\n"
		"  --modules DIR        its modules tree (default /lib/modules/RELEASE when\n"
		"                       it exists, RELEASE read from the image; 'none': none)\n"
		"  --fs FS              scratch filesystem: ext4 (default), xfs, btrfs\n"
		"  --mkfs-opts OPTS     extra mkfs options; --mount-opts OPTS mount options\n"
		"  --set KNOB=VALUE     workload knob, passed to the agent as it is (repeat)\n"
		"  --sysctl KEY=VALUE   sysctl set in the guest before the workload (repeat)\n"
		"  --workload NAME      agent workload (default wb-handover)\n"
		"  --rootfs debian[:PKG,PKG...]  run the workload in a Debian 12 root\n"
		"                       filesystem with these packages (built once with\n"
		"                       mmdebstrap from the host's apt sources, cached by\n"
		"                       content; default: the built-in initramfs)\n"
		"  --rootfs host        run the workload in this machine's own userland:\n"
		"                       its / shared read-only over virtiofs (the guest\n"
		"                       kernel has no 9p) under a tmpfs overlay, so tools\n"
		"                       installed here run unchanged. Not reproducible: the\n"
		"                       run records the host's dpkg package list and the\n"
		"                       report marks it 'rootfs: host (not reproducible)'.\n"
		"                       Needs root, virtiofsd and a local libvirt URI (a\n"
		"                       remote host's guest cannot see this / : refused).\n"
		"                       The guest can read every file of this / (/root,\n"
		"                       /etc/shadow): run only workloads you trust\n"
		"  --files PATH[:GUEST_PATH]  copy a file into the root filesystem (repeat);\n"
		"                       a relative GUEST_PATH (default: PATH's name) lands\n"
		"                       in the workload's directory\n"
		"  --job NAME           job to add the run to (default adhoc-boot; created\n"
		"                       when missing)\n"
		"  --variant NAME       variant name (default: the kernel's file name)\n"
		"  --vcpus N            guest vCPUs (default 2)\n"
		"  --memory SIZE        guest memory (default 2G)\n"
		"  --disk SIZE          scratch disk size, sparse (default: what the agent\n"
		"                       says the workload writes with these knobs, plus the\n"
		"                       filesystem's headroom, at least 4G; a workload that\n"
		"                       needs more than 64G, or more than SIZE, is refused\n"
		"                       with the size it needs: docs/guests.md)\n"
		"  --watchdog DURATION  destroy the guest after this long (default: how long\n"
		"                       the agent says the workload takes, 'kcanary-agent\n"
		"                       check --json' (wb-handover: measure_s + old_s +\n"
		"                       settle_s + pod_hop, 120+30+3+0 s by default; a\n"
		"                       workload it cannot tell: 153 s), plus the setup\n"
		"                       allowance)\n"
		"  --setup-allowance DURATION  boot, mkfs and teardown time the watchdog\n"
		"                       allows besides the workload's time (default 180s\n"
		"                       under TCG, 60s with KVM)\n"
		"  --accel kvm|tcg      override the probe (also $KCANARY_ACCEL)\n"
		"  --append ARGS        appended to the kernel command line (loglevel=7 for\n"
		"                       all of the kernel's lines on the console, ...)\n"
		"  --connect URI        libvirt URI (default $KCANARY_LIBVIRT_URI, else\n"
		"                       qemu:///system)\n"
		"  --agent PATH         kcanary-agent binary (default: beside kcanary)\n"
		"  --console            copy the guest console to stderr as it runs\n"
		"\n"
		"A kernel with CONFIG_PVH boots as its vmlinux (unpacked once, cached in\n"
		"$KCANARY_HOME/kernels/); KCANARY_PVH=0 boots the bzImage as it is.\n"
		"\n"
		"Exit status: 0 when the run is stored with status ok, 1 otherwise.\n",
		RUNNER_TAIL_LINES);
}

/* The run as the user sees it: status, accelerator, boot time, counts. */
static void print_run(int64_t run_id, const struct guest_result *res,
		      const struct guest_ctx *g, double cmd_start_s)
{
	const struct runner_result *r = &res->run;

	printf("run %lld: %s", (long long)run_id, r->status);
	if (r->error[0])
		printf(": %s", r->error);
	printf("\n  accel %s, boot-to-hello ", vm_accel_name(g->ai.accel));
	if (r->boot_to_hello_s >= 0)
		printf("%.2f s (%.2f s from the command's start)", r->boot_to_hello_s,
		       r->create_mono_s - cmd_start_s + r->boot_to_hello_s);
	else
		printf("-");
	printf(", wall %.1f s, %lld records (%lld samples, %lld probes)\n",
	       r->wall_s, (long long)r->records, (long long)r->samples, (long long)r->probes);	if (res->overhead.wall_ms) {
		const struct db_overhead *o = &res->overhead;

		printf("  overhead %.1f s of %.1f s (%.0f%%):", db_overhead_ms(o) / 1000.0,
		       o->wall_ms / 1000.0, 100.0 * db_overhead_ms(o) / o->wall_ms);
		for (int p = 0; p < DB_OV_NPHASES; p++)
			if (p != DB_OV_WORKLOAD)
				printf(" %s %.1f s%s", db_ov_phase_names[p], o->phase_ms[p] / 1000.0,
				       p == DB_OV_NPHASES - 1 ? "\n" : ",");
	}
}

/* The agent's check of the workload and its --set knobs, and the scratch
 * disk they need (scratch.h: beyond --disk, or beyond the cap without it),
 * before anything is stored. 0, 2 (a knob it refuses, named as --set gave
 * it; a disk too small) or 1. */
static int check_knobs(const char *agent, const struct run_params *rp, const char *fs,
		       uint64_t disk_bytes)
{
	struct agent_check c;
	struct buf err = BUF_INIT;
	uint64_t disk;
	int rc = 0;

	if (agent_check(&c, agent, rp, &err)) {
		fprintf(stderr, "kcanary boot: %s\n", buf_str(&err));
		rc = 1;
	} else if (!c.ok) {
		if (c.knob)
			fprintf(stderr, "kcanary boot: --set %s: %s\n", c.knob, c.error);
		else
			fprintf(stderr, "kcanary boot: --workload %s: %s\n", rp->workload, c.error);
		rc = 2;
	} else if (scratch_disk_size(&disk, disk_bytes, fs, &c, &err)) {
		fprintf(stderr, "kcanary boot: %s\n", buf_str(&err));
		rc = 2;
	}
	agent_check_release(&c);
	buf_release(&err);
	return rc;
}

/* What the flags say. */
struct boot_args {
	struct guest_adhoc a;
	struct guest_job j;
	struct run_params run;     /* the run's settings: a.gs.run points here */
	struct knob knobs[MAX_LIST], sysctls[MAX_LIST];
	const char *files[MAX_LIST + 1];
	size_t nfiles;
	const char *uri, *agent, *accel;
	uint64_t memory;
	bool console;
};

/* --set and --sysctl: KEY=VALUE, at most MAX_LIST of each. 0 or 2. */
static int add_setting(struct boot_args *b, const char *o, const char *v)
{
	bool knob = !strcmp(o, "--set");
	const char *eq = strchr(v, '=');

	if (!eq || eq == v) {
		fprintf(stderr, "kcanary boot: %s '%s': expected KEY=VALUE\n", o, v);
		return 2;
	}
	size_t *n = knob ? &b->run.nknobs : &b->run.nsysctls;

	if (*n >= MAX_LIST) {
		fprintf(stderr, "kcanary boot: more than %d %s options\n", MAX_LIST, o);
		return 2;
	}
	/* KEY=VALUE split here, once: the key is kept, the value borrowed */
	(knob ? b->knobs : b->sysctls)[(*n)++] =
		(struct knob){ xstrndup(v, (size_t)(eq - v)), eq + 1 };
	return 0;
}

/* The options that take a number, size or duration. 0, 2 (a bad value),
 * or -1 when o is none of them. */
static int set_measure(struct boot_args *b, const char *o, const char *v)
{
	if (!strcmp(o, "--vcpus")) {
		char *end;
		unsigned long n = strtoul(v, &end, 10);

		if (*end || !n || n > 64) {
			fprintf(stderr, "kcanary boot: --vcpus '%s': expected 1 to 64\n", v);
			return 2;
		}
		b->j.vcpus = (unsigned)n;
	} else if (!strcmp(o, "--memory") || !strcmp(o, "--disk")) {
		uint64_t *dst = !strcmp(o, "--memory") ? &b->memory : &b->j.disk_bytes;

		if (parse_size(dst, v, false) || *dst < (64ULL << 20) ||
		    (dst == &b->j.disk_bytes && *dst > SCRATCH_ASKED_MAX_BYTES)) {
			fprintf(stderr, "kcanary boot: %s '%s': expected a size of at least 64M%s\n", o, v,
				dst == &b->j.disk_bytes ? " and at most 16T (the largest file ext4"
				" holds, a pool's volume being one)" : "");
			return 2;
		}
	} else if (!strcmp(o, "--watchdog") || !strcmp(o, "--setup-allowance")) {
		double *dst = !strcmp(o, "--watchdog") ? &b->j.watchdog_s : &b->j.setup_s;

		if (parse_duration_s(dst, v) || *dst <= 0) {
			fprintf(stderr, "kcanary boot: %s '%s': expected a duration (90s, 5m)\n", o, v);
			return 2;
		}
	} else {
		return -1;
	}
	return 0;
}

/* The option that takes a text, o's field in b (NULL: none). */
static const char **text_field(struct boot_args *b, const char *o)
{
	if (!strcmp(o, "--kernel")) return &b->a.kernel;
	if (!strcmp(o, "--modules")) return &b->a.modules;
	if (!strcmp(o, "--fs")) return &b->a.gs.fs;
	if (!strcmp(o, "--mkfs-opts")) return &b->run.mkfs_opts;
	if (!strcmp(o, "--mount-opts")) return &b->run.mount_opts;
	if (!strcmp(o, "--workload")) return &b->run.workload;
	if (!strcmp(o, "--job")) return &b->a.job;
	if (!strcmp(o, "--variant")) return &b->a.variant;
	if (!strcmp(o, "--connect")) return &b->uri;
	if (!strcmp(o, "--agent")) return &b->agent;
	if (!strcmp(o, "--accel")) return &b->accel;
	if (!strcmp(o, "--append")) return &b->a.gs.extra;
	if (!strcmp(o, "--rootfs")) return &b->j.rootfs;
	return NULL;
}

/* One option with its value v. 0, 2, or -1 when o is not an option. */
static int set_option(struct boot_args *b, const char *o, const char *v)
{
	const char **dst = text_field(b, o);

	if (dst) {
		*dst = v;
		return 0;
	}
	if (!strcmp(o, "--set") || !strcmp(o, "--sysctl"))
		return add_setting(b, o, v);
	if (!strcmp(o, "--files")) {
		if (b->nfiles >= MAX_LIST) {
			fprintf(stderr, "kcanary boot: more than %d --files options\n", MAX_LIST);
			return 2;
		}
		b->files[b->nfiles++] = v;
		return 0;
	}
	return set_measure(b, o, v);
}

/* The flags into *b. 0, or the exit status (2) after saying why. */
static int parse_args(struct boot_args *b, int argc, char **argv)
{
	static const char *const valued[] = {
		"--kernel", "--modules", "--fs", "--mkfs-opts", "--mount-opts",
		"--workload", "--job", "--variant", "--connect", "--agent",
		"--accel", "--append", "--set", "--sysctl", "--vcpus", "--memory",
		"--disk", "--watchdog", "--setup-allowance", "--rootfs", "--files", NULL,
	};

	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		size_t k = 0;
		int r;

		if (!strcmp(o, "--console")) {
			b->console = true;
			continue;
		}
		if (!v) {
			/* the last argument: a known option here lacks its value */
			while (valued[k] && strcmp(valued[k], o))
				k++;
			if (valued[k])
				fprintf(stderr, "kcanary boot: option '%s' requires an argument\n", o);
			else
				fprintf(stderr, "kcanary boot: unrecognized option '%s'\n", o);
			return 2;
		}
		if ((r = set_option(b, o, v)) > 0)
			return r;
		if (r < 0) {
			fprintf(stderr, "kcanary boot: unrecognized option '%s'\n", o);
			usage(stderr);
			return 2;
		}
		i++;
	}
	if (!b->a.kernel) {
		fprintf(stderr, "kcanary boot: --kernel PATH is required\n");
		return 2;
	}
	if (b->nfiles && !b->j.rootfs) {
		fprintf(stderr, "kcanary boot: --files needs --rootfs (files go into the root filesystem)\n");
		return 2;
	}
	b->j.files = b->files;
	if (b->accel && strcmp(b->accel, "kvm") && strcmp(b->accel, "tcg")) {
		fprintf(stderr, "kcanary boot: --accel '%s': expected kvm or tcg\n", b->accel);
		return 2;
	}
	return 0;
}

int cmd_boot(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct boot_args b = {
		.a = { .gs = { .fs = "ext4" } }, .run = { .workload = "wb-handover" },
		.memory = 2ULL << 30,
		.j = { .vcpus = 2 },     /* disk_bytes 0: sized from the knobs */
	};
	struct buf err = BUF_INIT;
	struct guest_result res;
	struct guest_ctx g = { 0 };
	struct db *db = NULL;
	int64_t run_id = 0;
	int rc, r;
	double cmd_start_s = clock_mono_s();

	if (cmd_wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	b.run.knobs = b.knobs;
	b.run.sysctls = b.sysctls;
	b.a.gs.run = &b.run;
	if ((rc = parse_args(&b, argc, argv)) ||
	    (rc = check_knobs(b.agent, &b.run, b.a.gs.fs, b.j.disk_bytes)))
		goto out;
	rc = 1;
	if (access(b.a.kernel, R_OK)) {
		fprintf(stderr, "kcanary boot: --kernel '%s': %s\n", b.a.kernel, strerror(errno));
		goto out;
	}
	b.j.memory_mib = b.memory >> 20;
	if ((r = db_open(&db, ctx->db_path, &err))) {
		fprintf(stderr, "kcanary boot: %s\n", buf_str(&err));
		goto out;
	}
	{
		struct guest_opts go = { .home = ctx->home, .uri = b.uri, .agent = b.agent,
					 .accel = b.accel, .console = b.console };
		guest_ctx_init(&g, db, &go, true);
	}
	if (guest_run_adhoc(&res, &run_id, &g, &b.j, &b.a, &err)) {
		fprintf(stderr, "kcanary boot: %s\n", buf_str(&err));
		goto out;
	}
	if (!res.started) {
		fprintf(stderr, "kcanary boot: run %lld failed: %s\n", (long long)run_id,
			res.run.error);
		goto out;
	}
	print_run(run_id, &res, &g, cmd_start_s);
	rc = runner_interrupted() ? 130 : strcmp(res.run.status, "ok") ? 1 : 0;
out:
	for (size_t i = 0; i < b.run.nknobs; i++)
		free((char *)b.knobs[i].key);
	for (size_t i = 0; i < b.run.nsysctls; i++)
		free((char *)b.sysctls[i].key);
	guest_ctx_release(&g);
	db_close(db);
	buf_release(&err);
	return rc;
}
