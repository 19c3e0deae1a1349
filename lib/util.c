/* util.c - see util.h. */
#include <ctype.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>

#include "util.h"

static void oom(size_t size)
{
	fprintf(stderr, "fatal: out of memory allocating %zu bytes\n", size);
	abort();
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);
	if (!p)
		oom(size);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *xrealloc(void *ptr, size_t size)
{
	void *p = realloc(ptr, size ? size : 1);
	if (!p)
		oom(size);
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	return buf_detach(&b);
}

static int buf_grow(struct buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;

	if (b->max_bytes && b->len + extra > b->max_bytes)
		return -E2BIG;
	if (need <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	b->ptr = xrealloc(b->ptr, cap);
	b->cap = cap;
	return 0;
}

int buf_append(struct buf *b, const void *data, size_t len)
{
	int r = buf_grow(b, len);
	if (r)
		return r;
	memcpy(b->ptr + b->len, data, len);
	b->len += len;
	b->ptr[b->len] = '\0';
	return 0;
}

int buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return -EINVAL;
	int r = buf_grow(b, (size_t)n);
	if (r)
		return r;
	vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = buf_vprintf(b, fmt, ap);
	va_end(ap);
	return r;
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->ptr)
		b->ptr[0] = '\0';
}

void buf_release(struct buf *b)
{
	free(b->ptr);
	b->ptr = NULL;
	b->len = b->cap = 0;
}

char *buf_detach(struct buf *b)
{
	char *s = b->ptr ? b->ptr : xstrdup("");
	b->ptr = NULL;
	b->len = b->cap = 0;
	return s;
}

const char *buf_str(const struct buf *b)
{
	return b->ptr ? b->ptr : "";
}

double clock_mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double clock_wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void clock_iso8601(char *out, size_t size, double wall_s)
{
	time_t t = (time_t)wall_s;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int parse_size(uint64_t *out, const char *s, bool allow_max)
{
	char *end;
	unsigned long long v;
	uint64_t mult = 1;

	if (!s || !*s)
		return -EINVAL;
	if (allow_max && !strcmp(s, "max")) {
		*out = UINT64_MAX;
		return 0;
	}
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (toupper((unsigned char)*end)) {
	case '\0': break;
	case 'K': mult = 1ULL << 10; end++; break;
	case 'M': mult = 1ULL << 20; end++; break;
	case 'G': mult = 1ULL << 30; end++; break;
	case 'T': mult = 1ULL << 40; end++; break;
	default: return -EINVAL;
	}
	if (mult > 1) {
		if (*end == 'i')
			end++;
		if (*end == 'B' || *end == 'b')
			end++;
	} else if (*end == 'B' || *end == 'b') {
		end++;
	}
	if (*end)
		return -EINVAL;
	if (v > UINT64_MAX / mult)
		return -EINVAL;
	*out = v * mult;
	return 0;
}

int parse_duration_s(double *out, const char *s)
{
	char *end;
	double v, mult = 1;

	if (!s || !*s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || !isfinite(v) || v < 0)
		return -EINVAL;
	if (!strcmp(end, "") || !strcmp(end, "s"))
		mult = 1;
	else if (!strcmp(end, "ms"))
		mult = 0.001;
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		mult = 60;
	else if (!strcmp(end, "h"))
		mult = 3600;
	else
		return -EINVAL;
	*out = v * mult;
	return 0;
}

int mkdir_p(const char *path, unsigned mode)
{
	char *p = xstrdup(path);
	int r = 0;

	for (char *s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, mode) && errno != EEXIST) {
				r = -errno;
				break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	free(p);
	return r;
}

int read_file(char **out, size_t *len_out, const char *path, size_t max_bytes)
{
	FILE *f = fopen(path, "rb");
	struct buf b = BUF_INIT_MAX(max_bytes);
	char chunk[65536];
	size_t n;
	int r = 0;

	struct stat st;

	if (!f)
		return -errno;
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		return -EISDIR;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if ((r = buf_append(&b, chunk, n)) < 0) {
			r = -EFBIG;
			goto out;
		}
	}
	if (ferror(f)) {
		r = -EIO;
		goto out;
	}
	if (len_out)
		*len_out = b.len;
	*out = buf_detach(&b);
out:
	buf_release(&b);
	fclose(f);
	return r;
}

int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int parse_listen(struct sockaddr_storage *out, unsigned *len_out, const char *listen)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai = NULL;
	char host[128], *port, *end;
	int r = -EINVAL;

	if (strlen(listen) >= sizeof(host))
		return -EINVAL;
	strcpy(host, listen);
	port = strrchr(host, ':');
	if (!port || port == host)
		return -EINVAL;
	*port++ = '\0';
	if (!*port || strtoul(port, &end, 10) > 65535 || *end)
		return -EINVAL;
	if (host[0] == '[') {
		size_t n = strlen(host);
		if (host[n - 1] != ']')
			return -EINVAL;
		host[n - 1] = '\0';
		memmove(host, host + 1, n - 1);
	}
	if (getaddrinfo(host, port, &hints, &ai) || !ai)
		return -EINVAL;
	if (ai->ai_addrlen <= sizeof(*out)) {
		memcpy(out, ai->ai_addr, ai->ai_addrlen);
		*len_out = (unsigned)ai->ai_addrlen;
		r = 0;
	}
	freeaddrinfo(ai);
	return r;
}

char *exe_sibling(const char *env, const char *rel, const char *probe, const char *fallback)
{
	const char *v = env ? getenv(env) : NULL;
	char exe[PATH_MAX], *slash;
	ssize_t n;

	if (v && *v)
		return xstrdup(v);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/'))) {
			*slash = '\0';
			char *d = xasprintf("%s/%s", exe, rel);
			char *p = probe ? xasprintf("%s/%s", d, probe) : xstrdup(d);
			bool ok = access(p, F_OK) == 0;

			free(p);
			if (ok)
				return d;
			free(d);
		}
	}
	return xstrdup(fallback);
}

/* Field 22 (starttime) of /proc/PID/stat, 0 when the process is gone. The
 * command name (field 2) may hold spaces and ')': parse after its last ')'. */
static unsigned long long proc_start_ticks(int pid)
{
	char path[64], *text = NULL, *p;
	unsigned long long start = 0;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_file(&text, &len, path, 4096))
		return 0;
	p = strrchr(text, ')');
	/* after ") ": state is field 3, starttime field 22: skip 19 fields */
	for (int f = 0; p && f < 20; f++)
		p = strchr(p + 1, ' ');
	if (p)
		start = strtoull(p + 1, NULL, 10);
	free(text);
	return start;
}

static void boot_id(char *out, size_t size)
{
	char *text = NULL;
	size_t len;

	snprintf(out, size, "-");
	if (read_file(&text, &len, "/proc/sys/kernel/random/boot_id", 128) == 0) {
		text[strcspn(text, "\n")] = '\0';
		snprintf(out, size, "%s", text);
	}
	free(text);
}

char *proc_identity(void)
{
	char host[256] = "", boot[64];
	int pid = (int)getpid();

	gethostname(host, sizeof(host) - 1);
	boot_id(boot, sizeof(boot));
	return xasprintf("%d %llu %s %s", pid, proc_start_ticks(pid), boot, host[0] ? host : "-");
}

bool proc_identity_alive(const char *identity, int *pid_out)
{
	char host[256] = "", boot[64], their_boot[64], their_host[256];
	unsigned long long start;
	int pid;

	if (pid_out)
		*pid_out = 0;
	if (!identity || sscanf(identity, "%d %llu %63s %255s", &pid, &start, their_boot,
				their_host) != 4 || pid <= 0)
		return true;
	if (pid_out)
		*pid_out = pid;
	gethostname(host, sizeof(host) - 1);
	if (strcmp(their_host, host[0] ? host : "-"))
		return true;
	boot_id(boot, sizeof(boot));
	if (strcmp(their_boot, boot))
		return false;
	return proc_start_ticks(pid) == start;
}

void buf_free_space(struct buf *out, const char *path)
{
	struct statvfs sv;
	char *dir;

	if (!path)
		return;
	dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	else
		strcpy(dir, ".");
	if (statvfs(dir, &sv) == 0)
		buf_printf(out, ": %llu KiB free of %llu KiB in '%s'",
			   (unsigned long long)sv.f_bavail * sv.f_frsize / 1024,
			   (unsigned long long)sv.f_blocks * sv.f_frsize / 1024, dir);
	free(dir);
}
