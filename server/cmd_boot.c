/* cmd_boot.c - kcanary boot: one run of a workload in one fresh guest,
 * stored like any other run (job 'adhoc-boot', variant = kernel file). */
#define LOG_MODULE "boot"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cmd.h"
#include "db.h"
#include "db_guest.h"
#include "image.h"
#include "log.h"
#include "runner.h"
#include "util.h"
#include "vm.h"

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
		"  --job NAME           job to add the run to (default adhoc-boot; created\n"
		"                       when missing)\n"
		"  --variant NAME       variant name (default: the kernel's file name)\n"
		"  --vcpus N            guest vCPUs (default 2)\n"
		"  --memory SIZE        guest memory (default 2G)\n"
		"  --disk SIZE          scratch disk size, sparse (default 4G)\n"
		"  --watchdog DURATION  destroy the guest after this long (default: the\n"
		"                       workload's phases, measure_s + old_s + settle_s +\n"
		"                       pod_hop (agent defaults 120+30+3+0 s), plus the setup\n"
		"                       allowance)\n"
		"  --setup-allowance DURATION  boot, mkfs and teardown time the watchdog\n"
		"                       allows besides measure_s (default 180s under TCG,\n"
		"                       60s with KVM)\n"
		"  --accel kvm|tcg      override the probe (also $KCANARY_ACCEL)\n"
		"  --append ARGS        appended to the kernel command line (loglevel=7, ...)\n"
		"  --connect URI        libvirt URI (default $KCANARY_LIBVIRT_URI, else\n"
		"                       qemu:///system)\n"
		"  --agent PATH         kcanary-agent binary (default: beside kcanary)\n"
		"  --console            copy the guest console to stderr as it runs\n"
		"\n"
		"Exit status: 0 when the run is stored with status ok, 1 otherwise.\n",
		RUNNER_TAIL_LINES);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static void print_banner(FILE *f, const struct vm_accel_info *ai)
{
	if (ai->accel == VM_ACCEL_TCG)
		fprintf(f, "kcanary: warning: %s (%s)\n", vm_tcg_warning, ai->why);
}

int cmd_boot(int argc, char **argv)
{
	const char *kernel = NULL, *modules = NULL, *fs = "ext4", *mkfs = NULL, *mnt = NULL;
	const char *workload = "wb-handover", *job = "adhoc-boot", *variant = NULL;
	const char *uri = NULL, *agent_arg = NULL, *accel_arg = NULL, *extra = NULL;
	const char *knobs[MAX_LIST + 1] = { NULL }, *sysctls[MAX_LIST + 1] = { NULL };
	size_t nknobs = 0, nsysctls = 0;
	double watchdog_s = 0, setup_s = -1;
	uint64_t memory = 2ULL << 30, disk = 4ULL << 30;
	unsigned long vcpus = 2;
	bool console = false;
	char err[1024], release[128] = "", *modules_dir = NULL, *agent = NULL;
	char *db_path = NULL, *home = NULL, *initrd = NULL, *cmdline = NULL, *params = NULL;
	struct vm_accel_info ai;
	struct runner_result res;
	struct db *db = NULL;
	int64_t job_id, variant_id, run_id, kernel_id = 0;
	int rc = 1, r;
	double cmd_start_s = clock_mono_s();

	if (cmd_wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool takes = true;

		if (!strcmp(a, "--console")) {
			console = true;
			continue;
		}
		if (!v) {
			/* the last argument: a known option here lacks its value */
			static const char *const valued[] = {
				"--kernel", "--modules", "--fs", "--mkfs-opts", "--mount-opts",
				"--workload", "--job", "--variant", "--connect", "--agent",
				"--accel", "--append", "--set", "--sysctl", "--vcpus", "--memory",
				"--disk", "--watchdog", "--setup-allowance", NULL,
			};
			size_t k = 0;

			while (valued[k] && strcmp(valued[k], a))
				k++;
			if (valued[k])
				fprintf(stderr, "kcanary boot: option '%s' requires an argument\n", a);
			else
				fprintf(stderr, "kcanary boot: unrecognized option '%s'\n", a);
			return 2;
		}
		if (!strcmp(a, "--kernel")) kernel = v;
		else if (!strcmp(a, "--modules")) modules = v;
		else if (!strcmp(a, "--fs")) fs = v;
		else if (!strcmp(a, "--mkfs-opts")) mkfs = v;
		else if (!strcmp(a, "--mount-opts")) mnt = v;
		else if (!strcmp(a, "--workload")) workload = v;
		else if (!strcmp(a, "--job")) job = v;
		else if (!strcmp(a, "--variant")) variant = v;
		else if (!strcmp(a, "--connect")) uri = v;
		else if (!strcmp(a, "--agent")) agent_arg = v;
		else if (!strcmp(a, "--accel")) accel_arg = v;
		else if (!strcmp(a, "--append")) extra = v;
		else if (!strcmp(a, "--set") || !strcmp(a, "--sysctl")) {
			bool knob = !strcmp(a, "--set");
			const char *eq = strchr(v, '=');

			if (!eq || eq == v) {
				fprintf(stderr, "kcanary boot: %s '%s': expected KEY=VALUE\n", a, v);
				return 2;
			}
			if ((knob ? nknobs : nsysctls) >= MAX_LIST) {
				fprintf(stderr, "kcanary boot: more than %d %s options\n", MAX_LIST, a);
				return 2;
			}
			if (knob) {
				double ignored;
				knobs[nknobs++] = v;
				if (runner_workload_s(&ignored, knobs, err, sizeof(err))) {
					fprintf(stderr, "kcanary boot: --set %s\n", err);
					return 2;
				}
			} else {
				sysctls[nsysctls++] = v;
			}
		} else if (!strcmp(a, "--vcpus")) {
			char *end;
			vcpus = strtoul(v, &end, 10);
			if (*end || !vcpus || vcpus > 64) {
				fprintf(stderr, "kcanary boot: --vcpus '%s': expected 1 to 64\n", v);
				return 2;
			}
		} else if (!strcmp(a, "--memory") || !strcmp(a, "--disk")) {
			uint64_t *dst = !strcmp(a, "--memory") ? &memory : &disk;
			if (parse_size(dst, v, false) || *dst < (64ULL << 20)) {
				fprintf(stderr, "kcanary boot: %s '%s': expected a size of at least 64M\n", a, v);
				return 2;
			}
		} else if (!strcmp(a, "--watchdog") || !strcmp(a, "--setup-allowance")) {
			double *dst = !strcmp(a, "--watchdog") ? &watchdog_s : &setup_s;
			if (parse_duration_s(dst, v) || *dst <= 0) {
				fprintf(stderr, "kcanary boot: %s '%s': expected a duration (90s, 5m)\n", a, v);
				return 2;
			}
		} else {
			takes = false;
		}
		if (!takes) {
			fprintf(stderr, "kcanary boot: unrecognized option '%s'\n", a);
			usage(stderr);
			return 2;
		}
		i++;
	}
	if (!kernel) {
		fprintf(stderr, "kcanary boot: --kernel PATH is required\n");
		return 2;
	}

	if (access(kernel, R_OK)) {
		fprintf(stderr, "kcanary boot: --kernel '%s': %s\n", kernel, strerror(errno));
		return 1;
	}
	vm_accel_probe(&ai, NULL);
	if (accel_arg) {
		if (strcmp(accel_arg, "kvm") && strcmp(accel_arg, "tcg")) {
			fprintf(stderr, "kcanary boot: --accel '%s': expected kvm or tcg\n", accel_arg);
			return 2;
		}
		ai.accel = strcmp(accel_arg, "kvm") ? VM_ACCEL_TCG : VM_ACCEL_KVM;
		snprintf(ai.why, sizeof(ai.why), "--accel %s", accel_arg);
	}
	if (setup_s < 0)
		setup_s = runner_setup_allowance_s(ai.accel);
	if (watchdog_s <= 0) {
		double work_s = 0;
		runner_workload_s(&work_s, knobs, err, sizeof(err));
		watchdog_s = setup_s + work_s;
	}
	print_banner(stderr, &ai);

	/* Store the run first, so even a kernel that is no bzImage leaves a
	 * failed run saying so. */
	db_path = cmd_db_path();
	home = cmd_home ? xstrdup(cmd_home) : kc_home();
	if ((r = db_open(&db, db_path))) {
		fprintf(stderr, "kcanary boot: cannot open the store '%s': %s\n", db_path,
			db ? db_errmsg(db) : strerror(-r));
		goto out;
	}
	{
		json_t *o = json_object();
		for (size_t i = 0; i < nknobs; i++) {
			char *k = xstrndup(knobs[i], (size_t)(strchr(knobs[i], '=') - knobs[i]));
			json_object_set_new(o, k, json_string(strchr(knobs[i], '=') + 1));
			free(k);
		}
		params = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
		json_decref(o);
	}
	if (db_job_resolve(db, &job_id, job) == -ENOENT &&
	    db_job_create(db, &job_id, job, "adhoc", NULL)) {
		fprintf(stderr, "kcanary boot: cannot create job '%s': %s\n", job, db_errmsg(db));
		goto out;
	}
	{
		char *cell = xasprintf("fs=%s", fs);
		r = db_variant_get(db, &variant_id, job_id, variant ? variant : base_name(kernel));
		if (!r)
			r = db_run_create(db, &run_id, job_id, variant_id, cell, 0, fs, params);
		free(cell);
		if (r) {
			fprintf(stderr, "kcanary boot: cannot store the run: %s\n", db_errmsg(db));
			goto out;
		}
	}

	if ((r = image_kernel_release(release, sizeof(release), kernel, err, sizeof(err))))
		goto run_failed;
	if (modules && !strcmp(modules, "none")) {
		modules_dir = NULL;
	} else if (modules) {
		modules_dir = xstrdup(modules);
	} else {
		modules_dir = xasprintf("/lib/modules/%s", release);
		if (access(modules_dir, R_OK)) {
			log_info("no modules at %s: assuming everything needed is built in", modules_dir);
			free(modules_dir);
			modules_dir = NULL;
		}
	}
	if (db_kernel_prebuilt(db, &kernel_id, kernel, release, modules_dir) ||
	    db_run_set_guest(db, run_id, vm_accel_name(ai.accel), NULL, kernel_id)) {
		fprintf(stderr, "kcanary boot: cannot store the kernel: %s\n", db_errmsg(db));
		goto out;
	}
	{
		struct guest_settings gs = {
			.fs = fs, .mkfs_opts = mkfs, .mount_opts = mnt, .sysctls = sysctls,
			.workload = workload, .knobs = knobs, .port = "kcanary", .extra = extra,
		};
		if ((r = image_cmdline(&cmdline, &gs, err, sizeof(err))))
			goto run_failed;
	}
	agent = agent_arg ? xstrdup(agent_arg) : image_default_agent();
	{
		struct image_spec is = { .home = home, .agent_path = agent, .modules_dir = modules_dir };
		if ((r = image_build(&initrd, &is, err, sizeof(err))))
			goto run_failed;
	}
	if ((r = runner_signals_install())) {
		fprintf(stderr, "kcanary boot: cannot catch signals: %s\n", strerror(-r));
		goto out;
	}
	{
		struct runner_opts ro = {
			.uri = uri, .home = home, .kernel = kernel, .initrd = initrd,
			.cmdline = cmdline, .accel = ai.accel, .vcpus = (unsigned)vcpus,
			.memory_mib = memory >> 20, .disk_bytes = disk,
			.watchdog_s = watchdog_s, .console = console,
		};
		if (runner_run(&res, db, run_id, &ro)) {
			fprintf(stderr, "kcanary boot: run %lld: %s\n", (long long)run_id, res.error);
			goto out;
		}
	}
	printf("run %lld: %s", (long long)run_id, res.status);
	if (res.error[0])
		printf(": %s", res.error);
	printf("\n  accel %s, boot-to-hello ", vm_accel_name(ai.accel));
	if (res.boot_to_hello_s >= 0)
		printf("%.2f s (%.2f s from the command's start)", res.boot_to_hello_s,
		       res.create_mono_s - cmd_start_s + res.boot_to_hello_s);
	else
		printf("-");
	printf(", wall %.1f s, %lld records (%lld samples, %lld probes)\n",
	       res.wall_s, (long long)res.records, (long long)res.samples, (long long)res.probes);
	rc = strcmp(res.status, "ok") ? 1 : (runner_interrupted() ? 130 : 0);
	if (runner_interrupted())
		rc = 130;
	goto out;

run_failed:
	fprintf(stderr, "kcanary boot: run %lld failed: %s\n", (long long)run_id, err);
	db_run_set_status(db, run_id, "failed", err);
out:
	db_close(db);
	free(db_path);
	free(home);
	free(modules_dir);
	free(agent);
	free(initrd);
	free(cmdline);
	free(params);
	return rc;
}
