/* vm.h - guests through libvirt: accelerator probe, domain XML, transient
 * domains and their lifecycle events. vm.c is the only file that includes
 * libvirt; the runner (runner.c) drives one guest per run through this.
 *
 * Threads: the first vm_conn_open() registers libvirt's default event loop
 * and runs it on a background thread for the life of the process. Lifecycle
 * events for a domain are queued to that domain's event fd (a pipe), so the
 * caller can poll() it beside the guest's channel socket and a signal pipe.
 * A struct vm_conn and its domains belong to the thread that opened them.
 *
 * Errors: functions return 0 or a negative errno and write one message
 * (libvirt's, read at once, with what was being done) to err (error.h;
 * may be NULL). They do not log: the caller reports the error once.
 */
#ifndef KC_VM_H
#define KC_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util.h"

/* The default libvirt URI: $KCANARY_LIBVIRT_URI, else qemu:///system (the
 * system daemon; tools/libvirtd-up.sh starts one where none runs). */
const char *vm_default_uri(void);

/* ---- accelerator ---- */

enum vm_accel { VM_ACCEL_TCG = 0, VM_ACCEL_KVM = 1 };

struct vm_accel_info {
	enum vm_accel accel;
	char why[256];       /* one line: what was found */
};

/*
 * vm_accel_probe - hardware KVM or TCG. KVM needs /dev/kvm that opens
 * read-write, a vmx or svm flag in /proc/cpuinfo, and no kvm_pvm module
 * (PVM is a software hypervisor behind /dev/kvm that cannot run a stock
 * kernel: QEMU stops it with "emulation failure"). root is prepended to
 * those paths (NULL or "" for the real ones; tests use a fixture tree).
 * $KCANARY_ACCEL=kvm|tcg overrides the probe. Always succeeds.
 */
void vm_accel_probe(struct vm_accel_info *out, const char *root);

/*
 * vm_accel_from_caps - the accelerator of a host from its libvirt
 * capabilities XML (virConnectGetCapabilities; NULL: unknown, TCG): KVM
 * needs a kvm domain type offered and a vmx or svm flag on the host's CPU
 * (<host><cpu><feature name='vmx'/>: the remote form of the cpuinfo test,
 * which tells a PVM host, whose /dev/kvm libvirt offers as kvm, from
 * hardware KVM); with local (the daemon runs on this machine) the
 * vm_accel_probe(root) test must pass too (it sees kvm_pvm).
 * $KCANARY_ACCEL=kvm|tcg overrides. Always succeeds; why says what decided.
 */
void vm_accel_from_caps(struct vm_accel_info *out, const char *caps, bool local,
			const char *root);

/* Does uri name a daemon on this machine (no host part: "qemu:///system",
 * "qemu+unix:///system?socket=...", "test:///default")? NULL: the default
 * URI's (vm_default_uri()) answer. */
bool vm_uri_is_local(const char *uri);

/* "kvm" or "tcg", as stored in runs.accel. */
const char *vm_accel_name(enum vm_accel accel);

/* The one-line warning printed when guests run under TCG. */
extern const char vm_tcg_warning[];

/* ---- domain XML ---- */

/* The virtiofs tag of the host share (kernels/init mounts it for
 * kc.rootfs=host). */
#define VM_HOSTFS_TAG "kchost"

struct vm_spec {
	const char *name;          /* unique domain name */
	enum vm_accel accel;       /* kvm: <domain type='kvm'>, host-passthrough CPU;
				    * tcg: type='qemu', CPU model 'maximum' (QEMU's
				    * "max": SSE4.2, AVX2, ... as a stock kernel expects) */
	unsigned vcpus;
	uint64_t memory_mib;
	const char *kernel;        /* bzImage, direct kernel boot */
	const char *initrd;
	const char *cmdline;
	const char *disk_path;     /* raw scratch disk, virtio-blk vda, cache=none */
	const char *rootfs_path;   /* NULL: none; else an image attached read-only as
				    * virtio-blk vdb (rootfs.h): a path on the host */
	const char *hostfs_socket; /* NULL: none; else the vhost-user socket of a
				    * virtiofsd kcanary started (hostfs.h), shared as
				    * virtiofs tag VM_HOSTFS_TAG, with the
				    * guest's memory memfd-backed and shared as
				    * vhost-user needs */
	const char *channel_name;  /* virtio-serial port name the guest looks up
				    * (kcanary); read with vm_domain_open_channel() */
};
/* Every path in a vm_spec is a path on the host that runs the guest (a
 * volume's, vm_volume_upload()), never one on the coordinator. The serial
 * console (ttyS0) is a pty read with vm_domain_open_console(). A further
 * disk is one more xml_disk() call in vm.c. */

/*
 * vm_domain_xml - the domain XML for spec (values XML-escaped). *out is a
 * new string. -EINVAL when a required field is missing (err names it).
 * Golden files: tests/fixtures/vm/.
 */
int vm_domain_xml(char **out, const struct vm_spec *spec, struct buf *err);

/* ---- connection and domains ---- */

struct vm_conn;
struct vm_domain;

/*
 * vm_conn_open - connect to uri (NULL: vm_default_uri()) and subscribe to
 * domain lifecycle events. -ECONNREFUSED when no daemon answers (err then
 * says how to start one), -EIO otherwise. Free with vm_conn_close().
 */
int vm_conn_open(struct vm_conn **out, const char *uri, struct buf *err);
void vm_conn_close(struct vm_conn *c);

/* The hypervisor driver's name ("QEMU", "Test") and whether it can run
 * domain type qemu (TCG) or kvm, from the capabilities XML. */
int vm_conn_driver(struct vm_conn *c, char *name, size_t name_size,
		   bool *has_qemu, bool *has_kvm, struct buf *err);

/*
 * vm_accel_probe_host - the accelerator of the host behind c, asked over
 * the connection (vm_accel_from_caps() on its capabilities; local when c's
 * URI is, vm_uri_is_local()). What that host's domains get and its runs
 * record. -EIO with err (and *out TCG) when the capabilities cannot be read.
 */
int vm_accel_probe_host(struct vm_accel_info *out, struct vm_conn *c, struct buf *err);

enum vm_event_kind {
	VM_EV_STARTED,
	VM_EV_SUSPENDED,      /* paused: emulation failure, I/O error, virsh suspend */
	VM_EV_RESUMED,
	VM_EV_STOPPED,        /* shut down, destroyed, crashed: the guest is gone */
	VM_EV_CONN_LOST,      /* the libvirt connection closed */
	VM_EV_OTHER,
};

struct vm_event {
	enum vm_event_kind kind;
	int detail;           /* libvirt's virDomainEvent*DetailType */
};

/* A short phrase for an event ("suspended (paused by I/O error)"). */
void vm_event_describe(char *out, size_t size, const struct vm_event *ev);

/*
 * vm_domain_start - create a transient domain from xml (its <name> must be
 * name) and start it. Events for it are queued from before the create, so
 * none is missed. The domain is created with VIR_DOMAIN_START_AUTODESTROY
 * where the driver supports it, so libvirt destroys it if this process dies
 * without cleaning up. Free with vm_domain_free(), which does not destroy.
 * Returns 0, -EHOSTDOWN when libvirt's error is the host's
 * (vm_fault_is_host(), vm_fault.h: the run is infra), else -EIO; the reason in err.
 */
int vm_domain_start(struct vm_domain **out, struct vm_conn *c, const char *name,
		    const char *xml, unsigned flags, struct buf *err);

/* vm_domain_start() flags: start with the vCPUs paused (the runner opens
 * the console and channel streams first; kcanary doctor checks the channel
 * this way without running a guest). That pause and the resume of
 * vm_domain_resume() are not queued as events. */
#define VM_START_PAUSED 1u

/*
 * vm_domain_lookup - a handle on the running domain called name (events
 * are queued from now on). -ENOENT when there is none.
 */
int vm_domain_lookup(struct vm_domain **out, struct vm_conn *c, const char *name,
		     struct buf *err);

/* The fd that becomes readable when an event is queued (for poll()). */
int vm_domain_event_fd(const struct vm_domain *d);

/* Take the next queued event: 0 and *ev, or -EAGAIN when none is queued. */
int vm_domain_next_event(struct vm_domain *d, struct vm_event *ev);

/* Is the domain still running or paused? (false once it is gone). */
bool vm_domain_is_active(struct vm_domain *d);

/* Why a paused domain is paused ("crashed", "user", "I/O error"; "" when
 * not paused or unknown). */
void vm_domain_pause_reason(struct vm_domain *d, char *out, size_t size);

/* Pause the guest (virDomainSuspend); for tests and `virsh suspend`'s role. */
int vm_domain_suspend(struct vm_domain *d, struct buf *err);

/* Destroy the domain; 0 also when it is already gone. */
int vm_domain_destroy(struct vm_domain *d, struct buf *err);

const char *vm_domain_name(const struct vm_domain *d);
void vm_domain_free(struct vm_domain *d);

/* Resume a domain started with VM_START_PAUSED. */
int vm_domain_resume(struct vm_domain *d, struct buf *err);

/* ---- streams: the guest's console and channel over the connection ---- */

struct vm_stream;

/*
 * vm_domain_open_channel - the virtio-serial channel called name (the
 * domain's <channel type='unix'>) as a non-blocking libvirt stream
 * (virDomainOpenChannel); vm_domain_open_console - the serial console
 * (virDomainOpenConsole on the pty). Both take the device from any earlier
 * reader (FORCE). Open them on a domain started paused, then resume it, so
 * nothing the guest writes is lost. -EIO with err when libvirt refuses,
 * -EHOSTDOWN when its error is the host's (vm_fault.h: a console
 * lock file the host cannot create).
 * Free with vm_stream_close().
 */
int vm_domain_open_channel(struct vm_stream **out, struct vm_domain *d, const char *name,
			   struct buf *err);
int vm_domain_open_console(struct vm_stream **out, struct vm_domain *d, struct buf *err);

/* Read what has arrived: > 0 bytes, 0 at the end of the stream (the guest
 * is gone), -EAGAIN when nothing is there yet, -EIO when the stream broke
 * (the connection dropped). Never blocks. */
ssize_t vm_stream_read(struct vm_stream *s, char *buf, size_t size);
void vm_stream_close(struct vm_stream *s);

/* ---- storage: what a guest needs, in a pool on its host ---- */

/* The pool kcanary keeps on every host: a directory pool of this name at
 * VM_POOL_DIR (made, started and set to autostart when missing). */
#define VM_POOL_NAME "kcanary"
#define VM_POOL_DIR "/var/lib/libvirt/kcanary"

/*
 * vm_pool_ensure - the pool VM_POOL_NAME on c's host, active. -EIO with err
 * saying what libvirt refused.
 */
int vm_pool_ensure(struct vm_conn *c, struct buf *err);

/*
 * vm_volume_upload - make the file at local_path (on the coordinator) a
 * volume called name in the pool, and give its path on the host in *path
 * (new string). When a volume of that name exists nothing is sent: name
 * is a content hash (vm_file_key()), so the same name is the same bytes.
 * Otherwise the bytes go over the connection (virStorageVolUpload on a
 * stream) into NAME.part, which is then copied on the host to NAME
 * (virStorageVolCreateXMLFrom) and deleted: a volume by its final name is
 * always complete, even after a coordinator that died mid-upload.
 * *sent_bytes (may be NULL) is what crossed the connection (0 when the
 * volume was there). Uploads (and vm_pool_ensure()) to one host URI are
 * serialized within the process, those to different URIs run at once: a
 * host that hangs mid-upload holds up only its own runs. libvirt's test
 * driver has no upload: there the file is opened, not read, and the
 * volume made empty. -EIO, -ENOENT
 * (no local file) with err.
 */
int vm_volume_upload(struct vm_conn *c, const char *name, const char *local_path,
		     char **path, uint64_t *sent_bytes, struct buf *err);

/* vm_volume_scratch - a new raw, sparse volume of bytes called name (an
 * old one of that name is deleted first); its host path in *path. */
int vm_volume_scratch(struct vm_conn *c, const char *name, uint64_t bytes, char **path,
		      struct buf *err);

/* vm_volume_exists - whether pool 'kcanary' holds a volume called name. */
bool vm_volume_exists(struct vm_conn *c, const char *name);

/* vm_volume_delete - delete the volume name; 0 also when there is none. */
int vm_volume_delete(struct vm_conn *c, const char *name, struct buf *err);

/* vm_volume_sweep - delete the scratch volumes ("NAME-scratch.img") in the
 * pool whose domain NAME is not running: what a run on a host that dropped
 * mid-run left. *n_deleted (may be NULL) counts them. */
int vm_volume_sweep(struct vm_conn *c, size_t *n_deleted, struct buf *err);

/* vm_file_key - the volume name for a file's content: "kc-<the first 16
 * hex digits of its sha256 (hash.h)>-<size>" plus suffix (".img").
 * -errno when the file cannot be read. */
int vm_file_key(char *out, size_t size, const char *path, const char *suffix);

/* Bytes sent by vm_volume_upload() in this process so far. */
uint64_t vm_bytes_uploaded(void);

/* ---- a host, as `kcanary lab check` reports it ---- */

struct vm_host_info {
	char hostname[128];
	char driver[32];           /* "QEMU", "TEST" */
	char libvirt_version[32];  /* the daemon's, "10.0.0" */
	char hv_version[32];       /* the hypervisor's (QEMU's), "7.2.0" */
	bool has_kvm, has_qemu;    /* domain types the host offers */
	unsigned cpus;
	uint64_t memory_mib, free_mib;
	bool pool_ok;              /* VM_POOL_NAME is (now) active */
	size_t swept;              /* scratch volumes of dead runs deleted (vm_volume_sweep) */
	char pool_why[256];        /* why not, when !pool_ok */
};

/* vm_host_info - ask the host behind c (over the connection). Ensures the
 * pool and sweeps it (pool_ok says whether that worked). -EIO with err when the host does
 * not answer. */
int vm_host_info(struct vm_host_info *out, struct vm_conn *c, struct buf *err);

/* Has the connection broken (the daemon died or the link closed)? */
bool vm_conn_is_alive(struct vm_conn *c);

#endif
