-- 015_rootfs.sql - guest root filesystems (server/guest/rootfs.h): one row per
-- image built or found in the cache, keyed by its content hash (the sorted
-- package set with resolved versions, the agent's and the files' hashes),
-- with the packages installed in it and the files copied in; each run that
-- booted one names it in runs.rootfs_hash (NULL: the built-in initramfs).
CREATE TABLE rootfs_images (
	hash TEXT PRIMARY KEY,          -- sha256 hex, also the file name
	spec TEXT NOT NULL,             -- as given: debian:fio,bpftrace
	packages TEXT NOT NULL,         -- "name version" lines, sorted, as installed
	files_json TEXT NOT NULL DEFAULT '[]', -- [{"src","dst","sha256"}]
	path TEXT NOT NULL,             -- the squashfs image on the coordinator
	size_bytes INTEGER,
	build_s REAL,                   -- wall time of the build; NULL: not built here
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
ALTER TABLE runs ADD COLUMN rootfs_hash TEXT REFERENCES rootfs_images(hash);
