#!/bin/sh
# Bisection strategies on simulated histories (issue 8): for 1,000 bisections
# of a 1,000-commit history per strategy, culprit accuracy and mean guest runs,
# with runs drawn from the seed's good/bad worst-lag distributions
# (server/bisect_sim.h). Same engine as `kcanary bisect`; about 10 s of CPU.
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
exec "$B/kcanary" bisect simulate --commits 1000 --trials 1000 --seed 1 "$@"
