/* cmd_ingest.c - kcanary ingest (being written). */
#include <stdio.h>
#include "cmd.h"

int cmd_ingest(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "kcanary ingest: not available yet\n");
	return 1;
}
