/* main.c - kcanary-agent entry point (the workload runner in a guest). */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: kcanary-agent run WORKLOAD [knob=value ...]\n");
		return 0;
	}
	fprintf(stderr, "kcanary-agent: no workloads are built in yet\n");
	return 2;
}
