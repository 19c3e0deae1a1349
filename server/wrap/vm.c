/* vm.c - the libvirt wrapper (see vm.h): the only file that includes
 * libvirt. Turns libvirt errors into -errno plus one message, runs the
 * event loop on its own thread, and queues lifecycle events per domain. */
#define LOG_MODULE "vm"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "log.h"
#include "util.h"
#include "error.h"
#include "hash.h"
#include "wrap/vm.h"
#include "wrap/vm_fault.h"

const char vm_tcg_warning[] =
	"guests run under TCG (software emulation): timings are not performance numbers for this host";

struct vm_domain {
	struct vm_conn *conn;
	virDomainPtr dom;
	char *name;
	int pipe[2];
	bool running;             /* started running although asked paused (test driver) */
	bool start_paused;        /* the pause of VM_START_PAUSED and its resume are not
				   * events to the caller (guarded by the conn's lock) */
	struct vm_domain *next;
};

struct vm_conn {
	virConnectPtr c;
	int refs;                 /* the owner, and the event callback while registered */
	int cb_id;
	bool close_cb;
	bool test;                /* libvirt's test driver (test:///...): no streams, no upload */
	pthread_mutex_t *host_lock; /* the storage lock of this URI's host (host_lock_for()) */
	char *uri;                /* as opened */
	pthread_mutex_t lock;     /* guards doms (the event thread reads it) */
	struct vm_domain *doms;
};

/* libvirt's last error on this thread, read at once. */
static const char *virt_msg(void)
{
	const char *m = virGetLastErrorMessage();
	return m ? m : "unknown libvirt error";
}

const char *vm_default_uri(void)
{
	const char *u = getenv("KCANARY_LIBVIRT_URI");
	return u && *u ? u : "qemu:///system";
}

/* ---- accelerator ---- */

const char *vm_accel_name(enum vm_accel accel)
{
	return accel == VM_ACCEL_KVM ? "kvm" : "tcg";
}

static char *rooted(const char *root, const char *path)
{
	return xasprintf("%s%s", root ? root : "", path);
}

static bool cpu_has_virt(const char *root)
{
	char *path = rooted(root, "/proc/cpuinfo"), *text = NULL, *line, *save = NULL;
	bool found = false;

	if (read_file(&text, NULL, path, 16 << 20) == 0) {
		for (line = strtok_r(text, "\n", &save); line && !found;
		     line = strtok_r(NULL, "\n", &save)) {
			if (strncmp(line, "flags", 5))
				continue;
			found = strstr(line, " vmx") || strstr(line, " svm");
		}
	}
	free(text);
	free(path);
	return found;
}

void vm_accel_probe(struct vm_accel_info *out, const char *root)
{
	const char *force = getenv("KCANARY_ACCEL");
	char *kvm = rooted(root, "/dev/kvm"), *pvm = rooted(root, "/sys/module/kvm_pvm");
	int fd;

	memset(out, 0, sizeof(*out));
	out->accel = VM_ACCEL_TCG;
	if (force && (!strcmp(force, "kvm") || !strcmp(force, "tcg"))) {
		out->accel = strcmp(force, "kvm") ? VM_ACCEL_TCG : VM_ACCEL_KVM;
		snprintf(out->why, sizeof(out->why), "KCANARY_ACCEL=%s", force);
	} else if (access(kvm, F_OK)) {
		snprintf(out->why, sizeof(out->why), "no %s: no KVM on this host", kvm);
	} else if (access(pvm, F_OK) == 0) {
		snprintf(out->why, sizeof(out->why),
			 "%s is PVM (kvm_pvm), a software hypervisor that cannot run a stock kernel",
			 kvm);
	} else if (!cpu_has_virt(root)) {
		snprintf(out->why, sizeof(out->why),
			 "no vmx or svm flag in /proc/cpuinfo: %s is not hardware KVM", kvm);
	} else if ((fd = open(kvm, O_RDWR | O_CLOEXEC)) < 0) {
		snprintf(out->why, sizeof(out->why), "cannot open %s: %s", kvm, strerror(errno));
	} else {
		close(fd);
		out->accel = VM_ACCEL_KVM;
		snprintf(out->why, sizeof(out->why), "hardware KVM (%s, vmx/svm)", kvm);
	}
	free(kvm);
	free(pvm);
}

/* Does the <host> section of a capabilities XML list CPU feature name
 * (libvirt writes them as <feature name='vmx'/>)? */
static bool caps_host_feature(const char *caps, const char *name)
{
	const char *h = strstr(caps, "<host>"), *end = h ? strstr(h, "</host>") : NULL;
	char *want = xasprintf("<feature name='%s'/>", name);
	const char *f = h ? strstr(h, want) : NULL;

	free(want);
	return f && (!end || f < end);
}

bool vm_uri_is_local(const char *uri)
{
	const char *sep = strstr(uri ? uri : (uri = vm_default_uri()), "://");

	/* no host between "://" and the path: a daemon on this machine's socket */
	return sep && sep[3] == '/';
}

void vm_accel_from_caps(struct vm_accel_info *out, const char *caps, bool local,
			const char *root)
{
	const char *force = getenv("KCANARY_ACCEL");

	memset(out, 0, sizeof(*out));
	out->accel = VM_ACCEL_TCG;
	if (force && (!strcmp(force, "kvm") || !strcmp(force, "tcg"))) {
		vm_accel_probe(out, root);
	} else if (!caps || !strstr(caps, "<domain type='kvm'")) {
		snprintf(out->why, sizeof(out->why), "the host's libvirt offers no kvm domain type");
	} else if (!caps_host_feature(caps, "vmx") && !caps_host_feature(caps, "svm")) {
		snprintf(out->why, sizeof(out->why),
			 "the host offers kvm domains but its CPU has no vmx or svm flag: its"
			 " /dev/kvm is not hardware KVM (PVM, a software hypervisor, cannot run"
			 " a stock kernel)");
	} else if (local) {
		/* this machine: the /dev/kvm, kvm_pvm and cpuinfo probe too */
		vm_accel_probe(out, root);
	} else {
		out->accel = VM_ACCEL_KVM;
		snprintf(out->why, sizeof(out->why), "hardware KVM (kvm domains, a vmx/svm host CPU)");
	}
}

/* ---- domain XML ---- */

static void xml_text(struct buf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': buf_puts(b, "&amp;"); break;
		case '<': buf_puts(b, "&lt;"); break;
		case '>': buf_puts(b, "&gt;"); break;
		case '\'': buf_puts(b, "&apos;"); break;
		case '"': buf_puts(b, "&quot;"); break;
		default: buf_append(b, s, 1);
		}
	}
}

static void xml_line(struct buf *b, const char *before, const char *value, const char *after)
{
	buf_puts(b, before);
	xml_text(b, value);
	buf_puts(b, after);
}

/* One virtio-blk disk: the scratch disk (vda, read-write, cache=none as a
 * measured run needs) or a read-only one (a root filesystem image). */
static void xml_disk(struct buf *b, const char *path, const char *dev, bool readonly)
{
	buf_puts(b, "    <disk type='file' device='disk'>\n");
	buf_puts(b, readonly ? "      <driver name='qemu' type='raw'/>\n" :
		 "      <driver name='qemu' type='raw' cache='none' io='native'/>\n");
	xml_line(b, "      <source file='", path, "'/>\n");
	xml_line(b, "      <target dev='", dev, "' bus='virtio'/>\n");
	if (readonly)
		buf_puts(b, "      <readonly/>\n");
	buf_puts(b, "    </disk>\n");
}

/* The console and the agent's channel. Neither names a path on the
 * coordinator: the serial console is a pty on the host that
 * vm_domain_open_console() reads, and the channel is a unix socket whose
 * path libvirt picks on the host (under its channel directory), read with
 * vm_domain_open_channel(). Both arrive as libvirt streams, so they work
 * over every transport. */
static void xml_streams(struct buf *b, const char *channel_name)
{
	buf_puts(b, "    <serial type='pty'>\n"
		 "      <target port='0'/>\n"
		 "    </serial>\n"
		 "    <console type='pty'>\n"
		 "      <target type='serial' port='0'/>\n"
		 "    </console>\n"
		 "    <channel type='unix'>\n"
		 "      <source mode='bind'/>\n");
	xml_line(b, "      <target type='virtio' name='", channel_name, "'/>\n");
	buf_puts(b, "    </channel>\n");
}

int vm_domain_xml(char **out, const struct vm_spec *s, struct buf *err)
{
	struct buf b = BUF_INIT;
	const struct { const char *name, *value; } req[] = {
		{ "name", s->name }, { "kernel", s->kernel }, { "initrd", s->initrd },
		{ "cmdline", s->cmdline }, { "disk_path", s->disk_path },
		{ "channel_name", s->channel_name },
	};
	bool kvm = s->accel == VM_ACCEL_KVM;

	for (size_t i = 0; i < sizeof(req) / sizeof(req[0]); i++)
		if (!req[i].value || !*req[i].value)
			return err_setf(err, -EINVAL, "domain spec has no %s", req[i].name);
	if (!s->vcpus || !s->memory_mib)
		return err_setf(err, -EINVAL, "domain spec needs vcpus and memory (got %u, %llu MiB)",
			    s->vcpus, (unsigned long long)s->memory_mib);
	buf_printf(&b, "<domain type='%s'>\n", kvm ? "kvm" : "qemu");
	xml_line(&b, "  <name>", s->name, "</name>\n");
	buf_printf(&b, "  <memory unit='MiB'>%llu</memory>\n", (unsigned long long)s->memory_mib);
	if (s->hostfs_socket && *s->hostfs_socket)
		buf_puts(&b, "  <memoryBacking>\n    <source type='memfd'/>\n"
			 "    <access mode='shared'/>\n  </memoryBacking>\n");
	buf_printf(&b, "  <vcpu placement='static'>%u</vcpu>\n", s->vcpus);
	buf_puts(&b, "  <os>\n    <type arch='x86_64' machine='pc'>hvm</type>\n");
	xml_line(&b, "    <kernel>", s->kernel, "</kernel>\n");
	xml_line(&b, "    <initrd>", s->initrd, "</initrd>\n");
	xml_line(&b, "    <cmdline>", s->cmdline, "</cmdline>\n");
	buf_puts(&b, "  </os>\n  <features>\n    <acpi/>\n  </features>\n");
	/* TCG: QEMU's "max" model (libvirt mode 'maximum'), since the default
	 * qemu64 lacks SSE4.2 and friends that a stock kernel uses. */
	buf_printf(&b, "  <cpu mode='%s' check='none'/>\n",
		   kvm ? "host-passthrough" : "maximum");
	buf_puts(&b, "  <clock offset='utc'/>\n"
		 "  <on_poweroff>destroy</on_poweroff>\n"
		 "  <on_reboot>destroy</on_reboot>\n"
		 "  <on_crash>destroy</on_crash>\n"
		 "  <devices>\n");
	xml_disk(&b, s->disk_path, "vda", false);
	if (s->rootfs_path && *s->rootfs_path)
		xml_disk(&b, s->rootfs_path, "vdb", true);
	if (s->hostfs_socket && *s->hostfs_socket) {
		buf_puts(&b, "    <filesystem type='mount' accessmode='passthrough'>\n"
			 "      <driver type='virtiofs' queue='1024'/>\n");
		xml_line(&b, "      <source socket='", s->hostfs_socket, "'/>\n");
		buf_puts(&b, "      <target dir='" VM_HOSTFS_TAG "'/>\n    </filesystem>\n");
	}
	xml_streams(&b, s->channel_name);
	buf_puts(&b, "    <controller type='usb' model='none'/>\n"
		 "    <memballoon model='none'/>\n"
		 "  </devices>\n"
		 "</domain>\n");
	*out = buf_detach(&b);
	return 0;
}

/* ---- event loop ---- */

static pthread_once_t event_once = PTHREAD_ONCE_INIT;
static int event_rc;

/* Did the last call fail on flags the driver does not take? */
static bool unsupported_flags(void)
{
	virErrorPtr e = virGetLastError();

	return e && (e->code == VIR_ERR_INVALID_ARG || e->code == VIR_ERR_NO_SUPPORT ||
		     e->code == VIR_ERR_OPERATION_UNSUPPORTED ||
		     e->code == VIR_ERR_ARGUMENT_UNSUPPORTED);
}

static void virt_error_log(void *opaque, virErrorPtr e)
{
	(void)opaque;
	/* Errors reach callers through virGetLastErrorMessage(); libvirt
	 * would otherwise print each one to stderr as well. */
	log_debug("libvirt: %s", e && e->message ? e->message : "?");
}

static void *event_thread(void *arg)
{
	(void)arg;
	for (;;)
		if (virEventRunDefaultImpl() < 0)
			log_warn("libvirt event loop: %s", virt_msg());
	return NULL;
}

static void event_init(void)
{
	pthread_t t;

	virSetErrorFunc(NULL, virt_error_log);
	if (virInitialize() < 0 || virEventRegisterDefaultImpl() < 0) {
		event_rc = -EIO;
		return;
	}
	if (pthread_create(&t, NULL, event_thread, NULL)) {
		event_rc = -EAGAIN;
		return;
	}
	pthread_detach(t);
}

static void post(struct vm_domain *d, enum vm_event_kind kind, int detail)
{
	struct vm_event ev = { kind, detail };

	if (write(d->pipe[1], &ev, sizeof(ev)) != (ssize_t)sizeof(ev))
		log_warn("domain '%s': event queue full, event %d dropped", d->name, kind);
}

static int lifecycle_cb(virConnectPtr c, virDomainPtr dom, int event, int detail,
			void *opaque)
{
	struct vm_conn *vc = opaque;
	const char *name = virDomainGetName(dom);
	enum vm_event_kind kind;

	(void)c;
	switch (event) {
	case VIR_DOMAIN_EVENT_STARTED: kind = VM_EV_STARTED; break;
	case VIR_DOMAIN_EVENT_SUSPENDED: kind = VM_EV_SUSPENDED; break;
	case VIR_DOMAIN_EVENT_RESUMED: kind = VM_EV_RESUMED; break;
	case VIR_DOMAIN_EVENT_STOPPED: kind = VM_EV_STOPPED; break;
	case VIR_DOMAIN_EVENT_CRASHED: kind = VM_EV_STOPPED; break;
	default: kind = VM_EV_OTHER;
	}
	pthread_mutex_lock(&vc->lock);
	for (struct vm_domain *d = vc->doms; d && name; d = d->next) {
		if (strcmp(d->name, name))
			continue;
		if (d->start_paused && kind == VM_EV_SUSPENDED)
			continue;
		if (d->start_paused && kind == VM_EV_RESUMED) {
			d->start_paused = false;
			continue;
		}
		post(d, kind, detail);
	}
	pthread_mutex_unlock(&vc->lock);
	return 0;
}

static void close_cb(virConnectPtr c, int reason, void *opaque)
{
	struct vm_conn *vc = opaque;

	(void)c;
	log_warn("libvirt connection closed (reason %d)", reason);
	pthread_mutex_lock(&vc->lock);
	for (struct vm_domain *d = vc->doms; d; d = d->next)
		post(d, VM_EV_CONN_LOST, reason);
	pthread_mutex_unlock(&vc->lock);
}

/* ---- connection ---- */

/* The lifecycle callback may be running on the event thread while the
 * owner closes the connection: libvirt calls cb_free once it never will
 * again, and the last reference frees the struct. */
static void conn_unref(struct vm_conn *c)
{
	if (__atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		pthread_mutex_destroy(&c->lock);
		free(c->uri);
		free(c);
	}
}

/* One storage lock per host URI: what the pool and its volumes are changed
 * under (a lookup-then-create of one volume name must not race another
 * thread's), so a host that hangs mid-upload holds up only its own runs.
 * The table only grows: one entry per host a process ever talked to. */
struct host_lock {
	char *uri;
	pthread_mutex_t m;
	struct host_lock *next;
};

static pthread_mutex_t host_locks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct host_lock *host_locks;

static pthread_mutex_t *host_lock_for(const char *uri)
{
	struct host_lock *h;

	pthread_mutex_lock(&host_locks_lock);
	for (h = host_locks; h && strcmp(h->uri, uri); h = h->next)
		;
	if (!h) {
		h = xcalloc(1, sizeof(*h));
		h->uri = xstrdup(uri);
		pthread_mutex_init(&h->m, NULL);
		h->next = host_locks;
		host_locks = h;
	}
	pthread_mutex_unlock(&host_locks_lock);
	return &h->m;
}

static void cb_free(void *opaque)
{
	conn_unref(opaque);
}

int vm_conn_open(struct vm_conn **out, const char *uri, struct buf *err)
{
	struct vm_conn *c;

	pthread_once(&event_once, event_init);
	if (event_rc)
		return err_setf(err, event_rc, "cannot start libvirt's event loop: %s",
			    virt_msg());
	if (!uri)
		uri = vm_default_uri();
	c = xcalloc(1, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	c->refs = 1;
	c->cb_id = -1;
	c->host_lock = host_lock_for(uri);
	c->uri = xstrdup(uri);
	c->c = virConnectOpen(uri);
	if (!c->c) {
		virErrorPtr e = virGetLastError();
		bool refused = e && (e->code == VIR_ERR_SYSTEM_ERROR || e->code == VIR_ERR_NO_CONNECT);
		int r = err_setf(err, refused ? -ECONNREFUSED : -EIO,
			     "cannot connect to libvirt at '%s': %s%s", uri, virt_msg(),
			     refused ? "\nhint: start a daemon with 'sudo tools/libvirtd-up.sh' "
				       "(docs/guests.md)" : "");
		pthread_mutex_destroy(&c->lock);
		free(c->uri);
		free(c);
		return r;
	}
	{
		const char *type = virConnectGetType(c->c);
		c->test = type && !strcasecmp(type, "TEST");
	}
	/* Keepalive lets a dead daemon be noticed (close callback). */
	virConnectSetKeepAlive(c->c, 5, 3);
	__atomic_add_fetch(&c->refs, 1, __ATOMIC_ACQ_REL);
	c->cb_id = virConnectDomainEventRegisterAny(c->c, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
						    VIR_DOMAIN_EVENT_CALLBACK(lifecycle_cb), c, cb_free);
	if (c->cb_id < 0) {
		__atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL);
		int r = err_setf(err, -EIO, "cannot subscribe to domain events at '%s': %s",
			     uri, virt_msg());
		vm_conn_close(c);
		return r;
	}
	/* No free callback: libvirt runs the close callback under the lock
	 * that virConnectUnregisterCloseCallback() takes, so once that returns
	 * it is not running (and it does not call a free callback there). */
	c->close_cb = virConnectRegisterCloseCallback(c->c, close_cb, c, NULL) == 0;
	*out = c;
	return 0;
}

void vm_conn_close(struct vm_conn *c)
{
	if (!c)
		return;
	if (c->cb_id >= 0)
		virConnectDomainEventDeregisterAny(c->c, c->cb_id);
	if (c->close_cb)
		virConnectUnregisterCloseCallback(c->c, close_cb);
	virConnectClose(c->c);
	conn_unref(c);
}

int vm_conn_driver(struct vm_conn *c, char *name, size_t name_size,
		   bool *has_qemu, bool *has_kvm, struct buf *err)
{
	const char *type = virConnectGetType(c->c);
	char *caps;

	if (!type)
		return err_setf(err, -EIO, "cannot ask libvirt for its driver: %s", virt_msg());
	snprintf(name, name_size, "%s", type);
	caps = virConnectGetCapabilities(c->c);
	if (!caps)
		return err_setf(err, -EIO, "cannot read libvirt's capabilities: %s", virt_msg());
	*has_qemu = strstr(caps, "<domain type='qemu'") != NULL ||
		    strstr(caps, "<domain type='test'") != NULL;
	*has_kvm = strstr(caps, "<domain type='kvm'") != NULL;
	free(caps);
	return 0;
}

int vm_accel_probe_host(struct vm_accel_info *out, struct vm_conn *c, struct buf *err)
{
	char *caps = virConnectGetCapabilities(c->c);

	if (!caps) {
		vm_accel_from_caps(out, NULL, false, NULL);
		return err_setf(err, -EIO, "cannot read the capabilities of '%s': %s", c->uri,
				virt_msg());
	}
	vm_accel_from_caps(out, caps, vm_uri_is_local(c->uri), NULL);
	free(caps);
	return 0;
}

void vm_event_describe(char *out, size_t size, const struct vm_event *ev)
{
	static const char *const suspended[] = {
		"paused", "paused for migration", "paused by a disk I/O error",
		"paused by a watchdog", "restored paused", "paused from a snapshot",
		"paused after a libvirt API error", "paused for post-copy",
		"paused after failed post-copy",
	};
	static const char *const stopped[] = {
		"shut down", "destroyed", "crashed", "migrated", "saved",
		"failed (the emulator or libvirt failed)", "stopped for a snapshot",
	};
	int d = ev->detail;

	switch (ev->kind) {
	case VM_EV_STARTED: snprintf(out, size, "started"); break;
	case VM_EV_RESUMED: snprintf(out, size, "resumed"); break;
	case VM_EV_SUSPENDED:
		snprintf(out, size, "suspended (%s)",
			 d >= 0 && d < (int)(sizeof(suspended) / sizeof(*suspended)) ?
			 suspended[d] : "paused");
		break;
	case VM_EV_STOPPED:
		snprintf(out, size, "stopped (%s)",
			 d >= 0 && d < (int)(sizeof(stopped) / sizeof(*stopped)) ?
			 stopped[d] : "stopped");
		break;
	case VM_EV_CONN_LOST: snprintf(out, size, "libvirt connection lost"); break;
	default: snprintf(out, size, "event %d", d);
	}
}

/* ---- domains ---- */

static void conn_unlink(struct vm_conn *c, struct vm_domain *d)
{
	pthread_mutex_lock(&c->lock);
	for (struct vm_domain **p = &c->doms; *p; p = &(*p)->next) {
		if (*p == d) {
			*p = d->next;
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
}

static struct vm_domain *domain_new(struct vm_conn *c, const char *name)
{
	struct vm_domain *d = xcalloc(1, sizeof(*d));

	d->conn = c;
	d->name = xstrdup(name);
	if (pipe2(d->pipe, O_CLOEXEC | O_NONBLOCK)) {
		free(d->name);
		free(d);
		return NULL;
	}
	pthread_mutex_lock(&c->lock);
	d->next = c->doms;
	c->doms = d;
	pthread_mutex_unlock(&c->lock);
	return d;
}

int vm_domain_start(struct vm_domain **out, struct vm_conn *c, const char *name,
		    const char *xml, unsigned flags, struct buf *err)
{
	struct vm_domain *d = domain_new(c, name);
	unsigned vflags = flags & VM_START_PAUSED ? VIR_DOMAIN_START_PAUSED : 0;
	int r;

	if (!d)
		return err_setf(err, -errno, "cannot make an event pipe: %s", strerror(errno));
	pthread_mutex_lock(&c->lock);
	d->start_paused = vflags != 0;
	pthread_mutex_unlock(&c->lock);
	d->dom = virDomainCreateXML(c->c, xml, vflags | VIR_DOMAIN_START_AUTODESTROY);
	if (!d->dom && unsupported_flags()) {
		log_debug("driver refuses autodestroy (%s); creating without", virt_msg());
		d->dom = virDomainCreateXML(c->c, xml, vflags);
	}
	if (!d->dom && vflags && c->test && unsupported_flags()) {
		/* the test driver cannot start paused; its guests run nothing */
		d->dom = virDomainCreateXML(c->c, xml, 0);
		d->running = true;
		pthread_mutex_lock(&c->lock);
		d->start_paused = false;
		pthread_mutex_unlock(&c->lock);
	}
	if (!d->dom) {
		r = err_setf(err, vm_fault_last_is_host() ? -EHOSTDOWN : -EIO,
			     "cannot start guest '%s': %s", name, virt_msg());
		vm_domain_free(d);
		return r;
	}
	*out = d;
	return 0;
}

int vm_domain_lookup(struct vm_domain **out, struct vm_conn *c, const char *name,
		     struct buf *err)
{
	struct vm_domain *d = domain_new(c, name);

	if (!d)
		return err_setf(err, -errno, "cannot make an event pipe: %s", strerror(errno));
	d->dom = virDomainLookupByName(c->c, name);
	if (!d->dom) {
		vm_domain_free(d);
		return err_setf(err, -ENOENT, "no guest '%s': %s", name, virt_msg());
	}
	*out = d;
	return 0;
}

int vm_domain_event_fd(const struct vm_domain *d)
{
	return d->pipe[0];
}

int vm_domain_next_event(struct vm_domain *d, struct vm_event *ev)
{
	ssize_t n = read(d->pipe[0], ev, sizeof(*ev));

	if (n == (ssize_t)sizeof(*ev))
		return 0;
	return -EAGAIN;
}

bool vm_domain_is_active(struct vm_domain *d)
{
	return d->dom && virDomainIsActive(d->dom) == 1;
}

void vm_domain_pause_reason(struct vm_domain *d, char *out, size_t size)
{
	static const char *const reasons[] = {
		"unknown", "user", "migration", "save", "dump", "I/O error", "watchdog",
		"from snapshot", "shutting down", "snapshot", "crashed", "starting up",
		"post-copy", "post-copy failed", "API error",
	};
	int state = 0, reason = 0;

	out[0] = '\0';
	if (!d->dom || virDomainGetState(d->dom, &state, &reason, 0) < 0 ||
	    state != VIR_DOMAIN_PAUSED)
		return;
	snprintf(out, size, "%s", reason >= 0 && reason < (int)(sizeof(reasons) / sizeof(*reasons)) ?
		 reasons[reason] : "unknown");
}

int vm_domain_suspend(struct vm_domain *d, struct buf *err)
{
	if (virDomainSuspend(d->dom) < 0)
		return err_setf(err, -EIO, "cannot pause guest '%s': %s", d->name, virt_msg());
	return 0;
}

int vm_domain_destroy(struct vm_domain *d, struct buf *err)
{
	virErrorPtr e;

	if (!d || !d->dom)
		return 0;
	if (virDomainDestroy(d->dom) == 0)
		return 0;
	e = virGetLastError();
	/* Gone already: a transient domain that stopped no longer exists. */
	if (e && (e->code == VIR_ERR_NO_DOMAIN || e->code == VIR_ERR_OPERATION_INVALID))
		return 0;
	if (!vm_domain_is_active(d))
		return 0;
	return err_setf(err, -EIO, "cannot destroy guest '%s': %s", d->name, virt_msg());
}

const char *vm_domain_name(const struct vm_domain *d)
{
	return d->name;
}

void vm_domain_free(struct vm_domain *d)
{
	if (!d)
		return;
	conn_unlink(d->conn, d);
	if (d->dom)
		virDomainFree(d->dom);
	close(d->pipe[0]);
	close(d->pipe[1]);
	free(d->name);
	free(d);
}

int vm_domain_resume(struct vm_domain *d, struct buf *err)
{
	if (!d->running && virDomainResume(d->dom) < 0)
		return err_setf(err, -EIO, "cannot resume guest '%s': %s", d->name, virt_msg());
	return 0;
}

/* ---- streams ---- */

struct vm_stream {
	virStreamPtr st;
	bool dead;                /* the driver cannot stream (test driver): always at EOF */
};

static bool no_support(void)
{
	virErrorPtr e = virGetLastError();

	return e && (e->code == VIR_ERR_NO_SUPPORT || e->code == VIR_ERR_OPERATION_UNSUPPORTED);
}

static int stream_open(struct vm_stream **out, struct vm_domain *d, const char *what,
		       const char *dev, struct buf *err)
{
	struct vm_stream *s = xcalloc(1, sizeof(*s));
	int rc;

	s->st = virStreamNew(d->conn->c, VIR_STREAM_NONBLOCK);
	if (!s->st) {
		free(s);
		return err_setf(err, -EIO, "cannot make a stream for guest '%s': %s", d->name,
				virt_msg());
	}
	rc = dev ? virDomainOpenChannel(d->dom, dev, s->st, VIR_DOMAIN_CHANNEL_FORCE) :
		   virDomainOpenConsole(d->dom, NULL, s->st, VIR_DOMAIN_CONSOLE_FORCE);
	if (rc < 0 && no_support() && d->conn->test) {
		/* libvirt's test driver streams nothing: a guest that says nothing */
		s->dead = true;
	} else if (rc < 0) {
		rc = err_setf(err, vm_fault_last_is_host() ? -EHOSTDOWN : -EIO,
			      "cannot open the %s of guest '%s': %s", what, d->name, virt_msg());
		virStreamFree(s->st);
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int vm_domain_open_channel(struct vm_stream **out, struct vm_domain *d, const char *name,
			   struct buf *err)
{
	return stream_open(out, d, "channel", name, err);
}

int vm_domain_open_console(struct vm_stream **out, struct vm_domain *d, struct buf *err)
{
	return stream_open(out, d, "console", NULL, err);
}

ssize_t vm_stream_read(struct vm_stream *s, char *buf, size_t size)
{
	int n;

	if (s->dead)
		return 0;
	n = virStreamRecv(s->st, buf, size);
	if (n >= 0)
		return n;
	if (n == -2)
		return -EAGAIN;
	log_debug("stream: %s", virt_msg());
	return -EIO;
}

void vm_stream_close(struct vm_stream *s)
{
	if (!s)
		return;
	if (!s->dead && virStreamAbort(s->st) < 0)
		log_debug("stream abort: %s", virt_msg());
	virStreamFree(s->st);
	free(s);
}

/* ---- storage ---- */

static uint64_t uploaded_total;

uint64_t vm_bytes_uploaded(void)
{
	return __atomic_load_n(&uploaded_total, __ATOMIC_RELAXED);
}

int vm_file_key(char *out, size_t size, const char *path, const char *suffix)
{
	char hex[HASH_HEX_SIZE];
	struct stat st;
	int r;

	if ((r = hash_file_hex(hex, path, NULL)))
		return r;
	if (stat(path, &st))
		return -errno;
	snprintf(out, size, "kc-%.16s-%llu%s", hex, (unsigned long long)st.st_size,
		 suffix ? suffix : "");
	return 0;
}

static virStoragePoolPtr pool_get(struct vm_conn *c, struct buf *err)
{
	virStoragePoolPtr p = virStoragePoolLookupByName(c->c, VM_POOL_NAME);

	if (!p)
		err_setf(err, -EIO, "no storage pool '%s' on the host: %s (kcanary lab check "
			 "makes it)", VM_POOL_NAME, virt_msg());
	return p;
}

int vm_pool_ensure(struct vm_conn *c, struct buf *err)
{
	virStoragePoolPtr p;
	int r = 0;

	pthread_mutex_lock(c->host_lock);
	p = virStoragePoolLookupByName(c->c, VM_POOL_NAME);
	if (!p) {
		const char *xml = "<pool type='dir'><name>" VM_POOL_NAME "</name>"
				  "<target><path>" VM_POOL_DIR "</path></target></pool>";

		p = virStoragePoolDefineXML(c->c, xml, 0);
		if (!p) {
			r = err_setf(err, -EIO, "cannot define storage pool '%s' at %s on the host: %s",
				     VM_POOL_NAME, VM_POOL_DIR, virt_msg());
			goto out;
		}
		virStoragePoolSetAutostart(p, 1);
	}
	/* building a dir pool makes its directory; one that exists is kept */
	if (virStoragePoolIsActive(p) != 1 && virStoragePoolBuild(p, 0) < 0)
		log_debug("pool build: %s", virt_msg());
	if (virStoragePoolIsActive(p) != 1 && virStoragePoolCreate(p, 0) < 0)
		r = err_setf(err, -EIO, "cannot start storage pool '%s' on the host: %s",
			     VM_POOL_NAME, virt_msg());
out:
	if (p)
		virStoragePoolFree(p);
	pthread_mutex_unlock(c->host_lock);
	return r;
}

static char *vol_path(virStorageVolPtr v, struct buf *err)
{
	char *p = virStorageVolGetPath(v);

	if (!p)
		err_setf(err, -EIO, "cannot ask for volume '%s''s path: %s", virStorageVolGetName(v),
			 virt_msg());
	return p;
}

static void vol_delete_name(virStoragePoolPtr p, const char *name)
{
	virStorageVolPtr v = virStorageVolLookupByName(p, name);

	if (!v)
		return;
	if (virStorageVolDelete(v, 0) < 0)
		log_warn("cannot delete volume '%s': %s", name, virt_msg());
	virStorageVolFree(v);
}

static virStorageVolPtr vol_create(virStoragePoolPtr p, const char *name, uint64_t bytes,
				   uint64_t alloc, virStorageVolPtr from)
{
	struct buf x = BUF_INIT;
	virStorageVolPtr v;

	xml_line(&x, "<volume><name>", name, "</name>");
	buf_printf(&x, "<capacity unit='bytes'>%llu</capacity>"
		   "<allocation unit='bytes'>%llu</allocation>"
		   "<target><format type='raw'/></target></volume>",
		   (unsigned long long)bytes, (unsigned long long)alloc);
	v = from ? virStorageVolCreateXMLFrom(p, buf_str(&x), from, 0) :
		   virStorageVolCreateXML(p, buf_str(&x), 0);
	buf_release(&x);
	return v;
}

static int send_file(virStreamPtr st, char *data, size_t nbytes, void *opaque)
{
	(void)st;
	ssize_t n = read(*(int *)opaque, data, nbytes);

	return n < 0 ? -1 : (int)n;
}

/* Send the open file fd (local_path, for messages) to the new volume v
 * over a stream. */
static int upload_into(virStorageVolPtr v, int fd, const char *local_path, uint64_t size,
		       struct vm_conn *c, struct buf *err)
{
	virStreamPtr st = virStreamNew(c->c, 0);
	int r = 0;

	if (!st || virStorageVolUpload(v, st, 0, size, 0) < 0 ||
	    virStreamSendAll(st, send_file, &fd) < 0 || virStreamFinish(st) < 0) {
		r = err_setf(err, -EIO, "cannot upload '%s' to volume '%s' on the host: %s",
			     local_path, virStorageVolGetName(v), virt_msg());
		if (st)
			virStreamAbort(st);
	}
	if (st)
		virStreamFree(st);
	return r;
}

int vm_volume_upload(struct vm_conn *c, const char *name, const char *local_path,
		     char **path, uint64_t *sent_bytes, struct buf *err)
{
	virStoragePoolPtr p = NULL;
	virStorageVolPtr v = NULL, part = NULL;
	char *part_name = xasprintf("%s.part", name);
	struct stat sb;
	int r = 0, fd = -1;

	if (sent_bytes)
		*sent_bytes = 0;
	if (stat(local_path, &sb))
		return err_setf(err, -ENOENT, "cannot upload '%s': %s", local_path, strerror(errno));
	pthread_mutex_lock(c->host_lock);
	if (!(p = pool_get(c, err))) {
		r = -EIO;
		goto out;
	}
	virStoragePoolRefresh(p, 0);
	if ((v = virStorageVolLookupByName(p, name)))
		goto found;
	vol_delete_name(p, part_name);
	/* opened on the test driver too: a file that cannot be read fails there
	 * as it would on a real host */
	if ((fd = open(local_path, O_RDONLY | O_CLOEXEC)) < 0) {
		r = err_setf(err, -errno, "cannot open '%s': %s", local_path, strerror(errno));
		goto out;
	}
	part = vol_create(p, part_name, (uint64_t)sb.st_size, (uint64_t)sb.st_size, NULL);
	if (!part) {
		r = err_setf(err, -EIO, "cannot create volume '%s' on the host: %s", part_name,
			     virt_msg());
		goto out;
	}
	if (c->test) {
		log_debug("test driver: volume '%s' made without its bytes", name);
	} else if ((r = upload_into(part, fd, local_path, (uint64_t)sb.st_size, c, err))) {
		goto out;
	} else {
		__atomic_add_fetch(&uploaded_total, (uint64_t)sb.st_size, __ATOMIC_RELAXED);
		if (sent_bytes)
			*sent_bytes = (uint64_t)sb.st_size;
	}
	v = vol_create(p, name, (uint64_t)sb.st_size, (uint64_t)sb.st_size, part);
	if (!v) {
		r = err_setf(err, -EIO, "cannot copy volume '%s' to '%s' on the host: %s", part_name,
			     name, virt_msg());
		goto out;
	}
found:
	if (!(*path = vol_path(v, err)))
		r = -EIO;
out:
	if (part) {
		if (virStorageVolDelete(part, 0) < 0)
			log_warn("cannot delete volume '%s': %s", part_name, virt_msg());
		virStorageVolFree(part);
	}
	if (v)
		virStorageVolFree(v);
	if (p)
		virStoragePoolFree(p);
	if (fd >= 0)
		close(fd);
	pthread_mutex_unlock(c->host_lock);
	free(part_name);
	return r;
}

int vm_volume_scratch(struct vm_conn *c, const char *name, uint64_t bytes, char **path,
		      struct buf *err)
{
	virStoragePoolPtr p = pool_get(c, err);
	virStorageVolPtr v = NULL;
	int r = 0;

	if (!p)
		return -EIO;
	vol_delete_name(p, name);
	if (!(v = vol_create(p, name, bytes, 0, NULL)))
		r = err_setf(err, -EIO, "cannot create scratch volume '%s' (%llu bytes) on the host: %s",
			     name, (unsigned long long)bytes, virt_msg());
	else if (!(*path = vol_path(v, err)))
		r = -EIO;
	if (v)
		virStorageVolFree(v);
	virStoragePoolFree(p);
	return r;
}

bool vm_volume_exists(struct vm_conn *c, const char *name)
{
	virStoragePoolPtr p = virStoragePoolLookupByName(c->c, VM_POOL_NAME);
	virStorageVolPtr v;
	bool yes = false;

	if (!p)
		return false;
	/* a pool another process changed: its volumes as they are now */
	virStoragePoolRefresh(p, 0);
	if ((v = virStorageVolLookupByName(p, name))) {
		yes = true;
		virStorageVolFree(v);
	}
	virStoragePoolFree(p);
	return yes;
}

int vm_volume_delete(struct vm_conn *c, const char *name, struct buf *err)
{
	virStoragePoolPtr p = virStoragePoolLookupByName(c->c, VM_POOL_NAME);
	virStorageVolPtr v;
	int r = 0;

	if (!p)
		return 0;
	if ((v = virStorageVolLookupByName(p, name))) {
		if (virStorageVolDelete(v, 0) < 0)
			r = err_setf(err, -EIO, "cannot delete volume '%s' on the host: %s", name,
				     virt_msg());
		virStorageVolFree(v);
	}
	virStoragePoolFree(p);
	return r;
}

int vm_volume_sweep(struct vm_conn *c, size_t *n_deleted, struct buf *err)
{
	static const char suffix[] = "-scratch.img";
	virStoragePoolPtr p = pool_get(c, err);
	virStorageVolPtr *vols = NULL;
	size_t deleted = 0;
	int n;

	if (n_deleted)
		*n_deleted = 0;
	if (!p)
		return -EIO;
	virStoragePoolRefresh(p, 0);
	n = virStoragePoolListAllVolumes(p, &vols, 0);
	if (n < 0) {
		virStoragePoolFree(p);
		return err_setf(err, -EIO, "cannot list the volumes of pool '%s': %s", VM_POOL_NAME,
				virt_msg());
	}
	for (int i = 0; i < n; i++) {
		const char *name = virStorageVolGetName(vols[i]);
		size_t len = name ? strlen(name) : 0;

		if (len > sizeof(suffix) - 1 && !strncmp(name, "kcanary-", 8) &&
		    !strcmp(name + len - (sizeof(suffix) - 1), suffix)) {
			char *dom_name = xstrndup(name, len - (sizeof(suffix) - 1));
			virDomainPtr d = virDomainLookupByName(c->c, dom_name);

			if (!d && virStorageVolDelete(vols[i], 0) == 0)
				deleted++;
			if (d)
				virDomainFree(d);
			free(dom_name);
		}
		virStorageVolFree(vols[i]);
	}
	free(vols);
	virStoragePoolFree(p);
	if (n_deleted)
		*n_deleted = deleted;
	return 0;
}

/* ---- a host ---- */

static void fmt_version(char *out, size_t size, unsigned long v)
{
	snprintf(out, size, "%lu.%lu.%lu", v / 1000000, v / 1000 % 1000, v % 1000);
}

int vm_host_info(struct vm_host_info *out, struct vm_conn *c, struct buf *err)
{
	virNodeInfo ni;
	unsigned long lv = 0, hv = 0;
	unsigned long long free_b;
	char *host;
	struct buf e = BUF_INIT;

	memset(out, 0, sizeof(*out));
	if (virNodeGetInfo(c->c, &ni) < 0)
		return err_setf(err, -EIO, "cannot ask the host for its CPUs and memory: %s",
				virt_msg());
	out->cpus = ni.cpus;
	out->memory_mib = ni.memory / 1024;
	free_b = virNodeGetFreeMemory(c->c);
	out->free_mib = free_b / (1024 * 1024);
	if ((host = virConnectGetHostname(c->c))) {
		snprintf(out->hostname, sizeof(out->hostname), "%s", host);
		free(host);
	}
	if (virConnectGetLibVersion(c->c, &lv) == 0)
		fmt_version(out->libvirt_version, sizeof(out->libvirt_version), lv);
	if (virConnectGetVersion(c->c, &hv) == 0)
		fmt_version(out->hv_version, sizeof(out->hv_version), hv);
	if (vm_conn_driver(c, out->driver, sizeof(out->driver), &out->has_qemu, &out->has_kvm, err))
		return -EIO;
	out->pool_ok = vm_pool_ensure(c, &e) == 0 && vm_volume_sweep(c, &out->swept, &e) == 0;
	snprintf(out->pool_why, sizeof(out->pool_why), "%s", buf_str(&e));
	buf_release(&e);
	return 0;
}

bool vm_conn_is_alive(struct vm_conn *c)
{
	return c && virConnectIsAlive(c->c) == 1;
}
