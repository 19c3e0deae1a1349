# alive.sed - the recipe's control (the cover letter's MODE=alive): the
# old owner's cgroup is kept while its files are dirty and removed only at
# the end. Apply after tcg.sed:
#   sed -f tcg.sed recipe.sh | sed -f alive.sed > recipe-alive.sh
s|^rmdir \$cg/old .*|: keep $cg/old           # alive: the old cgroup stays while they are dirty|
s|^rmdir \$cg/new \$cg$|rmdir $cg/new $cg/old $cg|
