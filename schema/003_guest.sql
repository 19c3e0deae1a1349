-- 003_guest.sql: how a run's guest was booted (server/guest/runner.c), so a run
-- can be told apart and repeated: a JSON object with the libvirt URI and
-- domain name, kernel, initrd, the kernel command line (which carries the
-- filesystem, mkfs and mount options and sysctls: server/guest/image.h), vcpus,
-- memory_mib, disk_bytes and watchdog_s. NULL for runs not booted by kcanary
-- (ingested streams, fleet agents).
ALTER TABLE runs ADD COLUMN guest_json TEXT;
