/* job.c - compare job specs: INI (libinih), JSON (jansson), expansion into
 * variants, cells and runs, and storing them (see job.h). */
#define LOG_MODULE "job"
#include <errno.h>
#include <ini.h>
#include <jansson.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "kernel/inbox.h"
#include "exec/job.h"
#include "kernel/series_source.h"
#include "guest/scratch.h"
#include "kernel/series.h"
#include "log.h"
#include "judge/metric_check.h"
#include "judge/stats.h"
#include "kernel/variant_build.h"
#include "store/db_runs.h"
#include "store/db_compare.h"

static void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void kv_free(struct job_kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

struct job_spec *job_spec_new(void)
{
	struct job_spec *s = xcalloc(1, sizeof(*s));

	s->name = xstrdup("compare");
	s->repeat = 3;
	s->margin_pct = JOB_MARGIN_PCT;
	s->jobs = 1;
	s->vcpus = 2;
	s->memory_mb = 2048;
	s->workload = xstrdup("wb-handover");
	s->metric = xstrdup(metric_headline(s->workload));
	s->seed = (uint64_t)(clock_wall_s() * 1000);
	return s;
}

static void where_release(struct job_where *w)
{
	free(w->text);
	free(w->section);
	free(w->key);
}

void job_spec_free(struct job_spec *s)
{
	if (!s)
		return;
	free(s->name);
	free(s->tree);
	free(s->base);
	strv_free(s->series, s->nseries);
	free(s->series_version);
	free(s->patches);
	strv_free(s->kernels, s->nkernels);
	strv_free(s->config, s->nconfig);
	free(s->metric);
	free(s->rootfs);
	free(s->distcc);
	free(s->overlap_builds);
	strv_free(s->files, s->nfiles);
	free(s->by);
	free(s->baseline);
	free(s->workload);
	kv_free(s->knobs, s->nknobs);
	kv_free(s->sysctls, s->nsysctls);
	for (size_t i = 0; i < s->ndims; i++) {
		free(s->dims[i].key);
		strv_free(s->dims[i].values, s->dims[i].nvalues);
	}
	free(s->dims);
	for (size_t i = 0; i < s->nwhere; i++)
		where_release(&s->where[i]);
	free(s->where);
	free(s);
}

/* Split a list on spaces, tabs and commas; empty items are dropped. */
static size_t split_list(char ***out, const char *value)
{
	char *copy = xstrdup(value), *save = NULL;
	char **v = NULL;
	size_t n = 0;

	for (char *tok = strtok_r(copy, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
		v = xrealloc(v, (n + 1) * sizeof(*v));
		v[n++] = xstrdup(tok);
	}
	free(copy);
	*out = v;
	return n;
}

static void set_str(char **field, const char *value)
{
	free(*field);
	*field = xstrdup(value);
}

static int set_int(int *field, const char *key, const char *value, int min, struct buf *err)
{
	char *end;
	long v = strtol(value, &end, 10);

	if (!*value || *end || v < min || v > 1000000) {
		buf_printf(err, "'%s' must be a whole number >= %d, not '%s'", key, min, value);
		return -EINVAL;
	}
	*field = (int)v;
	return 0;
}

/* repeat = N, auto or auto:MAX (MAX >= 3 blocks: the first look that
 * may decide, report.h's REPORT_SEQ_MIN_BLOCKS). */
static int set_repeat(struct job_spec *s, const char *value, struct buf *err)
{
	const char *cap;
	char *end;
	long v;

	if (strncmp(value, "auto", 4)) {
		s->repeat_auto = false;
		return set_int(&s->repeat, "repeat", value, 1, err);
	}
	cap = value + 4;
	if (!*cap) {
		s->repeat_auto = true;
		s->repeat = JOB_REPEAT_AUTO_MAX;
		return 0;
	}
	v = *cap == ':' && cap[1] ? strtol(cap + 1, &end, 10) : 0;
	if (*cap != ':' || !cap[1] || *end || v < 3 || v > 1000) {
		buf_printf(err, "'repeat' must be a whole number >= 1, auto or auto:MAX with a cap"
			   " MAX of 3 to 1000 blocks, not '%s'", value);
		return -EINVAL;
	}
	s->repeat_auto = true;
	s->repeat = (int)v;
	return 0;
}

/* margin = 5% (or 5): above 0, below 100. */
static int set_margin(struct job_spec *s, const char *value, struct buf *err)
{
	char *end;
	double v = strtod(value, &end);

	if (end != value && *end == '%')
		end++;
	if (end == value || *end || !(v > 0) || !(v < 100)) {
		buf_printf(err, "'margin' must be a percentage above 0 and below 100, such as 5%%,"
			   " not '%s'", value);
		return -EINVAL;
	}
	s->margin_pct = v;
	return 0;
}

static int set_bool(bool *field, const char *key, const char *value, struct buf *err)
{
	if (!strcmp(value, "1") || !strcmp(value, "yes") || !strcmp(value, "true") || !strcmp(value, "on"))
		*field = true;
	else if (!strcmp(value, "0") || !strcmp(value, "no") || !strcmp(value, "false") || !strcmp(value, "off"))
		*field = false;
	else {
		buf_printf(err, "'%s' must be yes or no, not '%s'", key, value);
		return -EINVAL;
	}
	return 0;
}

static void kv_set(struct job_kv **kv, size_t *n, const char *key, const char *value)
{
	for (size_t i = 0; i < *n; i++) {
		if (!strcmp((*kv)[i].key, key)) {
			set_str(&(*kv)[i].value, value);
			return;
		}
	}
	*kv = xrealloc(*kv, (*n + 1) * sizeof(**kv));
	(*kv)[*n].key = xstrdup(key);
	(*kv)[*n].value = xstrdup(value);
	(*n)++;
}

/* `by`: one axis or two ("variant,mode" or "variant mode"), stored with a
 * comma; report_axis.h says what an axis can be. */
static int set_by(struct job_spec *s, const char *value, struct buf *err)
{
	char **axes;
	size_t n = split_list(&axes, value);
	int r = 0;

	if (n < 1 || n > 2) {
		buf_printf(err, "'by' must name one axis or two (variant, fs, host, sysctl, a"
			   " sysctl or a workload knob, e.g. 'mode' or 'variant,mode'), not '%s'", value);
		r = -EINVAL;
	} else {
		free(s->by);
		s->by = n == 2 ? xasprintf("%s,%s", axes[0], axes[1]) : xstrdup(axes[0]);
	}
	strv_free(axes, n);
	return r;
}

/* `patches`: b4's -P forms: "2", "1-2", "1,3", "2-"; a series has at most
 * a few hundred patches, so numbers stop at 999 (a typo must not expand
 * into thousands of prefix variants). */
static int set_patches(struct job_spec *s, const char *value, struct buf *err)
{
	const char *p = value;
	bool ok = *p != '\0';

	while (ok && *p) {
		char *end;
		long k = strtol(p, &end, 10);
		if (end == p || k < 1 || k > 999) {
			ok = false;
			break;
		}
		p = end;
		if (*p == '-') {
			p++;
			if (*p >= '0' && *p <= '9') {
				k = strtol(p, &end, 10);
				if (k < 1 || k > 999)
					ok = false;
				p = end;
			}
		}
		if (*p == ',')
			p++;
		else if (*p)
			ok = false;
	}
	if (!ok) {
		buf_printf(err, "'patches' must be like 2, 1-2, 1,3 or 2- (patch numbers 1 to"
			   " 999), not '%s'", value);
		return -EINVAL;
	}
	set_str(&s->patches, value);
	return 0;
}

/* `seed`: a number (strtoull base 0: decimal, 0x hex, 0 octal). */
static int set_seed(struct job_spec *s, const char *value, struct buf *err)
{
	char *end;
	unsigned long long v = strtoull(value, &end, 0);

	if (!*value || *end) {
		buf_printf(err, "'seed' must be a number, not '%s'", value);
		return -EINVAL;
	}
	s->seed = v;
	return 0;
}

/* `files`: the list replaces any files given before (job_spec_add_file). */
static int set_files(struct job_spec *s, const char *value, struct buf *err)
{
	char **v = NULL;
	size_t n = split_list(&v, value);
	int r = 0;

	strv_free(s->files, s->nfiles);
	s->files = NULL;
	s->nfiles = 0;
	for (size_t i = 0; i < n && !r; i++)
		r = job_spec_add_file(s, v[i], err);
	strv_free(v, n);
	return r;
}

static int set_job_key(struct job_spec *s, const char *key, const char *value, struct buf *err)
{
	if (!strcmp(key, "name")) {
		set_str(&s->name, value);
	} else if (!strcmp(key, "tree") || !strcmp(key, "repo")) {
		set_str(&s->tree, value);
	} else if (!strcmp(key, "base")) {
		set_str(&s->base, value);
	} else if (!strcmp(key, "series")) {
		strv_free(s->series, s->nseries);
		s->nseries = split_list(&s->series, value);
		free(s->series_version);
		s->series_version = NULL;
	} else if (!strcmp(key, "version")) {
		return set_int(&s->version, key, value, 1, err);
	} else if (!strcmp(key, "all_revisions")) {
		return set_bool(&s->all_revisions, key, value, err);
	} else if (!strcmp(key, "patches")) {
		return set_patches(s, value, err);
	} else if (!strcmp(key, "prefixes")) {
		return set_bool(&s->prefixes, key, value, err);
	} else if (!strcmp(key, "aa")) {
		return set_bool(&s->aa, key, value, err);
	} else if (!strcmp(key, "kernels")) {
		strv_free(s->kernels, s->nkernels);
		s->nkernels = split_list(&s->kernels, value);
	} else if (!strcmp(key, "config")) {
		strv_free(s->config, s->nconfig);
		s->nconfig = split_list(&s->config, value);
	} else if (!strcmp(key, "repeat")) {
		return set_repeat(s, value, err);
	} else if (!strcmp(key, "margin")) {
		return set_margin(s, value, err);
	} else if (!strcmp(key, "jobs")) {
		return set_int(&s->jobs, key, value, 1, err);
	} else if (!strcmp(key, "vcpus")) {
		return set_int(&s->vcpus, key, value, 1, err);
	} else if (!strcmp(key, "memory_mb")) {
		return set_int(&s->memory_mb, key, value, 256, err);
	} else if (!strcmp(key, "disk")) {
		if (parse_size(&s->disk_bytes, value, false) || s->disk_bytes < (64ULL << 20) ||
		    s->disk_bytes > SCRATCH_ASKED_MAX_BYTES) {
			buf_printf(err, "'disk' must be a size from 64M to 16T (the largest file"
				   " ext4 holds, a pool's volume being one) such as 100G, not '%s'",
				   value);
			s->disk_bytes = 0;
			return -EINVAL;
		}
	} else if (!strcmp(key, "seed")) {
		return set_seed(s, value, err);
	} else if (!strcmp(key, "metric")) {
		set_str(&s->metric, value);
		s->metric_given = true;
	} else if (!strcmp(key, "by")) {
		return set_by(s, value, err);
	} else if (!strcmp(key, "baseline")) {
		set_str(&s->baseline, value);
	} else if (!strcmp(key, "rootfs")) {
		set_str(&s->rootfs, value);
	} else if (!strcmp(key, "distcc")) {
		if (!*value || strspn(value, " \t") == strlen(value)) {
			buf_puts(err, "'distcc' must name hosts (\"HOST[:PORT][/LIMIT] ...\", as"
				 " DISTCC_HOSTS), not be empty");
			return -EINVAL;
		}
		set_str(&s->distcc, value);
	} else if (!strcmp(key, "overlap_builds")) {
		if (strcmp(value, "yes") && strcmp(value, "no") && strcmp(value, "auto")) {
			buf_printf(err, "'overlap_builds' must be yes, no or auto, not '%s'", value);
			return -EINVAL;
		}
		set_str(&s->overlap_builds, value);
	} else if (!strcmp(key, "files")) {
		return set_files(s, value, err);
	} else if (!strcmp(key, "watchdog_s")) {
		if (parse_duration_s(&s->watchdog_s, value)) {
			buf_printf(err, "'watchdog_s' must be a duration such as 300 or 5m, not '%s'", value);
			return -EINVAL;
		}
	} else {
		buf_printf(err, "unknown key '%s' in [job] (known: name tree base series version"
			   " all_revisions patches prefixes aa kernels config repeat margin jobs vcpus memory_mb disk seed metric"
			   " by baseline watchdog_s rootfs files distcc overlap_builds)", key);
		return -EINVAL;
	}
	return 0;
}

/* Job specs are stored as JSON, whose strings are UTF-8: refuse anything
 * else at the door rather than lose it on the way to the store. */
static bool is_utf8(const char *s)
{
	json_t *j = json_string(s);
	json_decref(j);
	return j != NULL;
}

int job_spec_set(struct job_spec *s, const char *section, const char *key,
		 const char *value, struct buf *err)
{
	if (!is_utf8(key) || !is_utf8(value)) {
		buf_printf(err, "key or value in [%s] is not valid UTF-8", section);
		return -EINVAL;
	}
	if (!strcmp(section, "job"))
		return set_job_key(s, key, value, err);
	/* set again (the CLI after the file): the file's line no longer holds */
	for (size_t i = 0; i < s->nwhere; i++) {
		if (strcmp(s->where[i].section, "job") && !strcmp(s->where[i].key, key)) {
			where_release(&s->where[i]);
			s->where[i--] = s->where[--s->nwhere];
		}
	}
	if (!strcmp(section, "workload")) {
		if (!strcmp(key, "type"))
			set_str(&s->workload, value);
		else
			kv_set(&s->knobs, &s->nknobs, key, value);
		return 0;
	}
	if (!strcmp(section, "sysctl")) {
		kv_set(&s->sysctls, &s->nsysctls, key, value);
		return 0;
	}
	if (!strcmp(section, "matrix")) {
		char **values;
		size_t n = split_list(&values, value);
		if (!n) {
			buf_printf(err, "empty list for '%s' in [matrix]", key);
			free(values);
			return -EINVAL;
		}
		for (size_t i = 0; i < s->ndims; i++) {
			if (!strcmp(s->dims[i].key, key)) {
				strv_free(s->dims[i].values, s->dims[i].nvalues);
				s->dims[i].values = values;
				s->dims[i].nvalues = n;
				return 0;
			}
		}
		s->dims = xrealloc(s->dims, (s->ndims + 1) * sizeof(*s->dims));
		s->dims[s->ndims++] = (struct job_dim){ xstrdup(key), values, n };
		return 0;
	}
	buf_printf(err, "unknown section [%s] (expected [job], [workload], [matrix] or [sysctl])",
		   section);
	return -EINVAL;
}

struct ini_ctx {
	struct job_spec *spec;
	struct buf msg;
	const char *source;     /* the file's name, for job_spec_where() */
	const char *next;       /* reader: the rest of the text */
	int line;               /* reader: lines handed to libinih so far */
};

/* libinih's ini_reader over a string, like its own ini_parse_string()'s,
 * but counting lines: libinih calls the handler for a line before it
 * reads the next, so ctx->line is the handler's line. */
static char *ini_read_line(char *str, int num, void *stream)
{
	struct ini_ctx *ctx = stream;
	const char *p = ctx->next;
	int n = 0;

	if (!p || !*p || num < 2)
		return NULL;
	while (n < num - 1 && p[n]) {
		n++;
		if (p[n - 1] == '\n')
			break;
	}
	memcpy(str, p, (size_t)n);
	str[n] = '\0';
	ctx->next = p + n;
	if (str[n - 1] == '\n' || !*ctx->next)
		ctx->line++;
	return str;
}

const char *job_spec_where(const struct job_spec *s, const char *key)
{
	for (size_t i = s->nwhere; i-- > 0;)
		if (strcmp(s->where[i].section, "job") && !strcmp(s->where[i].key, key))
			return s->where[i].text;
	return NULL;
}

static int job_ini_handler(void *user, const char *section, const char *name, const char *value)
{
	struct ini_ctx *ctx = user;

	if (!value || !*value) {
		if (!strcmp(section, "matrix")) {
			buf_printf(&ctx->msg, "empty list for '%s' in [matrix]", name);
		} else {
			buf_printf(&ctx->msg, "key '%s' in [%s] has no value", name, section);
		}
		return 0;
	}
	if (job_spec_set(ctx->spec, section, name, value, &ctx->msg))
		return 0;
	struct job_spec *s = ctx->spec;
	s->where = xrealloc(s->where, (s->nwhere + 1) * sizeof(*s->where));
	s->where[s->nwhere++] = (struct job_where){
		xasprintf("%s:%d: [%s] %s", ctx->source, ctx->line, section, name),
		xstrdup(section), xstrdup(name),
	};
	return 1;
}

int job_spec_parse_ini(struct job_spec *spec, const char *text, const char *source,
		       struct buf *err)
{
	struct ini_ctx ctx = { spec, BUF_INIT, source, text, 0 };
	int line;

	/* libinih's Debian build exposes its options as globals: stop at the
	 * first error so the returned line is the bad one, and allow long lines
	 * (series lists) */
	ini_stop_on_first_error = true;
	ini_use_stack = false;
	ini_allow_realloc = true;
	ini_max_line = 65536;
	line = ini_parse_stream(ini_read_line, &ctx, job_ini_handler, &ctx);
	if (line) {
		if (line < 0)
			buf_printf(err, "%s: cannot parse job file", source);
		else if (ctx.msg.len)
			buf_printf(err, "%s:%d: %s", source, line, ctx.msg.ptr);
		else
			buf_printf(err, "%s:%d: expected 'key = value' or '[section]'", source, line);
		buf_release(&ctx.msg);
		return -EINVAL;
	}
	buf_release(&ctx.msg);
	return 0;
}

size_t job_ncells(const struct job_spec *s)
{
	size_t n = 1;
	for (size_t i = 0; i < s->ndims; i++) {
		if (s->dims[i].nvalues && n > SIZE_MAX / s->dims[i].nvalues)
			return SIZE_MAX;
		n *= s->dims[i].nvalues;
	}
	return n;
}

/* Index of dimension d's value in cell i (the last dimension varies fastest). */
static size_t cell_value(const struct job_spec *s, size_t i, size_t d)
{
	for (size_t k = s->ndims; k-- > d + 1;)
		i /= s->dims[k].nvalues;
	return i % s->dims[d].nvalues;
}

char *job_cell_text(const struct job_spec *s, size_t i)
{
	struct buf b = BUF_INIT;
	for (size_t d = 0; d < s->ndims; d++)
		buf_printf(&b, "%s%s=%s", d ? " " : "", s->dims[d].key,
			   s->dims[d].values[cell_value(s, i, d)]);
	return buf_detach(&b);
}

char *job_cell_params(const struct job_spec *s, size_t i)
{
	json_t *p = json_object(), *sys = json_object();

	json_object_set_new(p, "workload", json_string(s->workload));
	for (size_t k = 0; k < s->nknobs; k++)
		json_object_set_new(p, s->knobs[k].key, json_string(s->knobs[k].value));
	for (size_t k = 0; k < s->nsysctls; k++)
		json_object_set_new(sys, s->sysctls[k].key, json_string(s->sysctls[k].value));
	for (size_t d = 0; d < s->ndims; d++) {
		const char *key = s->dims[d].key, *v = s->dims[d].values[cell_value(s, i, d)];
		if (!strncmp(key, "sysctl.", 7))
			json_object_set_new(sys, key + 7, json_string(v));
		else
			json_object_set_new(p, key, json_string(v));
	}
	if (json_object_size(sys))
		json_object_set(p, "sysctl", sys);
	json_decref(sys);
	char *out = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(p);
	return out;
}

/* Append a variant of kind named name, recording the job's config. */
static struct variant *add_variant(struct variant **v, size_t *n, const struct job_spec *s,
				   const char *name, enum variant_kind kind)
{
	struct variant *x;

	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	x = &(*v)[(*n)++];
	*x = (struct variant){ .kind = kind, .name = xstrdup(name) };
	x->config = xcalloc(s->nconfig + 1, sizeof(*x->config));
	for (size_t i = 0; i < s->nconfig; i++)
		x->config[x->nconfig++] = xstrdup(s->config[i]);
	return x;
}

static void add_series_variant(struct variant **v, size_t *n, const struct job_spec *s,
			       const char *name, size_t i, const char *patches)
{
	struct variant *x = add_variant(v, n, s, name, VARIANT_SERIES);

	x->base = s->base ? xstrdup(s->base) : NULL;
	x->series = xstrdup(s->series[i]);
	x->version = s->series_version ? s->series_version[i] : 0;
	x->patches = patches ? xstrdup(patches) : NULL;
}

/* A series variant is named as cover letters name it, by its revision:
 * "v6" (the newest revision in the file, as the executor applies it).
 * When the file does not parse (yet), by its file name without the
 * extension; the executor then reports why it cannot be applied. */
static char *series_label(const char *path, int version, bool with_file)
{
	struct series **revs = NULL;
	size_t n = 0;
	char *paths[] = { (char *)path };
	char *copy = xstrdup(path), *stem = xstrdup(basename(copy)), *label, *msgid = NULL;
	char *dot = strrchr(stem, '.');
	int v = 0;

	/* a message-id (series_source.h): named by it, its thread not read here */
	if (series_source_is_ref(path) && !inbox_ref_parse(&msgid, path)) {
		free(copy);
		free(stem);
		label = !version ? xasprintf("<%s>", msgid) : with_file ?
			xasprintf("<%s> v%d", msgid, version) : xasprintf("v%d", version);
		free(msgid);
		return label;
	}
	if (dot && dot != stem)
		*dot = '\0';
	struct stat st;
	/* only a regular file: naming must never block on a FIFO or device */
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    series_load(&revs, &n, paths, 1, NULL) == 0 && n) {
		for (size_t i = 0; i < n; i++)
			if (version ? revs[i]->version == version : revs[i]->version > v)
				v = revs[i]->version;
		series_free_all(revs, n);
	}
	if (!v)
		label = xstrdup(stem);
	else if (with_file)
		label = xasprintf("%s v%d", stem, v);
	else
		label = xasprintf("v%d", v);
	free(copy);
	free(stem);
	return label;
}

#define SERIES_VERSION(s, i) ((s)->series_version ? (s)->series_version[i] : 0)

/* "2-3" -> last patch 3; "2" -> 2; NULL -> 0 (unknown). */
static int patches_last(const char *p)
{
	const char *dash = p ? strrchr(p, '-') : NULL;
	return p ? atoi(dash ? dash + 1 : p) : 0;
}

size_t job_variants(const struct job_spec *s, struct variant **out)
{
	struct variant *v = NULL;
	size_t n = 0;

	if (s->nkernels) {
		for (size_t i = 0; i < s->nkernels; i++) {
			/* named by file, without the "vmlinuz-" every image has */
			char *copy = xstrdup(s->kernels[i]);
			const char *name = basename(copy);
			if (!strncmp(name, "vmlinuz-", 8) && name[8])
				name += 8;
			add_variant(&v, &n, s, name, VARIANT_PREBUILT)->kernel = xstrdup(s->kernels[i]);
			free(copy);
		}
	} else if (s->base) {
		char *name = xasprintf("base (%s)", s->base);
		add_variant(&v, &n, s, name, VARIANT_BASE)->base = xstrdup(s->base);
		free(name);
	}
	if (s->aa && n) {
		v = xrealloc(v, (n + 1) * sizeof(*v));
		variant_copy(&v[n], &v[0]);
		free(v[n].name);
		v[n].name = xasprintf("%s A/A", v[0].name);
		n++;
	}
	char **labels = xcalloc(s->nseries + 1, sizeof(*labels));
	for (size_t i = 0; i < s->nseries; i++)
		labels[i] = series_label(s->series[i], SERIES_VERSION(s, i), false);
	/* two files of the same revision number: name both by file too */
	bool *clash = xcalloc(s->nseries + 1, sizeof(*clash));
	for (size_t i = 0; i < s->nseries; i++)
		for (size_t j = 0; j < s->nseries; j++)
			clash[i] |= i != j && !strcmp(labels[i], labels[j]);
	for (size_t i = 0; i < s->nseries; i++)
		if (clash[i])
			labels[i] = (free(labels[i]), series_label(s->series[i], SERIES_VERSION(s, i),
								  true));
	free(clash);
	for (size_t i = 0; i < s->nseries; i++) {
		char *label = labels[i];
		int last = patches_last(s->patches);
		if (s->prefixes && last > 1) {
			int first = s->patches && strchr(s->patches, '-') ? atoi(s->patches) : 1;
			for (int k = first; k < last; k++) {
				char *p = k == first ? xasprintf("%d", k) : xasprintf("%d-%d", first, k);
				char *name = xasprintf("+ %s %s", label, p);
				add_series_variant(&v, &n, s, name, i, p);
				free(name);
				free(p);
			}
		}
		char *name = s->patches ? xasprintf("+ %s %s", label, s->patches) : xasprintf("+ %s", label);
		add_series_variant(&v, &n, s, name, i, s->patches);
		free(name);
		free(label);
	}
	free(labels);
	*out = v;
	return n;
}

void job_variants_free(struct variant *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		variant_release(&v[i]);
	free(v);
}

int job_spec_check(const struct job_spec *s, struct buf *err)
{
	struct variant *v = NULL;
	size_t nv = job_variants(s, &v);
	size_t ncells = job_ncells(s);
	int r = -EINVAL;

	if (s->nseries && (!s->tree || !s->base)) {
		buf_puts(err, "a series needs a kernel tree and a base: set 'tree' and 'base' in"
			 " [job] (or --repo and --base)");
		goto out;
	}
	if (s->base && !s->nkernels && !s->tree) {
		buf_puts(err, "a base needs a kernel tree: set 'tree' in [job] (or --repo)");
		goto out;
	}
	if (s->nseries && s->nkernels) {
		buf_puts(err, "'kernels' (prebuilt images) and 'series' cannot be mixed in one job");
		goto out;
	}
	if (!nv) {
		buf_puts(err, "nothing to compare: give a base (and series) or prebuilt kernels");
		goto out;
	}
	for (size_t i = 0; i < s->nkernels; i++) {
		struct stat st;
		if (access(s->kernels[i], R_OK) || stat(s->kernels[i], &st)) {
			buf_printf(err, "kernel image '%s': %s", s->kernels[i], strerror(errno));
			goto out;
		}
		if (!S_ISREG(st.st_mode)) {
			buf_printf(err, "kernel image '%s': not a regular file", s->kernels[i]);
			goto out;
		}
	}
	for (size_t d = 0; d < s->ndims; d++) {
		if (strcmp(s->dims[d].key, "fs"))
			continue;
		for (size_t i = 0; i < s->dims[d].nvalues; i++) {
			const char *fs = s->dims[d].values[i];
			if (strcmp(fs, "ext4") && strcmp(fs, "xfs") && strcmp(fs, "btrfs")) {
				buf_printf(err, "filesystem '%s' in fs: the guest image formats ext4, xfs"
					   " or btrfs", fs);
				goto out;
			}
		}
	}
	if (s->nfiles && !s->rootfs) {
		buf_puts(err, "'files' needs 'rootfs' (--files needs --rootfs): files go into the root"
			 " filesystem");
		goto out;
	}
	for (size_t i = 0; i < s->nfiles; i++) {
		const char *colon = strchr(s->files[i], ':');
		char *path = colon ? xstrndup(s->files[i], (size_t)(colon - s->files[i]))
				   : xstrdup(s->files[i]);
		int bad = access(path, R_OK);
		if (bad)
			buf_printf(err, "file '%s' (files, --files): %s", path, strerror(errno));
		free(path);
		if (bad)
			goto out;
	}
	if (s->repeat_auto && nv < 2 && !s->by) {
		buf_puts(err, "repeat auto stops when every comparison is decided: give two variants"
			 " or more, or compare along an axis of the matrix (by, --by)");
		goto out;
	}
	if (ncells == SIZE_MAX || ncells * nv * (size_t)s->repeat > JOB_MAX_RUNS) {
		buf_printf(err, "the job has %zu variants x %zu matrix cells x %d repeats, over"
			   " %d runs: shrink the [matrix]", nv, ncells, s->repeat, JOB_MAX_RUNS);
		goto out;
	}
	r = 0;
out:
	job_variants_free(v, nv);
	return r;
}

static json_t *strv_json(char **v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static json_t *kv_json(const struct job_kv *kv, size_t n)
{
	json_t *o = json_object();
	for (size_t i = 0; i < n; i++)
		json_object_set_new(o, kv[i].key, json_string(kv[i].value));
	return o;
}

int job_spec_add_file(struct job_spec *s, const char *file, struct buf *err)
{
	char *abs, cwd[4096];

	if (!*file || *file == ':') {
		buf_printf(err, "'files' entry '%s': expected PATH[:GUEST_PATH] with a PATH", file);
		return -EINVAL;
	}
	if (*file == '/') {
		abs = xstrdup(file);
	} else if (getcwd(cwd, sizeof(cwd))) {
		abs = xasprintf("%s/%s", cwd, file);
	} else {
		int r = -errno;
		buf_printf(err, "'files' entry '%s' is relative and the working directory cannot be"
			   " read: %s", file, strerror(-r));
		return r;
	}
	s->files = xrealloc(s->files, (s->nfiles + 2) * sizeof(*s->files));
	s->files[s->nfiles++] = abs;
	s->files[s->nfiles] = NULL;
	return 0;
}

char *job_spec_to_json(const struct job_spec *s)
{
	json_t *dims = json_array();
	for (size_t i = 0; i < s->ndims; i++)
		json_array_append_new(dims, json_pack("{s:s,s:o}", "key", s->dims[i].key,
			"values", strv_json(s->dims[i].values, s->dims[i].nvalues)));
	json_t *o = json_pack("{s:s,s:s?,s:s?,s:o,s:s?,s:b,s:b,s:o,s:o,s:i,s:i,s:I,s:s,s:s?,s:s?,"
			      "s:i,s:i,s:f,s:s,s:o,s:o,s:o}",
		"name", s->name, "tree", s->tree, "base", s->base,
		"series", strv_json(s->series, s->nseries), "patches", s->patches,
		"prefixes", s->prefixes, "aa", s->aa,
		"kernels", strv_json(s->kernels, s->nkernels),
		"config", strv_json(s->config, s->nconfig),
		"repeat", s->repeat, "jobs", s->jobs, "seed", (json_int_t)s->seed,
		"metric", s->metric, "by", s->by, "baseline", s->baseline, "vcpus", s->vcpus, "memory_mb", s->memory_mb,
		"watchdog_s", s->watchdog_s, "workload", s->workload,
		"knobs", kv_json(s->knobs, s->nknobs),
		"sysctl", kv_json(s->sysctls, s->nsysctls), "matrix", dims);
	if (s->disk_bytes)
		json_object_set_new(o, "disk", json_integer((json_int_t)s->disk_bytes));
	if (s->rootfs)
		json_object_set_new(o, "rootfs", json_string(s->rootfs));
	if (s->distcc)
		json_object_set_new(o, "distcc", json_string(s->distcc));
	if (s->overlap_builds)
		json_object_set_new(o, "overlap_builds", json_string(s->overlap_builds));
	if (s->repeat_auto) {
		char *rep = xasprintf("auto:%d", s->repeat);
		json_object_set_new(o, "repeat", json_string(rep));
		free(rep);
	}
	if (s->repeat_auto || s->margin_pct != JOB_MARGIN_PCT) {
		char *m = xasprintf("%.17g%%", s->margin_pct);
		json_object_set_new(o, "margin", json_string(m));
		free(m);
	}
	if (s->nfiles)
		json_object_set_new(o, "files", strv_json(s->files, s->nfiles));
	if (s->series_version) {
		json_t *a = json_array();
		for (size_t i = 0; i < s->nseries; i++)
			json_array_append_new(a, json_integer(s->series_version[i]));
		json_object_set_new(o, "series_versions", a);
	}
	char *out = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return out;
}

static size_t json_strv(char ***out, json_t *a)
{
	size_t n = json_array_size(a), k = 0;
	char **v = n ? xcalloc(n, sizeof(*v)) : NULL;
	for (size_t i = 0; i < n; i++)
		if (json_is_string(json_array_get(a, i)))
			v[k++] = xstrdup(json_string_value(json_array_get(a, i)));
	*out = v;
	return k;
}

int job_spec_from_json(struct job_spec *s, const char *text, struct buf *err)
{
	json_error_t je;
	json_t *o = json_loads(text, 0, &je), *v;
	const char *k;
	int r = -EINVAL;

	if (!json_is_object(o)) {
		buf_printf(err, "stored job spec is not a JSON object: %s", je.text);
		goto out;
	}
	/* scalars go through the same setter as the job file, so checks agree */
	json_object_foreach(o, k, v) {
		char num[64];
		const char *sv = NULL;
		if (json_is_string(v))
			sv = json_string_value(v);
		else if (json_is_integer(v))
			sv = (snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v)), num);
		else if (json_is_real(v))
			sv = (snprintf(num, sizeof(num), "%.17g", json_real_value(v)), num);
		else if (json_is_boolean(v))
			sv = json_is_true(v) ? "yes" : "no";
		if (!strcmp(k, "workload") && sv) {
			set_str(&s->workload, sv);
		} else if (!strcmp(k, "series") || !strcmp(k, "kernels") || !strcmp(k, "config")) {
			char ***f = !strcmp(k, "series") ? &s->series : !strcmp(k, "kernels") ?
				    &s->kernels : &s->config;
			size_t *nf = !strcmp(k, "series") ? &s->nseries : !strcmp(k, "kernels") ?
				     &s->nkernels : &s->nconfig;
			strv_free(*f, *nf);
			*nf = json_strv(f, v);
		} else if (!strcmp(k, "files")) {
			size_t i;
			json_t *f;
			strv_free(s->files, s->nfiles);
			s->files = NULL;
			s->nfiles = 0;
			json_array_foreach(v, i, f)
				if (!json_is_string(f) || job_spec_add_file(s, json_string_value(f), err))
					goto out;
		} else if (!strcmp(k, "series_versions")) {
			free(s->series_version);
			s->series_version = xcalloc(s->nseries + 1, sizeof(*s->series_version));
			for (size_t i = 0; i < s->nseries && i < json_array_size(v); i++)
				s->series_version[i] = (int)json_integer_value(json_array_get(v, i));
		} else if (!strcmp(k, "knobs") || !strcmp(k, "sysctl")) {
			const char *kk;
			json_t *vv;
			json_object_foreach(v, kk, vv)
				if (json_is_string(vv))
					job_spec_set(s, !strcmp(k, "knobs") ? "workload" : "sysctl", kk,
						     json_string_value(vv), err);
		} else if (!strcmp(k, "matrix")) {
			size_t i;
			json_t *d;
			json_array_foreach(v, i, d) {
				char **vals;
				size_t n = json_strv(&vals, json_object_get(d, "values"));
				const char *key = json_string_value(json_object_get(d, "key"));
				if (!key || !n) {
					strv_free(vals, n);
					buf_puts(err, "stored job spec has a malformed matrix");
					goto out;
				}
				s->dims = xrealloc(s->dims, (s->ndims + 1) * sizeof(*s->dims));
				s->dims[s->ndims++] = (struct job_dim){ xstrdup(key), vals, n };
			}
		} else if (sv && !json_is_null(v)) {
			if (set_job_key(s, k, sv, err))
				goto out;
		}
	}
	r = 0;
out:
	json_decref(o);
	return r;
}

/* The next repeat's cells: a fresh Fisher-Yates shuffle from *rng. */
static void cell_order(size_t *order, size_t ncells, uint64_t *rng)
{
	for (size_t i = 0; i < ncells; i++)
		order[i] = i;
	for (size_t i = ncells; i > 1; i--) {
		size_t j = stats_rand64(rng) % i;
		size_t t = order[i - 1];
		order[i - 1] = order[j];
		order[j] = t;
	}
}

/* One repeat's runs: each cell in order, each of the nv variants vids[]
 * (0: left out); rep 0 takes each one's next free repeat index. */
static int store_repeat(struct db *db, const struct job_spec *s, int64_t job,
			const int64_t *vids, size_t nv, const size_t *order, size_t ncells,
			int rep, struct buf *err)
{
	int r = 0;

	for (size_t c = 0; c < ncells && !r; c++) {
		char *cell = job_cell_text(s, order[c]);
		char *params = job_cell_params(s, order[c]);
		json_t *pj = json_loads(params, 0, NULL);
		const char *fs = json_string_value(json_object_get(pj, "fs"));
		for (size_t i = 0; i < nv && !r; i++) {
			int64_t run;
			if (vids[i])
				r = db_run_create(db, &run, job, vids[i], cell, rep, fs, params, err);
		}
		json_decref(pj);
		free(cell);
		free(params);
	}
	return r;
}

int job_store(struct db *db, const struct job_spec *s, const char *owner, int64_t *out_job,
	      struct buf *err)
{
	struct variant *v = NULL;
	size_t nv = job_variants(s, &v), ncells = job_ncells(s);
	int64_t job = 0, *vids = xcalloc(nv ? nv : 1, sizeof(*vids));
	size_t *order = xcalloc(ncells, sizeof(*order));
	char *spec_json = job_spec_to_json(s);
	uint64_t rng = s->seed;
	int r;

	if ((r = db_begin(db, err)))
		goto fail;
	if ((r = db_job_create(db, &job, s->name, "compare", spec_json, err)))
		goto fail;
	if ((r = db_job_set_meta(db, job, (int64_t)s->seed, s->metric, err)))
		goto fail;
	if (owner && (r = db_job_set_owner(db, job, owner, err)))
		goto fail;
	for (size_t i = 0; i < nv; i++) {
		char *vj = variant_to_json(&v[i]);
		r = db_variant_get(db, &vids[i], job, v[i].name, err);
		if (!r)
			r = db_variant_set_spec(db, vids[i], v[i].base, v[i].patches, vj, err);
		free(vj);
		if (r)
			goto fail;
	}
	for (int rep = 1; rep <= (s->repeat_auto ? 1 : s->repeat); rep++) {
		cell_order(order, ncells, &rng);
		if ((r = store_repeat(db, s, job, vids, nv, order, ncells, rep, err)))
			goto fail;
	}
	if ((r = db_commit(db, err)))
		goto fail;
	*out_job = job;
	goto out;
fail:
	err_wrapf(err, r, "cannot store job '%s'", s->name);
	db_rollback(db);
out:
	job_variants_free(v, nv);
	free(vids);
	free(order);
	free(spec_json);
	return r;
}

int job_store_block(struct db *db, const struct job_spec *s, int64_t job_id, int block,
		    size_t *n_out, struct buf *err)
{
	struct db_variant_row *v = NULL;
	size_t nv = 0, ncells = job_ncells(s), n = 0;
	size_t *order = xcalloc(ncells, sizeof(*order));
	int64_t *vids = NULL;
	uint64_t rng = s->seed;
	int next = 1, r;

	if ((r = db_job_variants(db, job_id, &v, &nv, err)))
		goto out;
	vids = xcalloc(nv ? nv : 1, sizeof(*vids));
	for (size_t i = 0; i < nv; i++)
		if (!strcmp(v[i].status, "ok")) {
			vids[i] = v[i].id;
			n += ncells;
		}
	/* the order job_store() gives repeat `block`: the same generator */
	for (int rep = 1; rep <= block; rep++)
		cell_order(order, ncells, &rng);
	if ((r = db_begin(db, err)))
		goto out;
	/* one repeat index above every stored one for the whole block, so
	 * that the lab places it as one block (lab.h) even when a fresh
	 * repeat took an earlier block's next index */
	if ((r = db_job_next_repeat(db, job_id, &next, err)) ||
	    (r = store_repeat(db, s, job_id, vids, nv, order, ncells, next, err)) ||
	    (r = db_commit(db, err))) {
		db_rollback(db);
		err_wrapf(err, r, "cannot store block %d of job %lld", block, (long long)job_id);
		goto out;
	}
	if (n_out)
		*n_out = n;
out:
	db_variant_rows_free(v, nv);
	free(vids);
	free(order);
	return r;
}

/* --all-revisions: the one series becomes one entry per revision found. */
static int expand_revisions(struct job_spec *s, struct db *db, struct buf *err)
{
	struct series_source_opts so = { .db = db };
	struct series_revision *rv = NULL;
	size_t n = 0, k = 0;
	int r;

	if (s->nseries != 1 || !series_source_is_ref(s->series[0]))
		return err_setf(err, -EINVAL, "--all-revisions takes one series given by message-id "
				"or URL (its revisions are found on the server), not %zu %s",
				s->nseries, s->nseries == 1 ? "file" : "series");
	if ((r = series_revisions(&rv, &n, s->series[0], &so, err)))
		return r;
	strv_free(s->series, s->nseries);
	free(s->series_version);
	s->series = xcalloc(n + 1, sizeof(*s->series));
	s->series_version = xcalloc(n + 1, sizeof(*s->series_version));
	for (size_t i = 0; i < n; i++) {
		if (!rv[i].series) {
			log_warn("revision <%s> (%s) is not on the server: left out", rv[i].message_id,
				 rv[i].found);
			continue;
		}
		s->series[k] = xstrdup(rv[i].message_id);
		s->series_version[k++] = rv[i].series->version;
	}
	s->nseries = k;
	s->all_revisions = false;
	series_revisions_free(rv, n);
	return 0;
}

/* base "auto": the base-commit of the newest entry's revision, resolved. */
static int resolve_auto_base(struct job_spec *s, struct db *db, struct buf *err)
{
	struct series_source_opts so = { .db = db };
	struct variant_build *vb = variant_build_new(db, &(struct variant_build_opts){
		.tree = s->tree });
	struct series **revs = NULL, *best = NULL;
	size_t n = 0;
	char hex[KC_OID_HEX];
	int r;

	if (!s->nseries) {
		r = err_setf(err, -EINVAL, "--base auto takes the base-commit of a series: give one");
		goto out;
	}
	/* every entry is read: the base of the newest, a warning for others */
	for (size_t i = 0; i < s->nseries; i++) {
		struct series **one = NULL;
		size_t none = 0;
		so.version = SERIES_VERSION(s, i);
		if ((r = series_source_load(&one, &none, &s->series[i], 1, &so, err)))
			goto out;
		revs = xrealloc(revs, (n + none) * sizeof(*revs));
		memcpy(revs + n, one, none * sizeof(*one));
		n += none;
		free(one);
	}
	for (size_t i = 0; i < n; i++)
		if (!revs[i]->report && (!best || revs[i]->version > best->version))
			best = revs[i];
	if (!best) {
		r = err_setf(err, -EINVAL, "--base auto: no series revision in '%s'", s->series[0]);
		goto out;
	}
	if ((r = variant_build_resolve_series_base(vb, hex, best, err)))
		goto out;
	for (size_t i = 0; i < n; i++)
		if (revs[i] != best && !revs[i]->report &&
		    (!revs[i]->base_commit || strcmp(revs[i]->base_commit, best->base_commit)))
			log_warn("--base auto: %s v%d names base-commit %.12s, v%d %.12s; every "
				 "revision is applied on v%d's", revs[i]->name, revs[i]->version,
				 revs[i]->base_commit ? revs[i]->base_commit : "(none)",
				 best->version, best->base_commit, best->version);
	set_str(&s->base, best->base_commit);
out:
	series_free_all(revs, n);
	variant_build_free(vb);
	return r;
}

int job_spec_resolve_series(struct job_spec *s, struct db *db, struct buf *err)
{
	int r;

	if (s->all_revisions && (r = expand_revisions(s, db, err)))
		return r;
	if (s->version) {
		free(s->series_version);
		s->series_version = xcalloc(s->nseries + 1, sizeof(*s->series_version));
		for (size_t i = 0; i < s->nseries; i++) {
			struct series_source_opts so = { .db = db, .version = s->version };
			struct series **one = NULL;
			size_t n = 0;
			s->series_version[i] = s->version;
			/* a thread without vN is said now, not at build time */
			if (series_source_is_ref(s->series[i]) &&
			    (r = series_source_load(&one, &n, &s->series[i], 1, &so, err)))
				return r;
			series_free_all(one, n);
		}
		s->version = 0;
	}
	if (s->base && !strcmp(s->base, "auto"))
		return resolve_auto_base(s, db, err);
	return 0;
}
