/* progress.c - event lines and the live line on stderr (see progress.h). */
#include <pthread.h>
#include <stdio.h>

#include "judge/progress.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool live_shown;   /* a \r live line is on the terminal */

void progress_vsay(bool quiet, const char *fmt, va_list ap)
{
	if (quiet)
		return;
	pthread_mutex_lock(&lock);
	if (live_shown) {
		fputs("\r\033[K", stderr);
		live_shown = false;
	}
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	pthread_mutex_unlock(&lock);
}

void progress_say(bool quiet, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	progress_vsay(quiet, fmt, ap);
	va_end(ap);
}

void progress_live(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&lock);
	fputs("\r\033[K", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	live_shown = true;
	pthread_mutex_unlock(&lock);
}
