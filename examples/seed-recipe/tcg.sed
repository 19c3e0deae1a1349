# tcg.sed - the seed's minimal recipe (recipe.sh, as the cover letter has
# it) scaled for a 2-vCPU TCG guest with 2 GiB: 100 files instead of 1000,
# 2 MiB + 64 KiB per file from the old owner and 1 MiB from the
# replacement, memory.max 128M instead of 4G (the same ~1.6:1 of the old
# owner's data to the limit, so the replacement is throttled in its memcg
# and flushes the foreign wbs, which is what calls
# cgroup_writeback_by_id; with 4G nothing is throttled and the map stays
# empty), and 20 s instead of 3 for bpftrace to attach (its LLVM compile
# is slow under emulation). Nothing else changes.
#   sed -f tcg.sed recipe.sh > recipe-tcg.sh
s/seq 1000/seq 100/
s/append 8 1M /append 2 1M /
s/append 4 1M)/append 1 1M)/
s/^sleep 3$/sleep 20/
s/^echo 4G > /echo 128M > /
