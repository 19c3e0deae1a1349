-- 012_faults.sql (issue 18, faults and hostile input):
-- runs.writer: which process is storing a run's records (util.h
-- proc_identity(): "PID START BOOT HOST"), set by kcanary ingest, so that
-- a run left 'running' by a writer that was killed or crashed is told from
-- a live one (db_runs_reap: it becomes 'interrupted', with the reason) and
-- its repeat can be ingested again.
ALTER TABLE runs ADD COLUMN writer TEXT;
-- tokens.scopes: what a token may do (token.h: read, submit, admin,
-- agent:HOST, agent:*), space-separated; NULL for a token made before
-- scopes, which keeps what it could do then (token_default_scopes()).
ALTER TABLE tokens ADD COLUMN scopes TEXT;
