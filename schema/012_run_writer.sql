-- 012_run_writer.sql: which process is storing a run's records
-- (util.h proc_identity(): "PID START BOOT HOST"), set by kcanary ingest,
-- so that a run left 'running' by a writer that was killed or crashed is
-- told from a live one (db_runs_reap: it becomes 'interrupted', with the
-- reason) and its repeat can be ingested again.
ALTER TABLE runs ADD COLUMN writer TEXT;
