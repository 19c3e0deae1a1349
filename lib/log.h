/* log.h - leveled logging to stderr, one module name per line.
 *
 * Every .c file that logs defines LOG_MODULE before including this header:
 *   #define LOG_MODULE "db"
 * Lines look like "kcanary db: error: cannot open '…': …". Measurement data
 * never goes through the log; it goes to the store or to stdout.
 */
#ifndef KC_LOG_H
#define KC_LOG_H

enum log_level { LOG_ERROR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

/* Current threshold; messages above it are dropped. Default LOG_WARN,
 * or LOG_DEBUG when $KCANARY_DEBUG is set. Set by the CLI's -v/-q. */
extern int log_level;

/* Program name shown first on each line ("kcanary", "kcanary-agent"). */
void log_set_prog(const char *prog);

/* Write one line. Use the macros below rather than calling this. */
void log_write(enum log_level lvl, const char *module, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#ifndef LOG_MODULE
#define LOG_MODULE "main"
#endif

#define log_at(lvl, ...) do { \
	if ((lvl) <= log_level) log_write((lvl), LOG_MODULE, __VA_ARGS__); \
} while (0)
#define log_err(...)   log_at(LOG_ERROR, __VA_ARGS__)
#define log_warn(...)  log_at(LOG_WARN, __VA_ARGS__)
#define log_info(...)  log_at(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_at(LOG_DEBUG, __VA_ARGS__)

#endif
