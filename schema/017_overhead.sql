-- 017_overhead.sql - where each run's wall time went (issue 19 item 5;
-- server/store/db_overhead.h): one row per run that the run service carried
-- through a guest (guest_run.c), every phase in whole milliseconds of the
-- coordinator's monotonic clock, consecutive, so that the phases sum to
-- wall_ms exactly. Overhead is everything but workload_ms.
CREATE TABLE run_overhead (
	run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
	wall_ms INTEGER NOT NULL,      -- the run service's start to its end
	image_ms INTEGER NOT NULL,     -- the agent's check, root filesystem and initramfs
	upload_ms INTEGER NOT NULL,    -- connection, volumes into the pool, scratch disk
	create_ms INTEGER NOT NULL,    -- domain created paused, streams opened, resumed
	boot_ms INTEGER NOT NULL,      -- resumed to the agent's hello, less mkfs_ms
	mkfs_ms INTEGER NOT NULL,      -- mkfs and mount of the scratch disk (/init's figure)
	workload_ms INTEGER NOT NULL,  -- hello to the agent's done (or the guest's end)
	teardown_ms INTEGER NOT NULL   -- done to the run stored, guest and volume gone
);
