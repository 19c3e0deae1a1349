/* util.h - memory helpers that abort on OOM, the growable buffer, the clock.
 *
 * Shared by kcanary and kcanary-agent. Out of memory is fatal (the message
 * names the size), as in git and redis; every other failure is an error
 * code returned to the caller.
 */
#ifndef KC_UTIL_H
#define KC_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *ptr, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* Formatted string in a new heap buffer; the caller frees it. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * struct buf - growable byte buffer, always NUL-terminated once it holds
 * anything. Valid after BUF_INIT (ptr may be NULL until the first append).
 * max_bytes bounds its length (0 = unbounded); an append past it returns
 * -E2BIG and leaves the buffer as it was (curl's dynbuf does the same).
 * buf_release() frees; buf_detach() hands the string to the caller.
 */
struct buf {
	char *ptr;
	size_t len;
	size_t cap;
	size_t max_bytes;
};
#define BUF_INIT { NULL, 0, 0, 0 }
#define BUF_INIT_MAX(m) { NULL, 0, 0, (m) }

int buf_append(struct buf *b, const void *data, size_t len);
int buf_puts(struct buf *b, const char *s);
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int buf_vprintf(struct buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void buf_reset(struct buf *b);
void buf_release(struct buf *b);
/* Returns the string (never NULL: "" for an empty buffer), owned by the
 * caller, and leaves the buffer empty. */
char *buf_detach(struct buf *b);
/* The contents as a C string; "" for an empty buffer. Borrowed. */
const char *buf_str(const struct buf *b);

/*
 * The clock, behind one function each, so that a test that needs fixed
 * time has one place to pin it. (Nothing pins it today: the store's
 * timestamps come from SQLite's 'now', db_runs.c and db_fleet.c.)
 * clock_mono_s(): seconds from CLOCK_MONOTONIC.
 * clock_wall_s(): seconds since the epoch.
 */
double clock_mono_s(void);
double clock_wall_s(void);
/* Format wall time as "2026-11-29T22:14:13Z" into out (>= 21 bytes). */
void clock_iso8601(char *out, size_t size, double wall_s);

/*
 * parse_size - parse "4G", "512M", "4096", "max" into bytes.
 * Suffixes K, M, G, T are binary (KiB…), case-insensitive, optional "i"/"iB".
 * "max" gives UINT64_MAX when allow_max is set. Returns 0 or -EINVAL.
 */
int parse_size(uint64_t *out, const char *s, bool allow_max);

/*
 * parse_duration_s - parse "120", "120s", "2m", "1h", "1.5s" into seconds.
 * Returns 0 or -EINVAL.
 */
int parse_duration_s(double *out, const char *s);

/* write(2) all of p, retrying on EINTR and short writes; 0 or -errno. */
int write_all(int fd, const void *p, size_t len);

struct sockaddr_storage;
/*
 * parse_listen - "host:port" or "[v6]:port" with a numeric host (no name
 * lookups: a server binds where it is told) into out (*len_out bytes).
 * Port 0 is allowed. -EINVAL for anything else.
 */
int parse_listen(struct sockaddr_storage *out, unsigned *len_out, const char *listen);

/*
 * exe_sibling - where an installed file of kcanary's is: the value of the
 * environment variable env when set, else <the running binary's dir>/rel
 * when it holds probe (a file or directory under it; NULL: rel itself must
 * exist), else fallback. A new string (caller frees).
 */
char *exe_sibling(const char *env, const char *rel, const char *probe, const char *fallback);

/* buf_free_space - append ": N KiB free of M KiB in 'DIR'" for the file
 * system holding path (its directory): what a user needs to know about a
 * full disk (statvfs f_bavail, f_blocks); nothing when it cannot tell or
 * path is NULL. */
void buf_free_space(struct buf *out, const char *path);

/* mkdir -p; 0 or -errno. */
int mkdir_p(const char *path, unsigned mode);

/* Read a whole file into a new NUL-terminated buffer (caller frees *out).
 * Returns 0 or -errno; -EFBIG when it is larger than max_bytes. */
int read_file(char **out, size_t *len_out, const char *path, size_t max_bytes);

/*
 * proc_identity - who this process is, in a form that outlives it: "PID
 * START BOOT HOST" (START: its start time in clock ticks since boot, field
 * 22 of /proc/PID/stat; BOOT: /proc/sys/kernel/random/boot_id; HOST: the
 * host name), so that a reused pid or a reboot is not taken for it. New
 * string, caller frees.
 */
char *proc_identity(void);

/*
 * proc_identity_alive - is the process proc_identity() named still
 * running? false when its pid is gone, started at another time or the host
 * rebooted since; true when it runs, and for another host's process or a
 * text that is not an identity (it cannot be checked from here, so it is
 * not declared dead). *pid_out (may be NULL) gets its pid, 0 if none.
 */
bool proc_identity_alive(const char *identity, int *pid_out);

#endif
