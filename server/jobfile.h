/* jobfile.h - a job file (DESIGN.md, "Job files") read into its JSON
 * form: {"job": {"name": …, …}, "workload": {…}, "matrix": {…}}, every
 * value a string as written (lists stay "a b c": the executor expands
 * them). jobfile.c is the only file that includes libinih.
 */
#ifndef KC_JOBFILE_H
#define KC_JOBFILE_H

#include <stddef.h>
#include <jansson.h>

/*
 * jobfile_parse_ini - parse INI text. A key outside any section, a
 * repeated key, a line that is not "key = value" or "[section]", or an
 * unknown section is an error: err (size bytes) names the line and the
 * key. *out (owned by the caller) is set only on success. Returns 0 or
 * -EINVAL.
 */
int jobfile_parse_ini(json_t **out, const char *text, char *err, size_t size);

/*
 * jobfile_check - check the JSON form: an object whose sections are known
 * (job, workload, matrix, kernel, sysctl), each an object of string,
 * number or boolean values; job.name a non-empty string; job.kind, if
 * given, one of compare, bisect, canary, adhoc. Returns 0 or -EINVAL with
 * err set. Which keys each section accepts is checked by the executor
 * (the compare-jobs issue), not here.
 */
int jobfile_check(const json_t *spec, char *err, size_t size);

#endif
