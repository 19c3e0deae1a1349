/* json_num.c - see json_num.h: round-trip precision for JSON reals. */
#include <stdio.h>
#include <stdlib.h>

#include "json_num.h"

#define JSON_NUM_MAX_DEPTH 64

int json_num_digits(double d)
{
	char s[40];

	for (int p = 15; p < 17; p++) {
		snprintf(s, sizeof(s), "%.*g", p, d);
		if (strtod(s, NULL) == d)
			return p;
	}
	return 17;
}

static int digits_at(const json_t *v, int depth)
{
	const char *k;
	json_t *x;
	size_t i;
	int most = 15, d;

	if (depth > JSON_NUM_MAX_DEPTH)
		return 17;
	if (json_is_real(v))
		return json_num_digits(json_real_value(v));
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, x) {
			if ((d = digits_at(x, depth + 1)) > most)
				most = d;
			if (most == 17)
				break;
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x) {
			if ((d = digits_at(x, depth + 1)) > most)
				most = d;
			if (most == 17)
				break;
		}
	}
	return most;
}

int json_real_digits(const json_t *v)
{
	return v ? digits_at(v, 0) : 15;
}

char *json_dumps_exact(const json_t *v, size_t flags)
{
	return json_dumps(v, flags | JSON_REAL_PRECISION(json_real_digits(v)));
}
