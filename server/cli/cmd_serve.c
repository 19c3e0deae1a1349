/* cmd_serve.c - kcanary serve: the JSON API and the web pages over HTTP.
 * Wires the parts: the API's state (api_state.c) given to the HTTP server
 * (http.c) as its handler, the web/ directory, and the job queue
 * (compare_worker_start). */
#define LOG_MODULE "serve"
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "cli/cmd.h"
#include "exec/compare.h"
#include "error.h"
#include "http.h"
#include "log.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kcanary serve [--listen HOST:PORT] [--home DIR] [--web DIR] [--threads N]\n"
		"                     [--no-exec] [--connect URI] [--max-conn-per-ip N]\n"
		"\n"
		"Serve the JSON API (/api/v1/, see docs/api.md) and the comparison\n"
		"pages of the store in DIR/kcanary.db until SIGINT or SIGTERM.\n"
		"Reading is open to anyone who can connect; submitting and cancelling\n"
		"jobs needs 'Authorization: Bearer <token>' (kcanary token create).\n"
		"Fleet agents (kcanary-agent daemon) post their records to\n"
		"/api/v1/agents/ with a token too (one per fleet, or agent:HOST per host).\n"
		"\n"
		"  --listen HOST:PORT  address to bind, numeric (default 127.0.0.1:8080,\n"
		"                      loopback only); port 0 picks a free port; the\n"
		"                      bound address is printed on stdout\n"
		"  --home DIR          the store's directory (as kcanary --home); it must\n"
		"                      exist: in an empty one serve starts a new store\n"
		"  --web DIR           static pages (default $KCANARY_WEB_DIR, else web/\n"
		"                      next to the build directory, else\n"
		"                      /usr/share/kcanary/web)\n"
		"  --threads N         requests served at once (default 4), each thread\n"
		"                      with its own store connection\n"
		"  --max-conn-per-ip N connections one client address may hold at once\n"
		"                      (default 64; more are refused), e.g. for many\n"
		"                      agents behind one address\n"
		"  --no-exec           only queue submitted jobs; do not carry them out\n"
		"  --job-dir DIR       submitted jobs may name kernels and series under DIR\n"
		"                      (again for more; a relative name is under the first);\n"
		"                      without it they may name none\n"
		"  --connect URI       libvirt URI for the guests of queued jobs\n"
		"\n"
		"Submitted compare jobs (POST /api/v1/jobs) are carried out one at a time,\n"
		"oldest first, with the same executor as 'kcanary compare'. At start, jobs\n"
		"left building or running by a coordinator that died are resumed: their\n"
		"running runs become 'interrupted' and a fresh repeat replaces each.\n");
}

static bool is_dir(const char *p)
{
	struct stat st;

	return p && !stat(p, &st) && S_ISDIR(st.st_mode);
}

/* The web/ directory: $KCANARY_WEB_DIR, <exe>/../web, /usr/share/kcanary/web. */
static char *default_web_dir(void)
{
	return exe_sibling("KCANARY_WEB_DIR", "../web", NULL, "/usr/share/kcanary/web");
}

/* A --home (serve's or kcanary's) that names no directory, so no store:
 * a typo, refused as the reading commands refuse a home without a store
 * (cmd_open_existing_store), after saying so on stderr. A directory
 * without a store is a first run: the server makes the store, its first
 * writers may be fleet agents (docs/api.md); so does a $KCANARY_HOME or
 * default home that does not exist yet. */
static bool home_mistyped(const struct cmd_ctx *ctx)
{
	if (strcmp(ctx->home_from, "--home") || is_dir(ctx->home) ||
	    access(ctx->db_path, F_OK) == 0)
		return false;
	fprintf(stderr, "kcanary serve: no store at '%s' (--home): '%s' is not a directory;"
		" give the home of an existing store, or create the directory (mkdir -p)"
		" to start an empty one\n", ctx->db_path, ctx->home);
	return true;
}

/* serve's flags, as parsed. web and job_dirs are owned. */
struct serve_args {
	const char *listen, *uri, *home;	/* home: --home, NULL without */
	bool exec;
	unsigned long threads, max_conn;
	char *web;
	const char **job_dirs;
	size_t njob_dirs;
};

static void serve_args_release(struct serve_args *a)
{
	free(a->web);
	free(a->job_dirs);
}

/* A number flag's value (--threads, --max-conn-per-ip) in 1..max into *out;
 * -EINVAL with a message on stderr. */
static int number_flag(unsigned long *out, const char *flag, const char *arg, unsigned long max)
{
	char *end;

	*out = strtoul(arg, &end, 10);
	if (!*arg || *end || *out < 1 || *out > max) {
		fprintf(stderr, "kcanary serve: %s '%s': expected 1 to %lu\n", flag, arg, max);
		return -EINVAL;
	}
	return 0;
}

/* The flags into a; 0, or -EINVAL after a message on stderr. */
static int serve_parse(struct serve_args *a, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *f = argv[i];
		if (!strcmp(f, "--listen") && i + 1 < argc)
			a->listen = argv[++i];
		else if (!strncmp(f, "--listen=", 9))
			a->listen = f + 9;
		else if (!strcmp(f, "--home") && i + 1 < argc)
			a->home = argv[++i];
		else if (!strncmp(f, "--home=", 7))
			a->home = f + 7;
		else if (!strcmp(f, "--no-exec"))
			a->exec = false;
		else if (!strcmp(f, "--connect") && i + 1 < argc)
			a->uri = argv[++i];
		else if (!strcmp(f, "--threads") && i + 1 < argc) {
			if (number_flag(&a->threads, "--threads", argv[++i], 64))
				return -EINVAL;
		} else if (!strcmp(f, "--max-conn-per-ip") && i + 1 < argc) {
			if (number_flag(&a->max_conn, "--max-conn-per-ip", argv[++i], 65536))
				return -EINVAL;
		} else if ((!strcmp(f, "--job-dir") && i + 1 < argc) || !strncmp(f, "--job-dir=", 10)) {
			a->job_dirs = xrealloc(a->job_dirs, (a->njob_dirs + 1) * sizeof(*a->job_dirs));
			a->job_dirs[a->njob_dirs++] = f[9] == '=' ? f + 10 : argv[++i];
		} else if ((!strcmp(f, "--web") && i + 1 < argc) || !strncmp(f, "--web=", 6)) {
			free(a->web);
			a->web = xstrdup(f[5] == '=' ? f + 6 : argv[++i]);
		} else {
			fprintf(stderr, "kcanary serve: %s '%s'\n",
				f[0] == '-' ? "unrecognized option (or missing value)" : "unexpected argument", f);
			usage(stderr);
			return -EINVAL;
		}
	}
	return 0;
}

/* The API over HTTP (and the job queue unless --no-exec) for ctx's store
 * until SIGINT or SIGTERM. Returns the exit status. */
static int serve_run(const struct cmd_ctx *ctx, const struct serve_args *a)
{
	struct compare_worker *worker = NULL;
	struct http_server *srv = NULL;
	struct api_shared api = { 0 };
	struct http_opts opts;
	struct buf err = BUF_INIT;
	sigset_t sigs;
	int sig, r, ret = 1;

	/* Block the signals before libmicrohttpd starts its thread, so they
	 * reach sigwait() below and nothing else. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (api_shared_init(&api, ctx->db_path, &err)) {
		log_err("%s", err_text(&err));
		goto out;
	}
	for (size_t i = 0; i < a->njob_dirs; i++)
		if (api_shared_add_job_dir(&api, a->job_dirs[i], &err)) {
			fprintf(stderr, "kcanary serve: %s\n", err_text(&err));
			ret = 2;
			goto out;
		}
	opts = (struct http_opts){ .listen = a->listen, .web_dir = a->web,
				   .threads = (unsigned)a->threads,
				   .max_conn_per_ip = (unsigned)a->max_conn,
				   .handler = api_http_handler(&api) };
	if ((r = http_server_start(&srv, &opts, &err))) {
		log_err("%s%s", err_text(&err), r != -EADDRINUSE ? "" :
			": stop it, or choose another address with --listen HOST:PORT"
			" (port 0 picks a free one)");
		goto out;
	}
	{
		char host[128];
		const char *colon = strrchr(a->listen, ':');
		snprintf(host, sizeof(host), "%.*s", (int)(colon - a->listen), a->listen);
		printf("kcanary serve: listening on http://%s:%u/ (store %s)\n", host,
		       http_server_port(srv), ctx->db_path);
		fflush(stdout);
	}
	if (a->exec) {
		struct guest_opts co = { .home = ctx->home, .uri = a->uri };
		if (compare_worker_start(&worker, ctx->db_path, &co))
			log_err("cannot start the job queue: submitted jobs stay pending");
	}
	if (sigwait(&sigs, &sig) == 0)
		log_info("signal %d: stopping", sig);
	ret = 0;
out:
	compare_worker_stop(worker);
	http_server_stop(srv);
	api_shared_release(&api);
	buf_release(&err);
	return ret;
}

int cmd_serve(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct serve_args a = {
		.listen = "127.0.0.1:8080", .exec = true, .threads = HTTP_DEFAULT_THREADS,
		.max_conn = HTTP_MAX_CONN_PER_IP,
	};
	int ret = 2;

	if (cmd_wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	if (serve_parse(&a, argc, argv))
		goto out;
	if (a.home) {	/* serve --home DIR: as kcanary --home DIR */
		cmd_ctx_release(ctx);
		cmd_ctx_init(ctx, a.home);
	}
	if (home_mistyped(ctx)) {
		ret = 1;
		goto out;
	}
	if (!a.web)
		a.web = default_web_dir();
	if (!is_dir(a.web))
		log_warn("web directory '%s' does not exist: only the API is served", a.web);
	ret = serve_run(ctx, &a);
out:
	serve_args_release(&a);
	return ret;
}
