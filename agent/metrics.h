/* metrics.h - the daemon's read-only /metrics endpoint in Prometheus' text
 * exposition format (version 0.0.4), for fleets that already scrape.
 * lib/http.h's server on its own thread. The daemon renders the whole text and hands it
 * over with metrics_set(); requests get the latest text.
 */
#ifndef KC_METRICS_H
#define KC_METRICS_H

#include "util.h"

struct metrics;

/*
 * metrics_start - serve GET /metrics on listen ("127.0.0.1:9101",
 * "[::1]:9101"; port 0 binds a free one, see metrics_port()). Anything
 * else is 404, any other method 405. Returns 0, -EINVAL (not host:port
 * with a numeric host) or -errno (cannot bind), err saying which (the
 * HTTP server's words, lib/http.h).
 */
int metrics_start(struct metrics **out, const char *listen, struct buf *err);
unsigned metrics_port(const struct metrics *m);

/* metrics_set - the text to serve from now on (copied). Thread-safe. */
void metrics_set(struct metrics *m, const char *text);

/* metrics_stop - stop serving and free; NULL is fine. */
void metrics_stop(struct metrics *m);

#endif
