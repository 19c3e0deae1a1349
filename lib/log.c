/* log.c - see log.h. Thread-safe: each line is written with one fprintf. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"

int log_level = LOG_WARN;
static const char *log_prog = "kcanary";

__attribute__((constructor)) static void log_init_env(void)
{
	if (getenv("KCANARY_DEBUG"))
		log_level = LOG_DEBUG;
}

void log_set_prog(const char *prog)
{
	log_prog = prog;
}

void log_write(enum log_level lvl, const char *module, const char *fmt, ...)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s %s: %s: %s\n", log_prog, module, names[lvl], msg);
}
