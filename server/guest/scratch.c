/* scratch.c - the scratch disk's size (see scratch.h). */
#include <errno.h>

#include "error.h"
#include "guest/scratch.h"

#define GIB (1ULL << 30)

/*
 * d = data_bytes + files * 4 KiB: each file's last 4 KiB block may be
 * partly used (ext4, xfs and btrfs all allocate 4 KiB blocks here; a
 * block knob that is no multiple of 4 KiB leaves a partial one per file),
 * and the small files (wb-handover's shutdown file) take a block each.
 *
 * d / 8 (12.5%): what each filesystem takes in proportion to its size, at
 * most: ext4 (mke2fs.conf's default inode_ratio 16384 with 256-byte
 * inodes) 1/64 = 1.6% of the disk in inode tables, and 5% reserved for
 * root (the agent runs as root and may use it; counted anyway); xfs its
 * per-AG btree reservations (finobt, refcountbt with reflink=1), under 2%;
 * btrfs its checksums (4 bytes per 4 KiB, twice with DUP metadata) and
 * extent items, well under 1%.
 *
 * 1 GiB: the fixed part, at most: ext4's journal (e2fsprogs'
 * ext2fs_default_journal_size: 64 MiB up to 16 GiB, 256 MiB up to 64 GiB);
 * xfs's log (64 MiB at these sizes) and its 32 MiB reserve pool (8192
 * blocks); btrfs's first metadata chunk, DUP (2 x 256 MiB), its system
 * chunk, DUP (2 x 8 MiB), and the global reserve inside the metadata.
 *
 * The floor (4 GiB, what every run had before) and whole GiB: the volume
 * is sparse, so headroom costs the host nothing until written.
 */
static uint64_t file_bytes(uint64_t data_bytes, uint64_t files)
{
	/* beyond any disk (an exabyte): no overflow in either function */
	if (data_bytes > (1ULL << 60) || files > (1ULL << 40))
		return UINT64_MAX;
	return data_bytes + files * 4096;
}

uint64_t scratch_disk_bytes(uint64_t data_bytes, uint64_t files)
{
	uint64_t d = file_bytes(data_bytes, files), need;

	if (d == UINT64_MAX)
		return UINT64_MAX;
	need = d + d / 8 + GIB;
	need = (need + GIB - 1) / GIB * GIB;
	return need < SCRATCH_FLOOR_BYTES ? SCRATCH_FLOOR_BYTES : need;
}

static double gib(uint64_t b)
{
	return (double)b / (double)GIB;
}

int scratch_disk_size(uint64_t *out, uint64_t asked, const char *fs, const struct agent_check *c,
		      struct buf *why)
{
	uint64_t need;

	if (!fs)
		fs = "ext4";
	if (!c || !c->ok || c->disk_bytes < 0 || c->disk_files < 0) {
		*out = asked ? asked : SCRATCH_FLOOR_BYTES;
		return 0;
	}
	need = scratch_disk_bytes((uint64_t)c->disk_bytes, (uint64_t)c->disk_files);
	/* a size asked for by name is the user's: refused only when it cannot
	 * hold the files themselves (the headroom is a bound, generous on
	 * small disks) */
	if (asked && asked >= file_bytes((uint64_t)c->disk_bytes, (uint64_t)c->disk_files)) {
		*out = asked;
		return 0;
	}
	if (asked)
		return err_setf(why, -EFBIG, "scratch disk: --disk %.1f GiB cannot hold the %.1f GiB"
				" the workload writes in %lld files (its %s disk needs %.0f GiB with the"
				" filesystem's headroom): give --disk %.0fG or lower %s (--set"
				" KNOB=VALUE)", gib(asked), gib((uint64_t)c->disk_bytes),
				(long long)c->disk_files, fs, gib(need), gib(need),
				c->disk_knobs ? c->disk_knobs : "the workload's knobs");
	if (need > SCRATCH_CAP_BYTES)
		return err_setf(why, -EFBIG, "scratch disk: the workload writes up to %.1f GiB in %lld"
				" files, so its %s disk needs %.0f GiB, above the %.0f GiB a disk is sized"
				" to by itself: lower %s (--set KNOB=VALUE), or give the size by name"
				" (kcanary boot --disk %.0fG)", gib((uint64_t)c->disk_bytes),
				(long long)c->disk_files, fs, gib(need), gib(SCRATCH_CAP_BYTES),
				c->disk_knobs ? c->disk_knobs : "the workload's knobs", gib(need));
	*out = need;
	return 0;
}
