/* test_vm.c - vm.c: domain XML against golden files, the accelerator
 * probe on fixture trees, and domain lifecycle events on libvirt's
 * test:///default driver (in-process, no daemon). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "util.h"
#include "vm.h"
#include "testutil.h"

#define GOLDEN_DIR "tests/fixtures/vm"

static struct vm_spec sample_spec(enum vm_accel accel)
{
	return (struct vm_spec){
		.name = "kcanary-r7-p100-beef", .accel = accel, .vcpus = 2, .memory_mib = 2048,
		.kernel = "/boot/vmlinuz-6.12.117+deb12-cloud-amd64",
		.initrd = "/home/kc/images/0123456789abcdef.cpio.gz",
		.cmdline = "console=ttyS0 panic=-1 rdinit=/init kc.fs=xfs kc.workload=wb-handover "
			   "kc.knobs=rate_mbps=40,nfiles=100 kc.port=kcanary",
		.disk_path = "/var/lib/libvirt/kcanary/kcanary-r7-p100-beef-scratch.img",
		.channel_name = "kcanary",
	};
}

/* The golden at path is a domain libvirt's own RelaxNG schema accepts:
 * virt-xml-validate (libvirt-clients, in make deps) exits 0. A missing
 * tool fails too: the schema check is part of what this test claims. */
static void check_schema(const char *path)
{
	char *cmd = xasprintf("virt-xml-validate '%s' domain >&2", path);
	int rc = system(cmd);

	if (rc)
		fprintf(stderr, "%s: exit %d (libvirt's domain schema refuses it, or "
			"virt-xml-validate is missing: make deps installs libvirt-clients)\n", cmd, rc);
	assert_int_equal(rc, 0);
	free(cmd);
}

/* Compare with the golden file; KCANARY_UPDATE_GOLDEN=1 rewrites it. */
static void check_golden(const char *name, const char *got)
{
	char *path = xasprintf("%s/%s", GOLDEN_DIR, name), *want = NULL;
	int update = golden_update();

	assert_int_not_equal(update, -1);
	if (update) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(got, f);
		fclose(f);
	}
	assert_int_equal(read_file(&want, NULL, path, 1 << 20), 0);
	if (strcmp(want, got))
		fprintf(stderr, "golden file %s differs; got:\n%s", path, got);
	assert_string_equal(got, want);
	check_schema(path);
	free(want);
	free(path);
}

static void test_xml_tcg_golden(void **state)
{
	struct vm_spec s = sample_spec(VM_ACCEL_TCG);
	char *xml = NULL;
	struct buf err = BUF_INIT;

	(void)state;
	assert_int_equal(vm_domain_xml(&xml, &s, &err), 0);
	check_golden("domain-tcg.xml", xml);
	free(xml);
	buf_release(&err);
}

static void test_xml_kvm_golden(void **state)
{
	struct vm_spec s = sample_spec(VM_ACCEL_KVM);
	char *xml = NULL;
	struct buf err = BUF_INIT;

	(void)state;
	s.vcpus = 4;
	s.memory_mib = 4096;
	assert_int_equal(vm_domain_xml(&xml, &s, &err), 0);
	check_golden("domain-kvm.xml", xml);
	free(xml);
	buf_release(&err);
}

/* --rootfs: the image is a second, read-only virtio disk after the scratch
 * disk (the guest's vdb; kernels/init mounts it from there). */
static void test_xml_rootfs_golden(void **state)
{
	struct vm_spec s = sample_spec(VM_ACCEL_TCG);
	char *xml = NULL;
	struct buf err = BUF_INIT;

	(void)state;
	s.rootfs_path = "/home/kc/rootfs/41c2a2c0.sqfs";
	assert_int_equal(vm_domain_xml(&xml, &s, &err), 0);
	check_golden("domain-rootfs.xml", xml);
	assert_true(strstr(xml, "dev='vda'") < strstr(xml, "dev='vdb'"));
	free(xml);
	buf_release(&err);
}

/* --rootfs host: a virtiofs share of virtiofsd's socket (hostfs.h) with
 * the memory memfd-backed and shared, as vhost-user needs; no <readonly/>
 * (libvirt 9.0 refuses it on virtiofs: the read-only bind is on the host). */
static void test_xml_hostfs_golden(void **state)
{
	struct vm_spec s = sample_spec(VM_ACCEL_TCG);
	char *xml = NULL;
	struct buf err = BUF_INIT;

	(void)state;
	s.hostfs_socket = "/home/kc/runs/7/hostfs.sock";
	assert_int_equal(vm_domain_xml(&xml, &s, &err), 0);
	check_golden("domain-hostfs.xml", xml);
	assert_non_null(strstr(xml, "<driver type='virtiofs'"));
	assert_non_null(strstr(xml, "<target dir='" VM_HOSTFS_TAG "'/>"));
	assert_non_null(strstr(xml, "<access mode='shared'/>"));
	free(xml);
	buf_release(&err);
}

static void test_xml_escapes_and_checks(void **state)
{
	struct vm_spec s = sample_spec(VM_ACCEL_TCG);
	char *xml = NULL;
	struct buf err = BUF_INIT;

	(void)state;
	s.kernel = "/k/a&b<c>'d\".img";
	assert_int_equal(vm_domain_xml(&xml, &s, &err), 0);
	assert_non_null(strstr(xml, "<kernel>/k/a&amp;b&lt;c&gt;&apos;d&quot;.img</kernel>"));
	free(xml);
	xml = NULL;

	s.channel_name = NULL;
	assert_int_equal(vm_domain_xml(&xml, &s, &err), -EINVAL);
	assert_null(xml);
	assert_string_equal(buf_str(&err), "domain spec has no channel_name");
	s = sample_spec(VM_ACCEL_TCG);
	s.vcpus = 0;
	assert_int_equal(vm_domain_xml(&xml, &s, &err), -EINVAL);
	buf_release(&err);
}

/* ---- accelerator probe on fixture trees ---- */

static void put(const char *root, const char *rel, const char *text)
{
	char *p = xasprintf("%s%s", root, rel), *d = xstrdup(p);
	FILE *f;

	*strrchr(d, '/') = '\0';
	assert_int_equal(mkdir_p(d, 0755), 0);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(p);
	free(d);
}

static void test_accel_probe(void **state)
{
	struct tmpdir *td = *state;
	struct vm_accel_info ai;
	char *pvm = xasprintf("%s/sys/module/kvm_pvm", td->path);

	unsetenv("KCANARY_ACCEL");
	vm_accel_probe(&ai, td->path);
	assert_int_equal(ai.accel, VM_ACCEL_TCG);
	assert_non_null(strstr(ai.why, "no KVM"));

	put(td->path, "/dev/kvm", "");
	put(td->path, "/proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu vme sse4_2 avx2\n");
	vm_accel_probe(&ai, td->path);
	assert_int_equal(ai.accel, VM_ACCEL_TCG);
	assert_non_null(strstr(ai.why, "no vmx or svm"));

	put(td->path, "/proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu vmx sse4_2 avx2\n");
	vm_accel_probe(&ai, td->path);
	assert_int_equal(ai.accel, VM_ACCEL_KVM);
	assert_string_equal(vm_accel_name(ai.accel), "kvm");

	/* PVM: /dev/kvm opens but is a software hypervisor. */
	assert_int_equal(mkdir_p(pvm, 0755), 0);
	vm_accel_probe(&ai, td->path);
	assert_int_equal(ai.accel, VM_ACCEL_TCG);
	assert_non_null(strstr(ai.why, "PVM"));
	assert_string_equal(vm_accel_name(ai.accel), "tcg");

	setenv("KCANARY_ACCEL", "kvm", 1);
	vm_accel_probe(&ai, td->path);
	assert_int_equal(ai.accel, VM_ACCEL_KVM);
	unsetenv("KCANARY_ACCEL");
	free(pvm);
}

/* ---- lifecycle on test:///default ---- */

static int wait_event(struct vm_domain *d, struct vm_event *ev, enum vm_event_kind want)
{
	double until = clock_mono_s() + 5;

	while (clock_mono_s() < until) {
		struct pollfd pf = { .fd = vm_domain_event_fd(d), .events = POLLIN };

		poll(&pf, 1, 100);
		while (vm_domain_next_event(d, ev) == 0)
			if (ev->kind == want)
				return 0;
	}
	return -ETIMEDOUT;
}

static void test_lifecycle_events(void **state)
{
	struct tmpdir *td = *state;
	struct vm_spec s = sample_spec(VM_ACCEL_TCG);
	struct vm_conn *c = NULL;
	struct vm_domain *d = NULL;
	struct vm_event ev;
	char *xml = NULL, what[96], reason[64], drv[32];
	struct buf err = BUF_INIT;
	bool has_qemu = false, has_kvm = false;

	(void)td;
	assert_int_equal(vm_conn_open(&c, "test:///default", &err), 0);
	assert_int_equal(vm_conn_driver(c, drv, sizeof(drv), &has_qemu, &has_kvm, &err), 0);
	assert_string_equal(drv, "TEST");
	assert_true(has_qemu);
	s.name = "kcanary-unit-lifecycle";
	assert_int_equal(vm_domain_xml(&xml, &s, &err), 0);
	assert_int_equal(vm_domain_start(&d, c, s.name, xml, 0, &err), 0);
	assert_true(vm_domain_is_active(d));
	assert_int_equal(wait_event(d, &ev, VM_EV_STARTED), 0);

	assert_int_equal(vm_domain_suspend(d, &err), 0);
	assert_int_equal(wait_event(d, &ev, VM_EV_SUSPENDED), 0);
	vm_event_describe(what, sizeof(what), &ev);
	assert_string_equal(what, "suspended (paused)");
	vm_domain_pause_reason(d, reason, sizeof(reason));
	assert_string_equal(reason, "user");

	assert_int_equal(vm_domain_destroy(d, &err), 0);
	assert_int_equal(wait_event(d, &ev, VM_EV_STOPPED), 0);
	vm_event_describe(what, sizeof(what), &ev);
	assert_string_equal(what, "stopped (destroyed)");
	assert_false(vm_domain_is_active(d));
	/* destroying again is not an error */
	assert_int_equal(vm_domain_destroy(d, &err), 0);
	vm_domain_free(d);

	/* a second domain with the same name may start once the first is gone */
	assert_int_equal(vm_domain_start(&d, c, s.name, xml, 0, &err), 0);
	assert_int_equal(vm_domain_start(&(struct vm_domain *){ NULL }, c, s.name, xml, 0,
					 &err), -EIO);
	assert_non_null(strstr(buf_str(&err), "cannot start guest 'kcanary-unit-lifecycle'"));
	assert_int_equal(vm_domain_destroy(d, &err), 0);
	vm_domain_free(d);
	vm_conn_close(c);
	free(xml);
	buf_release(&err);
}

/* The pool, content-named volumes and scratch volumes on the test driver
 * (which has no upload: there the bytes are not sent, see vm.h). */
static void test_volumes(void **state)
{
	struct tmpdir *td = *state;
	char *f = xasprintf("%s/kernel", td->path), *p1 = NULL, *p2 = NULL, *sp = NULL;
	char k1[96], k2[96];
	struct vm_conn *c = NULL;
	struct buf err = BUF_INIT;
	FILE *fp = fopen(f, "w");

	assert_non_null(fp);
	fputs("abc", fp);
	fclose(fp);
	assert_int_equal(vm_file_key(k1, sizeof(k1), f, ".kernel"), 0);
	/* FNV-1a 64 of "abc" (the published test vector), then the size */
	assert_string_equal(k1, "kc-e71fa2190541574b-3.kernel");
	assert_int_equal(vm_file_key(k2, sizeof(k2), "/nonexistent/k", NULL), -ENOENT);
	assert_int_equal(vm_conn_open(&c, "test:///default", &err), 0);
	assert_int_equal(vm_pool_ensure(c, &err), 0);
	assert_int_equal(vm_volume_upload(c, k1, f, &p1, NULL, &err), 0);
	assert_int_equal(vm_volume_upload(c, k1, f, &p2, NULL, &err), 0);
	assert_string_equal(p1, p2);
	assert_non_null(strstr(p1, "/kc-e71fa2190541574b-3.kernel"));
	/* a dead run's scratch volume is swept; another volume is kept */
	assert_int_equal(vm_volume_scratch(c, "kcanary-r9-p1-beef-scratch.img", 1 << 20, &sp, &err), 0);
	free(sp);
	sp = NULL;
	size_t swept = 0;
	assert_int_equal(vm_volume_sweep(c, &swept, &err), 0);
	assert_int_equal(swept, 1);
	assert_int_equal(vm_volume_sweep(c, &swept, &err), 0);
	assert_int_equal(swept, 0);
	assert_int_equal(vm_volume_scratch(c, "unit-scratch.img", 1 << 20, &sp, &err), 0);
	assert_int_equal(vm_volume_delete(c, "unit-scratch.img", &err), 0);
	assert_int_equal(vm_volume_delete(c, "unit-scratch.img", &err), 0);
	vm_conn_close(c);
	free(f);
	free(p1);
	free(p2);
	free(sp);
	buf_release(&err);
}

static void test_conn_refused_says_how(void **state)
{
	struct vm_conn *c = NULL;
	struct buf err = BUF_INIT;
	int r;

	(void)state;
	r = vm_conn_open(&c, "qemu+unix:///system?socket=/nonexistent/kc.sock", &err);
	assert_int_equal(r, -ECONNREFUSED);
	assert_null(c);
	assert_non_null(strstr(buf_str(&err), "cannot connect to libvirt at"));
	assert_non_null(strstr(buf_str(&err), "tools/libvirtd-up.sh"));
	buf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xml_tcg_golden),
		cmocka_unit_test(test_xml_kvm_golden),
		cmocka_unit_test(test_xml_rootfs_golden),
		cmocka_unit_test(test_xml_hostfs_golden),
		cmocka_unit_test(test_xml_escapes_and_checks),
		cmocka_unit_test_setup_teardown(test_accel_probe, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_lifecycle_events, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_volumes, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test(test_conn_refused_says_how),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
