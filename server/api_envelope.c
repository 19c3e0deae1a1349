/* api_envelope.c - the fleet batch's envelope line read without jansson
 * (see api_envelope.h). */
#include <string.h>

#include "api_envelope.h"

bool api_envelope_fast(struct api_envelope *out, char *sp, const char *p, size_t l)
{
	static const char k_seq[] = "{\"seq\":", k_run[] = ",\"run\":\"", k_line[] = "\",\"line\":\"";
	const char *q = p, *end = p + l;
	int64_t seq = 0;
	char *d = sp;

	if (l < sizeof(k_seq) || memcmp(q, k_seq, sizeof(k_seq) - 1))
		return false;
	q += sizeof(k_seq) - 1;
	if (q >= end || *q < '1' || *q > '9')
		return false;
	for (int n = 0; q < end && *q >= '0' && *q <= '9'; q++, n++) {
		if (n == 18)
			return false;
		seq = seq * 10 + (*q - '0');
	}
	if ((size_t)(end - q) < sizeof(k_run) || memcmp(q, k_run, sizeof(k_run) - 1))
		return false;
	q += sizeof(k_run) - 1;
	while (q < end && *q != '"') {
		char c = *q++;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.' || c == ':') || d - sp == API_ENVELOPE_MAX_RUN)
			return false;
		*d++ = c;
	}
	if (d == sp || (size_t)(end - q) < sizeof(k_line) || memcmp(q, k_line, sizeof(k_line) - 1))
		return false;
	*d++ = '\0';
	q += sizeof(k_line) - 1;
	out->seq = seq;
	out->run = sp;
	out->line = d;
	for (;;) {
		unsigned char c;

		if (q >= end)
			return false;
		c = (unsigned char)*q++;
		if (c == '"')
			break;
		if (c < 0x20 || c >= 0x80)
			return false;
		if (c == '\\') {
			if (q >= end)
				return false;
			switch (*q++) {
			case '"': c = '"'; break;
			case '\\': c = '\\'; break;
			case '/': c = '/'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			default: return false;   /* \u and the invalid ones: jansson's */
			}
		}
		*d++ = (char)c;
	}
	if (q + 1 != end || *q != '}')
		return false;
	out->len = (size_t)(d - out->line);
	*d = '\0';
	return true;
}

