/* jobs.js - the jobs list: name, status (KC.jobBadge), variants, runs
 * done/total, failed runs, the report's headline change and p, started,
 * headline medians; refreshes while any job is live. */
"use strict";

(function () {
	const where = document.getElementById("jobs");
	let jobs = [];

	/* The report's headline change (the comparison with the smallest p),
	 * what it compares in its title; "–" for a job with nothing compared. */
	function changeCell(j) {
		const c = j.change;
		if (!c)
			return KC.el("td", { class: "num change" }, "–");
		const what = c.label + (c.cell ? " (" + c.cell + ")" : "") +
			(c.comparisons > 1 ? `: the smallest p of ${c.comparisons} comparisons` : "");
		return KC.el("td", { class: "num change", title: what },
			KC.fmtPct(c.change_pct) + (c.comparisons > 1 ? " *" : ""));
	}

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
			el("td", {}, KC.jobBadge(j)),
			el("td", {}, (j.variants || []).map((v) => v.name).join(", ")),
			el("td", { class: "num runs" }, `${j.runs_done}/${j.runs_total}`),
			el("td", { class: "num failed" }, j.runs_failed || 0),
			changeCell(j),
			el("td", { class: "num p" }, j.change ? KC.fmtP(j.change.p) : "–"),
			el("td", {}, j.started_at || el("span", { class: "muted",
				text: KC.liveStates.includes(j.status) ? "not started" : "–" })),
			el("td", { class: "headline" }, j.headline || "",
				j.headline ? el("span", { class: "better", text: KC.betterLabel(j.better) }) : null)));
		where.replaceChildren(el("table", { id: "jobs-table" },
			el("thead", {}, el("tr", {},
				el("th", { class: "num" }, "id"), el("th", {}, "name"), el("th", {}, "kind"),
				el("th", {}, "status"), el("th", {}, "variants"),
				el("th", { class: "num" }, "runs done/total"), el("th", { class: "num" }, "failed"),
				el("th", { class: "num" }, "change"), el("th", { class: "num" }, "p"),
				el("th", {}, "started"),
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
