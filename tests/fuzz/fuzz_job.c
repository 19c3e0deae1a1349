/* fuzz_job.c - libFuzzer target: arbitrary text as a job file, then the
 * whole-spec check, the JSON round trip and the variant/cell expansion. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exec/job.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct job_spec *s = job_spec_new(), *t = job_spec_new();
	struct buf err = BUF_INIT;

	memcpy(text, data, size);
	text[size] = '\0';
	if (job_spec_parse_ini(s, text, "fuzz.ini", &err) == 0 && job_spec_check(s, &err) == 0) {
		char *json = job_spec_to_json(s);
		if (job_spec_from_json(t, json, &err))
			abort();      /* what we write we must read back */
		struct variant *v = NULL;
		size_t nv = job_variants(s, &v);
		job_variants_free(v, nv);
		size_t nc = job_ncells(s);
		for (size_t i = 0; i < nc && i < 64; i++) {
			free(job_cell_text(s, i));
			free(job_cell_params(s, i));
		}
		free(json);
	}
	job_spec_free(s);
	job_spec_free(t);
	buf_release(&err);
	free(text);
	return 0;
}
