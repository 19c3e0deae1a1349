/* runner.c - one run in one guest: scratch disk, domain, channel to the
 * store, watchdog, console tail, teardown on every path (see runner.h). */
#define LOG_MODULE "runner"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#include "db_guest.h"
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
static int chan_read(struct run_state *s, struct ingest *in)
{
	char chunk[65536];

	for (;;) {
		ssize_t n = read(s->sock, chunk, sizeof(chunk));
		int r;

		if (n > 0) {
			if ((r = ingest_feed(in, chunk, (size_t)n)))
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
	snprintf(out->error, sizeof(out->error), "%s", error ? error : "");
}

int runner_run(struct runner_result *out, struct db *db, int64_t run_id,
	       const struct runner_opts *o)
{
	char err[1024] = "", name[96];
	char *run_dir = NULL, *console = NULL, *disk = NULL, *sock_path = NULL;
	uint64_t disk_bytes = o->disk_bytes ? o->disk_bytes : 4ULL << 30;
	char *xml = NULL, *tail = NULL;
	struct vm_conn *conn = NULL;
	struct vm_domain *dom = NULL;
	struct ingest *in = NULL;
	struct ingest_stats st;
	struct run_state s = { .sock = -1 };
	struct vm_spec spec;
	double t0 = 0, last_flush, now;
	int r, store_rc = 0;
	bool ingest_closed = false;

	memset(out, 0, sizeof(*out));
	memset(&st, 0, sizeof(st));
	out->boot_to_hello_s = -1;
	set_result(out, "failed", NULL);

	run_dir = xasprintf("%s/runs/%lld", o->home, (long long)run_id);
	console = xasprintf("%s/console.log", run_dir);
	disk = xasprintf("%s/scratch.img", run_dir);
	sock_path = short_sock_path(run_dir, run_id);
	snprintf(name, sizeof(name), "kcanary-r%lld-p%d-%04x", (long long)run_id, (int)getpid(),
		 (unsigned)(clock_wall_s() * 1e6) & 0xffff);

	if ((r = ingest_open(&in, db, run_id))) {
		snprintf(out->error, sizeof(out->error), "cannot start storing run %lld: %s",
			 (long long)run_id, db_errmsg(db));
		store_rc = r;
		goto out;
	}
	if ((r = mkdir_p(run_dir, 0755))) {
		snprintf(err, sizeof(err), "cannot create '%s': %s", run_dir, strerror(-r));
		goto fail;
	}
	unlink(console);
	unlink(sock_path);
	if ((r = make_disk(disk, disk_bytes))) {
		snprintf(err, sizeof(err), "cannot create scratch disk '%s': %s", disk, strerror(-r));
		goto fail;
	}
	if ((r = db_run_set_guest(db, run_id, vm_accel_name(o->accel), console, 0))) {
		snprintf(out->error, sizeof(out->error), "cannot update run %lld: %s",
			 (long long)run_id, db_errmsg(db));
		store_rc = r;
		goto out;
	}
	spec = (struct vm_spec){
		.name = name, .accel = o->accel,
		.vcpus = o->vcpus ? o->vcpus : 2,
		.memory_mib = o->memory_mib ? o->memory_mib : 2048,
		.kernel = o->kernel, .initrd = o->initrd, .cmdline = o->cmdline,
		.disk_path = disk, .console_path = console,
		.channel_path = sock_path, .channel_name = "kcanary",
	};
	if (vm_domain_xml(&xml, &spec, err, sizeof(err)))
		goto fail;
	{
		json_t *g = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:I, s:I, s:f}",
				      "uri", o->uri ? o->uri : vm_default_uri(), "domain", name,
				      "accel", vm_accel_name(o->accel), "kernel", o->kernel,
				      "initrd", o->initrd, "cmdline", o->cmdline,
				      "vcpus", (int)spec.vcpus, "memory_mib", (json_int_t)spec.memory_mib,
				      "disk_bytes", (json_int_t)disk_bytes,
				      "watchdog_s", o->watchdog_s);
		char *text = g ? json_dumps(g, JSON_COMPACT) : NULL;

		r = text ? db_run_set_guest_json(db, run_id, text) : 0;
		free(text);
		json_decref(g);
		if (r) {
			snprintf(out->error, sizeof(out->error), "cannot update run %lld: %s",
				 (long long)run_id, db_errmsg(db));
			store_rc = r;
			goto out;
		}
	}
	if (vm_conn_open(&conn, o->uri, err, sizeof(err)))
		goto fail;

	t0 = clock_mono_s();
	out->create_mono_s = t0;
	if (vm_domain_start(&dom, conn, name, xml, 0, err, sizeof(err)))
		goto fail;
	log_info("run %lld: guest '%s' started (%s)", (long long)run_id, name,
		 vm_accel_name(o->accel));
	if (o->on_start)
		o->on_start(name, o->on_start_arg);

	/* Connect at once: the guest's writes block until a reader is there.
	 * QEMU made the socket before the guest's CPUs started; retried in
	 * the loop for CHAN_CONNECT_S in case it has not. */
	s.sock = chan_connect(sock_path);
	last_flush = clock_mono_s();
	for (;;) {
		struct pollfd pf[3];
		struct vm_event ev;
		int nfd = 0, sock_i = -1;

		if (s.sock < 0 && !s.sock_eof) {
			r = chan_connect(sock_path);
			if (r >= 0) {
				s.sock = r;
			} else if (clock_mono_s() - t0 > CHAN_CONNECT_S && !s.stopped) {
				snprintf(err, sizeof(err), "cannot connect to the guest's channel '%s' "
					 "within %d s: %s", sock_path, CHAN_CONNECT_S, strerror(-r));
				goto fail;
			}
		}
		if (s.sock >= 0) {
			sock_i = nfd;
			pf[nfd++] = (struct pollfd){ .fd = s.sock, .events = POLLIN };
		}
		pf[nfd++] = (struct pollfd){ .fd = vm_domain_event_fd(dom), .events = POLLIN };
		if (sig_pipe[0] >= 0)
			pf[nfd++] = (struct pollfd){ .fd = sig_pipe[0], .events = POLLIN };
		if (poll(pf, (nfds_t)nfd, o->console || s.sock < 0 ? 50 : 250) < 0 && errno != EINTR) {
			snprintf(err, sizeof(err), "poll failed: %s", strerror(errno));
			goto fail;
		}
		if (sock_i >= 0 && pf[sock_i].revents) {
			if ((r = chan_read(&s, in))) {
				snprintf(out->error, sizeof(out->error), "cannot store run %lld: %s",
					 (long long)run_id, db_errmsg(db));
				store_rc = r;
				goto out;
			}
			if (out->boot_to_hello_s < 0 && ingest_stats(in)->saw_hello)
				out->boot_to_hello_s = clock_mono_s() - t0;
		}
		while (vm_domain_next_event(dom, &ev) == 0)
			handle_event(&s, dom, &ev);
		if (sig_seen)
			s.interrupted = true;
		if (o->console)
			console_follow(&s, console);
		now = clock_mono_s();
		if (now - last_flush >= 1.0) {
			if ((r = ingest_flush(in))) {
				snprintf(out->error, sizeof(out->error), "cannot store run %lld: %s",
					 (long long)run_id, db_errmsg(db));
				store_rc = r;
				goto out;
			}
			last_flush = now;
		}
		if (s.paused || s.interrupted || s.conn_lost)
			break;
		/* Stopped: read what is left; QEMU's exit closes the socket. */
		if (s.stopped && (s.sock_eof || now - s.stopped_at > 2.0))
			break;
		if (now - t0 > o->watchdog_s) {
			s.timed_out = true;
			break;
		}
	}
	out->wall_s = clock_mono_s() - t0;
	if (s.sock >= 0)
		chan_read(&s, in);
	if (vm_domain_destroy(dom, err, sizeof(err)))
		log_err("%s", err);
	if (o->console)
		console_follow(&s, console);

	r = ingest_close(in, &st);
	in = NULL;
	ingest_closed = true;
	if (r) {
		snprintf(out->error, sizeof(out->error), "cannot store run %lld: %s",
			 (long long)run_id, db_errmsg(db));
		store_rc = r;
		goto out;
	}
	set_result(out, st.status, st.saw_error ? st.error : NULL);
	runner_console_tail(&tail, console, RUNNER_TAIL_LINES);
	if (s.interrupted) {
		set_result(out, "interrupted", "interrupted by a signal: the guest was destroyed");
	} else if (s.paused) {
		snprintf(err, sizeof(err), "guest paused by the hypervisor (%s): an emulation "
			 "failure or I/O error stops a guest this way; the guest was destroyed",
			 s.pause_what);
		set_result(out, "paused", err);
	} else if (s.conn_lost) {
		set_result(out, "failed", "the libvirt connection was lost during the run");
	} else {
		char panic[256];
		bool has_panic = runner_find_panic(panic, sizeof(panic), tail);

		if (has_panic && (s.timed_out || !st.saw_done)) {
			snprintf(err, sizeof(err), "%s (console: %s)", panic, console);
			set_result(out, "kernel-panic", err);
		} else if (s.timed_out) {
			snprintf(err, sizeof(err), "watchdog: the guest ran longer than %.0f s and was "
				 "destroyed (console: %s)", o->watchdog_s, console);
			set_result(out, "timeout", err);
		} else if (!st.saw_done && !st.saw_error && !st.saw_hello) {
			char last[160];

			last_line(last, sizeof(last), tail);
			if (!tail || !strstr(tail, "Run /init"))
				snprintf(err, sizeof(err), "the kernel did not boot: the guest stopped after "
					 "%.1f s without running /init (is '%s' a working kernel for this "
					 "machine? console: %s, last line: '%s')",
					 out->wall_s, o->kernel, console, last);
			else
				snprintf(err, sizeof(err), "the guest stopped before the agent said hello "
					 "(console: %s, last line: '%s')", console, last);
			set_result(out, "failed", err);
		} else if (!st.saw_done && !st.saw_error) {
			snprintf(err, sizeof(err), "the guest stopped without the agent's done record "
				 "(%lld records; console: %s)", (long long)st.records, console);
			set_result(out, st.status[0] ? st.status : "incomplete", err);
		}
	}
	goto store;

fail:
	log_debug("run %lld: %s", (long long)run_id, err);
	set_result(out, "failed", err);
	if (dom && vm_domain_destroy(dom, err, sizeof(err)))
		log_err("%s", err);
store:
	if (!ingest_closed && in) {
		if ((r = ingest_close(in, &st))) {
			snprintf(out->error, sizeof(out->error), "cannot store run %lld: %s",
				 (long long)run_id, db_errmsg(db));
			store_rc = r;
			in = NULL;
			goto out;
		}
		in = NULL;
	}
	out->records = st.records;
	out->samples = st.samples;
	out->probes = st.probes;
	if (!tail)
		runner_console_tail(&tail, console, RUNNER_TAIL_LINES);
	if ((r = db_run_set_status(db, run_id, out->status, out->error[0] ? out->error : NULL)) ||
	    (tail && (r = db_run_set_console_tail(db, run_id, tail)))) {
		log_err("cannot store the outcome of run %lld: %s", (long long)run_id, db_errmsg(db));
		store_rc = r;
	}
out:
	if (in)
		ingest_close(in, NULL);
	if (s.sock >= 0)
		close(s.sock);
	if (dom) {
		vm_domain_destroy(dom, err, sizeof(err));
		vm_domain_free(dom);
	}
	vm_conn_close(conn);
	if (sock_path)
		unlink(sock_path);
	if (disk)
		unlink(disk);
	free(run_dir);
	free(console);
	free(disk);
	free(sock_path);
	free(xml);
	free(tail);
	return store_rc;
}

int runner_workload_s(double *out, const char *const *knobs, char *err, size_t size)
{
	/* wb-handover's phases and the agent's defaults (agent/wb_handover.c) */
	struct { const char *knob; double s; } phases[] = {
		{ "measure_s", 120 }, { "old_s", 30 }, { "settle_s", 3 }, { "pod_hop", 0 },
	};
	double total = 0;

	for (size_t i = 0; knobs && knobs[i]; i++) {
		const char *eq = strchr(knobs[i], '=');
		if (!eq)
			continue;
		for (size_t p = 0; p < sizeof(phases) / sizeof(*phases); p++) {
			size_t kl = strlen(phases[p].knob);
			if ((size_t)(eq - knobs[i]) != kl || strncmp(knobs[i], phases[p].knob, kl))
				continue;
			if (parse_duration_s(&phases[p].s, eq + 1)) {
				snprintf(err, size, "knob '%s': %s is not a duration", knobs[i],
					 phases[p].knob);
				return -EINVAL;
			}
		}
	}
	for (size_t p = 0; p < sizeof(phases) / sizeof(*phases); p++)
		total += phases[p].s;
	*out = total;
	return 0;
}

double runner_setup_allowance_s(enum vm_accel accel)
{
	return accel == VM_ACCEL_KVM ? 60 : 180;
}
