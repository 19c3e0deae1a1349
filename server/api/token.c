/* token.c - API token secrets, their sha256 (hash.h) and their scopes
 * (see token.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "error.h"
#include "hash.h"
#include "api/token.h"

_Static_assert(TOKEN_HASH_HEX == HASH_HEX_LEN, "a token hash is a hash.h digest");

static void hex(char *out, const uint8_t *b, size_t n)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

int token_generate(char *out, size_t size)
{
	uint8_t rnd[32];
	size_t got = 0;

	if (size < TOKEN_SECRET_LEN + 1)
		return -EINVAL;
	while (got < sizeof(rnd)) {
		ssize_t n = getrandom(rnd + got, sizeof(rnd) - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)n;
	}
	memcpy(out, "kct_", 4);
	hex(out + 4, rnd, sizeof(rnd));
	return 0;
}

void token_hash(char *out, const char *secret)
{
	size_t n;

	while (*secret == ' ' || *secret == '\t')
		secret++;
	n = strlen(secret);
	while (n && (secret[n - 1] == ' ' || secret[n - 1] == '\t' ||
		     secret[n - 1] == '\r' || secret[n - 1] == '\n'))
		n--;
	hash_hex(out, secret, n);
}

const char *token_default_scopes(const char *name, char *out, size_t size)
{
	if (!strncmp(name, "agent:", 6) && name[6]) {
		snprintf(out, size, "%s", name);
		return out;
	}
	return "read submit agent:*";
}

int token_scopes_check(const char *text, struct buf *err)
{
	const char *p = text;

	if (strlen(text) >= TOKEN_MAX_SCOPES_LEN)
		return err_setf(err, -EINVAL, "scopes '%.40s...' are longer than %d bytes", text,
				TOKEN_MAX_SCOPES_LEN - 1);
	while (*p) {
		size_t n = strcspn(p, " ");
		if (n && !((n == 4 && !strncmp(p, "read", 4)) || (n == 6 && !strncmp(p, "submit", 6)) ||
			   (n == 5 && !strncmp(p, "admin", 5)) || (n > 6 && !strncmp(p, "agent:", 6))))
			return err_setf(err, -EINVAL, "'%.*s' is not a scope: expected read, submit,"
					" admin, agent:HOST or agent:*", (int)n, p);
		p += n;
		p += strspn(p, " ");
	}
	return 0;
}

bool token_allows(const char *scopes, const char *need, const char *host)
{
	const char *p = scopes;

	while (p && *p) {
		size_t n = strcspn(p, " ");
		if ((n == 5 && !strncmp(p, "admin", 5)) ||
		    (n == strlen(need) && !strncmp(p, need, n)))
			return true;
		if (!strcmp(need, "agent") && n > 6 && !strncmp(p, "agent:", 6)) {
			size_t hn = n - 6;
			if ((hn == 1 && p[6] == '*') || !host ||
			    (strlen(host) == hn && !strncmp(p + 6, host, hn)))
				return true;
		}
		p += n;
		p += strspn(p, " ");
	}
	return false;
}
