/* dec_round.c - rounding a value as a reader rounds the decimal they see
 * (dec_round.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dec_round.h"
#include "json_num.h"

/* v's shortest decimal form as its digits (no point, no sign, up to 17)
 * and the power of ten of the first: 30.25 -> "3025", 1. */
static void shortest_digits(char dig[24], int *exp10, double v)
{
	char s[40], *e;
	size_t n = 0;

	snprintf(s, sizeof(s), "%.*e", json_num_digits(v) - 1, fabs(v));
	for (const char *c = s; *c && *c != 'e'; c++)
		if (*c >= '0' && *c <= '9' && n < 23)
			dig[n++] = *c;
	dig[n] = '\0';
	e = strchr(s, 'e');
	*exp10 = e ? atoi(e + 1) : 0;
}

double dec_round(double v, int decimals)
{
	char dig[24], s[48];
	int exp10, keep;
	unsigned long long n = 0;

	if (!isfinite(v) || v == 0)
		return v;
	shortest_digits(dig, &exp10, v);
	keep = exp10 + 1 + decimals;	/* digits before the first dropped one */
	if (keep >= (int)strlen(dig))
		return v;		/* nothing to drop */
	if (keep < 0)
		return copysign(0, v);	/* below half of the last place */
	for (int i = 0; i < keep; i++)
		n = n * 10 + (unsigned long long)(dig[i] - '0');
	if (dig[keep] >= '5')
		n++;
	snprintf(s, sizeof(s), "%s%llue%d", v < 0 ? "-" : "", n, -decimals);
	return strtod(s, NULL);
}

double dec_round_sig(double v, int digits)
{
	char dig[24];
	int exp10;

	if (!isfinite(v) || v == 0)
		return v;
	shortest_digits(dig, &exp10, v);
	return dec_round(v, digits - 1 - exp10);
}
