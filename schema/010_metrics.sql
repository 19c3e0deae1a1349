-- 010_metrics.sql - the wb-handover summary metrics that 001 did not name,
-- with unit and direction, so `kcanary bisect --metric NAME` and reports
-- know them before any run has stored them. Ingest adds unknown names with
-- no direction (INSERT OR IGNORE): a store that has seen them keeps its rows
-- and gets the unit and direction here. Units and meaning: the agent's
-- summary record (agent/wb_handover.c).
INSERT OR IGNORE INTO metrics (name) VALUES
	('old_worst_lag_s'), ('old_written_bytes'), ('wb_by_id_calls'), ('wb_by_id_enoent'),
	('bdp_pauses'), ('bdp_pause_ms_total'), ('bdp_pause_ms_max'), ('flush_foreign'),
	('inode_switch_wbs');
UPDATE metrics SET unit = 's', better = 'lower' WHERE name = 'old_worst_lag_s' AND unit IS NULL;
UPDATE metrics SET unit = 'bytes', better = 'higher' WHERE name = 'old_written_bytes' AND unit IS NULL;
UPDATE metrics SET unit = 'calls' WHERE name IN ('wb_by_id_calls', 'flush_foreign', 'inode_switch_wbs')
	AND unit IS NULL;
UPDATE metrics SET unit = 'calls', better = 'lower' WHERE name = 'wb_by_id_enoent' AND unit IS NULL;
UPDATE metrics SET unit = 'pauses', better = 'lower' WHERE name = 'bdp_pauses' AND unit IS NULL;
UPDATE metrics SET unit = 'ms', better = 'lower'
	WHERE name IN ('bdp_pause_ms_total', 'bdp_pause_ms_max') AND unit IS NULL;
