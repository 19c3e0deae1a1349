/* record.h - the agent's output: the record stream of docs/records.md,
 * one JSON object per line, "type" first, written with one
 * write() per record so a host reading live sees each one as it happens.
 *
 * The stream goes to stdout, a file, a character device (a virtio-serial
 * port), or "port:NAME": the virtio-serial port named NAME, found under
 * /sys/class/virtio-ports/ (guests have no udev, so /dev/virtio-ports/NAME
 * does not exist there; see ../shared/notes/guests.md). Encoded by jansson.
 *
 * Records (times t are seconds since the workload started):
 *   hello    agent_version, kernel_release, host, workload, dir, fs_type,
 *            mount_options, params {knob: text as given or default, every
 *            knob}, probes ("loaded", "partial", "unavailable", "not
 *            loaded"), startup_s (agent start to this record)
 *   phase    t, name
 *   sample   t, metric, value
 *   probe    t, name, key, count (cumulative since the probes loaded)
 *   probes_unavailable  t, missing ("name,name"), reason
 *   metric   name, unit (optional), better ("higher" or "lower", optional):
 *            what a metric the workload names is, for the store; sent
 *            before the metric's first sample or summary value
 *   summary  metrics {name: number}, probes [{name, key, count}]
 *   done     status ("ok")
 *   error    message
 */
#ifndef KC_RECORD_H
#define KC_RECORD_H

/* The agent's version, as hello records and registrations give it. */
#define KC_AGENT_VERSION "0.1.0"

#include <jansson.h>
#include <stdint.h>

#include "util.h"

struct rec_out;

/*
 * rec_find_port - the /dev path of the virtio-serial port named name:
 * scans sysfs_root (normally "/sys/class/virtio-ports") for an entry whose
 * "name" file holds name, and returns "/dev/<entry>" (caller frees).
 * Returns 0, -ENOENT (no port of that name) or another -errno.
 */
int rec_find_port(char **out, const char *sysfs_root, const char *name);

/*
 * rec_open - open the stream. spec: NULL or "-" for stdout; "port:NAME"
 * for a virtio-serial port (see rec_find_port); otherwise a path: a
 * character device is opened for writing as is, anything else is created
 * or truncated (0644). *out is freed by rec_close(). Returns 0 or -errno,
 * with a message in err.
 */
int rec_open(struct rec_out **out, const char *spec, struct buf *err);

/* rec_open_fd - a stream on an fd the caller keeps (tests, pipes). */
struct rec_out *rec_open_fd(int fd);

/*
 * rec_open_sink - a stream whose records go to fn(ud, line, len) instead
 * of an fd: line is one record without its newline, borrowed for the call.
 * fn returns 0 or -errno, which rec_emit() returns. (The daemon queues
 * records this way, daemon.c.)
 */
typedef int rec_sink_fn(void *ud, const char *line, size_t len);
struct rec_out *rec_open_sink(rec_sink_fn *fn, void *ud);

/* rec_close - close (stdout and rec_open_fd fds are left open) and free.
 * NULL is fine. */
void rec_close(struct rec_out *r);

/*
 * rec_emit - write one record (steals the reference to obj, which must be
 * an object whose first key is "type"). Returns 0 or -errno (-EIO for an
 * object jansson cannot encode). Safe from one thread at a time.
 */
int rec_emit(struct rec_out *r, json_t *obj);

/* Shorthands for the record types above (0 or -errno). Times are rounded
 * to the millisecond. */
int rec_phase(struct rec_out *r, double t, const char *name);
int rec_sample(struct rec_out *r, double t, const char *metric, double value);
int rec_probe(struct rec_out *r, double t, const char *name, const char *key, int64_t count);
/* A metric record; unit and better may be NULL (better: "higher"/"lower"). */
int rec_metric(struct rec_out *r, const char *name, const char *unit, const char *better);
int rec_done(struct rec_out *r);
int rec_error(struct rec_out *r, const char *message);

/* Round to the millisecond, for t and lag values. */
double rec_ms(double s);

#endif
