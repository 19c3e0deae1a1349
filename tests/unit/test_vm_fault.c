/* test_vm_fault.c - vm_fault.c: whose fault a libvirt error is, the
 * host's (the run is 'infra' and runs again) or the guest kernel's (issue
 * 35 item 10: a host that could not create a console lock file had its
 * run stored 'failed' in the kernel's column). Real errors from libvirt's
 * test:///default driver where it can make them, else the message text
 * libvirt produces (the issue's, and libvirt's source as cited). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "util.h"
#include "wrap/vm_fault.h"

static void quiet(void *opaque, virErrorPtr e)
{
	(void)opaque;
	(void)e;
}

/* A pool that is gone, from the test driver itself: the host's. A domain
 * that does not exist, or XML libvirt refuses: not the host's. */
static void test_real_errors(void **state)
{
	virConnectPtr c;
	virErrorPtr e;

	(void)state;
	virSetErrorFunc(NULL, quiet);
	c = virConnectOpen("test:///default");
	assert_non_null(c);
	assert_null(virStoragePoolLookupByName(c, "kcanary-gone"));
	e = virGetLastError();
	assert_non_null(e);
	assert_int_equal(e->code, VIR_ERR_NO_STORAGE_POOL);
	assert_true(vm_fault_is_host(e->code, e->domain, e->message));
	assert_true(vm_fault_last_is_host());

	assert_null(virDomainLookupByName(c, "kcanary-nosuch"));
	e = virGetLastError();
	assert_non_null(e);
	assert_int_equal(e->code, VIR_ERR_NO_DOMAIN);
	assert_false(vm_fault_is_host(e->code, e->domain, e->message));
	assert_false(vm_fault_last_is_host());

	assert_null(virDomainCreateXML(c, "<domain type='test'><name>x</name>", 0));
	e = virGetLastError();
	assert_non_null(e);
	assert_false(vm_fault_is_host(e->code, e->domain, e->message));
	virConnectClose(c);
}

/* The words: virDomainOpenConsole on a host whose daemon cannot
 * write /var/lock (src/conf/virchrdev.c, virReportSystemError: code
 * VIR_ERR_SYSTEM_ERROR, domain VIR_FROM_NONE), and the same text however
 * a remote driver wraps it; QEMU failing on a host path or on /dev/kvm.
 * A kernel QEMU cannot load is the kernel's, the same code and domain. */
static void test_message_texts(void **state)
{
	static const char lock[] = "Couldn't create lock file for device '/dev/pts/1' in path"
				   " '/var/lock/LCK.._pts_1': Permission denied";
	static const struct {
		int code, domain;
		const char *message;
		bool host;
	} cases[] = {
		{ VIR_ERR_SYSTEM_ERROR, VIR_FROM_NONE, lock, true },
		{ VIR_ERR_OPERATION_FAILED, VIR_FROM_REMOTE, lock, true },
		{ VIR_ERR_INTERNAL_ERROR, VIR_FROM_QEMU, "internal error: qemu unexpectedly closed the"
		  " monitor: qemu-system-x86_64: -drive file=/var/lib/libvirt/kcanary/a.img: Could"
		  " not open '/var/lib/libvirt/kcanary/a.img': Permission denied", true },
		{ VIR_ERR_INTERNAL_ERROR, VIR_FROM_QEMU, "internal error: process exited while"
		  " connecting to monitor: Could not access KVM kernel module: No such file or"
		  " directory\nqemu-system-x86_64: failed to initialize kvm: No such file or"
		  " directory", true },
		{ VIR_ERR_OPERATION_TIMEOUT, VIR_FROM_QEMU, "Timed out during operation: cannot"
		  " acquire state change lock (held by monitor=remoteDispatchDomainCreateXML)", true },
		{ VIR_ERR_INTERNAL_ERROR, VIR_FROM_LOCKING, "resource busy: Lockspace resource"
		  " '/var/lib/libvirt/kcanary/a.img' is locked", true },
		{ VIR_ERR_INTERNAL_ERROR, VIR_FROM_SECURITY, "unable to set AppArmor profile", true },
		{ VIR_ERR_INTERNAL_ERROR, VIR_FROM_QEMU, "internal error: qemu unexpectedly closed the"
		  " monitor: qemu-system-x86_64: Error loading uncompressed kernel without PVH ELF"
		  " Note", false },
		{ VIR_ERR_INTERNAL_ERROR, VIR_FROM_QEMU, "internal error: qemu unexpectedly closed the"
		  " monitor: qemu: linux kernel too old to load a ram disk", false },
		{ VIR_ERR_XML_ERROR, VIR_FROM_DOMAIN, "XML error: missing name information", false },
		{ VIR_ERR_INTERNAL_ERROR, VIR_FROM_QEMU, NULL, false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool got = vm_fault_is_host(cases[i].code, cases[i].domain, cases[i].message);

		if (got != cases[i].host)
			fprintf(stderr, "case %zu (%s): host %d, expected %d\n", i,
				cases[i].message ? cases[i].message : "(null)", got, cases[i].host);
		assert_int_equal(got, cases[i].host);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_errors),
		cmocka_unit_test(test_message_texts),
	};
	return cmocka_run_group_tests_name("vm_fault", tests, NULL, NULL);
}
