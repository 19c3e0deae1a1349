/* jobs.js - the jobs list: name, status, variants, runs done/total,
 * started, headline result; refreshes while any job is live. */
"use strict";

(function () {
	const where = document.getElementById("jobs");
	let jobs = [];

	function render() {
		if (!jobs.length) {
			where.replaceChildren(KC.el("p", { class: "muted",
				text: "No jobs in this store yet." }));
			return;
		}
		const el = KC.el;
		const rows = jobs.map((j) => el("tr", { "data-job-id": j.id },
			el("td", { class: "num" }, j.id),
			el("td", {}, el("a", { href: "job.html?id=" + j.id, class: "job-link" }, j.name)),
			el("td", {}, j.kind),
			el("td", {}, KC.statusBadge(j.status)),
			el("td", {}, (j.variants || []).map((v) => v.name).join(", ")),
			el("td", { class: "num runs" }, `${j.runs_done}/${j.runs_total}`),
			el("td", {}, j.started_at || el("span", { class: "muted", text: "not started" })),
			el("td", { class: "headline" }, j.headline || "",
				j.headline ? el("span", { class: "better", text: KC.betterLabel(j.better) }) : null)));
		where.replaceChildren(el("table", { id: "jobs-table" },
			el("thead", {}, el("tr", {},
				el("th", { class: "num" }, "id"), el("th", {}, "name"), el("th", {}, "kind"),
				el("th", {}, "status"), el("th", {}, "variants"),
				el("th", { class: "num" }, "runs done/total"), el("th", {}, "started"),
				el("th", {}, "headline"))),
			el("tbody", {}, rows)));
	}

	KC.poll(async () => {
		try {
			jobs = (await KC.api("api/v1/jobs")).jobs;
			render();
		} catch (e) {
			KC.showError(where, e);
		}
	}, () => jobs.some((j) => KC.liveStates.includes(j.status)), document.getElementById("live"));
})();
