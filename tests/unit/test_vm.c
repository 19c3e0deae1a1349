/* test_vm.c - vm.c: domain XML against golden files, the accelerator
 * probe on fixture trees, and domain lifecycle events on libvirt's
 * test:///default driver (in-process, no daemon). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
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
#include "wrap/vm.h"
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

/* ---- the accelerator of a host, from its capabilities ---- */

static char *caps_fixture(const char *name)
{
	char *path = xasprintf("%s/%s", GOLDEN_DIR, name), *text = NULL;

	assert_int_equal(read_file(&text, NULL, path, 1 << 20), 0);
	free(path);
	return text;
}

/* caps-pvm.xml is `virsh capabilities` of this project's machines (PVM:
 * kvm domains offered, no vmx/svm on the host CPU); caps-kvm.xml the same
 * with the AMD-V flag a hardware-KVM host lists. */
static void test_accel_from_caps(void **state)
{
	struct tmpdir *td = *state;
	char *pvm = caps_fixture("caps-pvm.xml"), *kvm = caps_fixture("caps-kvm.xml");
	struct vm_accel_info ai;

	unsetenv("KCANARY_ACCEL");
	vm_accel_from_caps(&ai, pvm, false, NULL);
	assert_int_equal(ai.accel, VM_ACCEL_TCG);
	assert_non_null(strstr(ai.why, "no vmx or svm"));
	vm_accel_from_caps(&ai, kvm, false, NULL);
	assert_int_equal(ai.accel, VM_ACCEL_KVM);
	vm_accel_from_caps(&ai, NULL, false, NULL);
	assert_int_equal(ai.accel, VM_ACCEL_TCG);
	vm_accel_from_caps(&ai, "<capabilities><host><cpu><feature name='svm'/></cpu></host>"
			   "<guest><arch name='x86_64'><domain type='qemu'/></arch></guest>"
			   "</capabilities>", false, NULL);
	assert_int_equal(ai.accel, VM_ACCEL_TCG);
	assert_non_null(strstr(ai.why, "no kvm domain type"));
	/* a flag outside <host> is not the host CPU's */
	vm_accel_from_caps(&ai, "<capabilities><host><cpu><feature name='vme'/></cpu></host>"
			   "<guest><cpu><feature name='svm'/></cpu><arch name='x86_64'>"
			   "<domain type='kvm'/></arch></guest></capabilities>", false, NULL);
	assert_int_equal(ai.accel, VM_ACCEL_TCG);
	assert_non_null(strstr(ai.why, "no vmx or svm"));
	/* a local daemon: this machine's probe too (the fixture tree has
	 * kvm_pvm loaded although the CPU says svm) */
	put(td->path, "/dev/kvm", "");
	put(td->path, "/proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu svm sse4_2 avx2\n");
	vm_accel_from_caps(&ai, kvm, true, td->path);
	assert_int_equal(ai.accel, VM_ACCEL_KVM);
	put(td->path, "/sys/module/kvm_pvm/refcnt", "1\n");
	vm_accel_from_caps(&ai, kvm, true, td->path);
	assert_int_equal(ai.accel, VM_ACCEL_TCG);
	assert_non_null(strstr(ai.why, "PVM"));
	setenv("KCANARY_ACCEL", "kvm", 1);
	vm_accel_from_caps(&ai, pvm, false, NULL);
	assert_int_equal(ai.accel, VM_ACCEL_KVM);
	unsetenv("KCANARY_ACCEL");

	assert_true(vm_uri_is_local("qemu:///system"));
	assert_true(vm_uri_is_local("qemu+unix:///system?socket=/run/x"));
	unsetenv("KCANARY_LIBVIRT_URI");
	assert_true(vm_uri_is_local(NULL));               /* qemu:///system */
	setenv("KCANARY_LIBVIRT_URI", "qemu+ssh://root@kvm1/system", 1);
	assert_false(vm_uri_is_local(NULL));
	unsetenv("KCANARY_LIBVIRT_URI");
	assert_false(vm_uri_is_local("qemu+tcp://127.0.0.1:18350/system"));
	assert_false(vm_uri_is_local("qemu+ssh://root@kvm1/system"));
	free(pvm);
	free(kvm);
}

/* Over a connection: the test driver offers no kvm domain type. */
static void test_accel_probe_host(void **state)
{
	struct vm_conn *c = NULL;
	struct vm_accel_info ai;
	struct buf err = BUF_INIT;

	(void)state;
	unsetenv("KCANARY_ACCEL");
	assert_int_equal(vm_conn_open(&c, "test:///default", &err), 0);
	assert_int_equal(vm_accel_probe_host(&ai, c, &err), 0);
	assert_int_equal(ai.accel, VM_ACCEL_TCG);
	assert_non_null(strstr(ai.why, "no kvm domain type"));
	vm_conn_close(c);
	buf_release(&err);
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
	/* sha256 of "abc" (FIPS 180-2's test vector), its first 16 digits, then the size */
	assert_string_equal(k1, "kc-ba7816bf8f01cfea-3.kernel");
	assert_int_equal(vm_file_key(k2, sizeof(k2), "/nonexistent/k", NULL), -ENOENT);
	assert_int_equal(vm_conn_open(&c, "test:///default", &err), 0);
	assert_int_equal(vm_pool_ensure(c, &err), 0);
	assert_int_equal(vm_volume_upload(c, k1, f, &p1, NULL, &err), 0);
	assert_int_equal(vm_volume_upload(c, k1, f, &p2, NULL, &err), 0);
	assert_string_equal(p1, p2);
	assert_non_null(strstr(p1, "/kc-ba7816bf8f01cfea-3.kernel"));
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

/* An upload that hangs on one host (the local file is a FIFO nobody writes
 * yet: open() blocks inside vm_volume_upload(), as a stalled stream would)
 * holds up uploads to that host's URI only: one to another host goes
 * through at once, and a second one to the same host waits. */
struct upload {
	struct vm_conn *c;
	const char *name, *path;
	int rc;
	bool done;
	pthread_t t;
};

static void *upload_main(void *arg)
{
	struct upload *u = arg;
	char *p = NULL;

	u->rc = vm_volume_upload(u->c, u->name, u->path, &p, NULL, NULL);
	free(p);
	__atomic_store_n(&u->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static bool done_within(struct upload *u, double s)
{
	double until = clock_mono_s() + s;

	while (!__atomic_load_n(&u->done, __ATOMIC_ACQUIRE) && clock_mono_s() < until)
		usleep(10000);
	return __atomic_load_n(&u->done, __ATOMIC_ACQUIRE);
}

static void test_upload_lock_per_host(void **state)
{
	struct tmpdir *td = *state;
	char *node = xasprintf("%s/node.xml", td->path), *uri_b = xasprintf("test://%s", node);
	char *fifo = xasprintf("%s/fifo", td->path), *file = xasprintf("%s/kernel", td->path);
	struct vm_conn *a = NULL, *a2 = NULL, *b = NULL;
	struct upload hung = { .name = "kc-hung.kernel" }, other = { .name = "kc-other.kernel" };
	struct upload same = { .name = "kc-same.kernel" };
	struct buf err = BUF_INIT;
	bool other_done, same_done;
	int wfd;

	put(td->path, "/node.xml", "<node/>\n");   /* a second, empty test host */
	put(td->path, "/kernel", "abc");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(vm_conn_open(&a, "test:///default", &err), 0);
	assert_int_equal(vm_conn_open(&a2, "test:///default", &err), 0);
	assert_int_equal(vm_conn_open(&b, uri_b, &err), 0);
	assert_int_equal(vm_pool_ensure(a, &err), 0);
	assert_int_equal(vm_pool_ensure(b, &err), 0);
	vm_volume_delete(a, hung.name, NULL);
	vm_volume_delete(a2, same.name, NULL);
	vm_volume_delete(b, other.name, NULL);

	hung.c = a, hung.path = fifo;
	assert_int_equal(pthread_create(&hung.t, NULL, upload_main, &hung), 0);
	usleep(300000);                       /* it is in open() now */
	assert_false(__atomic_load_n(&hung.done, __ATOMIC_ACQUIRE));
	other.c = b, other.path = file;
	assert_int_equal(pthread_create(&other.t, NULL, upload_main, &other), 0);
	same.c = a2, same.path = file;
	assert_int_equal(pthread_create(&same.t, NULL, upload_main, &same), 0);
	other_done = done_within(&other, 5);
	same_done = done_within(&same, 0.5);
	/* let the hung one go: a writer opens and closes the FIFO */
	wfd = open(fifo, O_WRONLY);
	assert_true(wfd >= 0);
	close(wfd);
	pthread_join(hung.t, NULL);
	pthread_join(other.t, NULL);
	pthread_join(same.t, NULL);
	assert_true(other_done);              /* another host: not held up */
	assert_false(same_done);              /* the same host: waited its turn */
	assert_int_equal(hung.rc, 0);
	assert_int_equal(other.rc, 0);
	assert_int_equal(same.rc, 0);
	assert_true(vm_volume_exists(b, other.name));
	assert_false(vm_volume_exists(a, other.name));
	vm_conn_close(a);
	vm_conn_close(a2);
	vm_conn_close(b);
	free(node);
	free(uri_b);
	free(fifo);
	free(file);
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
		cmocka_unit_test_setup_teardown(test_accel_from_caps, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test(test_accel_probe_host),
		cmocka_unit_test_setup_teardown(test_upload_lock_per_host, tmpdir_setup,
						tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
