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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#include "db_guest.h"
#include "error.h"
#include "ingest.h"
#include "log.h"
#include "runner.h"
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

/* How long QEMU may take to listen on the channel socket after create. */
#define CHAN_CONNECT_S 10

struct run_state {
	int sock;                 /* channel, -1 when not (or no longer) connected */
	bool sock_eof;
	bool stopped;
	double stopped_at;
	bool paused;
	char pause_what[256];
	bool conn_lost;
	bool timed_out;
	bool interrupted;
	off_t console_off;
};

static int chan_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int r = -errno;
		close(fd);
		return r;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

static void console_follow(struct run_state *s, const char *path)
{
	char chunk[8192];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	while ((n = pread(fd, chunk, sizeof(chunk), s->console_off)) > 0) {
		if (fwrite(chunk, 1, (size_t)n, stderr) != (size_t)n)
			break;
		s->console_off += n;
	}
	fflush(stderr);
	close(fd);
}

/* Read what the channel has; feed it to ingest. Returns -EIO on a store error. */
static int chan_read(struct run_state *s, struct ingest *in, struct buf *err)
{
	char chunk[65536];

	for (;;) {
		ssize_t n = read(s->sock, chunk, sizeof(chunk));
		int r;

		if (n > 0) {
			if ((r = ingest_feed(in, chunk, (size_t)n, err)))
				return r;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		/* EOF or a reset: QEMU closed its end (the guest is gone). */
		close(s->sock);
		s->sock = -1;
		s->sock_eof = true;
		return 0;
	}
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

static char *short_sock_path(const char *run_dir, int64_t run_id)
{
	char *p = xasprintf("%s/chan.sock", run_dir);
	struct sockaddr_un sa;

	if (strlen(p) < sizeof(sa.sun_path))
		return p;
	free(p);
	return xasprintf("/tmp/kcanary-%d-%lld.sock", (int)getpid(), (long long)run_id);
}

static int make_disk(const char *path, uint64_t bytes)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)bytes))
		r = -errno;
	close(fd);
	return r;
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
	char *dir, *console, *disk, *sock_path, *xml, *tail;
	uint64_t disk_bytes;
	struct vm_conn *conn;
	struct vm_domain *dom;
	struct ingest *in;           /* NULL once closed */
	struct ingest_stats st;
	struct run_state s;
	double t0;                   /* when the create was asked */
	char why[1024];              /* "": no failure so far */
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
	x->s.sock = -1;
	x->disk_bytes = o->disk_bytes ? o->disk_bytes : 4ULL << 30;
	x->dir = xasprintf("%s/runs/%lld", o->home, (long long)run_id);
	x->console = xasprintf("%s/console.log", x->dir);
	x->disk = xasprintf("%s/scratch.img", x->dir);
	x->sock_path = short_sock_path(x->dir, run_id);
	snprintf(x->name, sizeof(x->name), "kcanary-r%lld-p%d-%04x", (long long)run_id,
		 (int)getpid(), (unsigned)(clock_wall_s() * 1e6) & 0xffff);
	memset(out, 0, sizeof(*out));
	out->boot_to_hello_s = -1;
	set_result(out, "failed", NULL);
}

/* runs.guest_json: how the guest is booted (schema/003_guest.sql). */
static int store_guest_json(struct run *x, const struct vm_spec *spec, struct buf *err)
{
	const struct runner_opts *o = x->o;
	json_t *g = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:I, s:I, s:f}",
			      "uri", o->uri ? o->uri : vm_default_uri(), "domain", x->name,
			      "accel", vm_accel_name(o->accel), "kernel", o->kernel,
			      "initrd", o->initrd, "cmdline", o->cmdline,
			      "vcpus", (int)spec->vcpus, "memory_mib", (json_int_t)spec->memory_mib,
			      "disk_bytes", (json_int_t)x->disk_bytes, "watchdog_s", o->watchdog_s);
	char *text = g ? json_dumps(g, JSON_COMPACT) : NULL;
	int r = text ? db_run_set_guest_json(x->db, x->id, text, err) : 0;

	free(text);
	json_decref(g);
	return r;
}

/* The store's side, the scratch disk and the domain's XML. */
static int run_setup(struct run *x, struct buf *err)
{
	const struct runner_opts *o = x->o;
	struct buf e = BUF_INIT;
	struct vm_spec spec;
	int r;

	if ((r = ingest_open(&x->in, x->db, x->id, err)))
		return r;
	if ((r = mkdir_p(x->dir, 0755))) {
		run_failf(x, "cannot create '%s': %s", x->dir, strerror(-r));
		return 0;
	}
	unlink(x->console);
	unlink(x->sock_path);
	if ((r = make_disk(x->disk, x->disk_bytes))) {
		run_failf(x, "cannot create scratch disk '%s': %s", x->disk, strerror(-r));
		return 0;
	}
	if ((r = db_run_set_guest(x->db, x->id, vm_accel_name(o->accel), x->console, 0, err)))
		return r;
	spec = (struct vm_spec){
		.name = x->name, .accel = o->accel,
		.vcpus = o->vcpus ? o->vcpus : 2,
		.memory_mib = o->memory_mib ? o->memory_mib : 2048,
		.kernel = o->kernel, .initrd = o->initrd, .cmdline = o->cmdline,
		.disk_path = x->disk, .rootfs_path = o->rootfs, .console_path = x->console,
		.channel_path = x->sock_path, .channel_name = "kcanary",
	};
	if (vm_domain_xml(&x->xml, &spec, &e)) {
		run_failf(x, "%s", e.len ? buf_str(&e) : "cannot write the domain XML");
		buf_release(&e);
		return 0;
	}
	return store_guest_json(x, &spec, err);
}

/* Connect to libvirt and start the domain. */
static void run_start(struct run *x)
{
	const struct runner_opts *o = x->o;
	struct buf e = BUF_INIT;

	if (vm_conn_open(&x->conn, o->uri, &e))
		goto failed;
	x->t0 = clock_mono_s();
	x->out->create_mono_s = x->t0;
	if (vm_domain_start(&x->dom, x->conn, x->name, x->xml, 0, &e))
		goto failed;
	log_info("run %lld: guest '%s' started (%s)", (long long)x->id, x->name,
		 vm_accel_name(o->accel));
	if (o->on_start)
		o->on_start(x->name, o->on_start_arg);
	return;
failed:
	/* libvirt's words are the run's outcome: stored as 'failed' */
	run_failf(x, "%s", buf_str(&e));
	buf_release(&e);
}

/* One pass of the wait: poll the channel, libvirt's events and the signal
 * pipe, feed the store. Sets *done when the run has ended. */
static int wait_once(struct run *x, double *last_flush, bool *done, struct buf *err)
{
	struct run_state *s = &x->s;
	struct pollfd pf[3];
	struct vm_event ev;
	int nfd = 0, sock_i = -1, r;
	double now;

	if (s->sock < 0 && !s->sock_eof) {
		r = chan_connect(x->sock_path);
		if (r >= 0) {
			s->sock = r;
		} else if (clock_mono_s() - x->t0 > CHAN_CONNECT_S && !s->stopped) {
			run_failf(x, "cannot connect to the guest's channel '%s' within %d s: %s",
				  x->sock_path, CHAN_CONNECT_S, strerror(-r));
			return 0;
		}
	}
	if (s->sock >= 0) {
		sock_i = nfd;
		pf[nfd++] = (struct pollfd){ .fd = s->sock, .events = POLLIN };
	}
	pf[nfd++] = (struct pollfd){ .fd = vm_domain_event_fd(x->dom), .events = POLLIN };
	if (sig_pipe[0] >= 0)
		pf[nfd++] = (struct pollfd){ .fd = sig_pipe[0], .events = POLLIN };
	if (poll(pf, (nfds_t)nfd, x->o->console || s->sock < 0 ? 50 : 250) < 0 && errno != EINTR) {
		run_failf(x, "poll failed: %s", strerror(errno));
		return 0;
	}
	if (sock_i >= 0 && pf[sock_i].revents) {
		if ((r = chan_read(s, x->in, err)))
			return r;
		if (x->out->boot_to_hello_s < 0 && ingest_stats(x->in)->saw_hello)
			x->out->boot_to_hello_s = clock_mono_s() - x->t0;
	}
	while (vm_domain_next_event(x->dom, &ev) == 0)
		handle_event(s, x->dom, &ev);
	if (sig_seen)
		s->interrupted = true;
	if (x->o->console)
		console_follow(s, x->console);
	now = clock_mono_s();
	if (now - *last_flush >= 1.0) {
		if ((r = ingest_flush(x->in, err)))
			return r;
		*last_flush = now;
	}
	/* Stopped: read what is left; QEMU's exit closes the socket. */
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
	double last_flush = clock_mono_s();
	struct buf e = BUF_INIT;
	bool done = false;
	int r;

	/* Connect at once: the guest's writes block until a reader is there.
	 * QEMU made the socket before the guest's CPUs started; retried in
	 * wait_once() for CHAN_CONNECT_S in case it has not. */
	x->s.sock = chan_connect(x->sock_path);
	while (!done)
		if ((r = wait_once(x, &last_flush, &done, err)) || x->why[0])
			return r;
	x->out->wall_s = clock_mono_s() - x->t0;
	if (x->s.sock >= 0)
		chan_read(&x->s, x->in, NULL);   /* a store error: said again by ingest_close */
	if (vm_domain_destroy(x->dom, &e))      /* cleanup: said here, once */
		log_err("%s", buf_str(&e));
	buf_release(&e);
	if (x->o->console)
		console_follow(&x->s, x->console);
	return 0;
}

/* The guest stopped without the agent's done or error record: say why,
 * from the console tail. */
static void judge_silent(struct run *x, char *e, size_t esz)
{
	char last[160];

	last_line(last, sizeof(last), x->tail);
	if (!x->st.saw_hello && (!x->tail || !strstr(x->tail, "Run /init"))) {
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
		set_result(x->out, "failed", "the libvirt connection was lost during the run");
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

static void run_release(struct run *x)
{
	if (x->in)
		ingest_close(x->in, NULL, NULL);
	if (x->s.sock >= 0)
		close(x->s.sock);
	if (x->dom) {
		vm_domain_destroy(x->dom, NULL);   /* gone already after run_wait */
		vm_domain_free(x->dom);
	}
	vm_conn_close(x->conn);
	unlink(x->sock_path);
	unlink(x->disk);
	free(x->dir);
	free(x->console);
	free(x->disk);
	free(x->sock_path);
	free(x->xml);
	free(x->tail);
}

int runner_run(struct runner_result *out, struct db *db, int64_t run_id,
	       const struct runner_opts *o, struct buf *err)
{
	struct run x;
	int r;

	run_init(&x, out, db, run_id, o);
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
		set_result(out, "failed", x.why);
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
