/* dec_round.h - rounding a value as a reader rounds the decimal they see,
 * the one rule of every report form (text, markdown, email; the pages'
 * web/kcanary.js has the same). Shared by both binaries (lib/); no
 * library but libc. */
#ifndef KC_DEC_ROUND_H
#define KC_DEC_ROUND_H

/*
 * dec_round - v rounded to decimals places (may be negative: tens,
 * hundreds), and dec_round_sig - to digits significant digits (1..17),
 * half away from zero on v's shortest decimal form (the digits "%.17g"
 * would need at most, json_num_digits()), the way a reader rounds the
 * number they see: 30.25 -> 30.3, 0.15 -> 0.2, -2.5 -> -3 (printf's
 * "%.1f" rounds the binary value half to even: 30.2, 0.1). The result is
 * the double nearest the rounded decimal, so "%.*f" with the same places
 * prints it exactly. NaN and infinities are returned as they are. web/
 * kcanary.js's KC.round is the same rule for the pages.
 */
double dec_round(double v, int decimals);
double dec_round_sig(double v, int digits);

#endif
