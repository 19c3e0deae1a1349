/* cmd_doctor.c - kcanary doctor: check every prerequisite of booting a
 * guest (accelerator, libvirt, its QEMU driver, the channel, the images),
 * each with what to do when it fails. */
#define LOG_MODULE "doctor"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "store/db.h"
#include "guest/image.h"
#include "log.h"
#include "util.h"
#include "wrap/vm.h"

static int failures;

static void report(bool ok, const char *what, const char *detail, const char *fix)
{
	printf("%-5s %-14s %s\n", ok ? "ok" : "FAIL", what, detail);
	if (fix)
		printf("      %-14s %s\n", ok ? "note:" : "fix:", fix);
	if (!ok)
		failures++;
}

/* The newest /boot/vmlinuz-* (by name), or NULL. */
static char *default_kernel(void)
{
	struct dirent **names = NULL;
	char *best = NULL;
	int n = scandir("/boot", &names, NULL, versionsort);

	for (int i = 0; i < n; i++) {
		if (!strncmp(names[i]->d_name, "vmlinuz-", 8)) {
			free(best);
			best = xasprintf("/boot/%s", names[i]->d_name);
		}
		free(names[i]);
	}
	free(names);
	return best;
}

/* Put the kernel in the host's pool, start a paused domain with a channel
 * and open that channel as a libvirt stream: the path every run takes. */
static void check_channel(struct vm_conn *conn, enum vm_accel accel, const char *kernel)
{
	char name[64], key[96], disk_name[96];
	struct buf err = BUF_INIT;
	char *kvol = NULL, *disk = NULL, *xml = NULL;
	struct vm_domain *d = NULL;
	struct vm_stream *st = NULL;

	snprintf(name, sizeof(name), "kcanary-doctor-%d", (int)getpid());
	snprintf(disk_name, sizeof(disk_name), "%s.img", name);
	if (vm_file_key(key, sizeof(key), kernel, ".kernel")) {
		report(false, "channel", "cannot read the kernel", "give a bzImage with --kernel PATH");
		goto out;
	}
	if (vm_pool_ensure(conn, &err) || vm_volume_upload(conn, key, kernel, &kvol, NULL, &err) ||
	    vm_volume_scratch(conn, disk_name, 64 << 20, &disk, &err)) {
		report(false, "pool", buf_str(&err),
		       "the host's libvirtd needs a writable " VM_POOL_DIR " for pool '" VM_POOL_NAME "'");
		goto out;
	}
	report(true, "pool", "pool '" VM_POOL_NAME "' holds the kernel (uploaded once per content)",
	       NULL);
	struct vm_spec spec = {
		.name = name, .accel = accel, .vcpus = 1, .memory_mib = 256,
		.kernel = kvol, .initrd = kvol, .cmdline = "console=ttyS0",
		.disk_path = disk, .channel_name = "kcanary",
	};
	if (vm_domain_xml(&xml, &spec, &err) ||
	    vm_domain_start(&d, conn, name, xml, VM_START_PAUSED, &err)) {
		report(false, "channel", buf_str(&err),
		       "see /var/log/libvirt/qemu/ for QEMU's message; 'sudo tools/libvirtd-up.sh' "
		       "sets qemu.conf for hosts without systemd");
		goto out;
	}
	buf_reset(&err);
	if (vm_domain_open_channel(&st, d, "kcanary", &err) == 0)
		report(true, "channel", "a guest's virtio-serial channel opens as a libvirt stream",
		       NULL);
	else
		report(false, "channel", buf_str(&err),
		       "check that QEMU can create sockets under /var/lib/libvirt/qemu/channel "
		       "(AppArmor/SELinux confinement)");
	vm_stream_close(st);
	vm_domain_destroy(d, NULL);   /* a check's guest: the next run cleans up */
out:
	vm_domain_free(d);
	if (disk)
		vm_volume_delete(conn, disk_name, NULL);
	free(kvol);
	free(disk);
	free(xml);
	buf_release(&err);
}

int cmd_doctor(struct cmd_ctx *ctx, int argc, char **argv)
{
	const char *uri = NULL, *kernel_arg = NULL;
	char buf[512], release[128], drv[32];
	struct buf err = BUF_INIT;
	char *kernel = NULL, *agent = NULL, *initrd = NULL, *mods = NULL;
	struct vm_accel_info ai;
	struct vm_conn *conn = NULL;
	bool has_qemu = false, has_kvm = false;

	if (cmd_wants_help(argc, argv)) {
		printf("usage: kcanary doctor [--connect URI] [--kernel PATH]\n"
		       "\n"
		       "Check what booting a guest needs and say how to fix what is missing:\n"
		       "the accelerator (hardware KVM, or TCG), the libvirt daemon at URI\n"
		       "(default $KCANARY_LIBVIRT_URI, else qemu:///system) and its QEMU driver,\n"
		       "a guest's virtio-serial channel (a paused guest is started and\n"
		       "destroyed), busybox, the mkfs tools, the agent, a kernel (default the\n"
		       "newest /boot/vmlinuz-*) and the guest image built from them.\n"
		       "Exit status 0 when nothing failed, 1 otherwise.\n");
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--connect") && i + 1 < argc) {
			uri = argv[++i];
		} else if (!strcmp(argv[i], "--kernel") && i + 1 < argc) {
			kernel_arg = argv[++i];
		} else {
			fprintf(stderr, "kcanary doctor: unrecognized option '%s'\n", argv[i]);
			return 2;
		}
	}

	vm_accel_probe(&ai, NULL);
	if (ai.accel == VM_ACCEL_KVM)
		report(true, "accelerator", "kvm: hardware virtualisation, guests use host-passthrough", NULL);
	else
		report(true, "accelerator", ai.why,
		       "guests run under TCG: timings are not performance numbers for this "
		       "host; use a machine with VT-x/AMD-V and a readable /dev/kvm for those");

	if (vm_conn_open(&conn, uri, &err)) {
		err.ptr[strcspn(err.ptr, "\n")] = '\0';  /* the hint is the fix below */
		report(false, "libvirt", err.ptr,
		       "start a daemon: sudo tools/libvirtd-up.sh (or set $KCANARY_LIBVIRT_URI)");
	} else {
		snprintf(buf, sizeof(buf), "%s answers", uri ? uri : vm_default_uri());
		report(true, "libvirt", buf, NULL);
		if (vm_conn_driver(conn, drv, sizeof(drv), &has_qemu, &has_kvm, &err)) {
			report(false, "qemu driver", buf_str(&err), "apt-get install libvirt-daemon-driver-qemu");
		} else if (!has_qemu) {
			snprintf(buf, sizeof(buf), "driver %s cannot run QEMU guests", drv);
			report(false, "qemu driver", buf,
			       "apt-get install qemu-system-x86 libvirt-daemon-driver-qemu, then "
			       "restart libvirtd");
		} else {
			snprintf(buf, sizeof(buf), "%s driver: domain type qemu (TCG)%s", drv,
				 has_kvm ? " and kvm" : "");
			report(true, "qemu driver", buf,
			       ai.accel == VM_ACCEL_KVM && !has_kvm ?
			       "libvirt offers no kvm domains: check /dev/kvm permissions for QEMU" : NULL);
		}
	}

	report(access("/bin/busybox", X_OK) == 0, "busybox", "/bin/busybox",
	       access("/bin/busybox", X_OK) ? "apt-get install busybox-static" : NULL);
	{
		static const char *const tools[] = { "mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", NULL };
		for (size_t i = 0; tools[i]; i++) {
			char *p = xasprintf("/usr/sbin/%s", tools[i]), *q = xasprintf("/sbin/%s", tools[i]);
			bool ok = access(p, X_OK) == 0 || access(q, X_OK) == 0;
			report(ok, tools[i], ok ? "found" : "missing",
			       ok ? NULL : "apt-get install e2fsprogs xfsprogs btrfs-progs");
			free(p);
			free(q);
		}
	}
	agent = image_default_agent();
	report(access(agent, X_OK) == 0, "agent", agent,
	       access(agent, X_OK) ? "run 'make' (builds build/kcanary-agent) or set $KCANARY_AGENT" : NULL);

	kernel = kernel_arg ? xstrdup(kernel_arg) : default_kernel();
	if (!kernel) {
		report(false, "kernel", "no /boot/vmlinuz-*",
		       "apt-get install linux-image-cloud-amd64, or give --kernel PATH");
	} else if (image_kernel_release(release, sizeof(release), kernel, &err)) {
		report(false, "kernel", buf_str(&err), "give a bzImage with --kernel PATH");
	} else {
		mods = xasprintf("/lib/modules/%s", release);
		snprintf(buf, sizeof(buf), "%s (%s%s)", kernel, release,
			 access(mods, R_OK) ? ", no modules tree" : ", modules found");
		report(true, "kernel", buf, NULL);
		if (access(mods, R_OK)) {
			free(mods);
			mods = NULL;
		}
		if (access(agent, X_OK) == 0) {
			struct image_spec is = { .home = ctx->home, .agent_path = agent, .modules_dir = mods };
			if (image_build(&initrd, &is, &err))
				report(false, "guest image", buf_str(&err), "see the message; 'make deps' installs the tools");
			else
				report(true, "guest image", initrd, NULL);
		}
		if (conn && has_qemu)
			check_channel(conn, ai.accel, kernel);
	}
	vm_conn_close(conn);
	free(kernel);
	free(agent);
	free(initrd);
	free(mods);
	buf_release(&err);
	printf("%s\n", failures ? "some checks failed" : "all checks passed");
	return failures ? 1 : 0;
}
