/* cmd_series_apply.h - what cmd_series_apply.c shares with cmd_build.c. */
#ifndef KC_CMD_SERIES_APPLY_H
#define KC_CMD_SERIES_APPLY_H

#include <stddef.h>

struct series;

/* series_load() with its messages logged; 0 or the same errors. */
int series_files_load(struct series ***out, size_t *n_out, char *const *paths, size_t npaths);

/* kcanary series apply (argv[0] is "apply"). */
int series_cmd_apply(int argc, char **argv);

#endif
