/* cmd_lab.c - kcanary lab: add, list, remove and check the lab hosts that
 * run a job's guests (lab.h, db_lab.h). */
#define LOG_MODULE "lab"
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "store/db.h"
#include "store/db_lab.h"
#include "exec/lab.h"
#include "util.h"
#include "wrap/vm.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kcanary lab add NAME URI [--slots N] [--labels K=V,...]\n"
		"   or: kcanary lab list\n"
		"   or: kcanary lab remove NAME\n"
		"   or: kcanary lab check NAME\n"
		"\n"
		"Lab hosts: libvirt hosts that run a job's guests (kcanary compare --hosts).\n"
		"Everything a guest needs goes over the libvirt connection (docs/lab.md).\n"
		"Without any, the default host '" LAB_LOCAL "' is $KCANARY_LIBVIRT_URI or\n"
		"qemu:///system.\n"
		"\n"
		"  add NAME URI   store a host (qemu+ssh://root@kvm1/system, qemu+tls://...);\n"
		"                 --slots N guests at once (default 1: perf runs should not\n"
		"                 share a host), --labels K=V,... to select it by; asks the\n"
		"                 host for its accelerator when it answers\n"
		"  list           each host: state, accelerator, CPUs, memory, libvirt and\n"
		"                 QEMU versions, last run\n"
		"  remove NAME    forget a host (its runs keep its name)\n"
		"  check NAME     ask the host over its connection: accelerator (its own:\n"
		"                 kvm only with kvm domains and a vmx/svm CPU, so a PVM\n"
		"                 /dev/kvm is tcg; its runs' guests use it), versions,\n"
		"                 the storage pool '" VM_POOL_NAME "' (made when missing), free\n"
		"                 memory; a host that passes is up again\n");
}

static int bad_usage(void)
{
	usage(stderr);
	return 2;
}

/* "k=v,k2=v2" as a JSON object's text; NULL (after saying why) when bad. */
static char *labels_json(const char *spec)
{
	json_t *o = json_object();
	char *copy = xstrdup(spec), *save = NULL, *text = NULL;

	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');

		if (!eq || eq == t) {
			fprintf(stderr, "kcanary lab: --labels '%s': expected KEY=VALUE,...\n", spec);
			goto out;
		}
		*eq = '\0';
		json_object_set_new(o, t, json_string(eq + 1));
	}
	text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
out:
	json_decref(o);
	free(copy);
	return text;
}

static int do_add(struct db *db, int argc, char **argv)
{
	const char *name = NULL, *uri = NULL;
	char *labels = NULL, *end;
	struct vm_accel_info ai;
	struct buf err = BUF_INIT;
	long slots = 1;
	int ret = 1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--slots") && i + 1 < argc) {
			slots = strtol(argv[++i], &end, 10);
			if (*end || slots < 1 || slots > 64) {
				fprintf(stderr, "kcanary lab: --slots '%s': expected 1 to 64\n", argv[i]);
				goto out;
			}
		} else if (!strcmp(argv[i], "--labels") && i + 1 < argc) {
			free(labels);
			if (!(labels = labels_json(argv[++i])))
				goto out;
		} else if (!name && argv[i][0] != '-') {
			name = argv[i];
		} else if (!uri && argv[i][0] != '-') {
			uri = argv[i];
		} else {
			ret = bad_usage();
			goto out;
		}
	}
	if (!name || !uri || !*name || strchr(name, ',') || strchr(name, '=') ||
	    !strcmp(name, "all")) {
		fprintf(stderr, "kcanary lab add: expected NAME (no ',' or '=', not 'all') and URI\n");
		ret = 2;
		goto out;
	}
	if (db_lab_host_add(db, name, uri, (int)slots, labels, &err)) {
		fprintf(stderr, "kcanary lab add: %s\n", buf_str(&err));
		goto out;
	}
	printf("lab host %s: %s, %ld slot%s%s%s (kcanary lab check %s asks it)\n", name, uri, slots,
	       slots > 1 ? "s" : "", labels ? ", labels " : "", labels ? labels : "", name);
	buf_reset(&err);
	if (lab_probe_accel(db, name, &ai, &err) == 0)
		printf("accelerator: %s (%s)\n", vm_accel_name(ai.accel), ai.why);
	else
		printf("accelerator: not known yet: %s\n", buf_str(&err));
	ret = 0;
out:
	free(labels);
	buf_release(&err);
	return ret;
}

static const char *or_dash(const char *s)
{
	return s && *s ? s : "-";
}

static int do_list(struct db *db, int argc, char **argv)
{
	struct db_lab_host *h = NULL;
	struct buf err = BUF_INIT;
	size_t n = 0;

	(void)argc;	/* list takes no arguments and, as ever, ignores any */
	(void)argv;
	if (db_lab_hosts(db, &h, &n, &err)) {
		fprintf(stderr, "kcanary lab list: %s\n", buf_str(&err));
		buf_release(&err);
		return 1;
	}
	printf("%-12s %-8s %-5s %5s %9s %-9s %-9s %-20s %s\n", "NAME", "STATE", "ACCEL", "CPUS",
	       "MEM_MIB", "LIBVIRT", "QEMU", "LAST_RUN", "URI");
	for (size_t i = 0; i < n; i++) {
		char cpus[24] = "-", mem[24] = "-";

		if (h[i].cpus >= 0)
			snprintf(cpus, sizeof(cpus), "%lld", (long long)h[i].cpus);
		if (h[i].memory_mib >= 0)
			snprintf(mem, sizeof(mem), "%lld", (long long)h[i].memory_mib);
		printf("%-12s %-8s %-5s %5s %9s %-9s %-9s %-20s %s", h[i].name, h[i].state,
		       or_dash(h[i].accel), cpus, mem, or_dash(h[i].libvirt_version),
		       or_dash(h[i].qemu_version), or_dash(h[i].last_run_at), h[i].uri);
		if (h[i].slots > 1)
			printf(" slots=%d", h[i].slots);
		if (h[i].labels_json && strcmp(h[i].labels_json, "{}"))
			printf(" labels=%s", h[i].labels_json);
		if (h[i].state_why && *h[i].state_why)
			printf("\n             %s", h[i].state_why);
		printf("\n");
	}
	if (!n)
		printf("%-12s %-8s (not stored: the default host, %s)\n", LAB_LOCAL, "-", vm_default_uri());
	db_lab_hosts_free(h, n);
	return 0;
}

static int do_remove(struct db *db, int argc, char **argv)
{
	struct buf err = BUF_INIT;
	int ret = 0;

	if (argc != 2)
		return bad_usage();
	if (db_lab_host_remove(db, argv[1], &err)) {
		fprintf(stderr, "kcanary lab remove: %s\n", buf_str(&err));
		ret = 1;
	}
	buf_release(&err);
	return ret;
}

static int do_check(struct db *db, int argc, char **argv)
{
	struct vm_host_info info;
	struct vm_accel_info ai;
	struct buf err = BUF_INIT;
	bool ok = false;
	int r;

	if (argc != 2)
		return bad_usage();
	r = lab_check(db, argv[1], &info, &ai, &ok, &err);
	if (r) {
		fprintf(stderr, "kcanary lab check: %s\n", buf_str(&err));
		buf_release(&err);
		return 1;
	}
	if (info.driver[0]) {
		printf("host:        %s (%s driver)\n", or_dash(info.hostname), info.driver);
		printf("accelerator: %s (%s)\n", vm_accel_name(ai.accel), ai.why);
		printf("versions:    libvirt %s, QEMU %s\n", or_dash(info.libvirt_version),
		       or_dash(info.hv_version));
		printf("cpus:        %u\nmemory:      %llu MiB, %llu MiB free\n", info.cpus,
		       (unsigned long long)info.memory_mib, (unsigned long long)info.free_mib);
		printf("pool:        %s\n", info.pool_ok ? VM_POOL_NAME " (" VM_POOL_DIR ") active" :
		       info.pool_why);
		if (info.swept)
			printf("swept:       %zu scratch volumes of runs that died with their host\n",
			       info.swept);
	}
	printf("%s: %s%s%s\n", argv[1], ok ? "up" : "down", ok ? "" : ": ", ok ? "" : buf_str(&err));
	buf_release(&err);
	return ok ? 0 : 1;
}

/* A verb over the store: fn with it open, then closed. */
static int with_store(const struct cmd_ctx *ctx, int argc, char **argv,
		      int (*fn)(struct db *db, int argc, char **argv))
{
	struct db *db;
	int ret;

	if (!(db = cmd_open_store(ctx, "kcanary lab")))
		return 1;
	ret = fn(db, argc, argv);
	db_close(db);
	return ret;
}

static int verb_add(struct cmd_ctx *ctx, int argc, char **argv)
{
	return with_store(ctx, argc, argv, do_add);
}

static int verb_list(struct cmd_ctx *ctx, int argc, char **argv)
{
	return with_store(ctx, argc, argv, do_list);
}

static int verb_remove(struct cmd_ctx *ctx, int argc, char **argv)
{
	return with_store(ctx, argc, argv, do_remove);
}

static int verb_check(struct cmd_ctx *ctx, int argc, char **argv)
{
	return with_store(ctx, argc, argv, do_check);
}

/* Any other verb: the usage on stderr. */
static int verb_unknown(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)ctx;
	(void)argc;
	(void)argv;
	return bad_usage();
}

static const struct cmd_verb verbs[] = {
	{ "add", verb_add },
	{ "list", verb_list },
	{ "remove", verb_remove },
	{ "check", verb_check },
	{ NULL, verb_unknown },
};

int cmd_lab(struct cmd_ctx *ctx, int argc, char **argv)
{
	if (argc < 2 || cmd_wants_help(argc, argv)) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	return cmd_select(ctx, "kcanary lab", verbs, argc, argv);
}
