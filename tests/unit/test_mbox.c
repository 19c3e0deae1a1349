/* test_mbox.c - mail in: From_ lines, mbox splitting and mboxrd unescaping,
 * MIME parts (quoted-printable, base64, multipart), RFC 2047 names, CRLF,
 * on the real mails of tests/fixtures/mail (see its INDEX.md). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "wrap/mbox.h"
#include "util.h"

static char *fixture(const char *rel, size_t *len)
{
	const char *dir = getenv("KC_FIXTURES");
	char *path = xasprintf("%s/mail/%s", dir && *dir ? dir : "tests/fixtures", rel);
	char *data = NULL;

	if (read_file(&data, len, path, 64 << 20) < 0)
		fail_msg("cannot read fixture '%s'", path);
	free(path);
	return data;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* Wrap messages into an mbox the way an mbox writer does: a From_ line
 * before each, a blank line after each, and (mboxrd) ">" before every
 * line that matches ^>*From . */
static char *wrap_mbox(const char *const *msgs, size_t n, bool mboxrd)
{
	struct buf b = BUF_INIT;

	for (size_t i = 0; i < n; i++) {
		const char *p = msgs[i];
		buf_puts(&b, "From dev@example.org Mon Sep 17 00:00:00 2001\n");
		while (*p) {
			const char *nl = strchr(p, '\n');
			size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
			size_t k = 0;
			while (k < len && p[k] == '>')
				k++;
			if (mboxrd && len - k >= 5 && !memcmp(p + k, "From ", 5))
				buf_puts(&b, ">");
			buf_append(&b, p, len);
			p += len;
		}
		buf_puts(&b, "\n");
	}
	return buf_detach(&b);
}

static void test_from_line_shape(void **state)
{
	static const char *const yes[] = {
		"From 7c5285f1725d5abfcae5548ab0d73be9ceded2a1 Mon Sep 17 00:00:00 2001",
		"From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\r",
		"From MAILER-DAEMON Fri Jul  8 12:08:34 2011",
		"From dev1@example.org Wed Nov  1 13:28:35 2023 +0300",
	};
	static const char *const no[] = {
		"From the above log it's apparent that method which writes to sysfs attr",
		"From a follow up discussion it became clear that there are two essential",
		"From: Dev Five <dev5@example.com>",
		"From dev1@example.org",
		">From dev@example.org Mon Sep 17 00:00:00 2001",
		"From  Mon Sep 17 00:00:00 2001",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++)
		assert_true(mbox_is_from_line(yes[i], strlen(yes[i])));
	for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++)
		assert_false(mbox_is_from_line(no[i], strlen(no[i])));
}

/* The seed's v6 series as git format-patch --stdout wrote it. */
static void test_format_patch_mbox_splits_at_from_lines(void **state)
{
	struct mail **v = NULL;
	size_t n = 0, len;
	char *data = fixture("wb-dying-cgwb-flush-v6.mbox", &len);

	(void)state;
	assert_int_equal(mbox_parse(&v, &n, data, len, "v6.mbox", false, NULL), 0);
	assert_int_equal(n, 4);
	assert_int_equal(v[0]->line, 2);
	assert_int_equal(v[1]->line, 204);
	assert_int_equal(v[2]->line, 261);
	assert_int_equal(v[3]->line, 569);
	assert_string_equal(v[2]->subject,
			    "[PATCH v6 2/3] writeback: let foreign flushes reach dying cgwbs");
	assert_string_equal(v[2]->from_name, "Liz Fong-Jones");
	assert_string_equal(v[2]->from_email, "lizf@honeycomb.io");
	assert_string_equal(v[2]->message_id, "20261002-wb-dying-cgwb-flush-v6-2-reconstructed@honeycomb.io");
	assert_string_equal(v[2]->in_reply_to, "20261002-wb-dying-cgwb-flush-v6-0-reconstructed@honeycomb.io");
	assert_true(v[2]->has_date);
	assert_int_equal(v[2]->date_s, 1790977246);  /* 2026-10-02 21:40:46 +0000 */
	assert_int_equal(v[2]->tz_offset_min, 0);
	/* the blank line before the next From_ line is the mbox's, not the mail's */
	assert_int_equal(v[1]->nparts, 1);
	const char *t = v[1]->parts[0].text;
	assert_string_equal(t + v[1]->parts[0].len - 8, "\n2.53.0\n");
	mail_free_all(v, n);
	free(data);
}

/* C7c: a lone .eml is never split, though it holds a format-patch From_
 * line; wrapped into an mbox it stays one message either way. */
static void test_embedded_from_line_never_splits(void **state)
{
	struct mail **v = NULL, **w = NULL;
	size_t n = 0, nw = 0, len;
	char *eml = fixture("C7c-embedded-format-patch/01.eml", &len);

	(void)state;
	assert_int_equal(mbox_parse(&v, &n, eml, len, "01.eml", false, NULL), 0);
	assert_int_equal(n, 1);
	assert_non_null(strstr(v[0]->parts[0].text,
		"\nFrom 7c5285f1725d5abfcae5548ab0d73be9ceded2a1 Mon Sep 17 00:00:00 2001\n"));
	assert_non_null(strstr(v[0]->parts[0].text, "\nFrom a follow up discussion"));

	for (int rd = 0; rd <= 1; rd++) {
		const char *one[] = { eml };
		char *mb = wrap_mbox(one, 1, rd);
		assert_int_equal(mbox_parse(&w, &nw, mb, strlen(mb), "c7c.mbox", rd, NULL), 0);
		assert_int_equal(nw, 1);
		/* unescaped (mboxrd) or never escaped: the same body as the .eml */
		assert_int_equal(w[0]->parts[0].len, v[0]->parts[0].len);
		assert_memory_equal(w[0]->parts[0].text, v[0]->parts[0].text, v[0]->parts[0].len);
		mail_free_all(w, nw);
		free(mb);
	}
	mail_free_all(v, n);
	free(eml);
}

/* C7a (= B2 02): "From the above log" after a blank line is body text. */
static void test_body_from_line_in_mbox(void **state)
{
	size_t l1, l2;
	char *m1 = fixture("B2-block-wbt-locking-v1/01.eml", &l1);
	char *m2 = fixture("C7a-body-line-From/01.eml", &l2);
	const char *msgs[] = { m1, m2 };

	(void)state;
	for (int rd = 0; rd <= 1; rd++) {
		struct mail **v = NULL;
		size_t n = 0;
		char *mb = wrap_mbox(msgs, 2, rd);
		if (rd)
			assert_non_null(strstr(mb, "\n>From the above log"));
		assert_int_equal(mbox_parse(&v, &n, mb, strlen(mb), "b2.mbox", rd, NULL), 0);
		assert_int_equal(n, 2);
		assert_non_null(strstr(v[1]->parts[0].text, "\n\nFrom the above log it's apparent"));
		assert_null(strstr(v[1]->parts[0].text, ">From the above"));
		assert_string_equal(v[1]->message_id, "20250319105518.468941-3-dev35@example.org");
		mail_free_all(v, n);
		free(mb);
	}
	free(m1);
	free(m2);
}

/* ">From " is unescaped in an mbox read as mboxrd (one '>' less), kept in
 * one read as mboxo (git am's default, #16: main always unescaped), and
 * never unescaped in a lone message. */
static void test_gt_from_unescaping(void **state)
{
	static const char eml[] =
		"From: A <a@example.org>\nSubject: x\n\n>From here\n>>From there\n>Fromage\n";
	static const char mbox[] =
		"From a@example.org Mon Sep 17 00:00:00 2001\n"
		"From: A <a@example.org>\nSubject: x\n\n>From here\n>>From there\n>Fromage\n";
	struct mail **v = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(mbox_parse(&v, &n, eml, strlen(eml), "x.eml", false, NULL), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0]->parts[0].text, ">From here\n>>From there\n>Fromage\n");
	mail_free_all(v, n);
	assert_int_equal(mbox_parse(&v, &n, mbox, strlen(mbox), "x.mbox", true, NULL), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0]->parts[0].text, "From here\n>From there\n>Fromage\n");
	mail_free_all(v, n);
	assert_int_equal(mbox_parse(&v, &n, mbox, strlen(mbox), "x.mbox", false, NULL), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0]->parts[0].text, ">From here\n>>From there\n>Fromage\n");
	mail_free_all(v, n);
	assert_int_equal(mbox_parse(&v, &n, eml, strlen(eml), "x.eml", true, NULL), 0);
	assert_string_equal(v[0]->parts[0].text, ">From here\n>>From there\n>Fromage\n");
	mail_free_all(v, n);
}

/* C1a: quoted-printable UTF-8, a soft break inside the diff --git line. */
static void test_quoted_printable(void **state)
{
	struct mail **v = NULL;
	size_t n = 0, len;
	char *data = fixture("C1a-qp-utf8/01.eml", &len);

	(void)state;
	assert_non_null(strstr(data, "b/Documentation/admin-=\n"));
	assert_int_equal(mbox_parse(&v, &n, data, len, "01.eml", false, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0]->nparts, 1);
	const struct mail_part *p = &v[0]->parts[0];
	assert_string_equal(p->charset, "utf-8");
	assert_non_null(strstr(p->text, "\ndiff --git a/Documentation/admin-guide/cgroup-v2.rst "
				   "b/Documentation/admin-guide/cgroup-v2.rst\n"));
	assert_null(strstr(p->text, "=3D"));
	assert_non_null(strstr(p->text, "Karel Nov\xc3\xa1k"));
	assert_string_equal(v[0]->from_name, "Dev Forty-Two");
	mail_free_all(v, n);
	free(data);
}

/* C2 and C5: base64 bodies whose decoded text has CRLF line ends. */
static void test_base64_crlf(void **state)
{
	static const char *const files[] = { "C2-base64-singlepart-crlf/01.eml",
					     "C5-crlf-base64-corrupt-patch/01.eml" };
	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct mail **v = NULL;
		size_t n = 0, len;
		char *data = fixture(files[i], &len);
		assert_int_equal(mbox_parse(&v, &n, data, len, files[i], false, NULL), 0);
		assert_int_equal(n, 1);
		assert_int_equal(v[0]->nparts, 1);
		assert_null(strchr(v[0]->parts[0].text, '\r'));
		assert_int_equal(strlen(v[0]->parts[0].text), v[0]->parts[0].len);
		assert_non_null(strstr(v[0]->parts[0].text, "\n--- a/kernel/cgroup/"));
		mail_free_all(v, n);
		free(data);
	}
}

/* C5: Message-ID on a continuation line. */
static void test_folded_message_id(void **state)
{
	struct mail **v = NULL;
	size_t n = 0, len;
	char *data = fixture("C5-crlf-base64-corrupt-patch/01.eml", &len);

	(void)state;
	assert_int_equal(mbox_parse(&v, &n, data, len, "01.eml", false, NULL), 0);
	assert_string_equal(v[0]->message_id,
		"CH3PR15MB6047F418ABF4B97ABE64B9A080F12@CH3PR15MB6047.namprd15.prod.outlook.com");
	assert_string_equal(v[0]->in_reply_to,
		"al3vrgjeb6uct3oaao5gwzy6aksjvqszirafg2sjyi2c53luyj@pijf4ctzyrft");
	mail_free_all(v, n);
	free(data);
}

/* C3: multipart/mixed with a quoted reply, a base64 log and a base64
 * text/x-patch attachment whose name uses RFC 2231 continuations. */
static void test_multipart_attachment(void **state)
{
	struct mail **v = NULL;
	size_t n = 0, len;
	char *data = fixture("C3-multipart-mixed-patch-attachment/01.eml", &len);

	(void)state;
	assert_int_equal(mbox_parse(&v, &n, data, len, "01.eml", false, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0]->nparts, 3);
	assert_false(v[0]->parts[0].attachment);
	assert_non_null(strstr(v[0]->parts[0].text, "> diff --git a/kernel/cgroup/cpuset.c"));
	assert_true(v[0]->parts[1].attachment);
	assert_string_equal(v[0]->parts[1].filename, "bisect-bad-cpu-util");
	assert_non_null(strstr(v[0]->parts[1].text, "git bisect start 'next/master'"));
	assert_string_equal(v[0]->parts[2].type, "text/x-patch");
	assert_true(v[0]->parts[2].attachment);
	assert_string_equal(v[0]->parts[2].filename,
			    "0001-cgroup-cpuset-fix-bitwise-shift-in-top_cpuset-initia.patch");
	static const char head[] =
		"From dfc9b104bb62ac7d0546be445ce6add9e6d8c2fe Mon Sep 17 00:00:00 2001\n"
		"From: Dev Fifty-Six <dev56@example.org>\n";
	assert_memory_equal(v[0]->parts[2].text, head, strlen(head));
	assert_string_equal(v[0]->subject,
		"Re: [PATCH -next] cgroup/cpuset: Statically initialize more members of top_cpuset");
	mail_free_all(v, n);
	free(data);
}

/* From:, To: and Cc: as a reply writes them (issue 35 item 7b): folded
 * lists unfolded, RFC 2047 names decoded, a name with a comma quoted,
 * "" when a header is missing. */
static void test_address_lists(void **state)
{
	static const char eml[] =
		"From: =?UTF-8?q?Karel=20Nov=C3=A1k?= <dev17@example.org>\n"
		"To: <dev2@example.org>, Dev Three <dev3@example.org>,\n"
		"\t\"Four, Dev\" <dev4@example.org>\n"
		"Subject: [PATCH] x\n"
		"Message-ID: <a@b>\n"
		"\n"
		"body\n";
	struct mail **v = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(mbox_parse(&v, &n, eml, strlen(eml), "x.eml", false, NULL), 0);
	assert_string_equal(v[0]->from, "Karel Nov\xc3\xa1k <dev17@example.org>");
	assert_string_equal(v[0]->to, "dev2@example.org, Dev Three <dev3@example.org>, "
			    "\"Four, Dev\" <dev4@example.org>");
	assert_string_equal(v[0]->cc, "");
	mail_free_all(v, n);
}

/* C4a: From: =?UTF-8?q?Karel=20Nov=C3=A1k?=, plus B and ISO-8859-1 forms. */
static void test_rfc2047_names(void **state)
{
	static const struct { const char *in, *name, *email; } cases[] = {
		{ "=?UTF-8?q?Karel=20Nov=C3=A1k?= <dev17@example.org>", "Karel Nov\xc3\xa1k", "dev17@example.org" },
		{ "=?utf-8?B?S2FyZWwgTm92w6Fr?= <dev17@example.org>", "Karel Nov\xc3\xa1k", "dev17@example.org" },
		{ "=?ISO-8859-1?Q?Karel_Nov=E1k?= <dev17@example.org>", "Karel Nov\xc3\xa1k", "dev17@example.org" },
		{ "=?iso-8859-1?B?S2FyZWwgTm924Ws=?= <dev17@example.org>", "Karel Nov\xc3\xa1k", "dev17@example.org" },
		{ "\"=?UTF-8?q?Karel=20Nov=C3=A1k?=\" <dev17@example.org>", "Karel Nov\xc3\xa1k", "dev17@example.org" },
		{ "Dev One <dev1@example.org>", "Dev One", "dev1@example.org" },
		{ "dev1@example.org", "", "dev1@example.org" },
	};
	struct mail **v = NULL;
	size_t n = 0, len;
	char *data = fixture("C4a-rfc2047-utf8-q-author/01.eml", &len);

	(void)state;
	assert_non_null(strstr(data, "From: =?UTF-8?q?Karel=20Nov=C3=A1k?= <dev17@example.org>"));
	assert_int_equal(mbox_parse(&v, &n, data, len, "01.eml", false, NULL), 0);
	assert_string_equal(v[0]->from_name, "Karel Nov\xc3\xa1k");
	assert_string_equal(v[0]->from_email, "dev17@example.org");
	mail_free_all(v, n);
	free(data);

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *name = NULL, *email = NULL;
		assert_int_equal(mail_parse_address(&name, &email, cases[i].in), 0);
		assert_string_equal(name, cases[i].name);
		assert_string_equal(email, cases[i].email);
		free(name);
		free(email);
	}
	char *s = mail_decode_header("[PATCH] =?ISO-8859-1?Q?caf=E9?= =?UTF-8?B?w6k=?=");
	assert_string_equal(s, "[PATCH] caf\xc3\xa9\xc3\xa9");
	free(s);
}

/* D1: ISO-8859-1 8-bit body (raw 0xB1), folded subject. */
static void test_latin1_report(void **state)
{
	struct mail **v = NULL;
	size_t n = 0, len;
	char *data = fixture("D1-lkp-vm-scalability-regression/01.eml", &len);

	(void)state;
	assert_int_equal(mbox_parse(&v, &n, data, len, "01.eml", false, NULL), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0]->subject, "[linus:master] [mm]  8d59d2214c:  "
			    "vm-scalability.throughput -36.6% regression");
	assert_string_equal(v[0]->parts[0].charset, "iso-8859-1");
	assert_int_equal(count(v[0]->parts[0].text, "\xb1"), 809);
	char *u = mail_text_utf8(v[0]->parts[0].text, v[0]->parts[0].len, v[0]->parts[0].charset);
	assert_int_equal(count(u, "\xc2\xb1"), 809);
	free(u);
	/* mislabelled 8-bit "utf-8" falls back to ISO-8859-1 */
	u = mail_text_utf8("caf\xe9", 4, "utf-8");
	assert_string_equal(u, "caf\xc3\xa9");
	free(u);
	mail_free_all(v, n);
	free(data);
}

/* A whole mbox with CRLF line ends splits and parses like the LF one. */
static void test_crlf_mbox(void **state)
{
	struct mail **a = NULL, **b = NULL;
	size_t na = 0, nb = 0, len;
	char *data = fixture("wb-dying-cgwb-flush-v6.mbox", &len);
	struct buf crlf = BUF_INIT;

	(void)state;
	for (size_t i = 0; i < len; i++) {
		if (data[i] == '\n')
			buf_append(&crlf, "\r", 1);
		buf_append(&crlf, data + i, 1);
	}
	assert_int_equal(mbox_parse(&a, &na, data, len, "lf", false, NULL), 0);
	assert_int_equal(mbox_parse(&b, &nb, crlf.ptr, crlf.len, "crlf", false, NULL), 0);
	assert_int_equal(na, 4);
	assert_int_equal(nb, 4);
	for (size_t i = 0; i < 4; i++) {
		assert_string_equal(a[i]->subject, b[i]->subject);
		assert_string_equal(a[i]->message_id, b[i]->message_id);
		assert_string_equal(a[i]->parts[0].text, b[i]->parts[0].text);
	}
	mail_free_all(a, na);
	mail_free_all(b, nb);
	buf_release(&crlf);
	free(data);
}

static void test_dates(void **state)
{
	int64_t s = 0;
	int tz = 99;

	(void)state;
	assert_int_equal(mail_parse_date(&s, &tz, "Fri,  6 Dec 2024 01:35:07 +0000"), 0);
	assert_int_equal(s, 1733448907);
	assert_int_equal(tz, 0);
	assert_int_equal(mail_parse_date(&s, &tz, "Thu, 13 Jun 2024 09:49:30 +0800"), 0);
	assert_int_equal(s, 1718243370);
	assert_int_equal(tz, 480);
	assert_int_equal(mail_parse_date(&s, &tz, "Sun, 13 Jul 2025 22:00:09 -0700"), 0);
	assert_int_equal(tz, -420);
	assert_int_equal(mail_parse_date(&s, &tz, "not a date"), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_from_line_shape),
		cmocka_unit_test(test_format_patch_mbox_splits_at_from_lines),
		cmocka_unit_test(test_embedded_from_line_never_splits),
		cmocka_unit_test(test_body_from_line_in_mbox),
		cmocka_unit_test(test_gt_from_unescaping),
		cmocka_unit_test(test_quoted_printable),
		cmocka_unit_test(test_base64_crlf),
		cmocka_unit_test(test_folded_message_id),
		cmocka_unit_test(test_multipart_attachment),
		cmocka_unit_test(test_rfc2047_names),
		cmocka_unit_test(test_address_lists),
		cmocka_unit_test(test_latin1_report),
		cmocka_unit_test(test_crlf_mbox),
		cmocka_unit_test(test_dates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
