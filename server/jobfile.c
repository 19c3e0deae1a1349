/* jobfile.c - job files (INI, via libinih) to their JSON form; see
 * jobfile.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <ini.h>

#include "jobfile.h"

static const char *const sections[] = { "job", "workload", "matrix", "kernel", "sysctl", NULL };

static bool known_section(const char *s)
{
	for (int i = 0; sections[i]; i++)
		if (!strcmp(sections[i], s))
			return true;
	return false;
}

struct ini_state {
	json_t *root;
	char *err;
	size_t errsz;
};

static int on_ini(void *user, const char *section, const char *name, const char *value)
{
	struct ini_state *s = user;
	json_t *sec;

	if (*s->err)       /* keep the first error: ini_parse_string returns its line */
		return 0;
	if (!*section) {
		snprintf(s->err, s->errsz, "key '%s' is outside any section: expected "
			 "[job], [workload] or [matrix] first", name);
		return 0;
	}
	if (!known_section(section)) {
		/* inih reports the line of the section's first key, so name it */
		snprintf(s->err, s->errsz, "unknown section '[%s]' of key '%s' (known: job, "
			 "workload, matrix, kernel, sysctl)", section, name ? name : "");
		return 0;
	}
	sec = json_object_get(s->root, section);
	if (!sec) {
		sec = json_object();
		json_object_set_new(s->root, section, sec);
	}
	if (!name)     /* a section header alone (inih with INI_CALL_HANDLER_ON_NEW_SECTION) */
		return 1;
	if (json_object_get(sec, name)) {
		snprintf(s->err, s->errsz, "key '%s' in [%s] is given twice", name, section);
		return 0;
	}
	json_object_set_new(sec, name, json_string(value));
	return 1;
}

int jobfile_parse_ini(json_t **out, const char *text, char *err, size_t size)
{
	struct ini_state s = { .root = json_object(), .err = err, .errsz = size };
	char why[256] = "";
	int line;

	s.err = why;
	s.errsz = sizeof(why);
	line = ini_parse_string(text, on_ini, &s);
	if (line != 0) {
		if (line < 0)
			snprintf(err, size, "cannot parse the job file");
		else if (*why)
			snprintf(err, size, "line %d: %s", line, why);
		else
			snprintf(err, size, "line %d: expected 'key = value' or '[section]'", line);
		json_decref(s.root);
		return -EINVAL;
	}
	if (jobfile_check(s.root, err, size)) {
		json_decref(s.root);
		return -EINVAL;
	}
	*out = s.root;
	return 0;
}

int jobfile_check(const json_t *spec, char *err, size_t size)
{
	const char *sec_name, *key, *kind;
	json_t *sec, *v, *job, *name;

	if (!json_is_object(spec)) {
		snprintf(err, size, "a job is a JSON object of sections, as in {\"job\": {\"name\": \"…\"}}");
		return -EINVAL;
	}
	json_object_foreach((json_t *)spec, sec_name, sec) {
		if (!known_section(sec_name)) {
			snprintf(err, size, "unknown section '%s' (known: job, workload, matrix, kernel, sysctl)",
				 sec_name);
			return -EINVAL;
		}
		if (!json_is_object(sec)) {
			snprintf(err, size, "section '%s' is not an object of key/values", sec_name);
			return -EINVAL;
		}
		json_object_foreach(sec, key, v) {
			if (!json_is_string(v) && !json_is_number(v) && !json_is_boolean(v)) {
				snprintf(err, size, "'%s.%s' is not a string, number or boolean",
					 sec_name, key);
				return -EINVAL;
			}
		}
	}
	job = json_object_get(spec, "job");
	name = job ? json_object_get(job, "name") : NULL;
	if (!json_is_string(name) || !*json_string_value(name)) {
		snprintf(err, size, "the job has no name: expected 'name = …' in [job]");
		return -EINVAL;
	}
	kind = json_string_value(json_object_get(job, "kind"));
	if (json_object_get(job, "kind") && (!kind || (strcmp(kind, "compare") && strcmp(kind, "bisect") &&
					      strcmp(kind, "canary") && strcmp(kind, "adhoc")))) {
		snprintf(err, size, "job kind '%s' is not one of compare, bisect, canary, adhoc",
			 kind ? kind : "?");
		return -EINVAL;
	}
	return 0;
}
