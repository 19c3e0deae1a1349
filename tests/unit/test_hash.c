/* test_hash.c - the one content hash (hash.h): FIPS 180-2's SHA-256 test
 * vectors, in one piece, in pieces and from a file; a missing file. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "error.h"
#include "hash.h"
#include "testutil.h"

#define ABC "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define TWO_BLOCKS "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"

static void test_vectors(void **state)
{
	const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	char hex[HASH_HEX_SIZE];
	struct hash h;

	(void)state;
	hash_hex(hex, "abc", 3);
	assert_string_equal(hex, ABC);
	hash_hex(hex, "", 0);
	assert_string_equal(hex, EMPTY);
	hash_hex(hex, m, strlen(m));
	assert_string_equal(hex, TWO_BLOCKS);
	/* the same bytes in pieces */
	hash_init(&h);
	for (size_t i = 0, n = strlen(m); i < n; i += 5)
		hash_update(&h, m + i, n - i < 5 ? n - i : 5);
	hash_final_hex(&h, hex);
	assert_string_equal(hex, TWO_BLOCKS);
}

static void test_file(void **state)
{
	struct tmpdir *td = *state;
	char *path = xasprintf("%s/f", td->path), hex[HASH_HEX_SIZE] = "kept";
	struct buf err = BUF_INIT;
	struct hash h;
	FILE *f = fopen(path, "w");

	/* larger than hash.c's read size, so it is read in pieces */
	for (int i = 0; i < 100000; i++)
		fputs("abc", f);
	fclose(f);
	assert_int_equal(hash_file_hex(hex, path, &err), 0);
	{
		char *all = NULL, want[HASH_HEX_SIZE];
		size_t len = 0;

		assert_int_equal(read_file(&all, &len, path, 1 << 20), 0);
		hash_hex(want, all, len);
		assert_string_equal(hex, want);
		free(all);
	}
	/* a file after other bytes */
	f = fopen(path, "w");
	fputs("c", f);
	fclose(f);
	hash_init(&h);
	hash_update(&h, "ab", 2);
	assert_int_equal(hash_update_file(&h, path, &err), 0);
	hash_final_hex(&h, hex);
	assert_string_equal(hex, ABC);
	strcpy(hex, "kept");
	assert_int_equal(hash_file_hex(hex, "/nonexistent/f", &err), -ENOENT);
	assert_string_equal(buf_str(&err), "cannot read '/nonexistent/f': No such file or directory");
	assert_string_equal(hex, "kept");
	free(path);
	buf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test_setup_teardown(test_file, tmpdir_setup, tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
