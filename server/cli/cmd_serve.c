/* cmd_serve.c - kcanary serve: the JSON API and the web pages over HTTP.
 * Wires the parts: the API's state (api_state.c) given to the HTTP server
 * (http.c) as its handler, the web/ directory, and the job queue
 * (compare_worker_start). */
#define LOG_MODULE "serve"
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
		"  --home DIR          the store's directory (as kcanary --home)\n"
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

/* reason: one case per flag of serve (listen, limits, tokens, job dir,
 * execution), then one start of the service; the service is http.c/api*.c. */
int cmd_serve(int argc, char **argv)
{
	const char *listen = "127.0.0.1:8080", *uri = NULL;
	bool exec = true;
	struct compare_worker *worker = NULL;
	char *home = NULL;
	unsigned long threads = HTTP_DEFAULT_THREADS, max_conn = HTTP_MAX_CONN_PER_IP;
	char *web = NULL, *db_path = NULL;
	const char **job_dirs = NULL;
	size_t njob_dirs = 0;
	struct http_server *srv = NULL;
	struct api_shared api = { 0 };
	struct http_opts opts;
	struct buf err = BUF_INIT;
	sigset_t sigs;
	int sig, ret = 1;

	if (cmd_wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--listen") && i + 1 < argc)
			listen = argv[++i];
		else if (!strncmp(a, "--listen=", 9))
			listen = a + 9;
		else if (!strcmp(a, "--home") && i + 1 < argc)
			cmd_home = argv[++i];
		else if (!strncmp(a, "--home=", 7))
			cmd_home = a + 7;
		else if (!strcmp(a, "--no-exec"))
			exec = false;
		else if (!strcmp(a, "--connect") && i + 1 < argc)
			uri = argv[++i];
		else if (!strcmp(a, "--threads") && i + 1 < argc) {
			char *end;
			threads = strtoul(argv[++i], &end, 10);
			if (!*argv[i] || *end || threads < 1 || threads > 64) {
				fprintf(stderr, "kcanary serve: --threads '%s': expected 1 to 64\n", argv[i]);
				free(web);
				free(job_dirs);
				return 2;
			}
		} else if (!strcmp(a, "--max-conn-per-ip") && i + 1 < argc) {
			char *end;
			max_conn = strtoul(argv[++i], &end, 10);
			if (!*argv[i] || *end || max_conn < 1 || max_conn > 65536) {
				fprintf(stderr, "kcanary serve: --max-conn-per-ip '%s': expected 1 to 65536\n",
					argv[i]);
				free(web);
				free(job_dirs);
				return 2;
			}
		} else if ((!strcmp(a, "--job-dir") && i + 1 < argc) || !strncmp(a, "--job-dir=", 10)) {
			job_dirs = xrealloc(job_dirs, (njob_dirs + 1) * sizeof(*job_dirs));
			job_dirs[njob_dirs++] = a[9] == '=' ? a + 10 : argv[++i];
		} else if (!strcmp(a, "--web") && i + 1 < argc) {
			free(web);
			web = xstrdup(argv[++i]);
		} else if (!strncmp(a, "--web=", 6)) {
			free(web);
			web = xstrdup(a + 6);
		} else {
			fprintf(stderr, "kcanary serve: %s '%s'\n",
				a[0] == '-' ? "unrecognized option (or missing value)" : "unexpected argument", a);
			usage(stderr);
			free(web);
			free(job_dirs);
			return 2;
		}
	}
	if (!web)
		web = default_web_dir();
	if (!is_dir(web))
		log_warn("web directory '%s' does not exist: only the API is served", web);
	db_path = cmd_db_path();
	/* Block the signals before libmicrohttpd starts its thread, so they
	 * reach sigwait() below and nothing else. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (api_shared_init(&api, db_path, &err)) {
		log_err("%s", err_text(&err));
		goto out;
	}
	for (size_t i = 0; i < njob_dirs; i++)
		if (api_shared_add_job_dir(&api, job_dirs[i], &err)) {
			fprintf(stderr, "kcanary serve: %s\n", err_text(&err));
			ret = 2;
			goto out;
		}
	opts = (struct http_opts){ .listen = listen, .web_dir = web, .threads = (unsigned)threads,
				   .max_conn_per_ip = (unsigned)max_conn, .handler = api_http_handler(&api) };
	if (http_server_start(&srv, &opts, &err)) {
		log_err("%s", err_text(&err));
		goto out;
	}
	{
		char host[128];
		const char *colon = strrchr(listen, ':');
		snprintf(host, sizeof(host), "%.*s", (int)(colon - listen), listen);
		printf("kcanary serve: listening on http://%s:%u/ (store %s)\n", host,
		       http_server_port(srv), db_path);
		fflush(stdout);
	}
	if (exec) {
		home = cmd_home ? xstrdup(cmd_home) : kc_home();
		struct guest_opts co = { .home = home, .uri = uri };
		if (compare_worker_start(&worker, db_path, &co))
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
	free(home);
	free(db_path);
	free(web);
	free(job_dirs);
	return ret;
}
