/* json_num.h - writing JSON numbers so that they read back as the same
 * double: the one place both binaries (agent records, server answers)
 * choose how many digits a real gets. Shared by kcanary and kcanary-agent
 * (COMMON_SRCS). jansson only.
 */
#ifndef KC_JSON_NUM_H
#define KC_JSON_NUM_H

#include <jansson.h>
#include <stddef.h>

/*
 * json_real_digits - the fewest significant digits, 15, 16 or 17, with
 * which "%.*g" writes every real in v (objects and arrays walked, at most
 * 64 levels deep; deeper values get 17) so that strtod() gives back the
 * same double. 17 always does for an IEEE 754 double (IEEE 754-2008 5.12.2);
 * 15 keeps a value that was written with 15 digits or fewer ("0.1",
 * "2435016766") as short as it was. v may be NULL (15).
 */
int json_real_digits(const json_t *v);

/* json_num_digits - the same for one double d: 15, 16 or 17, for "%.*g". */
int json_num_digits(double d);

/*
 * json_dumps_exact - json_dumps(v, flags) with every real written in
 * json_real_digits(v) digits (flags must not hold JSON_REAL_PRECISION).
 * The string is the caller's (free()), NULL when jansson cannot encode v.
 */
char *json_dumps_exact(const json_t *v, size_t flags);

#endif
