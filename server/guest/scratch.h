/* scratch.h - the size of a run's scratch disk (the test filesystem the
 * workload writes on), from what the agent's check says the workload
 * writes with the run's knobs (agent_check.h: disk_bytes, disk_files).
 * Pure arithmetic: no I/O, any thread.
 */
#ifndef KC_SCRATCH_H
#define KC_SCRATCH_H

#include <stdint.h>

#include "guest/agent_check.h"
#include "util.h"

/* The smallest scratch disk, and the size of one whose workload the agent
 * cannot size (a command, a fio job file): 4 GiB, every run's disk before
 * it was sized. */
#define SCRATCH_FLOOR_BYTES (4ULL << 30)
/* The largest disk sized by itself: a sparse volume, but the workload's
 * bytes land on the host's pool for real. A larger one is asked for by
 * name (kcanary boot --disk, compare --disk, [job] disk). */
#define SCRATCH_CAP_BYTES (64ULL << 30)
/* The largest disk asked for by name: 16 TiB, the largest file ext4 holds
 * with 4 KiB blocks (the kernel's Documentation/filesystems/ext4/
 * overview.rst, "File size"), a pool's volume being such a file. */
#define SCRATCH_ASKED_MAX_BYTES (16ULL << 40)

/*
 * scratch_disk_bytes - the scratch disk for a workload that writes at most
 * data_bytes of file data into files files, on ext4, xfs or btrfs:
 *
 *   d    = data_bytes + files * 4 KiB
 *   size = max(SCRATCH_FLOOR_BYTES, roundup(d + d / 8 + 1 GiB, 1 GiB))
 *
 * see scratch.c for where each term comes from. Saturates at UINT64_MAX.
 */
uint64_t scratch_disk_bytes(uint64_t data_bytes, uint64_t files);

/*
 * scratch_disk_size - the disk for a run: asked (> 0: the size the user
 * gave, kcanary boot --disk) or sized from the agent's check c (ok) with
 * scratch_disk_bytes() (SCRATCH_FLOOR_BYTES when c says nothing). fs names
 * the filesystem in messages (NULL: ext4). 0 with *out, or -EFBIG with why
 * (the size needed, what the workload writes, the knobs to lower, --disk)
 * when the size needed is above SCRATCH_CAP_BYTES, or when asked cannot
 * hold the files themselves (d of scratch_disk_bytes(): a size asked for
 * is otherwise the user's, below the headroom or above the cap).
 */
int scratch_disk_size(uint64_t *out, uint64_t asked, const char *fs, const struct agent_check *c,
		      struct buf *why);

#endif
