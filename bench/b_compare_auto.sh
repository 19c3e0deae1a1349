#!/bin/sh
# compare --repeat auto on simulated jobs (issue 19 item 1): the A/A
# false-positive rate of its anytime-valid stop over 3,000 jobs (target
# <= 5%), and on the seed's calibrated stall data (server/judge/bisect_sim.h) the
# mean runs it needs against the fewest fixed repeats that reach the same
# power with the table's Mann-Whitney p < 0.05, as a ratio (target < 1.0).
# Same decision call as the report's looks (stats_seq_decide); ~30 s CPU.
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
exec nice -n 10 "$B/kcanary" compare simulate --trials 3000 --seed 1 "$@"
