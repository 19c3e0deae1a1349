-- 013_lab.sql: lab hosts (server/exec/lab.c), libvirt hosts that run guests,
-- distinct from the fleet's hosts (agents on production machines), and the
-- 'infra' run status: a run its host failed (unreachable, the connection
-- dropped mid-run), never a result; the scheduler runs it again elsewhere.
CREATE TABLE lab_hosts (
	id INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE,
	uri TEXT NOT NULL,
	slots INTEGER NOT NULL DEFAULT 1 CHECK (slots >= 1),
	labels_json TEXT NOT NULL DEFAULT '{}',  -- {"cpu": "epyc"}
	state TEXT NOT NULL DEFAULT 'unknown' CHECK (state IN ('unknown', 'up', 'down')),
	state_why TEXT,
	fails_in_row INTEGER NOT NULL DEFAULT 0, -- consecutive infra runs
	accel TEXT,                              -- what `lab check` found: kvm or tcg
	cpus INTEGER,
	memory_mib INTEGER,
	free_mib INTEGER,
	libvirt_version TEXT,
	qemu_version TEXT,
	checked_at TEXT,
	last_run_at TEXT,
	added_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);

-- The lab host a run went to (its name; NULL before placement or for runs
-- not booted by kcanary).
ALTER TABLE runs ADD COLUMN lab_host TEXT;

-- SQLite cannot alter a CHECK constraint; widening the list of allowed
-- values is the one change its documentation allows through
-- writable_schema ("Making Other Kinds Of Table Schema Changes",
-- https://sqlite.org/lang_altertable.html): no stored row can violate it.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(sql, '''skipped'')', '''skipped'', ''infra'')')
	WHERE type = 'table' AND name = 'runs' AND sql NOT LIKE '%''infra''%';
PRAGMA writable_schema = RESET;
