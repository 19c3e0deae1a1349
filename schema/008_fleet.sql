-- 008_fleet.sql: fleet hosts running `kcanary-agent daemon` (docs/api.md,
-- "Agents"), their record sequence state, and which run each of their
-- streams is stored in.

-- One host, named by the agent (its machine id or --host-id).
CREATE TABLE hosts (
	id INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE,
	kernel_release TEXT,           -- `uname -r` at the last registration
	boot_id TEXT,                  -- /proc/sys/kernel/random/boot_id
	labels_json TEXT NOT NULL DEFAULT '{}', -- {"k": "v"} from --labels
	agent_version TEXT,
	token TEXT,                    -- name of the token it last used
	first_seen TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
	last_seen TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
	-- Records carry a per-agent sequence number 1, 2, 3, …; every record
	-- below next_seq is stored exactly once, none at or above it.
	next_seq INTEGER NOT NULL DEFAULT 1,
	records INTEGER NOT NULL DEFAULT 0,     -- records stored (raw lines included)
	duplicates INTEGER NOT NULL DEFAULT 0,  -- records received again and dropped
	heartbeat_json TEXT                     -- the last heartbeat's body
);

-- The run each of a host's streams goes to: its passive probes (one run per
-- boot, key "passive:<boot_id>") and each workload run (key chosen by the
-- agent). line_no continues the run's line numbering across requests.
CREATE TABLE host_runs (
	host_id INTEGER NOT NULL REFERENCES hosts(id) ON DELETE CASCADE,
	run_key TEXT NOT NULL,
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	line_no INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (host_id, run_key)
) WITHOUT ROWID;
CREATE INDEX host_runs_run ON host_runs(run_id);
