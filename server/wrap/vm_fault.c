/* vm_fault.c - whose fault a libvirt error is: the host's own (the run is
 * 'infra', placed again) or the guest's and its kernel's (vm_fault.h).
 * One table; the wrapper's libvirt errors that start a
 * guest (vm_domain_start, vm_domain_open_console, vm_domain_open_channel)
 * go through it. */
#include <libvirt/virterror.h>
#include <string.h>

#include "wrap/vm_fault.h"

/* libvirt error codes that are the host's whatever the message: the
 * meanings are libvirt's own (include/libvirt/virterror.h, the
 * virErrorNumber comments; messages from src/util/virerror.c). */
static const struct {
	int code;
	const char *why;
} host_codes[] = {
	/* virReportSystemError(): an OS call on the host failed (open, mkdir,
	 * a lock file, a pty, memory): the host's files, devices or limits,
	 * never what the guest's kernel did. E.g. src/conf/virchrdev.c's
	 * "Couldn't create lock file for device '%s' in path '%s'" (issue 35:
	 * a host whose /var/lock the daemon cannot write) */
	{ VIR_ERR_SYSTEM_ERROR, "a system call on the host failed" },
	/* "Storage pool not found", "Storage volume not found": the host's
	 * pool or an uploaded volume is gone */
	{ VIR_ERR_NO_STORAGE_POOL, "the host's storage pool is gone" },
	{ VIR_ERR_NO_STORAGE_VOL, "a volume in the host's pool is gone" },
	/* "Timed out during operation: cannot acquire state change lock":
	 * the host's daemon is stuck on another job */
	{ VIR_ERR_OPERATION_TIMEOUT, "the host's libvirt timed out" },
	/* "no connection driver available", "internal RPC error": the
	 * connection, not the guest */
	{ VIR_ERR_NO_CONNECT, "no connection to the host" },
	{ VIR_ERR_RPC, "the host's libvirt RPC failed" },
};

/* libvirt error domains (virErrorDomain, where an error was raised) that
 * are the host's: its lock manager (virtlockd, src/locking/), its storage
 * driver (src/storage/), its security drivers labelling the host's files
 * (AppArmor, SELinux, DAC: src/security/), its cgroups (src/util/vircgroup.c). */
static const struct {
	int domain;
	const char *why;
} host_domains[] = {
	{ VIR_FROM_LOCKING, "the host's lock manager" },
	{ VIR_FROM_STORAGE, "the host's storage" },
	{ VIR_FROM_SECURITY, "the host's security driver" },
	{ VIR_FROM_CGROUP, "the host's cgroups" },
};

/* Message text that is the host's whatever the code: QEMU's own stderr
 * comes back as VIR_ERR_INTERNAL_ERROR or VIR_ERR_OPERATION_FAILED ("qemu
 * unexpectedly closed the monitor: ...", src/qemu/qemu_process.c), where
 * a bad kernel image is also reported, so only these strings, each an
 * errno text (strerror) or a chardev/lock failure on the host's side. */
static const char *const host_messages[] = {
	"Couldn't create lock file for device",     /* src/conf/virchrdev.c */
	"Active console session exists",            /* src/conf/virchrdev.c: another reader */
	"Permission denied",                        /* EACCES on a host path */
	"Operation not permitted",                  /* EPERM */
	"No space left on device",                  /* ENOSPC: the host's disk */
	"Read-only file system",                    /* EROFS */
	"Cannot allocate memory",                   /* ENOMEM: the host's memory */
	"Could not access KVM kernel module",       /* QEMU: the host's /dev/kvm */
	"failed to initialize kvm",                 /* QEMU: the host's /dev/kvm */
	"Storage pool not found",                   /* virerror.c, when wrapped */
};

bool vm_fault_is_host(int code, int domain, const char *message)
{
	size_t i;

	for (i = 0; i < sizeof(host_codes) / sizeof(host_codes[0]); i++)
		if (code == host_codes[i].code)
			return true;
	for (i = 0; i < sizeof(host_domains) / sizeof(host_domains[0]); i++)
		if (domain == host_domains[i].domain)
			return true;
	for (i = 0; message && i < sizeof(host_messages) / sizeof(host_messages[0]); i++)
		if (strstr(message, host_messages[i]))
			return true;
	return false;
}

bool vm_fault_last_is_host(void)
{
	virErrorPtr e = virGetLastError();

	return e && vm_fault_is_host(e->code, e->domain, e->message);
}
