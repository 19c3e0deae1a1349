/* runner.h - boot one run in one guest and store what it sends.
 *
 * runner_run() takes a pending run from the store and, over the libvirt
 * connection alone (vm.h), puts the kernel and the guest image (image.h)
 * in the host's pool (sent once per content), makes a scratch volume,
 * starts a transient domain paused, opens its console and the agent's
 * channel as libvirt streams, resumes it, feeds every channel byte to the
 * store (ingest.h) as it arrives, and ends the run
 * when the guest stops, when libvirt reports it paused (an emulation
 * failure: the run fails at once as 'paused'), when the watchdog fires
 * (destroyed; 'timeout', or 'kernel-panic' when the console shows one), or
 * when the coordinator is interrupted (SIGINT/SIGTERM; 'interrupted').
 * A host that cannot be reached, refuses the volumes or drops the
 * connection mid-run makes the run 'infra' (the host's fault, never a
 * result). On every path the domain is destroyed, the scratch volume is
 * deleted, and the console log is kept under $KCANARY_HOME/runs/<id>/ with
 * its last RUNNER_TAIL_LINES lines stored in runs.console_tail.
 */
#ifndef KC_RUNNER_H
#define KC_RUNNER_H

#include <stdbool.h>
#include <stdint.h>

#include "store/db.h"
#include "util.h"
#include "wrap/vm.h"

#define RUNNER_TAIL_LINES 200

struct runner_opts {
	const char *uri;             /* libvirt URI, NULL: vm_default_uri() */
	const char *home;            /* $KCANARY_HOME: runs/<id>/ goes there */
	const char *kernel;          /* bzImage */
	const char *kernel_pvh;      /* NULL, or its vmlinux to boot instead (image_kernel_pvh) */
	const char *initrd;          /* guest image (image_build) */
	const char *cmdline;         /* image_cmdline() */
	const char *rootfs;          /* NULL: none; else a root filesystem image (rootfs.h),
				    * the guest's read-only vdb */
	const char *rootfs_key;      /* its volume's name (rootfs_volume_key(): hashed
				      * once, beside the image); NULL: vm_file_key()
				      * reads it */
	bool hostfs;                 /* --rootfs host: share this machine's / read-only
				      * over virtiofs (hostfs.h); the run fails when uri
				      * is not a daemon on this machine */
	enum vm_accel accel;
	unsigned vcpus;              /* 0: 2 */
	uint64_t memory_mib;         /* 0: 2048 */
	uint64_t disk_bytes;         /* scratch disk, sparse; 0: 4 GiB */
	double watchdog_s;           /* from domain start to destroy; > 0 */
	bool console;                /* copy the guest console to stderr live */
	const char *host;            /* the lab host's name, for guest_json; NULL none */
	/* Called once the domain runs (for tests and benches: the name to
	 * `virsh suspend`). May be NULL. */
	void (*on_start)(const char *domain_name, void *arg);
	void *on_start_arg;
};

struct runner_result {
	char status[16];             /* as stored in runs.status */
	char error[512];             /* as stored in runs.error, "" for none */
	double boot_to_hello_s;      /* domain create to the hello record; < 0 none */
	double wall_s;               /* domain create to the end of the run */
	double create_mono_s;        /* clock_mono_s() when the create was asked; 0 none */
	/* clock_mono_s() marks of the run's phases (db_overhead.h), 0 none:
	 * runner_run() called, domain resumed, hello and done (or error)
	 * records stored, the wait's end (the guest stopped or destroyed) */
	double setup_mono_s, started_mono_s, hello_mono_s, done_mono_s, end_mono_s;
	double mkfs_s;               /* the hello's mkfs_s (/init's mkfs and mount); 0 none */
	int64_t records;
	int64_t samples;
	int64_t probes;
};

/*
 * runner_run - boot the run run_id (pending, in db) as opts says and wait
 * for it to end. Returns 0 when the run was carried through and stored,
 * whatever its status (see *out: a guest that could not be started is
 * 'failed' with the reason in out->error); a negative errno, with err
 * saying what, only when the store itself failed. out may not be NULL.
 */
int runner_run(struct runner_result *out, struct db *db, int64_t run_id,
	       const struct runner_opts *opts, struct buf *err);

/*
 * runner_clean_host - remove what a run whose coordinator died left on its
 * host: the domain called domain (destroyed when it still exists; libvirt's
 * autodestroy normally took it with the dead coordinator's connection) and
 * its scratch volume "<domain>-scratch.img" in pool 'kcanary'. uri NULL:
 * vm_default_uri(). *cleaned (may be NULL) counts what was removed (0-2).
 * -errno when the host does not answer or refuses, the reason in err.
 */
int runner_clean_host(const char *uri, const char *domain, int *cleaned, struct buf *err);

/* The setup allowance a watchdog adds to the workload's time: boot, mkfs
 * and teardown, 180 s under TCG and 60 s with KVM. */
double runner_setup_allowance_s(enum vm_accel accel);

/*
 * runner_signals_install - catch SIGINT and SIGTERM so that a running
 * runner_run() tears its guest down and stores the run as 'interrupted'.
 * A second signal gets the default action. runner_interrupted() says
 * whether one arrived. Call from the main thread before runner_run().
 */
int runner_signals_install(void);
bool runner_interrupted(void);

/* runner_request_stop - as if SIGTERM had arrived: a running runner_run()
 * tears its guest down and stores the run as 'interrupted'. For a thread
 * that runs jobs inside `kcanary serve`, which takes the signals itself. */
void runner_request_stop(void);

/*
 * runner_console_tail - the last nlines lines of the file at path, as a new
 * string (at most the last 256 KiB are read). *out is NULL when the file is
 * missing or empty. Returns 0 or -errno.
 */
int runner_console_tail(char **out, const char *path, int nlines);

/* runner_find_panic - the "Kernel panic - not syncing: ..." line in text,
 * copied to out (size bytes); false when there is none. */
bool runner_find_panic(char *out, size_t size, const char *text);

/* runner_reached_init - whether the console text shows the guest ran /init:
 * the kernel's "Run /init" (printed at loglevel info, which the run's
 * command line no longer puts on the console: image.h) or /init's first
 * "kcanary-init: [" line (kernels/init). false for NULL. */
bool runner_reached_init(const char *text);

#endif
