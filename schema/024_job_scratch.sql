-- 024_job_scratch.sql - one scratch disk per job (issue 35 item 8): the
-- size every run of the job gets, computed when the job is checked
-- (server/exec/job_check.c) as the largest any of its cells needs
-- (server/guest/scratch.h), so that the runs of one job compare kernels on
-- disks of one size (a filesystem's geometry, ext4's journal or xfs's
-- allocation groups, follows the device's size). scratch_cell: the cell
-- that needs it (its runs' cell text, '' for a job of one cell); NULL when
-- no cell's need is known (commands, fio job files: the floor).
-- scratch_data_bytes: what that cell's workload writes at most.
-- scratch_asked 1: the size was given by name ([job] disk, compare --disk),
-- checked to hold every cell's files.
-- scratch_bytes NULL: a job stored before, each of its runs sized by its
-- own cell, as they were.
ALTER TABLE jobs ADD COLUMN scratch_bytes INTEGER;
ALTER TABLE jobs ADD COLUMN scratch_cell TEXT;
ALTER TABLE jobs ADD COLUMN scratch_data_bytes INTEGER;
ALTER TABLE jobs ADD COLUMN scratch_asked INTEGER NOT NULL DEFAULT 0;
