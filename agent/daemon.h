/* daemon.h - `kcanary-agent daemon`: the fleet agent. Kept apart from the
 * one-shot `run` path (main.c), which it only starts as a child for its
 * periodic workload runs. See daemon.c and docs/api.md, "Agents". */
#ifndef KC_DAEMON_H
#define KC_DAEMON_H

struct workload;

/*
 * daemon_main - run the daemon until SIGTERM/SIGINT (argv[0] is "daemon").
 * find looks up a workload by name (main.c's table), to check --workload
 * and its knobs before starting. Returns the exit status: 0 stopped by a
 * signal after draining, 1 a fatal error while running, 2 bad usage.
 */
int daemon_main(int argc, char **argv, const struct workload *(*find)(const char *name));

#endif
