/* test_inbox.c - inbox.h: every form of message reference a user pastes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fetch.h"
#include "kernel/inbox.h"
#include "util.h"

static void expect_id(const char *arg, const char *id)
{
	char *got = NULL;

	if (inbox_ref_parse(&got, arg))
		fail_msg("'%s' not taken as a message reference", arg);
	if (strcmp(got, id))
		fail_msg("'%s' gave '%s', expected '%s'", arg, got, id);
	free(got);
}

static void test_ref_forms(void **state)
{
	const char *id = "20231123193937.11628-1-dev1@example.org";

	(void)state;
	expect_id("<20231123193937.11628-1-dev1@example.org>", id);
	expect_id("20231123193937.11628-1-dev1@example.org", id);
	expect_id("https://lore.kernel.org/r/20231123193937.11628-1-dev1@example.org", id);
	expect_id("https://lore.kernel.org/all/20231123193937.11628-1-dev1@example.org/", id);
	expect_id("https://lore.kernel.org/linux-mm/20231123193937.11628-1-dev1@example.org/T/#u", id);
	expect_id("https://lore.kernel.org/all/20231123193937.11628-1-dev1%40example.org/t.mbox.gz", id);
	expect_id("http://lore.kernel.org/r/20231123193937.11628-1-dev1@example.org", id);
	expect_id("patch.msgid.link/20231123193937.11628-1-dev1@example.org", id);
	expect_id("https://patch.msgid.link/20231123193937.11628-1-dev1@example.org", id);
	/* a b4-style id with '+' and '=' */
	expect_id("<20240101-foo-v2-1-0a1b2c3d4e5f@kernel.org>", "20240101-foo-v2-1-0a1b2c3d4e5f@kernel.org");
}

static void test_not_refs(void **state)
{
	const char *no[] = { "series.mbox", "./v6.mbox", "dir/a@b.mbox", "-", "", "@example.org",
			     "https://example.com/not/a/message", "lore.kernel.org/all/", "a@",
			     "<a b@c>" };
	char *got = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (!inbox_ref_parse(&got, no[i]))
			fail_msg("'%s' taken as message <%s>", no[i], got);
}

static void test_escape(void **state)
{
	char *e = fetch_escape("a.b-c_d~e@f/g h+\"");

	(void)state;
	assert_string_equal(e, "a.b-c_d~e%40f%2Fg%20h%2B%22");
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ref_forms),
		cmocka_unit_test(test_not_refs),
		cmocka_unit_test(test_escape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
