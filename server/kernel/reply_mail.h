/* reply_mail.h - a job's report as a plain-text reply to the series'
 * thread, ready for `git send-email`: In-Reply-To and References the
 * cover's (or first patch's) message-id, Subject "Re: [PATCH vN 0/M] …",
 * then the report's text table (medians, p-values, k-of-n, probes) and
 * the environment (kernels, hosts, accelerator, filesystems, knobs, config
 * fragments), the way the kernel test robot writes its reports. */
#ifndef KC_REPLY_MAIL_H
#define KC_REPLY_MAIL_H

#include <stdint.h>

#include "store/db.h"
#include "judge/report.h"
#include "kernel/series.h"
#include "util.h"

/*
 * reply_mail - append the reply to out: the headers, a blank line, the
 * body. thread: the revision replied to (borrowed; NULL: no threading
 * headers and a Subject naming the job). Returns 0, or report_build's and
 * the store's codes with err saying why.
 */
int reply_mail(struct buf *out, struct db *db, int64_t job_id, const struct report_opts *ro,
		 const struct series *thread, struct buf *err);

#endif
