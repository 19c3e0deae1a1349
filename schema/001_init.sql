-- 001_init.sql: the results store (see server/store/db.h and DESIGN.md).
-- Times are ISO 8601 UTC text; durations and sample times are seconds (REAL).
-- Statuses are closed sets checked here, so a bad write fails loudly.

-- One kernel image: built from a tree at a commit with a config, or prebuilt.
CREATE TABLE kernels (
	id INTEGER PRIMARY KEY,
	source TEXT NOT NULL DEFAULT 'build' CHECK (source IN ('build', 'prebuilt')),
	tree_oid TEXT,                 -- git tree id built (hex); the commit is in variants.commit_oid
	config_hash TEXT,              -- git blob id of the merged .config (git hash-object)
	release TEXT,                  -- `uname -r` of the image, when known
	image_path TEXT,               -- bzImage
	config_path TEXT,
	system_map_path TEXT,
	modules_dir TEXT,              -- /lib/modules/<release> for modular kernels
	build_status TEXT NOT NULL DEFAULT 'pending'
		CHECK (build_status IN ('pending', 'building', 'ok', 'failed')),
	build_log_path TEXT,
	build_error TEXT,              -- first error line, "file:line: message"
	build_s REAL,
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
	UNIQUE (tree_oid, config_hash)
);

-- A patch series as it came off the list; one row per revision (vN).
CREATE TABLE series (
	id INTEGER PRIMARY KEY,
	name TEXT NOT NULL,            -- slug from the cover letter or change-id
	version INTEGER NOT NULL DEFAULT 1,
	change_id TEXT,
	base_commit TEXT,              -- from the cover letter's base-commit:
	subject TEXT,                  -- cover letter subject, without [PATCH …]
	npatches INTEGER NOT NULL DEFAULT 0,
	source_path TEXT,              -- the mbox it was read from
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
	UNIQUE (name, version)
);

CREATE TABLE patches (
	id INTEGER PRIMARY KEY,
	series_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
	k INTEGER NOT NULL,            -- position, 1-based; 0 is the cover letter
	m INTEGER NOT NULL,            -- total in the revision
	subject TEXT NOT NULL,
	author TEXT,
	date TEXT,
	message_id TEXT,
	patch_id TEXT,                 -- stable patch-id, for prerequisite-patch-id
	UNIQUE (series_id, k)
);

-- A job: one compare, bisect, canary or ad-hoc set of runs.
CREATE TABLE jobs (
	id INTEGER PRIMARY KEY,
	name TEXT NOT NULL,
	kind TEXT NOT NULL DEFAULT 'adhoc'
		CHECK (kind IN ('adhoc', 'compare', 'bisect', 'canary')),
	status TEXT NOT NULL DEFAULT 'pending'
		CHECK (status IN ('pending', 'building', 'running', 'done', 'failed',
		                  'cancelled', 'interrupted')),
	spec_json TEXT NOT NULL DEFAULT '{}', -- full resolved spec, for rerun
	seed INTEGER NOT NULL DEFAULT 0,      -- run-order shuffle seed
	metric TEXT NOT NULL DEFAULT 'worst_lag_s', -- headline metric
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
	started_at TEXT,
	finished_at TEXT,
	error TEXT
);
CREATE INDEX jobs_name ON jobs(name);

-- A variant: one kernel configuration compared in a job (base, + v6 2/3, …).
-- idx orders variants in reports; idx 0 is the baseline.
CREATE TABLE variants (
	id INTEGER PRIMARY KEY,
	job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	idx INTEGER NOT NULL,
	name TEXT NOT NULL,
	base_rev TEXT,                 -- commit-ish as the user gave it
	commit_oid TEXT,               -- resolved commit (after applying patches)
	series_id INTEGER REFERENCES series(id),
	patches TEXT,                  -- subset, "2-3"
	kernel_id INTEGER REFERENCES kernels(id),
	status TEXT NOT NULL DEFAULT 'pending'
		CHECK (status IN ('pending', 'ok', 'apply-failed', 'build-failed')),
	error TEXT,
	spec_json TEXT NOT NULL DEFAULT '{}',
	UNIQUE (job_id, name),
	UNIQUE (job_id, idx)
);

-- A run: one boot of one variant's kernel running the workload once.
CREATE TABLE runs (
	id INTEGER PRIMARY KEY,
	job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	variant_id INTEGER NOT NULL REFERENCES variants(id) ON DELETE CASCADE,
	kernel_id INTEGER REFERENCES kernels(id),
	seq INTEGER NOT NULL DEFAULT 0,      -- position in the job's run order
	repeat_idx INTEGER NOT NULL,         -- 1-based repeat within its cell
	fs TEXT,
	params_json TEXT NOT NULL DEFAULT '{}', -- workload knobs, sysctls
	cell TEXT NOT NULL DEFAULT '',       -- canonical matrix cell ("fs=ext4 mode=removed")
	status TEXT NOT NULL DEFAULT 'pending'
		CHECK (status IN ('pending', 'running', 'ok', 'incomplete', 'failed',
		                  'timeout', 'kernel-panic', 'paused', 'interrupted',
		                  'skipped')),
	accel TEXT CHECK (accel IS NULL OR accel IN ('kvm', 'tcg', 'host')),
	host TEXT,
	kernel_release TEXT,
	agent_version TEXT,
	hello_json TEXT,
	started_at TEXT,
	finished_at TEXT,
	error TEXT,
	console_log_path TEXT,
	console_tail TEXT,
	records INTEGER NOT NULL DEFAULT 0,  -- records stored
	bad_lines INTEGER NOT NULL DEFAULT 0,-- lines kept raw
	UNIQUE (variant_id, cell, repeat_idx)
);
CREATE INDEX runs_job ON runs(job_id, seq);

-- Metric names with their unit and direction (lower or higher is better).
CREATE TABLE metrics (
	id INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE,
	unit TEXT,
	better TEXT CHECK (better IS NULL OR better IN ('lower', 'higher'))
);
INSERT INTO metrics (name, unit, better) VALUES
	('lag_s', 's', 'lower'),
	('worst_lag_s', 's', 'lower'),
	('mean_lag_s', 's', 'lower'),
	('lag_over_1s_s', 's', 'lower'),
	('written_bytes', 'bytes', 'higher'),
	('rate_mbps', 'MB/s', 'higher'),
	('dirty_pages', 'pages', 'lower'),
	('writeback_pages', 'pages', 'lower'),
	('bdp_pause_s', 's', 'lower');

-- Per-second samples. metric_id keeps rows small; t_s is seconds since the
-- workload started.
CREATE TABLE samples (
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	metric_id INTEGER NOT NULL REFERENCES metrics(id),
	t_s REAL NOT NULL,
	value REAL NOT NULL
);
CREATE INDEX samples_run ON samples(run_id, metric_id, t_s);

-- Probe counters (cumulative count at t_s), e.g. cgroup_writeback_by_id / -2.
CREATE TABLE probes (
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	t_s REAL,                      -- NULL for the summary's final counts
	name TEXT NOT NULL,
	key TEXT NOT NULL DEFAULT '',
	count INTEGER NOT NULL
);
CREATE INDEX probes_run ON probes(run_id, name, key);

CREATE TABLE phases (
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	t_s REAL NOT NULL,
	name TEXT NOT NULL
);
CREATE INDEX phases_run ON phases(run_id);

-- The agent's summary: one value per metric per run.
CREATE TABLE run_summary (
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	metric TEXT NOT NULL,
	value REAL NOT NULL,
	PRIMARY KEY (run_id, metric)
) WITHOUT ROWID;

-- Notes the agent sent about its run (probes_unavailable, warnings).
CREATE TABLE run_notes (
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	t_s REAL,
	kind TEXT NOT NULL,
	text TEXT NOT NULL
);
CREATE INDEX run_notes_run ON run_notes(run_id);

-- Lines that did not parse as records, kept as they came.
CREATE TABLE raw_lines (
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	line_no INTEGER NOT NULL,
	reason TEXT NOT NULL,
	text TEXT NOT NULL
);
CREATE INDEX raw_lines_run ON raw_lines(run_id);

-- API tokens: only the sha256 of the secret is stored.
CREATE TABLE tokens (
	id INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE,
	hash TEXT NOT NULL UNIQUE,
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
