#!/bin/sh
# Bisection strategies on simulated histories (issues 8 and 19): for 1,000
# bisections of a 1,000-commit history per strategy, culprit accuracy and
# mean guest runs (endpoint + search runs), with runs drawn from the seed's
# good/bad worst-lag distributions (server/judge/bisect_sim.h), for two seeds.
# Each history ends with its goal line ("target: probabilistic bisection
# ..."): what is measured, the target, the ratio from the
# same run, met / not met. Same engine as `kcanary bisect`; about 20 s of CPU
# a seed.
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
for seed in 1 2; do
	nice -n 10 "$B/kcanary" bisect simulate --commits 1000 --trials 1000 --seed $seed "$@" ||
		exit 1
done
