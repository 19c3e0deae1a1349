-- 007_job_owner.sql: which coordinator is carrying a job out ("pid@host"),
-- so that a job left 'running' by a dead coordinator can be told from one
-- that another process is running right now (kcanary resume, kcanary serve).
ALTER TABLE jobs ADD COLUMN owner TEXT;
