/* runner.c - one run in one guest: scratch disk, domain, channel to the
 * store, watchdog, console tail, teardown on every path (see runner.h). */
#define LOG_MODULE "runner"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "store/db_guest.h"
#include "store/db_runs.h"
#include "error.h"
#include "guest/hostfs.h"
#include "guest/ingest.h"
#include "log.h"
#include "guest/runner.h"
#include "util.h"

/* ---- signals ---- */

static int sig_pipe[2] = { -1, -1 };
static volatile sig_atomic_t sig_seen;

static void on_signal(int sig)
{
	int saved = errno;
	char c = (char)sig;

	sig_seen = sig;
	if (sig_pipe[1] >= 0 && write(sig_pipe[1], &c, 1) < 0) {
		/* nothing to do in a handler */
	}
	/* A second signal kills as usual; libvirt's autodestroy then
	 * removes the domain when our connection drops. */
	signal(sig, SIG_DFL);
	errno = saved;
}

int runner_signals_install(void)
{
	struct sigaction sa;

	if (sig_pipe[0] < 0 && pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return -errno;
	return 0;
}

bool runner_interrupted(void)
{
	return sig_seen != 0;
}

void runner_request_stop(void)
{
	char c = SIGTERM;

	sig_seen = SIGTERM;
	if (sig_pipe[1] >= 0 && write(sig_pipe[1], &c, 1) < 0) {
		/* the flag alone is enough: the loop polls it */
	}
}

/* ---- console ---- */

int runner_console_tail(char **out, const char *path, int nlines)
{
	const off_t max = 256 << 10;
	struct stat st;
	char *text = NULL, *p;
	off_t start;
	ssize_t n;
	int fd, seen = 0;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) || st.st_size == 0) {
		close(fd);
		return 0;
	}
	start = st.st_size > max ? st.st_size - max : 0;
	text = xmalloc((size_t)(st.st_size - start) + 1);
	n = pread(fd, text, (size_t)(st.st_size - start), start);
	close(fd);
	if (n <= 0) {
		free(text);
		return n < 0 ? -errno : 0;
	}
	text[n] = '\0';
	/* Serial consoles write \r\n and sometimes NULs: keep plain lines. */
	for (ssize_t i = 0, j = 0; i <= n; i++) {
		if (text[i] == '\r' || (i < n && text[i] == '\0'))
			continue;
		text[j++] = text[i];
		if (i == n)
			break;
	}
	p = text + strlen(text);
	if (p > text && p[-1] == '\n')
		p--;
	while (p > text) {
		if (p[-1] == '\n' && ++seen == nlines)
			break;
		p--;
	}
	*out = xstrdup(p);
	free(text);
	return 0;
}

bool runner_find_panic(char *out, size_t size, const char *text)
{
	const char *p = text ? strstr(text, "Kernel panic - not syncing") : NULL;

	if (!p)
		return false;
	snprintf(out, size, "%.*s", (int)strcspn(p, "\n"), p);
	return true;
}

bool runner_reached_init(const char *text)
{
	return text && (strstr(text, "Run /init") || strstr(text, "kcanary-init: ["));
}

/* The last non-empty line of text ("" for none), at most size-1 bytes. */
static void last_line(char *out, size_t size, const char *text)
{
	const char *end, *start;

	out[0] = '\0';
	if (!text)
		return;
	end = text + strlen(text);
	while (end > text && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	start = end;
	while (start > text && start[-1] != '\n')
		start--;
	snprintf(out, size, "%.*s", (int)(end - start), start);
}

/* ---- the run ---- */

struct run_state {
	struct vm_stream *chan;   /* the agent's channel; NULL once at its end */
	struct vm_stream *cons;   /* the serial console; NULL once at its end */
	bool sock_eof;            /* the channel ended */
	bool stream_broke;        /* a stream failed: the connection went */
	bool stopped;
	double stopped_at;
	bool paused;
	char pause_what[256];
	bool conn_lost;
	bool timed_out;
	bool interrupted;
	int console_fd;           /* the local console.log, appended as it arrives */
	int console_errno;        /* a write to console.log failed (ENOSPC): the run stops */
};

/* Append what the console stream has to console.log (and to stderr with
 * --console). */
static void console_drain(struct run_state *s, bool echo)
{
	char chunk[16384];
	ssize_t n;

	while (s->cons && (n = vm_stream_read(s->cons, chunk, sizeof(chunk))) != -EAGAIN) {
		if (n <= 0) {
			if (n < 0)
				s->stream_broke = true;
			vm_stream_close(s->cons);
			s->cons = NULL;
			break;
		}
		int wr = s->console_fd >= 0 ? write_all(s->console_fd, chunk, (size_t)n) : 0;

		if (wr) {
			s->console_errno = -wr;
			close(s->console_fd);
			s->console_fd = -1;
		}
		if (echo && fwrite(chunk, 1, (size_t)n, stderr) != (size_t)n)
			break;
	}
	if (echo)
		fflush(stderr);
}

/* Read what the channel has; feed it to ingest. Returns -EIO on a store error. */
static int chan_read(struct run_state *s, struct ingest *in, struct buf *err)
{
	char chunk[65536];

	while (s->chan) {
		ssize_t n = vm_stream_read(s->chan, chunk, sizeof(chunk));
		int r;

		if (n > 0) {
			if ((r = ingest_feed(in, chunk, (size_t)n, err)))
				return r;
			continue;
		}
		if (n == -EAGAIN)
			return 0;
		/* the end: QEMU closed its end (the guest is gone), or the
		 * connection broke */
		if (n < 0)
			s->stream_broke = true;
		vm_stream_close(s->chan);
		s->chan = NULL;
		s->sock_eof = true;
	}
	return 0;
}

static void handle_event(struct run_state *s, struct vm_domain *d, const struct vm_event *ev)
{
	char what[96];

	vm_event_describe(what, sizeof(what), ev);
	log_info("guest '%s': %s", vm_domain_name(d), what);
	switch (ev->kind) {
	case VM_EV_STOPPED:
		if (!s->stopped) {
			s->stopped = true;
			s->stopped_at = clock_mono_s();
		}
		break;
	case VM_EV_SUSPENDED: {
		char reason[64];

		vm_domain_pause_reason(d, reason, sizeof(reason));
		s->paused = true;
		snprintf(s->pause_what, sizeof(s->pause_what), "%s%s%s%s", what,
			 reason[0] ? ", libvirt reason '" : "", reason, reason[0] ? "'" : "");
		break;
	}
	case VM_EV_CONN_LOST:
		s->conn_lost = true;
		break;
	default:
		break;
	}
}

static void set_result(struct runner_result *out, const char *status, const char *error)
{
	snprintf(out->status, sizeof(out->status), "%s", status);
	/* longer reasons are cut to what runs.error's buffer holds */
	snprintf(out->error, sizeof(out->error), "%.*s", (int)sizeof(out->error) - 1,
		 error ? error : "");
}

/* One run as runner_run() carries it. The steps below return 0 or, when
 * the store failed, a negative errno with err set; a run that fails on
 * the way (an outcome: stored as 'failed') has x->why set and goes no
 * further, so callers check both. */
struct run {
	const struct runner_opts *o;
	struct db *db;
	int64_t id;
	struct runner_result *out;
	char name[96];
	char *dir, *console, *xml, *tail;
	char *kernel_vol, *initrd_vol, *disk_vol, *rootfs_vol;  /* their paths on the host */
	char disk_name[128];         /* the scratch volume's name; "" none made */
	uint64_t disk_bytes, sent_bytes, memory_mib;
	unsigned vcpus;
	struct hostfs hfs;           /* --rootfs host: its virtiofsd */
	struct vm_conn *conn;
	struct vm_domain *dom;
	struct ingest *in;           /* NULL once closed */
	struct ingest_stats st;
	struct run_state s;
	double t0;                   /* when the create was asked */
	char why[1024];              /* "": no failure so far */
	bool why_infra;              /* the failure is the host's: stored as 'infra' */
};

static void run_failf(struct run *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void run_failf(struct run *x, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(x->why, sizeof(x->why), fmt, ap);
	va_end(ap);
}

static void run_init(struct run *x, struct runner_result *out, struct db *db, int64_t run_id,
		     const struct runner_opts *o)
{
	memset(x, 0, sizeof(*x));
	x->o = o;
	x->db = db;
	x->id = run_id;
	x->out = out;
	x->s.console_fd = -1;
	x->disk_bytes = o->disk_bytes ? o->disk_bytes : 4ULL << 30;
	x->vcpus = o->vcpus ? o->vcpus : 2;
	x->memory_mib = o->memory_mib ? o->memory_mib : 2048;
	x->dir = xasprintf("%s/runs/%lld", o->home, (long long)run_id);
	x->console = xasprintf("%s/console.log", x->dir);
	snprintf(x->name, sizeof(x->name), "kcanary-r%lld-p%d-%04x", (long long)run_id,
		 (int)getpid(), (unsigned)(clock_wall_s() * 1e6) & 0xffff);
	snprintf(x->disk_name, sizeof(x->disk_name), "%s-scratch.img", x->name);
	memset(out, 0, sizeof(*out));
	out->boot_to_hello_s = -1;
	set_result(out, "failed", NULL);
}

/* runs.guest_json: how the guest is booted (schema/003_guest.sql), stored
 * before the host is asked (so a run the host refuses keeps its watchdog)
 * and again with the volumes once they are on the host. */
static int store_guest_json(struct run *x, struct buf *err)
{
	const struct runner_opts *o = x->o;
	json_t *g = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:I, s:I, s:f, s:s?, s:s?,"
			      " s:I, s:s?}",
			      "uri", o->uri ? o->uri : vm_default_uri(), "domain", x->name,
			      "accel", vm_accel_name(o->accel), "kernel", o->kernel,
			      "kernel_boot", o->kernel_pvh ? "pvh" : "bzimage",
			      "initrd", o->initrd, "cmdline", o->cmdline,
			      "vcpus", (int)x->vcpus, "memory_mib", (json_int_t)x->memory_mib,
			      "disk_bytes", (json_int_t)x->disk_bytes, "watchdog_s", o->watchdog_s,
			      "kernel_volume", x->kernel_vol, "initrd_volume", x->initrd_vol,
			      "uploaded_bytes", (json_int_t)x->sent_bytes, "lab_host", o->host);
	char *text = g ? json_dumps(g, JSON_COMPACT) : NULL;
	int r = text ? db_run_set_guest_json(x->db, x->id, text, err) : 0;

	free(text);
	json_decref(g);
	return r;
}

static void run_fail_infra(struct run *x, const char *what, struct buf *e)
{
	run_failf(x, "%s%s%s", what, *what ? ": " : "", e->len ? buf_str(e) : "libvirt failed");
	x->why_infra = true;
}

/* Put the kernel, the initramfs and the root filesystem image (when the
 * run has one) in the host's pool (sent once per content:
 * vm_volume_upload()) and make the scratch volume. */
static void run_stage(struct run *x)
{
	const struct runner_opts *o = x->o;
	const char *files[3] = { o->kernel_pvh ? o->kernel_pvh : o->kernel, o->initrd, o->rootfs };
	const char *suffix[3] = { ".kernel", ".initrd", ".rootfs" };
	char **paths[3] = { &x->kernel_vol, &x->initrd_vol, &x->rootfs_vol };
	struct buf e = BUF_INIT;

	if (vm_pool_ensure(x->conn, &e))
		goto infra;
	for (int i = 0; i < 3; i++) {
		char key[96];
		uint64_t sent = 0;
		int r;

		if (!files[i] || !*files[i])
			continue;   /* no rootfs image */
		if (i == 2 && o->rootfs_key) {
			/* hashed once, when the image was built or found */
			snprintf(key, sizeof(key), "%s", o->rootfs_key);
			r = 0;
		} else {
			r = vm_file_key(key, sizeof(key), files[i], suffix[i]);
		}

		if (r) {
			run_failf(x, "cannot read '%s': %s", files[i], strerror(-r));
			goto out;
		}
		if (vm_volume_upload(x->conn, key, files[i], paths[i], &sent, &e))
			goto infra;
		x->sent_bytes += sent;
	}
	if (vm_volume_scratch(x->conn, x->disk_name, x->disk_bytes, &x->disk_vol, &e))
		goto infra;
	goto out;
infra:
	run_fail_infra(x, "", &e);
out:
	buf_release(&e);
}

/* The store's side, the connection, the volumes and the domain's XML. */
static int run_setup(struct run *x, struct buf *err)
{
	const struct runner_opts *o = x->o;
	struct buf e = BUF_INIT;
	struct vm_spec spec;
	int r;

	if ((r = ingest_open(&x->in, x->db, x->id, err)))
		return r;
	ingest_set_live(x->in);   /* no write lock held while we poll */
	if ((r = mkdir_p(x->dir, 0755))) {
		run_failf(x, "cannot create '%s': %s", x->dir, strerror(-r));
		return 0;
	}
	x->s.console_fd = open(x->console, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (x->s.console_fd < 0) {
		run_failf(x, "cannot create '%s': %s", x->console, strerror(errno));
		return 0;
	}
	if ((r = db_run_set_guest(x->db, x->id, vm_accel_name(o->accel), x->console, 0, err)) ||
	    (r = store_guest_json(x, err)))
		return r;
	if (o->hostfs && !hostfs_uri_local(o->uri)) {
		run_failf(x, "--rootfs host shares this machine's / and cannot reach a guest on"
			  " another host (libvirt URI '%s'): use --rootfs debian[:PKG,...] there",
			  o->uri ? o->uri : vm_default_uri());
		return 0;
	}
	if (vm_conn_open(&x->conn, o->uri, &e)) {
		run_fail_infra(x, "", &e);
		buf_release(&e);
		return 0;
	}
	run_stage(x);
	if (x->why[0])
		return 0;
	if (o->hostfs && hostfs_start(&x->hfs, x->dir, &e)) {
		run_failf(x, "%s", buf_str(&e));
		buf_release(&e);
		return 0;
	}
	spec = (struct vm_spec){
		.name = x->name, .accel = o->accel,
		.vcpus = x->vcpus, .memory_mib = x->memory_mib,
		.kernel = x->kernel_vol, .initrd = x->initrd_vol, .cmdline = o->cmdline,
		.disk_path = x->disk_vol, .rootfs_path = x->rootfs_vol, .channel_name = "kcanary",
		.hostfs_socket = x->hfs.socket,
	};
	if (vm_domain_xml(&x->xml, &spec, &e)) {
		run_failf(x, "%s", e.len ? buf_str(&e) : "cannot write the domain XML");
		buf_release(&e);
		return 0;
	}
	return store_guest_json(x, err);
}

/* Start the domain paused, take its console and channel streams, then let
 * it run: nothing it writes is lost. */
static void run_start(struct run *x)
{
	const struct runner_opts *o = x->o;
	struct buf e = BUF_INIT;
	int r;

	x->t0 = clock_mono_s();
	x->out->create_mono_s = x->t0;
	if ((r = vm_domain_start(&x->dom, x->conn, x->name, x->xml, VM_START_PAUSED, &e)) ||
	    (r = vm_domain_open_console(&x->s.cons, x->dom, &e)) ||
	    (r = vm_domain_open_channel(&x->s.chan, x->dom, "kcanary", &e)) ||
	    (r = vm_domain_resume(x->dom, &e)))
		goto failed;
	log_info("run %lld: guest '%s' started (%s)", (long long)x->id, x->name,
		 vm_accel_name(o->accel));
	x->out->started_mono_s = clock_mono_s();
	if (o->on_start)
		o->on_start(x->name, o->on_start_arg);
	return;
failed:
	/* libvirt's words are the run's outcome: stored as 'failed', or as
	 * 'infra' when the fault is the host's (vm_fault_is_host(): a console
	 * lock file it cannot create, its pool gone, ...) or the host stopped
	 * answering; lab.c then charges the host and places the run again */
	run_failf(x, "%s", buf_str(&e));
	x->why_infra = r == -EHOSTDOWN || !vm_conn_is_alive(x->conn);
	buf_release(&e);
}

/* console.log could not be written (a full disk, most often): the run
 * stops, as on a store error. Its records so far stay stored; the run is
 * left 'running' for `kcanary resume` to mark interrupted and repeat. */
static int console_failed(struct run *x, struct buf *err)
{
	int e = x->s.console_errno;

	buf_reset(err);
	if (e == ENOSPC || e == EDQUOT) {
		buf_printf(err, "the file system of the console log '%s' is full", x->console);
		buf_free_space(err, x->console);
		buf_printf(err, ": run %lld stopped, the records it sent so far are kept; free space"
			   " there, then 'kcanary resume' the job", (long long)x->id);
		return -ENOSPC;
	}
	buf_printf(err, "cannot write the console log '%s': %s: run %lld stopped, the records it"
		   " sent so far are kept; 'kcanary resume' the job once it can be written",
		   x->console, strerror(e), (long long)x->id);
	return -e;
}

/* One pass of the wait: poll the channel, libvirt's events and the signal
 * pipe, feed the store. Sets *done when the run has ended. */
static int wait_once(struct run *x, bool *done, struct buf *err)
{
	struct run_state *s = &x->s;
	struct pollfd pf[2];
	struct vm_event ev;
	int nfd = 0, r;
	double now;

	pf[nfd++] = (struct pollfd){ .fd = vm_domain_event_fd(x->dom), .events = POLLIN };
	if (sig_pipe[0] >= 0)
		pf[nfd++] = (struct pollfd){ .fd = sig_pipe[0], .events = POLLIN };
	/* The streams are read every pass: libvirt's event thread fills them. */
	if (poll(pf, (nfds_t)nfd, 50) < 0 && errno != EINTR) {
		run_failf(x, "poll failed: %s", strerror(errno));
		return 0;
	}
	if ((r = chan_read(s, x->in, err)))
		return r;
	if (x->out->boot_to_hello_s < 0 && ingest_stats(x->in)->saw_hello) {
		x->out->hello_mono_s = clock_mono_s();
		x->out->boot_to_hello_s = x->out->hello_mono_s - x->t0;
		x->out->mkfs_s = ingest_stats(x->in)->hello_mkfs_s;
		/* the moment bench/b_boot.sh times from outside (kcanary -v) */
		log_info("run %lld: the agent said hello %.2f s after the domain was created",
			 (long long)x->id, x->out->boot_to_hello_s);
	}
	if (!x->out->done_mono_s && (ingest_stats(x->in)->saw_done || ingest_stats(x->in)->saw_error))
		x->out->done_mono_s = clock_mono_s();
	console_drain(s, x->o->console);
	while (vm_domain_next_event(x->dom, &ev) == 0)
		handle_event(s, x->dom, &ev);
	if (sig_seen)
		s->interrupted = true;
	if (s->console_errno)
		return console_failed(x, err);
	if (s->stream_broke && !s->stopped && !vm_conn_is_alive(x->conn))
		s->conn_lost = true;
	now = clock_mono_s();
	/* Stopped: read what is left; QEMU's exit ends the channel. */
	if (s->paused || s->interrupted || s->conn_lost ||
	    (s->stopped && (s->sock_eof || now - s->stopped_at > 2.0)))
		*done = true;
	else if (now - x->t0 > x->o->watchdog_s)
		*done = s->timed_out = true;
	return 0;
}

/* Feed the store until the run ends, then destroy the guest. */
static int run_wait(struct run *x, struct buf *err)
{
	struct buf e = BUF_INIT;
	bool done = false;
	int r;

	while (!done)
		if ((r = wait_once(x, &done, err)) || x->why[0])
			return r;
	x->out->end_mono_s = clock_mono_s();
	x->out->wall_s = x->out->end_mono_s - x->t0;
	chan_read(&x->s, x->in, NULL);   /* a store error: said again by ingest_close */
	if (!x->s.conn_lost && vm_domain_destroy(x->dom, &e))   /* cleanup: said here, once */
		log_err("%s", buf_str(&e));
	buf_release(&e);
	console_drain(&x->s, x->o->console);
	return 0;
}

/* The guest stopped without the agent's done or error record: say why,
 * from the console tail. */
static void judge_silent(struct run *x, char *e, size_t esz)
{
	char last[160];

	last_line(last, sizeof(last), x->tail);
	if (!x->st.saw_hello && !runner_reached_init(x->tail)) {
		snprintf(e, esz, "the kernel did not boot: the guest stopped after %.1f s without "
			 "running /init (is '%s' a working kernel for this machine? console: %s, "
			 "last line: '%s')", x->out->wall_s, x->o->kernel, x->console, last);
		set_result(x->out, "failed", e);
	} else if (!x->st.saw_hello) {
		snprintf(e, esz, "the guest stopped before the agent said hello (console: %s, "
			 "last line: '%s')", x->console, last);
		set_result(x->out, "failed", e);
	} else {
		snprintf(e, esz, "the guest stopped without the agent's done record (%lld records; "
			 "console: %s)", (long long)x->st.records, x->console);
		set_result(x->out, x->st.status[0] ? x->st.status : "incomplete", e);
	}
}

/* The run's status from how it ended and what the agent and console said. */
static void run_judge(struct run *x)
{
	const struct run_state *s = &x->s;
	char e[1024], panic[256];

	set_result(x->out, x->st.status, x->st.saw_error ? x->st.error : NULL);
	if (s->interrupted) {
		set_result(x->out, "interrupted", "interrupted by a signal: the guest was destroyed");
	} else if (s->paused) {
		snprintf(e, sizeof(e), "guest paused by the hypervisor (%s): an emulation failure or "
			 "I/O error stops a guest this way; the guest was destroyed", s->pause_what);
		set_result(x->out, "paused", e);
	} else if (s->conn_lost) {
		/* the host's fault, not the kernel's: never a result */
		set_result(x->out, "infra", "the libvirt connection to the host was lost during the "
			   "run: stored as infra, not a result");
	} else if (runner_find_panic(panic, sizeof(panic), x->tail) &&
		   (s->timed_out || !x->st.saw_done)) {
		snprintf(e, sizeof(e), "%s (console: %s)", panic, x->console);
		set_result(x->out, "kernel-panic", e);
	} else if (s->timed_out) {
		snprintf(e, sizeof(e), "watchdog: the guest ran longer than %.0f s and was destroyed "
			 "(console: %s)", x->o->watchdog_s, x->console);
		set_result(x->out, "timeout", e);
	} else if (!x->st.saw_done && !x->st.saw_error) {
		judge_silent(x, e, sizeof(e));
	}
}

/* Close the record stream (when still open) and store the outcome and the
 * console tail. */
static int run_store(struct run *x, struct buf *err)
{
	int r;

	if (x->in) {
		r = ingest_close(x->in, &x->st, err);
		x->in = NULL;
		if (r)
			return r;
	}
	x->out->records = x->st.records;
	x->out->samples = x->st.samples;
	x->out->probes = x->st.probes;
	if (!x->tail)
		runner_console_tail(&x->tail, x->console, RUNNER_TAIL_LINES);
	if ((r = db_run_set_status(x->db, x->id, x->out->status,
				   x->out->error[0] ? x->out->error : NULL, err)) ||
	    (x->tail && (r = db_run_set_console_tail(x->db, x->id, x->tail, err))))
		return err_wrapf(err, r, "cannot store the outcome of run %lld", (long long)x->id);
	return 0;
}

/* How long run_release() waits for a host whose connection broke to
 * answer again (a libvirtd restart takes seconds) before leaving the
 * run's domain and scratch volume to `kcanary lab check`. */
#define RUNNER_RECONNECT_S 30

/* Over c: destroy the domain name (dom) and delete its scratch volume
 * (vol); *n (may be NULL) counts what went. */
static int clean_on(struct vm_conn *c, const char *name, bool dom, bool vol, int *n,
		    struct buf *err)
{
	struct vm_domain *d = NULL;
	char disk[160];
	int r = 0;

	if (dom && vm_domain_lookup(&d, c, name, NULL) == 0) {
		if (vm_domain_is_active(d) && !(r = vm_domain_destroy(d, err)) && n)
			++*n;
		vm_domain_free(d);
		if (r)
			return r;
	}
	snprintf(disk, sizeof(disk), "%s-scratch.img", name);
	if (vol && vm_volume_exists(c, disk)) {
		if ((r = vm_volume_delete(c, disk, err)))
			return r;
		if (n)
			++*n;
	}
	return 0;
}

/* The connection broke with a domain or a scratch volume made on the
 * host: when the daemon answers again (restarted: its QEMU kept running,
 * and a restarted libvirtd no longer ties the domain to our closed
 * connection, so autodestroy does not remove it), destroy the domain and
 * delete the volume over a new connection. Tries for RUNNER_RECONNECT_S;
 * says what it did or could not do. */
static void run_clean_lost_host(struct run *x, bool had_dom)
{
	struct vm_conn *c = NULL;
	struct buf e = BUF_INIT;
	const char *uri = x->o->uri ? x->o->uri : vm_default_uri();
	double t0 = clock_mono_s();

	while (vm_conn_open(&c, x->o->uri, &e)) {
		if (clock_mono_s() - t0 > RUNNER_RECONNECT_S || runner_interrupted()) {
			log_warn("run %lld: the host at '%s' did not answer again within %d s: guest"
				 " '%s' and volume '%s' may be left there ('kcanary lab check' sweeps"
				 " the volume; 'virsh -c %s destroy %s' the guest): %s", (long long)x->id,
				 uri, RUNNER_RECONNECT_S, x->name, x->disk_name, uri, x->name, buf_str(&e));
			buf_release(&e);
			return;
		}
		buf_reset(&e);
		sleep(1);
	}
	if (clean_on(c, x->name, had_dom, x->disk_vol != NULL, NULL, &e))
		log_warn("run %lld: %s", (long long)x->id, buf_str(&e));
	else
		log_info("run %lld: guest '%s' and its scratch volume removed after the connection"
			 " to '%s' broke", (long long)x->id, x->name, uri);
	buf_release(&e);
	vm_conn_close(c);
}

int runner_clean_host(const char *uri, const char *domain, int *cleaned, struct buf *err)
{
	struct vm_conn *c = NULL;
	int r;

	if (cleaned)
		*cleaned = 0;
	if ((r = vm_conn_open(&c, uri, err)))
		return r;
	r = clean_on(c, domain, true, true, cleaned, err);
	vm_conn_close(c);
	return r;
}

static void run_release(struct run *x)
{
	struct buf e = BUF_INIT;
	bool had_dom = x->dom != NULL;

	if (x->in)
		ingest_close(x->in, NULL, NULL);
	vm_stream_close(x->s.chan);
	vm_stream_close(x->s.cons);
	if (x->s.console_fd >= 0)
		close(x->s.console_fd);
	if (x->dom) {
		if (vm_conn_is_alive(x->conn))
			vm_domain_destroy(x->dom, NULL);   /* gone already after run_wait */
		vm_domain_free(x->dom);
	}
	/* the scratch volume goes with the run; on a host whose connection
	 * broke both go over a new one when it answers again */
	if (x->disk_vol && vm_conn_is_alive(x->conn) &&
	    vm_volume_delete(x->conn, x->disk_name, &e))
		log_warn("%s", buf_str(&e));
	buf_release(&e);
	if (x->conn && !vm_conn_is_alive(x->conn) && (had_dom || x->disk_vol))
		run_clean_lost_host(x, had_dom);
	hostfs_stop(&x->hfs);
	vm_conn_close(x->conn);
	free(x->dir);
	free(x->console);
	free(x->kernel_vol);
	free(x->initrd_vol);
	free(x->disk_vol);
	free(x->rootfs_vol);
	free(x->xml);
	free(x->tail);
}

int runner_run(struct runner_result *out, struct db *db, int64_t run_id,
	       const struct runner_opts *o, struct buf *err)
{
	struct run x;
	int r;

	run_init(&x, out, db, run_id, o);
	out->setup_mono_s = clock_mono_s();
	if ((r = run_setup(&x, err)))
		goto out;
	if (!x.why[0])
		run_start(&x);
	if (!x.why[0] && (r = run_wait(&x, err)))
		goto out;
	if (!x.why[0]) {
		r = ingest_close(x.in, &x.st, err);
		x.in = NULL;
		if (r)
			goto out;
		runner_console_tail(&x.tail, x.console, RUNNER_TAIL_LINES);
		run_judge(&x);
	} else {
		struct buf e = BUF_INIT;

		log_debug("run %lld: %s", (long long)run_id, x.why);
		set_result(out, x.why_infra ? "infra" : "failed", x.why);
		if (x.dom && vm_domain_destroy(x.dom, &e))
			log_err("%s", buf_str(&e));
		buf_release(&e);
	}
	r = run_store(&x, err);
out:
	run_release(&x);
	return r;
}

double runner_setup_allowance_s(enum vm_accel accel)
{
	return accel == VM_ACCEL_KVM ? 60 : 180;
}
