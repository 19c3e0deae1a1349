/* series_item.h - one mail read as what it is to a series (series_item.c):
 * a cover letter, a patch, a test robot's report, or something to skip
 * (a reply, a mail without a diff), with the trailers a reply gives.
 * series.c groups the items into series.
 */
#ifndef KC_SERIES_ITEM_H
#define KC_SERIES_ITEM_H

#include <stddef.h>

#include "wrap/mbox.h"
#include "kernel/lkp_report.h"
#include "kernel/series_patch.h"
#include "kernel/series_tags.h"

enum item_kind { ITEM_SKIP, ITEM_COVER, ITEM_PATCH, ITEM_REPORT };

struct item {
	enum item_kind kind;
	struct tags tags;
	struct patch *patch;            /* ITEM_PATCH */
	char *cover_body;               /* ITEM_COVER, UTF-8 */
	char *skip_why;                 /* ITEM_SKIP */
	struct lkp_report *report;      /* ITEM_REPORT */
	struct trailer *rtrailers;      /* a reply's own trailer lines (b4's */
	size_t nrtrailers;              /* "Reviewed-by: …" given in a reply) */
	char *tail;                     /* ITEM_PATCH: text after the diff */
	char *source;
	const char *message_id, *in_reply_to;   /* borrowed from the patch / mail */
	const struct mail *mail;        /* the mail it was read from (borrowed,
					 * set with message_id): its addresses */
	size_t order;
};

/* Read mail m into *it (zeroed by the caller, its source and order set):
 * its kind and tags, and by kind its patch, cover body, report or why it
 * is skipped. it->message_id and in_reply_to are left for the caller to
 * borrow from m. Release with series_item_release(). */
void series_item_from_mail(struct item *it, const struct mail *m);
void series_item_release(struct item *it);

#endif
