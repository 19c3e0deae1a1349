-- 020_overlap.sql - when builds ended, so that a compare whose runs
-- overlap its builds (server/exec/compare.c, lab.c) shows it in the store:
-- kernels.built_at is when make ended (ok or failed, server/kernel/build.c);
-- variants.kernel_at is when the job's variant got its outcome (its
-- kernel, or apply/build failed), i.e. when its runs could start.
-- runs.started_at (001) is when each run started.
ALTER TABLE kernels ADD COLUMN built_at TEXT;
ALTER TABLE variants ADD COLUMN kernel_at TEXT;
