/* api_lab.c - GET /api/v1/lab: the lab hosts that run a job's guests
 * (lab.h, db_lab.h), as `kcanary lab list` shows them, with their runs
 * (docs/api.md). */
#define LOG_MODULE "api"
#include <jansson.h>
#include <stdint.h>

#include "api/api_lab.h"
#include "api/api_reply.h"
#include "store/db_lab.h"

static json_t *int_or_null(int64_t v)
{
	return v < 0 ? json_null() : json_integer((json_int_t)v);
}

/* One host as JSON; labels parsed from their stored JSON object. */
static json_t *lab_host_json(const struct db_lab_host *h)
{
	json_t *labels = h->labels_json ? json_loads(h->labels_json, 0, NULL) : NULL;

	if (!json_is_object(labels)) {
		json_decref(labels);
		labels = json_object();
	}
	return json_pack("{s:s,s:s,s:i,s:o,s:s,s:o,s:i,s:o,s:o,s:o,s:o,s:o,s:o,s:o,"
			 "s:I,s:I,s:o,s:o,s:o}",
		"name", h->name, "uri", h->uri, "slots", h->slots, "labels", labels,
		"state", h->state ? h->state : "unknown", "state_why", api_str_or_null(h->state_why),
		"fails_in_row", h->fails_in_row, "accel", api_str_or_null(h->accel),
		"cpus", int_or_null(h->cpus), "memory_mib", int_or_null(h->memory_mib),
		"free_mib", int_or_null(h->free_mib),
		"libvirt_version", api_str_or_null(h->libvirt_version),
		"qemu_version", api_str_or_null(h->qemu_version),
		"checked_at", api_str_or_null(h->checked_at),
		"runs_done", (json_int_t)h->runs_done, "runs_running", (json_int_t)h->runs_running,
		"last_run_at", api_str_or_null(h->last_run_at),
		"last_run_id", int_or_null(h->last_run_id),
		"last_run_job_id", int_or_null(h->last_run_job_id));
}

void api_lab_list(struct api *api, struct http_req *req, struct http_resp *resp)
{
	struct buf err = BUF_INIT;
	struct db_lab_host *h = NULL;
	json_t *hosts;
	size_t n = 0;
	int r;

	(void)req;
	if ((r = db_lab_hosts(api->db, &h, &n, &err))) {
		api_db_error(resp, r, "cannot list the lab hosts", &err);
		return;
	}
	hosts = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(hosts, lab_host_json(&h[i]));
	db_lab_hosts_free(h, n);
	buf_release(&err);
	api_json(resp, 200, json_pack("{s:o}", "hosts", hosts));
}
