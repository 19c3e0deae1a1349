/* ldd.c - reading `ldd`'s output (see ldd.h). */
#include <string.h>

#include "guest/ldd.h"
#include "util.h"

/* The path line names, NULL for none; line is cut after it. */
static char *line_path(char *line)
{
	char *path = strstr(line, "=> /"), *end;

	if (path)
		path += 3;
	else if ((path = strchr(line, '/')) && strspn(line, " \t") != (size_t)(path - line))
		path = NULL;
	if (!path)
		return NULL;
	end = strstr(path, " (");
	if (end)
		*end = '\0';
	return path;
}

size_t ldd_paths(char *text, char ***out)
{
	char **v = xcalloc(1, sizeof(*v)), *save = NULL, *line, *path;
	size_t n = 0;

	for (line = text ? strtok_r(text, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!(path = line_path(line)))
			continue;
		v = xrealloc(v, (n + 2) * sizeof(*v));
		v[n++] = path;
		v[n] = NULL;
	}
	*out = v;
	return n;
}
