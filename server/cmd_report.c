/* cmd_report.c - kcanary report (being written). */
#include <stdio.h>
#include "cmd.h"

int cmd_report(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "kcanary report: not available yet\n");
	return 1;
}
