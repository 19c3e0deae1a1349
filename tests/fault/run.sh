#!/bin/sh
# Fault-injection tests (issue 18): each tests/fault/f_*.sh injects its
# faults for real and prints "fault-table: FAULT|INJECTIONS|SURVIVED|LOST"
# (LOST measured by the test, "-" where no record goes through the fault)
# lines; the unit tests that inject faults (a damaged spool, hostile HTTP,
# token scopes, confined job files) are run and reported by name. Prints
# the table and exits 1 when a test failed, a fault was not survived or a
# record was lost. SOAK=1 (make soak) runs the long versions (20 agent
# kills; 64 agents for 60 s beside the CLI writers and readers) and the
# guest ones (libvirtd restarted mid-run; 20 coordinator SIGKILLs; a disk
# filling during a compare and during a kernel build; 16 agents beside a
# compare of real guests).
# Some start servers or mount a tmpfs: run it as the integration tests are,
# one at a time (flock /tmp/kc-integration.lock make faults).
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
[ "${SOAK:-0}" = 1 ] && export FAULT_KILLS=20 WRITERS_AGENTS=64 WRITERS_S=60
rows=$(mktemp) log=$(mktemp)
trap 'rm -f "$rows" "$log"' EXIT
bad=""
# run_one SECONDS TEST [VAR=VALUE...]: run TEST under a timeout, its output
# in $log, its fault-table rows kept, its wall time said; sets rc
run_one() {
	secs=$1 t=$2
	shift 2
	echo "== $t"
	t0=$(date +%s)
	env "$@" B=$B timeout "$secs" sh "$t" > "$log" 2>&1
	rc=$?
	echo "-- ${t##*/}: $(( $(date +%s) - t0 )) s (exit $rc)"
	sed -n 's/^fault-table: //p' "$log" >> "$rows"
	case $rc in
	0) ;;
	77) echo "$(tail -n 1 "$log")|0|0|skipped" >> "$rows"; bad="$bad $t(skipped)" ;;
	*) tail -n 20 "$log"; echo "$t failed (rc=$rc)|?|0|?" >> "$rows"; bad="$bad $t(rc=$rc)" ;;
	esac
}
for t in tests/fault/f_*.sh; do
	run_one 1800 "$t"
done
# the quick integration fault test (seconds, no guest): a full disk in a
# compare's build and guest image stage
run_one 600 tests/integration/t_stage_diskfull.sh
# soak only: the fault tests that boot TCG guests (a minute or more each;
# `make test` runs them once as integration tests)
if [ "${SOAK:-0}" = 1 ]; then
	for t in tests/integration/t_libvirtd_restart.sh tests/integration/t_compare_kills.sh \
		 tests/integration/t_compare_diskfull.sh tests/integration/t_build_diskfull.sh \
		 tests/integration/t_compare_writers.sh; do
		run_one 3600 "$t" KILLS=20
	done
fi
# unit tests that inject faults: name|binary|cmocka test[|lost]: lost is
# 0 when the test asserts every record's count exactly (it fails on one
# lost), "-" when no record goes through the fault
for u in "spool damaged mid-file (1 KiB of garbage)|agent_test_spool|test_damaged_middle" \
	 "HTTP abuse (nesting, 2 MiB, auth, ids, methods, 1100 idle conns)|test_api|test_http_abuse|-" \
	 "token scopes on every mutating route|test_api|test_token_scopes|-" \
	 "store xWrite fails (VFS shim, every Nth call of an ingest)|test_db_fault|test_write_faults" \
	 "store xSync fails (VFS shim, every Nth call of an ingest)|test_db_fault|test_sync_faults" \
	 "store xWrite fails in a job's storing transaction|test_db_fault|test_job_store_faults" \
	 "job files outside --job-dir, unknown knob over HTTP|test_api|test_submit_confined|-" \
	 "two connections open one new store and write at once|test_db|test_two_writers_at_once"; do
	name=${u%%|*} rest=${u#*|}
	bin=${rest%%|*} rest=${rest#*|}
	test=${rest%%|*} lost=0
	case $rest in *"|"*) lost=${rest#*|} ;; esac
	if [ ! -x "$B/tests/$bin" ]; then
		echo "$name|1|0|?" >> "$rows"; bad="$bad $bin(missing)"; continue
	fi
	if B=$B "$B/tests/$bin" 2>&1 | grep -q "^\[       OK \] $test\$"; then
		echo "$name|1|1|$lost" >> "$rows"
	else
		echo "$name|1|0|?" >> "$rows"; bad="$bad $bin:$test"
	fi
done
echo
printf '%-66s %10s %9s %12s\n' fault injections survived "records lost"
awk -F'|' '{ printf "%-66.66s %10s %9s %12s\n", $1, $2, $3, $4
	     if ($2 != $3 || ($4 != "0" && $4 != "-")) bad = 1 } END { exit bad }' "$rows" || bad="$bad (table)"
[ -z "$bad" ] || { echo "faults: not survived:$bad"; exit 1; }
echo "faults: every fault survived, no record lost"
