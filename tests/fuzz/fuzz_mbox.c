/* fuzz_mbox.c - libFuzzer target over the mail → series parser: one input
 * is one file (mbox or lone message), run through mbox_parse() and the
 * series grouping exactly as `kcanary series show` does. Build and run with
 * `make fuzz-mbox` (FUZZ_SECONDS=600); the kept corpus is tests/fuzz/mbox/. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernel/series.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct series **v = NULL;
	struct buf err = BUF_INIT;
	size_t n = 0, sum = 0;

	if (series_load_buffer(&v, &n, (const char *)data, size, "fuzz.mbox", &err) == 0) {
		/* touch every string, as the show command does */
		for (size_t i = 0; i < n; i++) {
			const struct series *s = v[i];
			sum += strlen(s->name) + strlen(s->prefix_tags);
			for (size_t j = 0; j < s->npatches; j++) {
				const struct patch *p = &s->patches[j];
				sum += strlen(p->subject) + strlen(p->author_name) +
				       strlen(p->author_email) + strlen(p->message) +
				       strlen(p->notes) + strlen(p->diff) + strlen(p->source);
				for (size_t f = 0; f < p->nfiles; f++)
					sum += strlen(p->files[f]);
				for (size_t t = 0; t < p->ntrailers; t++)
					sum += strlen(p->trailers[t].key) + strlen(p->trailers[t].value);
				/* the ordering contract of series.h: k in 1..M,
				 * ascending, each once (a missing k is in missing[]) */
				if (p->k < 1 || p->k > p->m || (j && p->k <= s->patches[j - 1].k))
					__builtin_trap();
			}
			/* every k of 1..M is either a patch or missing, not both */
			if (s->npatches + s->nmissing != (s->npatches ? (size_t)s->patches[0].m : s->nmissing))
				__builtin_trap();
		}
		series_free_all(v, n);
	} else if (!err.len) {
		__builtin_trap();  /* every failure explains itself */
	}
	buf_release(&err);
	return (int)(sum & 0);
}
