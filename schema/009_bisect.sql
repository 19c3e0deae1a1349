-- 009_bisect.sql - the event log of a bisection (jobs.kind = 'bisect'):
-- bisect_log.c's line format, preceded by '# candidate IDX SHA SUBJECT'
-- comment lines; rewritten after every run, so a bisection that dies
-- keeps the log of what it measured. `kcanary bisect log JOB` prints it.
CREATE TABLE bisect_logs (
	job_id INTEGER PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,
	log TEXT NOT NULL
);
