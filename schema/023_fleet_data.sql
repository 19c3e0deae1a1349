-- 023_fleet_data.sql - the fleet's own data usable (issue 35): the fleet
-- job's headline metric is what its passive runs stream (dirty_pages,
-- /proc/vmstat nr_dirty), not the guest workload's worst_lag_s, which no
-- fleet run has; each stream's run remembers when its last record came
-- (host_runs.last_record_at, stamped per batch: `kcanary status fleet`
-- says how long ago).
UPDATE jobs SET metric = 'dirty_pages'
	WHERE name = 'fleet' AND kind = 'canary' AND metric = 'worst_lag_s';
ALTER TABLE host_runs ADD COLUMN last_record_at TEXT;
