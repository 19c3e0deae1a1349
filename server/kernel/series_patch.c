/* series_patch.c - a patch's release (series_patch.h). */
#include <stdlib.h>

#include "kernel/series_line.h"
#include "kernel/series_patch.h"

void series_patch_release(struct patch *p)
{
	if (!p)
		return;
	free(p->subject);
	free(p->author_name);
	free(p->author_email);
	free(p->message_id);
	free(p->in_reply_to);
	free(p->message);
	free(p->notes);
	free(p->diff);
	strv_free(p->files, p->nfiles);
	for (size_t i = 0; i < p->nreply_trailers; i++) {
		free(p->reply_trailers[i].key);
		free(p->reply_trailers[i].value);
		free(p->reply_trailers[i].from);
	}
	free(p->reply_trailers);
	for (size_t i = 0; i < p->ntrailers; i++) {
		free(p->trailers[i].key);
		free(p->trailers[i].value);
	}
	free(p->trailers);
	free(p->corrupt);
	free(p->warning);
	free(p->source);
}
