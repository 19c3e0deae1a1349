/* lkp_report.h - a kernel test robot (0-day/LKP) performance report read
 * out of its mail: "[linus:master] [mm] 8d59d2214c: vm-scalability.throughput
 * -36.6% regression", its commit, base, tree, machine and parameters.
 * Pure text, as the robot writes it (tests/fixtures/mail/D1-*); series.c
 * names such a mail as a report instead of dropping it as "no diff". */
#ifndef KC_LKP_REPORT_H
#define KC_LKP_REPORT_H

#include <stddef.h>

/* One "key: value" of the report's parameters. */
struct lkp_param {
	char *key, *value;
};

/* One further test the commit has an impact on (the table after "In
 * addition to that"). */
struct lkp_further {
	char *testcase;         /* "will-it-scale" */
	char *metric;           /* "will-it-scale.per_process_ops" */
	double change_pct;      /* -32.3 */
	char *kind;             /* "regression" or "improvement" */
	char *machine;
	struct lkp_param *params; size_t nparams;   /* "test=tlb_flush2" split */
};

struct lkp_report {
	char *message_id;       /* without <> */
	char *branch;           /* "linus:master", the subject's first tag */
	char *metric;           /* "vm-scalability.throughput" */
	double change_pct;      /* -36.6 */
	char *kind;             /* "regression" or "improvement" */
	char *commit;           /* the full id after "commit:" */
	char *commit_subject;   /* its subject, without quotes and parentheses */
	char *tree;             /* the line after the commit line: tree URL and branch */
	char *base;             /* the short id of the base (first of the "commit:"
				 * pair of the comparison), NULL if not found */
	char *base_subject;
	char *testcase;         /* "vm-scalability" */
	char *machine;          /* "224 threads 4 sockets Intel(R) Xeon(R) …" */
	struct lkp_param *params; size_t nparams;
	struct lkp_further *further; size_t nfurther;
};

/*
 * lkp_report_parse - read the report in a mail's subject and body (UTF-8)
 * into a new *out (lkp_report_free). Returns 0, or -ENOENT when the mail
 * is not a test robot report ("kernel test robot noticed a …" missing).
 */
int lkp_report_parse(struct lkp_report **out, const char *subject, const char *body,
		     const char *message_id);

void lkp_report_free(struct lkp_report *r);

#endif
