/* daemon.c - kcanary-agent daemon: register with `kcanary serve`, send
 * heartbeats, and stream records over HTTP (http_out.h) with per-agent
 * sequence numbers through a bounded spool (spool.h):
 *
 *  - the passive stream, one run per boot (key "passive:<boot_id>"): every
 *    --interval, dirty and writeback pages from /proc/vmstat, the BPF
 *    probes' counters (probes.h: cgroup_writeback_by_id return values,
 *    balance_dirty_pages pauses), the write bandwidth of each bdi where
 *    debugfs has /sys/kernel/debug/bdi/<bdi>/stats;
 *  - with --workload, a workload run every --every: `kcanary-agent run`
 *    started as a child (the one-shot path, unchanged), its stdout records
 *    forwarded as one run (key "wl:<unix ms>").
 *
 * One thread does everything (libmicrohttpd's own serves /metrics,
 * metrics.h). Batches are gzip'd and retried with exponential back-off;
 * while the server is unreachable records stay in the spool.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define LOG_MODULE "daemon"
#include "daemon.h"
#include "error.h"
#include "http_out.h"
#include "knob.h"
#include "log.h"
#include "metrics.h"
#include "probes.h"
#include "record.h"
#include "spool.h"
#include "util.h"
#include "workload.h"

#define MAX_LABELS 32
#define MAX_WL_METRICS 64
#define BACKOFF_MIN_S 0.5
#define BACKOFF_MAX_S 30.0

static const char usage_text[] =
	"usage: kcanary-agent daemon --server URL --token-file FILE [--labels K=V,...]\n"
	"           [--interval DUR] [--heartbeat DUR] [--workload NAME --every DUR [knob=value ...]]\n"
	"           [--spool PATH] [--spool-max SIZE] [--metrics-listen HOST:PORT]\n"
	"           [--host-id ID] [--kernel-release R] [--batch-max N] [--drain DUR] [-v|-q]\n"
	"\n"
	"The fleet agent: registers this host with `kcanary serve` (POST\n"
	"/api/v1/agents/register), sends heartbeats, and streams records with a\n"
	"per-agent sequence number, gzip'd, retried with exponential back-off\n"
	"(0.5 s doubling to 30 s); the server stores each record once.\n"
	"\n"
	"  --server URL         kcanary serve's base URL (http://10.0.0.5:8080)\n"
	"  --token-file FILE    file holding a token from 'kcanary token create'\n"
	"                       (one per fleet, or one named agent:HOST per host)\n"
	"  --labels K=V,...     labels of this host (rack=a,role=db): cohort\n"
	"                       selectors of 'kcanary canary' and /metrics labels\n"
	"  --interval DUR       passive sampling and sending period (default 10s):\n"
	"                       dirty/writeback pages (/proc/vmstat), BPF probe\n"
	"                       counters, per-bdi write bandwidth (debugfs)\n"
	"  --heartbeat DUR      heartbeat period (default 30s)\n"
	"  --workload NAME      also run workload NAME (see 'kcanary-agent list') every\n"
	"  --every DUR          DUR (default 30m), with the knob=value arguments given;\n"
	"                       each run is `kcanary-agent run` in a child, one run in\n"
	"                       the store\n"
	"  --spool PATH         keep unacknowledged records in PATH (and the sequence\n"
	"                       reservation in PATH.seq) so a restart loses nothing;\n"
	"                       default: memory only\n"
	"  --spool-max SIZE     bound of the queue (default 64M); records beyond it\n"
	"                       are dropped and counted\n"
	"  --metrics-listen A   serve /metrics (Prometheus text format) on A, e.g.\n"
	"                       127.0.0.1:9101 (port 0: a free one, logged)\n"
	"  --host-id ID         this host's name in the fleet (default /etc/machine-id,\n"
	"                       else the hostname)\n"
	"  --kernel-release R   report R instead of `uname -r` (tests)\n"
	"  --batch-max N        records per request (default 5000)\n"
	"  --drain DUR          on SIGTERM, keep sending for up to DUR (default 10s)\n"
	"\n"
	"On SIGTERM or SIGINT it stops the workload, sends what it can, and prints\n"
	"one line 'kcanary-agent daemon: stats host=… produced=N …' on stdout.\n"
	"Exit status: 0 stopped by a signal, 1 a fatal error, 2 bad usage.\n";

struct wl_metric {
	char name[96];
	double value;
};

struct daemon {
	/* settings */
	const char *server;
	char *token, *host, *kernel, *boot_id, *passive_key;
	char *label_k[MAX_LABELS], *label_v[MAX_LABELS];
	int nlabels;
	double interval_s, heartbeat_s, every_s, drain_s;
	const char *workload;
	char **wl_argv;          /* knob=value arguments */
	int wl_argc;
	size_t batch_max;
	bool spool_file;

	struct http_out *http;
	struct spool *spool;
	struct rec_out *passive_rec;
	struct probes *probes;
	struct metrics *metrics;
	const char *probes_state;

	bool registered, server_up;
	int backoff_k;
	double send_at, heartbeat_at, sample_at, workload_at;

	/* the workload child */
	struct proc *child;      /* `kcanary-agent run`; NULL: none */
	int child_fd;
	char *child_key;
	struct buf child_line;
	bool child_ended_ok;     /* a done or error record came */
	int64_t wl_runs;
	struct wl_metric wlm[MAX_WL_METRICS];
	int nwlm;

	/* counters (this process) */
	int64_t produced, n_sample, n_probe, n_other, dropped;
	int64_t batches, send_errors, register_failures;
	uint64_t dirty, writeback;
};

static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
	stop_sig = sig;
	wl_stop = sig;
}

static double boottime_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static char *read_trimmed(const char *path)
{
	char *text = NULL;
	size_t len = 0;

	if (read_file(&text, &len, path, 4096))
		return NULL;
	while (len && (text[len - 1] == '\n' || text[len - 1] == ' ' || text[len - 1] == '\r'))
		text[--len] = '\0';
	if (!len) {
		free(text);
		return NULL;
	}
	return text;
}

/* Queue one record of stream key; counts it by type. */
static int queue_record(struct daemon *d, const char *key, const char *line, size_t len)
{
	int r = spool_push(d->spool, key, line, len);

	if (r == -ENOSPC) {
		if (!d->dropped)
			log_warn("the spool is full: dropping records until the server takes some");
		d->dropped++;
		return r;
	}
	if (r)
		return r;
	d->produced++;
	if (len > 17 && !strncmp(line, "{\"type\":\"sample\"", 16))
		d->n_sample++;
	else if (len > 16 && !strncmp(line, "{\"type\":\"probe\"", 15))
		d->n_probe++;
	else
		d->n_other++;
	return 0;
}

static int passive_sink(void *ud, const char *line, size_t len)
{
	struct daemon *d = ud;

	return queue_record(d, d->passive_key, line, len);
}

/* ---- passive collection ---- */

static int read_vmstat(uint64_t *dirty, uint64_t *writeback)
{
	FILE *f = fopen("/proc/vmstat", "re");
	char name[64];
	unsigned long long v;
	int found = 0;

	if (!f)
		return -errno;
	while (fscanf(f, "%63s %llu", name, &v) == 2) {
		if (!strcmp(name, "nr_dirty")) {
			*dirty = v;
			found++;
		} else if (!strcmp(name, "nr_writeback")) {
			*writeback = v;
			found++;
		}
	}
	fclose(f);
	return found == 2 ? 0 : -ENOENT;
}

/* Each bdi's BdiWriteBandwidth (kBps) from debugfs, as samples. */
static void sample_bdis(struct daemon *d, double t)
{
	DIR *dir = opendir("/sys/kernel/debug/bdi");
	struct dirent *de;

	if (!dir)
		return;
	while ((de = readdir(dir))) {
		char *path, *text = NULL, *p, metric[160];
		size_t len;

		if (de->d_name[0] == '.')
			continue;
		path = xasprintf("/sys/kernel/debug/bdi/%s/stats", de->d_name);
		if (!read_file(&text, &len, path, 65536) && (p = strstr(text, "BdiWriteBandwidth:"))) {
			double kbps = strtod(p + 18, NULL);
			size_t k = (size_t)snprintf(metric, sizeof(metric), "bdi_write_bw_kbps:%s", de->d_name);
			for (size_t i = 18; i < k && i < sizeof(metric); i++)
				if (metric[i] == ':')
					metric[i] = '_';
			rec_sample(d->passive_rec, t, metric, kbps);
		}
		free(text);
		free(path);
	}
	closedir(dir);
}

static void collect_passive(struct daemon *d)
{
	double t = rec_ms(boottime_s());
	struct probe_snap snap;

	if (!read_vmstat(&d->dirty, &d->writeback)) {
		rec_sample(d->passive_rec, t, "dirty_pages", (double)d->dirty);
		rec_sample(d->passive_rec, t, "writeback_pages", (double)d->writeback);
	}
	if (d->probes && !probes_snap(d->probes, &snap)) {
		probes_emit(d->probes, d->passive_rec, t);
		rec_sample(d->passive_rec, t, "bdp_pause_max_s",
			   (double)snap.counters[PC_BDP_PAUSE_MS_MAX] / 1000.0);
	}
	sample_bdis(d, t);
}

static void emit_passive_hello(struct daemon *d)
{
	json_t *params = json_object(), *o;
	char iv[32];

	for (int i = 0; i < d->nlabels; i++)
		json_object_set_new(params, d->label_k[i], json_string(d->label_v[i]));
	snprintf(iv, sizeof(iv), "%g", d->interval_s);
	json_object_set_new(params, "interval_s", json_string(iv));
	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:s, s:f}", "type", "hello",
		      "agent_version", KC_AGENT_VERSION, "kernel_release", d->kernel,
		      "host", d->host, "workload", "passive", "params", params,
		      "probes", d->probes_state, "startup_s", 0.0);
	rec_emit(d->passive_rec, o);
}

/* ---- the workload child ---- */

static void start_workload(struct daemon *d)
{
	int pipefd[2];
	const char **argv;
	int argc = 0;
	struct proc_spec spec = { .in = PROC_INHERIT, .out = PROC_FD, .err = PROC_INHERIT };
	/* the run ends with the daemon, however it ends (a SIGKILL runs no
	 * cleanup): SIGTERM lets it stop its script's process group */
	const struct wl_child wc = { .cg = NULL, .death_sig = SIGTERM, .parent = getpid() };
	struct buf err = BUF_INIT;

	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		log_err("cannot make a pipe for workload '%s': %s", d->workload, strerror(errno));
		return;
	}
	argv = xcalloc((size_t)d->wl_argc + 8, sizeof(*argv));
	argv[argc++] = "/proc/self/exe";
	argv[argc++] = "run";
	argv[argc++] = d->workload;
	for (int i = 0; i < d->wl_argc; i++)
		argv[argc++] = d->wl_argv[i];
	argv[argc++] = "--out";
	argv[argc++] = "-";
	if (log_level < LOG_DEBUG)
		argv[argc++] = "-q";
	spec.argv = argv;
	spec.out_fd = pipefd[1];
	if (wl_start(&d->child, &spec, &wc, &err)) {
		log_err("cannot start workload '%s': %s", d->workload, err_text(&err));
		close(pipefd[0]);
		close(pipefd[1]);
		free(argv);
		buf_release(&err);
		return;
	}
	free(argv);
	close(pipefd[1]);
	fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
	d->child_fd = pipefd[0];
	free(d->child_key);
	d->child_key = xasprintf("wl:%.0f", floor(clock_wall_s() * 1000.0));
	d->child_ended_ok = false;
	d->wl_runs++;
	log_info("workload '%s' started (run %s)", d->workload, d->child_key);
}

/* A line of the child's stdout: a record of its run. */
static void child_record(struct daemon *d, const char *line, size_t len)
{
	if (!len)
		return;
	queue_record(d, d->child_key, line, len);
	if (!strncmp(line, "{\"type\":\"done\"", 14) || !strncmp(line, "{\"type\":\"error\"", 15))
		d->child_ended_ok = true;
	if (!strncmp(line, "{\"type\":\"sample\"", 16)) {
		json_t *o = json_loadb(line, len, 0, NULL);
		const char *m = json_string_value(json_object_get(o, "metric"));
		json_t *v = json_object_get(o, "value");
		if (m && json_is_number(v)) {
			int i;
			for (i = 0; i < d->nwlm && strcmp(d->wlm[i].name, m); i++)
				;
			if (i < MAX_WL_METRICS && strlen(m) < sizeof(d->wlm[i].name)) {
				if (i == d->nwlm)
					snprintf(d->wlm[d->nwlm++].name, sizeof(d->wlm[0].name), "%s", m);
				d->wlm[i].value = json_number_value(v);
			}
		}
		json_decref(o);
	}
}

/* Read what the child wrote; at EOF reap it. */
static void read_child(struct daemon *d)
{
	char chunk[65536];

	for (;;) {
		ssize_t n = read(d->child_fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return;   /* EAGAIN: nothing more now */
		if (n == 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			if (chunk[i] == '\n') {
				child_record(d, d->child_line.ptr ? d->child_line.ptr : "", d->child_line.len);
				buf_reset(&d->child_line);
			} else if (buf_append(&d->child_line, &chunk[i], 1)) {
				log_warn("dropping a workload output line longer than 1 MiB");
				buf_reset(&d->child_line);
			}
		}
	}
	/* EOF */
	struct proc_outcome end;
	if (d->child_line.len) {
		child_record(d, d->child_line.ptr, d->child_line.len);
		buf_reset(&d->child_line);
	}
	proc_wait(d->child, &end);
	d->child = NULL;
	if (!d->child_ended_ok) {
		char msg[128];
		json_t *o;
		char *s;
		if (end.signal)
			snprintf(msg, sizeof(msg), "workload process killed by signal %d", end.signal);
		else
			snprintf(msg, sizeof(msg), "workload process exited with status %d without a done record",
				 end.status);
		o = json_pack("{s:s, s:s}", "type", "error", "message", msg);
		s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
		queue_record(d, d->child_key, s, strlen(s));
		free(s);
		json_decref(o);
	}
	log_info("workload run %s ended (%s)", d->child_key,
		 end.signal ? "killed" : end.status ? "failed" : "ok");
	close(d->child_fd);
	d->child_fd = -1;
}

/* ---- talking to the server ---- */

static void backoff(struct daemon *d, double now)
{
	double s = BACKOFF_MIN_S * pow(2.0, d->backoff_k);

	if (s > BACKOFF_MAX_S)
		s = BACKOFF_MAX_S;
	else
		d->backoff_k++;
	/* +-20% jitter so a fleet does not come back in step */
	s *= 0.8 + 0.4 * ((double)rand() / RAND_MAX);
	d->send_at = now + s;
	d->server_up = false;
}

static int64_t reply_int(json_t *reply, const char *key, int64_t dflt)
{
	json_t *v = json_object_get(reply, key);

	return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

/*
 * do_register - register with the server (POST /api/v1/agents/register).
 * 0 registered; -EACCES the server refused our token (401, 403), with
 * refused (may be NULL) holding the status and the server's own words;
 * another negative errno for a server that could not be reached or gave
 * an unexpected answer (retried with back-off).
 */
static int do_register(struct daemon *d, struct buf *refused)
{
	json_t *labels = json_object(), *body, *reply = NULL;
	struct buf err = BUF_INIT;
	char *text;
	long status = 0;
	int r;

	for (int i = 0; i < d->nlabels; i++)
		json_object_set_new(labels, d->label_k[i], json_string(d->label_v[i]));
	body = json_pack("{s:s, s:s, s:s, s:s, s:o}", "host", d->host, "kernel_release", d->kernel,
			 "boot_id", d->boot_id, "agent_version", KC_AGENT_VERSION, "labels", labels);
	text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	r = http_out_post(d->http, "/api/v1/agents/register", text, strlen(text), 0, &status, &reply,
			  &err);
	free(text);
	if (!r && status == 200 && json_is_integer(json_object_get(reply, "next_seq"))) {
		int64_t next = reply_int(reply, "next_seq", 1);
		/* a memory-only queue numbered before we knew the server's count
		 * holds nothing the server has: number it from there */
		r = d->spool_file || d->registered ? spool_expect(d->spool, next) :
		    spool_rebase(d->spool, next);
		d->registered = true;
		d->server_up = true;
		log_info("registered as '%s' with %s (next seq %" PRId64 ")", d->host, d->server, next);
	} else {
		if (!r)
			r = status == 401 || status == 403 ? -EACCES : -EPROTO;
		if (r == -EACCES && refused) {
			const char *said = json_string_value(json_object_get(reply, "error"));
			buf_printf(refused, "HTTP %ld from %s: %s", status, d->server,
				   said ? said : "no reason given");
		}
		/* once per outage; the back-off retries quietly */
		if (d->server_up || !d->register_failures++ || r == -EACCES)
			log_warn("cannot register: %s", err.len ? buf_str(&err) : "unexpected answer");
		d->server_up = false;
	}
	json_decref(reply);
	buf_release(&err);
	return r;
}

/* Send one batch. 0 sent (or nothing to send), -EAGAIN try again later. */
static int send_batch(struct daemon *d, double now)
{
	char *body = NULL, *path;
	struct buf err = BUF_INIT;
	size_t len = 0, n = 0;
	json_t *reply = NULL;
	long status = 0;
	int r;

	if (!d->registered && do_register(d, NULL)) {
		backoff(d, now);
		return -EAGAIN;
	}
	if ((r = spool_batch(d->spool, &body, &len, &n, d->batch_max, 512u << 10)) || !n) {
		free(body);
		return r;
	}
	path = xasprintf("/api/v1/agents/%s/records", d->host);
	r = http_out_post(d->http, path, body, len, 1, &status, &reply, &err);
	free(path);
	free(body);
	if (r) {
		if (d->server_up || !d->send_errors)
			log_warn("cannot send records (kept in the spool, retrying with back-off): %s",
				 buf_str(&err));
		d->send_errors++;
		backoff(d, now);
		json_decref(reply);
		buf_release(&err);
		return -EAGAIN;
	}
	d->batches++;
	if (status == 200) {
		spool_ack(d->spool, reply_int(reply, "acked_seq", 0));
		if (!d->server_up)
			log_info("server %s is back: sending the spool", d->server);
		d->server_up = true;
		d->backoff_k = 0;
		r = 0;
	} else if (status == 409 && json_is_integer(json_object_get(reply, "expected_seq"))) {
		spool_expect(d->spool, reply_int(reply, "expected_seq", 1));
		d->server_up = true;
		r = 0;   /* resend at once, renumbered or trimmed */
	} else if (status == 413) {
		/* too large for the server: smaller batches, and a single record
		 * that is too large on its own is dropped (the gap heals by 409) */
		if (n > 1) {
			d->batch_max = n / 2;
			log_warn("batch of %zu records refused as too large; sending %zu at a time",
				 n, d->batch_max);
		} else {
			log_err("a record was refused as too large and is dropped: %s", buf_str(&err));
			spool_drop_first(d->spool);
			d->dropped++;
		}
		r = 0;
	} else if (status == 404) {
		d->registered = false;   /* the store forgot us: register again */
		r = -EAGAIN;
		backoff(d, now);
	} else if (status == 507 || status == 503) {
		/* the server cannot store now (a full disk, a busy store): once per
		 * outage; the spool keeps the records for the back-off's retries */
		if (d->server_up || !d->send_errors)
			log_warn("the server cannot store records now (HTTP %ld; kept in the spool,"
				 " retrying with back-off): %s", status, buf_str(&err));
		d->server_up = false;
		d->send_errors++;
		backoff(d, now);
		r = -EAGAIN;
	} else {
		log_err("records refused: %s", buf_str(&err));
		d->send_errors++;
		backoff(d, now);
		r = -EAGAIN;
	}
	json_decref(reply);
	buf_release(&err);
	return r;
}

static void send_heartbeat(struct daemon *d)
{
	struct spool_stats ss;
	json_t *body, *reply = NULL;
	char *text, *path;
	long status = 0;

	spool_stats(d->spool, &ss);
	body = json_pack("{s:I, s:I, s:I, s:I, s:b, s:I}", "produced", (json_int_t)d->produced,
			 "pending", (json_int_t)ss.pending, "acked_seq", (json_int_t)ss.acked_seq,
			 "dropped", (json_int_t)d->dropped, "workload_running", d->child != NULL,
			 "workload_runs", (json_int_t)d->wl_runs);
	text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	path = xasprintf("/api/v1/agents/%s/heartbeat", d->host);
	/* a heartbeat that does not get through is tried again next period */
	if (!http_out_post(d->http, path, text, strlen(text), 0, &status, &reply, NULL) &&
	    status == 404)
		d->registered = false;
	json_decref(reply);
	free(path);
	free(text);
}

/* ---- /metrics ---- */

static void label_escape(struct buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			buf_printf(b, "\\%c", *s);
		else if (*s == '\n')
			buf_puts(b, "\\n");
		else
			buf_append(b, s, 1);
	}
}

/* {host="…",kernel="…",labels…[,extra]} */
static void labels_text(struct buf *b, const struct daemon *d, const char *extra)
{
	buf_puts(b, "{host=\"");
	label_escape(b, d->host);
	buf_puts(b, "\",kernel=\"");
	label_escape(b, d->kernel);
	buf_puts(b, "\"");
	for (int i = 0; i < d->nlabels; i++) {
		buf_printf(b, ",%s=\"", d->label_k[i]);
		label_escape(b, d->label_v[i]);
		buf_puts(b, "\"");
	}
	if (extra)
		buf_printf(b, ",%s", extra);
	buf_puts(b, "}");
}

static void metric(struct buf *b, const struct daemon *d, const char *name, const char *type,
		   const char *help, const char *extra, double v, bool header)
{
	if (header)
		buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
	buf_puts(b, name);
	labels_text(b, d, extra);
	buf_printf(b, " %.17g\n", v);
}

static void render_metrics(struct daemon *d)
{
	struct buf b = BUF_INIT;
	struct spool_stats ss;
	struct probe_snap snap;
	static const struct { int idx; const char *name, *help; double scale; } ctr[] = {
		{ PC_BDP_EVENTS, "kcanary_bdp_events_total", "balance_dirty_pages tracepoint hits", 1 },
		{ PC_BDP_PAUSES, "kcanary_bdp_pauses_total", "balance_dirty_pages calls that paused the writer", 1 },
		{ PC_BDP_PAUSE_MS_TOTAL, "kcanary_bdp_pause_seconds_total", "time writers paused in balance_dirty_pages", 1e-3 },
		{ PC_BDP_PAUSE_MS_MAX, "kcanary_bdp_pause_max_seconds", "longest balance_dirty_pages pause since the agent started", 1e-3 },
		{ PC_FLUSH_FOREIGN, "kcanary_flush_foreign_total", "writeback:flush_foreign hits", 1 },
		{ PC_INODE_SWITCH_WBS, "kcanary_inode_switch_wbs_total", "writeback:inode_switch_wbs hits", 1 },
	};

	if (!d->metrics)
		return;
	spool_stats(d->spool, &ss);
	metric(&b, d, "kcanary_agent_records_total", "counter", "records numbered and queued", NULL,
	       (double)d->produced, true);
	metric(&b, d, "kcanary_agent_records_dropped_total", "counter",
	       "records dropped because the spool was full", NULL, (double)d->dropped, true);
	metric(&b, d, "kcanary_agent_acked_seq", "gauge", "highest sequence number the server stored",
	       NULL, (double)ss.acked_seq, true);
	metric(&b, d, "kcanary_agent_pending_records", "gauge", "records waiting for the server", NULL,
	       (double)ss.pending, true);
	metric(&b, d, "kcanary_agent_spool_bytes", "gauge", "bytes of records waiting", NULL,
	       (double)ss.pending_bytes, true);
	metric(&b, d, "kcanary_agent_server_up", "gauge", "1 when the last request reached the server",
	       NULL, d->server_up ? 1 : 0, true);
	metric(&b, d, "kcanary_dirty_pages", "gauge", "nr_dirty of /proc/vmstat", NULL,
	       (double)d->dirty, true);
	metric(&b, d, "kcanary_writeback_pages", "gauge", "nr_writeback of /proc/vmstat", NULL,
	       (double)d->writeback, true);
	if (d->probes && !probes_snap(d->probes, &snap)) {
		for (size_t i = 0; i < sizeof(ctr) / sizeof(ctr[0]); i++)
			metric(&b, d, ctr[i].name, strstr(ctr[i].name, "_total") ? "counter" : "gauge",
			       ctr[i].help, NULL, (double)snap.counters[ctr[i].idx] * ctr[i].scale, true);
		for (int i = 0; i < snap.nret; i++) {
			char extra[32];
			snprintf(extra, sizeof(extra), "ret=\"%d\"", snap.ret_value[i]);
			metric(&b, d, "kcanary_cgroup_writeback_by_id_total", "counter",
			       "cgroup_writeback_by_id returns by value (-2: a foreign flush found no wb)",
			       extra, (double)snap.ret_count[i], i == 0);
		}
	}
	if (d->workload) {
		char extra[160];
		snprintf(extra, sizeof(extra), "workload=\"%s\"", d->workload);
		metric(&b, d, "kcanary_workload_runs_total", "counter", "workload runs started", extra,
		       (double)d->wl_runs, true);
		for (int i = 0; i < d->nwlm; i++) {
			struct buf e = BUF_INIT;
			buf_printf(&e, "workload=\"%s\",metric=\"", d->workload);
			label_escape(&e, d->wlm[i].name);
			buf_puts(&e, "\"");
			metric(&b, d, "kcanary_workload_sample", "gauge",
			       "the last value of each sample metric of the workload's runs", buf_str(&e),
			       d->wlm[i].value, i == 0);
			buf_release(&e);
		}
	}
	metrics_set(d->metrics, buf_str(&b));
	buf_release(&b);
}

/* ---- setup ---- */

static int parse_labels(struct daemon *d, const char *text)
{
	char *copy = xstrdup(text), *save = NULL, *tok;
	int r = 0;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		bool ok = eq && eq != tok && d->nlabels < MAX_LABELS;
		for (char *c = tok; ok && c < eq; c++)
			ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' ||
			     (c != tok && *c >= '0' && *c <= '9');
		if (!ok) {
			fprintf(stderr, "kcanary-agent daemon: --labels '%s': expected K=V,... with K a"
				" Prometheus label name (letters, digits, '_'), at most %d\n", tok, MAX_LABELS);
			r = -EINVAL;
			break;
		}
		*eq = '\0';
		/* the server's own selectors and /metrics' own labels */
		static const char *const reserved[] = { "kernel", "variant", "job", "host", "fs",
			"status", "since", "workload", "metric", "ret", "instance", NULL };
		for (int i = 0; reserved[i]; i++)
			if (!strcmp(tok, reserved[i])) {
				fprintf(stderr, "kcanary-agent daemon: --labels: '%s' is a label of its own"
					" (a cohort selector or a /metrics label): choose another name\n", tok);
				r = -EINVAL;
			}
		if (r)
			break;
		d->label_k[d->nlabels] = xstrdup(tok);
		d->label_v[d->nlabels++] = xstrdup(eq + 1);
	}
	free(copy);
	return r;
}

static void print_stats(struct daemon *d, double elapsed_s)
{
	struct spool_stats ss;

	spool_stats(d->spool, &ss);
	printf("kcanary-agent daemon: stats host=%s produced=%" PRId64 " samples=%" PRId64
	       " probes=%" PRId64 " other=%" PRId64 " next_seq=%" PRId64 " acked_seq=%" PRId64
	       " pending=%" PRId64 " dropped=%" PRId64 " renumbered=%" PRId64 " batches=%" PRId64
	       " send_errors=%" PRId64 " workload_runs=%" PRId64 " elapsed_s=%.1f\n",
	       d->host, d->produced, d->n_sample, d->n_probe, d->n_other, ss.next_seq, ss.acked_seq,
	       ss.pending, d->dropped, ss.renumbered, d->batches, d->send_errors, d->wl_runs, elapsed_s);
	fflush(stdout);
}

/* The flags that are not the daemon's settings themselves. */
struct daemon_opts {
	const char *token_file, *spool_path, *metrics_listen;
	uint64_t spool_max;
};

/* Parse the flags into d and o; the rest (knob=value ...) is d's wl_argv.
 * Returns -1 to go on, else the exit status (0 after --help, 2 for a bad
 * flag: said on stderr). */
static int daemon_flags(struct daemon *d, struct daemon_opts *o, int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "server", required_argument, NULL, 'S' },
		{ "token-file", required_argument, NULL, 'T' },
		{ "labels", required_argument, NULL, 'l' },
		{ "interval", required_argument, NULL, 'i' },
		{ "heartbeat", required_argument, NULL, 'b' },
		{ "workload", required_argument, NULL, 'w' },
		{ "every", required_argument, NULL, 'e' },
		{ "spool", required_argument, NULL, 's' },
		{ "spool-max", required_argument, NULL, 'm' },
		{ "metrics-listen", required_argument, NULL, 'M' },
		{ "host-id", required_argument, NULL, 'H' },
		{ "kernel-release", required_argument, NULL, 'K' },
		{ "batch-max", required_argument, NULL, 'B' },
		{ "drain", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+hvq", lopts, NULL)) != -1) {
		double v;
		uint64_t z;
		switch (c) {
		case 'S': d->server = optarg; break;
		case 'T': o->token_file = optarg; break;
		case 'l':
			if (parse_labels(d, optarg))
				return 2;
			break;
		case 'i': case 'b': case 'e': case 'D':
			if (parse_duration_s(&v, optarg) || (c != 'D' && v < 0.05)) {
				fprintf(stderr, "kcanary-agent daemon: --%s '%s': expected a duration (10s, 5m,"
					" 1h, 500ms)\n", c == 'i' ? "interval" : c == 'b' ? "heartbeat" :
					c == 'e' ? "every" : "drain", optarg);
				return 2;
			}
			*(c == 'i' ? &d->interval_s : c == 'b' ? &d->heartbeat_s : c == 'e' ? &d->every_s :
			  &d->drain_s) = v;
			break;
		case 'w': d->workload = optarg; break;
		case 's': o->spool_path = optarg; break;
		case 'm':
			if (parse_size(&o->spool_max, optarg, false) || o->spool_max < 4096) {
				fprintf(stderr, "kcanary-agent daemon: --spool-max '%s': expected a size of"
					" at least 4K (64M)\n", optarg);
				return 2;
			}
			break;
		case 'M': o->metrics_listen = optarg; break;
		case 'H': free(d->host); d->host = xstrdup(optarg); break;
		case 'K': free(d->kernel); d->kernel = xstrdup(optarg); break;
		case 'B':
			if (parse_size(&z, optarg, false) || z < 1 || z > 100000) {
				fprintf(stderr, "kcanary-agent daemon: --batch-max '%s': expected 1..100000\n",
					optarg);
				return 2;
			}
			d->batch_max = z;
			break;
		case 'v': log_level = LOG_DEBUG; break;
		case 'q': log_level = LOG_ERROR; break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fputs(usage_text, stderr);
			return 2;
		}
	}
	d->wl_argv = argv + optind;
	d->wl_argc = argc - optind;
	return -1;
}

/* The flags together: a server and a token file, an http(s) URL, knobs
 * only with a workload that exists and takes them. 0, or -EINVAL said on
 * stderr. */
static int daemon_check_flags(const struct daemon *d, const struct daemon_opts *o,
			      const struct workload *(*find)(const char *name))
{
	const struct workload *w;
	struct knobs k = { NULL, 0, NULL };
	struct buf err = BUF_INIT;

	if (!d->server || !o->token_file) {
		fprintf(stderr, "kcanary-agent daemon: %s is required (see kcanary-agent daemon --help)\n",
			!d->server ? "--server URL" : "--token-file FILE");
		return -EINVAL;
	}
	if (strncmp(d->server, "http://", 7) && strncmp(d->server, "https://", 8)) {
		fprintf(stderr, "kcanary-agent daemon: --server '%s': expected an http:// or https:// URL\n",
			d->server);
		return -EINVAL;
	}
	if (d->wl_argc && !d->workload) {
		fprintf(stderr, "kcanary-agent daemon: unexpected argument '%s' (knobs need --workload)\n",
			d->wl_argv[0]);
		return -EINVAL;
	}
	if (!d->workload)
		return 0;
	if (!(w = find(d->workload))) {
		fprintf(stderr, "kcanary-agent daemon: unknown workload '%s' (see 'kcanary-agent list')\n",
			d->workload);
		return -EINVAL;
	}
	if (knobs_parse(&k, w->name, w->knobs, w->nknobs, d->wl_argc, d->wl_argv, &err)) {
		fprintf(stderr, "kcanary-agent daemon: %s\n", buf_str(&err));
		buf_release(&err);
		return -EINVAL;
	}
	knobs_release(&k);
	return 0;
}

/* Who we are: the token, the host id, the kernel, the boot. 0, or -EINVAL
 * (no token) said on stderr. */
static int daemon_identity(struct daemon *d, const struct daemon_opts *o)
{
	struct utsname u;

	if (!(d->token = read_trimmed(o->token_file))) {
		fprintf(stderr, "kcanary-agent daemon: cannot read a token from '%s': %s\n", o->token_file,
			access(o->token_file, R_OK) ? strerror(errno) : "the file is empty");
		return -EINVAL;
	}
	uname(&u);
	if (!d->host && !(d->host = read_trimmed("/etc/machine-id")))
		d->host = xstrdup(u.nodename);
	if (!d->kernel)
		d->kernel = xstrdup(u.release);
	if (!(d->boot_id = read_trimmed("/proc/sys/kernel/random/boot_id")))
		d->boot_id = xstrdup("unknown");
	d->passive_key = xasprintf("passive:%s", d->boot_id);
	return 0;
}

/* The spool, the sender, /metrics and the signals. 0 or -errno (the
 * /metrics failure said on stderr). */
static int daemon_open(struct daemon *d, const struct daemon_opts *o)
{
	struct sigaction sa;
	int r;

	if ((r = spool_open(&d->spool, o->spool_path, o->spool_max)))
		return r;
	d->spool_file = o->spool_path != NULL;
	if ((r = http_out_new(&d->http, d->server, d->token, 10.0)))
		return r;
	if (o->metrics_listen) {
		struct buf err = BUF_INIT;

		if ((r = metrics_start(&d->metrics, o->metrics_listen, &err))) {
			fprintf(stderr, "kcanary-agent daemon: cannot serve /metrics: %s\n",
				buf_str(&err));
			buf_release(&err);
			return r;
		}
		fprintf(stderr, "kcanary-agent daemon: metrics on http://%s:%u/metrics\n",
			strchr(o->metrics_listen, '[') ? "[::1]" : "127.0.0.1", metrics_port(d->metrics));
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;   /* no SA_RESTART: poll() wakes up */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	srand((unsigned)(getpid() ^ (unsigned)(clock_wall_s() * 1000)));
	return 0;
}

/* The passive probes, the passive stream's hello (and its
 * probes_unavailable), and the daemon's one line on stderr. */
static void daemon_start_passive(struct daemon *d)
{
	struct buf missing = BUF_INIT, reason = BUF_INIT;
	int r = probes_open(&d->probes, &missing, &reason);

	d->probes_state = r < 0 ? "unavailable" : missing.len ? "partial" : "loaded";
	if (r == 0)
		log_info("passive probes: %s%s%s", missing.len ? "all but " : "all of ",
			 missing.len ? buf_str(&missing) : probes_all_names,
			 missing.len ? "" : " attached");
	d->passive_rec = rec_open_sink(passive_sink, d);
	emit_passive_hello(d);
	if (missing.len)
		rec_emit(d->passive_rec, json_pack("{s:s, s:f, s:s, s:s}", "type", "probes_unavailable",
						   "t", rec_ms(boottime_s()), "missing", buf_str(&missing),
						   "reason", err_text(&reason)));
	fprintf(stderr, "kcanary-agent daemon: host '%s', kernel %s, server %s, probes %s",
		d->host, d->kernel, d->server, d->probes_state);
	if (missing.len)
		fprintf(stderr, " (not attached: %s: %s)", buf_str(&missing), err_text(&reason));
	fprintf(stderr, "\n");
	buf_release(&missing);
	buf_release(&reason);
}

/* Until SIGINT/SIGTERM: sample, run the workload every --every, send the
 * spool, heartbeat, render /metrics, and sleep until the next of those. */
static void daemon_loop(struct daemon *d)
{
	double now = clock_mono_s();

	d->sample_at = now;
	d->send_at = now;
	d->heartbeat_at = now + d->heartbeat_s;
	d->workload_at = d->workload ? now : INFINITY;
	while (!stop_sig) {
		struct spool_stats ss;
		double wake;
		now = clock_mono_s();
		if (now >= d->sample_at) {
			collect_passive(d);
			d->sample_at += d->interval_s;
			if (d->sample_at < now)
				d->sample_at = now + d->interval_s;
			if (d->send_at < now)
				d->send_at = now;
		}
		if (d->workload && !d->child && now >= d->workload_at) {
			start_workload(d);
			d->workload_at += d->every_s;
			if (d->workload_at < now)
				d->workload_at = now + d->every_s;
		}
		if (d->child)
			read_child(d);
		spool_stats(d->spool, &ss);
		if (ss.pending && now >= d->send_at) {
			/* until the queue is empty or a request fails */
			while (!stop_sig && send_batch(d, now) == 0) {
				spool_stats(d->spool, &ss);
				if (!ss.pending)
					break;
			}
			if (!ss.pending || d->send_at <= now)
				d->send_at = d->sample_at;
		}
		if (now >= d->heartbeat_at) {
			send_heartbeat(d);
			d->heartbeat_at = now + d->heartbeat_s;
		}
		render_metrics(d);
		now = clock_mono_s();
		wake = d->sample_at;
		if (d->send_at > now && d->send_at < wake)
			wake = d->send_at;
		if (d->heartbeat_at < wake)
			wake = d->heartbeat_at;
		if (d->workload_at < wake)
			wake = d->workload_at;
		struct pollfd pfd = { d->child_fd, POLLIN, 0 };
		int ms = wake > now ? (int)ceil((wake - now) * 1000.0) : 0;
		poll(&pfd, d->child ? 1 : 0, ms);
	}
}

/* On the way out: end the workload (SIGTERM, 5 s, then SIGKILL), then
 * send what the spool holds within --drain. */
static void daemon_drain(struct daemon *d)
{
	double now, until;

	if (d->child) {
		kill(proc_pid(d->child), SIGTERM);
		until = clock_mono_s() + 5.0;
		while (d->child && clock_mono_s() < until) {
			struct pollfd pfd = { d->child_fd, POLLIN, 0 };
			poll(&pfd, 1, 100);
			read_child(d);
		}
		if (d->child) {
			kill(proc_pid(d->child), SIGKILL);
			fcntl(d->child_fd, F_SETFL, 0);
			read_child(d);
		}
	}
	until = clock_mono_s() + d->drain_s;
	for (;;) {
		struct spool_stats ss;
		now = clock_mono_s();
		spool_stats(d->spool, &ss);
		if (!ss.pending || now >= until)
			break;
		if (now >= d->send_at) {
			send_batch(d, now);
			continue;
		}
		double w = d->send_at < until ? d->send_at : until;
		usleep((useconds_t)((w - now) * 1e6) + 1000);
	}
}

/* Free what d holds, killing a workload child still running. */
static void daemon_free(struct daemon *d)
{
	if (d->child) {
		kill(proc_pid(d->child), SIGKILL);
		proc_wait(d->child, NULL);
	}
	if (d->child_fd >= 0)
		close(d->child_fd);
	buf_release(&d->child_line);
	rec_close(d->passive_rec);
	probes_close(d->probes);
	metrics_stop(d->metrics);
	http_out_free(d->http);
	spool_close(d->spool);
	for (int i = 0; i < d->nlabels; i++) {
		free(d->label_k[i]);
		free(d->label_v[i]);
	}
	free(d->token);
	free(d->host);
	free(d->kernel);
	free(d->boot_id);
	free(d->passive_key);
	free(d->child_key);
}

int daemon_main(int argc, char **argv, const struct workload *(*find)(const char *name))
{
	struct daemon d = { .interval_s = 10, .heartbeat_s = 30, .every_s = 1800, .drain_s = 10,
			    .batch_max = 5000, .child_fd = -1, .child_line = BUF_INIT_MAX(1 << 20),
			    .probes_state = "not loaded" };
	struct daemon_opts o = { .spool_max = 64u << 20 };
	double t0 = clock_mono_s();
	int ret;

	if ((ret = daemon_flags(&d, &o, argc, argv)) >= 0)
		goto out;
	ret = 2;
	if (daemon_check_flags(&d, &o, find) || daemon_identity(&d, &o))
		goto out;
	ret = 1;
	if (daemon_open(&d, &o))
		goto out;
	daemon_start_passive(&d);
	/* a token the server refuses does not heal by retrying: say so and
	 * stop at start (a server that does not answer yet is retried) */
	struct buf refused = BUF_INIT;
	if (do_register(&d, &refused) == -EACCES) {
		fprintf(stderr, "kcanary-agent daemon: the server refused the token in '%s' (%s):"
			" give --token-file a token 'kcanary token create agent:%s' made on that"
			" server\n", o.token_file, buf_str(&refused), d.host);
		buf_release(&refused);
		goto out;
	}
	buf_release(&refused);
	send_heartbeat(&d);
	daemon_loop(&d);
	daemon_drain(&d);
	print_stats(&d, clock_mono_s() - t0);
	ret = 0;
out:
	daemon_free(&d);
	return ret;
}
