-- 018_distcc.sql - the distcc farm a kernel was built on (kcanary build,
-- compare and bisect --distcc HOSTS, [job] distcc; server/kernel/build.c): its
-- DISTCC_HOSTS, NULL for a build on this machine alone.
ALTER TABLE kernels ADD COLUMN distcc_hosts TEXT;
