#!/bin/sh
# t_compare_writers.sh - concurrent writers with real guests (issue 18,
# item 8): tests/fault/f_writers.sh with WRITERS_GUESTS=1, i.e. `kcanary
# serve` taking 16 fleet agents, 3 CLI `kcanary ingest` loops and CLI
# readers on one store while a CLI `kcanary compare` of real TCG guests
# (the Debian cloud kernel, --aa, 1-vCPU guests, the short workload) writes
# its job, runs, records and console tails into the same store. Checks (in
# f_writers.sh): no "database is locked" (nor any busy text) reaches any
# output or log, every agent record and every ingested run is stored
# exactly once, the compare job is done with each planned run ok once,
# integrity_check ok. About 2 minutes on 2 cores.
set -u
. tests/integration/guest-lib.sh
WRITERS_GUESTS=1 WRITERS_GUEST_REPEAT=${WRITERS_GUEST_REPEAT:-1} KCANARY_TEST_KERNEL=$KERNEL \
	B=$B sh tests/fault/f_writers.sh || fail "concurrent writers beside a guest compare (above)"
