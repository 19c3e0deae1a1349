/* cgroup.h - cgroup v2 helpers for the agent's workloads: find the
 * hierarchy, enable controllers, create, limit, move a process, and remove
 * a whole subtree (killing what runs in it), also a stale one left by a
 * crashed run. Paths are absolute directories under the cgroup2 mount.
 */
#ifndef KC_CGROUP_H
#define KC_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* cg_root - the cgroup2 mount point, from /proc/self/mounts (caller frees).
 * Returns 0 or -ENOENT (no cgroup2 mounted). */
int cg_root(char **out);

/* cg_has_controller - whether controller ("memory", "io") is listed in
 * path/cgroup.controllers. */
bool cg_has_controller(const char *path, const char *controller);

/* cg_write - write value to path/file. Returns 0 or -errno. */
int cg_write(const char *path, const char *file, const char *value);

/* cg_enable - "+ctrl" into path/cgroup.subtree_control for each of the
 * space-separated controllers in ctrls ("memory io"). 0 or -errno. */
int cg_enable(const char *path, const char *ctrls);

/* cg_set_max - write limit_bytes (UINT64_MAX = "max") to path/memory.max. */
int cg_set_max(const char *path, uint64_t limit_bytes);

/* cg_create - mkdir path (an existing one is an error: -EEXIST). */
int cg_create(const char *path);

/* cg_move - move process pid (0 = the caller) into path. 0 or -errno. */
int cg_move(const char *path, pid_t pid);

/*
 * cg_remove_tree - remove path and every cgroup below it, deepest first,
 * SIGKILLing the processes in each (cgroup.kill where the kernel has it)
 * and waiting up to timeout_s for them to go. A path that does not exist
 * is fine (0). Returns 0 or -errno of the first rmdir that kept failing
 * (-EBUSY: a process would not die).
 */
int cg_remove_tree(const char *path, double timeout_s);

#endif
