-- 022_skipped_runs.sql - a run of a variant without a kernel (its patches
-- did not apply, its kernel did not build) never runs: such runs are
-- stored 'skipped' with why (server/exec/compare.c, issue 35 item 13).
-- Stores from before kept them 'pending' for ever, and a finished job's
-- report said it was unfinished ("2 of 14 runs pending"): they become
-- what they are. No other run changes.
UPDATE runs SET status = 'skipped',
	error = 'not run: variant ''' || (SELECT v.name FROM variants v WHERE v.id = runs.variant_id)
		|| ''' has no kernel (' || (SELECT v.status FROM variants v WHERE v.id = runs.variant_id)
		|| CASE (SELECT v.status FROM variants v WHERE v.id = runs.variant_id)
		   WHEN 'apply-failed' THEN ': its patches did not apply)'
		   ELSE ': its kernel did not build)' END,
	finished_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')
	WHERE status = 'pending' AND variant_id IN
		(SELECT id FROM variants WHERE status IN ('apply-failed', 'build-failed'));
