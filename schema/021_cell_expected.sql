-- 021_cell_expected.sql - what the agent's check said of each matrix cell
-- of a job when the job was stored (server/exec/job_check.c): the run's
-- expected length, the base of its guest's watchdog. A cell is its runs'
-- params_json (workload, knobs, sysctls, fs); every run of the job with
-- those params reads it (server/guest/guest_run.c) instead of spawning
-- `kcanary-agent check` again. expected_s NULL: the agent cannot tell (a
-- command without timeout_s). A job stored before this table has no rows:
-- its runs ask the agent, as they did.
CREATE TABLE job_cells (
	job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	params_json TEXT NOT NULL,
	expected_s REAL,
	PRIMARY KEY (job_id, params_json)
);
