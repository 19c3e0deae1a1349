/* series.h - patch series from mail: turns the messages of mbox/.eml/.patch
 * files (parsed by mbox.h) into revisions of a series, the way git am
 * (mailinfo) and b4 read them. The tree/apply side (tree.c, apply) takes
 * struct series as its input. One patch is struct patch (series_patch.h).
 *
 * series.c groups the mails into series; series_item.c reads one mail,
 * series_tags.c its subject tags and trailers, series_body.c its body
 * and diff; series_line.h holds their small helpers.
 */
#ifndef KC_SERIES_H
#define KC_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/lkp_report.h"
#include "kernel/series_patch.h"
#include "util.h"

/* One revision vN of a series. */
struct series {
	char *name;             /* b4 change-id slug, else a slug of the cover
				 * (or first patch) subject: "wb-dying-cgwb-flush" */
	int version;            /* N of vN; 1 when the subject has none */
	bool rfc;
	char *prefix_tags;      /* other subject tags, space separated, as written
				 * ("net-next", "-next", "RESEND"); "" when none */
	char *cover_subject;    /* NULL when the revision has no cover letter */
	char *cover_body;       /* cover text (UTF-8), NULL without a cover */
	char *cover_message_id; /* NULL without a cover */
	char *mail_from, *mail_to, *mail_cc; /* the cover's (else patch 1's)
				 * From:, To: and Cc: address lists as a reply
				 * writes them, decoded; "" when none */
	char *base_commit;      /* "base-commit:" of the cover (or of a patch's
				 * notes/tail when there is no cover); NULL if none */
	char *change_id;        /* b4 "change-id:"; NULL if none */
	char **prerequisite_patch_ids; size_t nprereq; /* b4's "prerequisite-patch-id:"
				 * lines: git patch-id --stable of a patch the
				 * series needs below it, as written */
	char **prerequisite_change_ids; size_t nprereq_change; /* "prerequisite-change-id:":
				 * b4 change-ids of series needed below it */
	struct patch *patches; size_t npatches; /* ordered by k, each k once */
	int m;                  /* M of k/M: the size of the series as sent */
	int *missing; size_t nmissing; /* the k of 1..M not in the mail, ascending
				 * (one patch of a larger series, mailed alone) */
	bool cover_only;        /* a cover letter without any of its patches */
	char *stable_review;    /* "6.12.84-rc1" when the cover is a stable review
				 * cover ("[PATCH 6.12 00/35] 6.12.84-rc1 review":
				 * a release candidate whose patches come as
				 * replies, not a series of its own); else NULL */
	struct lkp_report *report; /* a kernel test robot report, not a series
				 * (name "kernel-test-robot-report", no patches);
				 * NULL for a series */
};

/*
 * series_load - parse files (mbox, .eml, .patch) into revisions.
 *
 * Each path is an mbox (it starts with a "From " line of the From_ shape;
 * split at such lines that follow a blank line; read as mboxo, ">From "
 * kept, as git am does by default) or one RFC 822 message (never split). Messages are deduplicated
 * by Message-ID; replies ("Re: …") and mails without a diff that are not a
 * cover letter (0/M) are skipped, except that a reply carrying a complete
 * format-patch as an attachment counts as that patch. Patches are grouped
 * into one series per thread (cover letter) or, without a cover, per
 * (version, M); a mailbox holding several revisions gives one series per vN.
 *
 * out:      set to a new array of *n_out series (free each with
 *           series_free(), then free(*out)); written only on success.
 * paths:    npaths file names (not NULL).
 * err:      gets one git-style message on failure (may be NULL).
 * Returns 0; -ENOENT/-EACCES/... when a file cannot be read; -EINVAL when
 * a file holds no patch nor cover ("no patches in 'x'"), when a k is
 * duplicated (naming both sources), or k > M. A missing k is not an
 * error: the series lists it in missing[] and err gets a warning ("patch
 * 1 of 2 of '…' v1 is missing"); a cover alone is a series with
 * cover_only set and no patches; a kernel test robot report is an entry
 * with report set (lkp_report.h) and no patches.
 */
int series_load(struct series ***out, size_t *n_out, char *const *paths, size_t npaths,
		struct buf *err);

/* As series_load(), on one in-memory file (name is used in messages).
 * data need not be NUL-terminated. An mbox is read as mboxrd (the form
 * public-inbox serves). */
int series_load_buffer(struct series ***out, size_t *n_out, const char *data, size_t len,
		       const char *name, struct buf *err);

/* As series_load(), on n in-memory files (datas[i] of lens[i] bytes, named
 * names[i] in messages), read together as one set of mail; file i that is
 * an mbox is read as mboxrd when mboxrd[i] (">From " loses one '>'), else
 * as mboxo. mboxrd may be NULL: all mboxo. */
int series_load_buffers(struct series ***out, size_t *n_out, const char *const *datas,
			const size_t *lens, const char *const *names, const bool *mboxrd, size_t n,
			struct buf *err);

/* Free one series and everything it owns; NULL is fine. */
void series_free(struct series *s);
/* Free an array from series_load() and its n series; NULL is fine. */
void series_free_all(struct series **v, size_t n);

#endif
