/* run.js - one run: its curve with the phase markers (old writer exits,
 * rmdir, new writer starts), probe counters over time, the summary with
 * each metric's direction, the kernel, the console log. Polls while the
 * run is live. */
"use strict";

(function () {
	const el = KC.el;
	const id = KC.param("id");
	const $ = (x) => document.getElementById(x);
	const S = { run: null, metrics: {}, metric: null, plots: [] };

	if (!id) {
		$("title").textContent = "no run given (run.html?id=N)";
		return;
	}

	function header() {
		const r = S.run;
		document.title = `kcanary: run ${r.id}`;
		KC.fill($("where"),el("a", { href: "job.html?id=" + r.job_id, text: r.job }),
			` / run ${r.id}`);
		KC.fill($("title"),`run ${r.id}: ${r.variant}`, " ", KC.statusBadge(r.status));
		KC.fill($("meta"),
			`job `, el("a", { href: "job.html?id=" + r.job_id, text: `${r.job} (${r.job_id})` }),
			` · ${r.cell || "no matrix cell"} · repeat ${r.repeat}` +
			(r.accel ? ` · ${r.accel}` : "") + (r.host ? ` · host ${r.host}` : "") +
			(r.started_at ? ` · started ${r.started_at}` : "") +
			(r.finished_at ? ` · finished ${r.finished_at}` : "") +
			` · ${r.records} records` + (r.bad_lines ? `, ${r.bad_lines} unparsed lines` : ""),
			r.error ? el("div", { class: "error", text: r.error }) : null);
	}

	/* The curve shown first: the job's metric's samples when the run has
	 * them, else the first metric with a direction (a measured quantity,
	 * not a bare counter such as the fleet's bdp_pause_max_s: issue 35),
	 * else the first. */
	function metricSelect() {
		const sel = $("metric");
		const have = S.run.sample_metrics.map((m) => m.name);
		const directed = S.run.sample_metrics.find((m) => m.better);
		if (!S.metric || !have.includes(S.metric))
			S.metric = have.includes(KC.sampledMetric(S.run.job_metric)) ?
				KC.sampledMetric(S.run.job_metric) : (directed && directed.name) || have[0] || null;
		if (sel.childElementCount !== have.length) {
			sel.replaceChildren(...have.map((m) => el("option", { value: m }, m)));
			sel.onchange = () => { S.metric = sel.value; curve(); };
		}
		if (S.metric)
			sel.value = S.metric;
	}

	async function curve() {
		const box = $("curve");
		S.plots.filter((p) => p.kind === "curve").forEach((p) => p.u.destroy());
		S.plots = S.plots.filter((p) => p.kind !== "curve");
		if (!S.metric) {
			box.replaceChildren(el("p", { class: "muted", text: "no samples stored for this run" }));
			$("metric-better").textContent = "";
			return;
		}
		const d = await KC.api(`api/v1/runs/${id}/samples?metric=${encodeURIComponent(S.metric)}` +
			"&max_points=2000");
		$("metric-better").textContent = KC.betterLabel(d.better);
		box.replaceChildren();
		const c = d.runs[0] || { t: [], v: [] };
		S.plots.push({ kind: "curve", u: KC.curvePlot(box, "", [{
			label: `${S.metric}`, color: KC.color(0), t: c.t, v: c.v, width: 1.5,
		}], { ylabel: S.metric + (d.unit ? ` (${d.unit})` : ""), width: 900, height: 300,
			plugins: [KC.phaseMarkers(S.run.phases)] }) });
		box.append(el("p", { class: "muted", text: "phases: " + (S.run.phases.length ?
			S.run.phases.map((p) => `${p.name} at ${KC.fmt(p.t, "s")}`).join(", ") : "none recorded") }));
	}

	async function probes() {
		const box = $("probes");
		S.plots.filter((p) => p.kind === "probes").forEach((p) => p.u.destroy());
		S.plots = S.plots.filter((p) => p.kind !== "probes");
		const d = await KC.api(`api/v1/runs/${id}/probes`);
		box.replaceChildren();
		if (d.series.length) {
			S.plots.push({ kind: "probes", u: KC.curvePlot(box, "", d.series.map((s, i) => ({
				label: `${s.name}${s.key !== "" ? " = " + s.key : ""}`, color: KC.color(i + 1),
				t: s.t, v: s.count,
			})), { ylabel: "count (cumulative)", width: 900, height: 220, legend: true,
				plugins: [KC.phaseMarkers(S.run.phases)] }) });
		}
		if (d.final.length)
			box.append(el("table", {}, el("thead", {}, el("tr", {}, el("th", {}, "probe"),
				el("th", {}, "key"), el("th", { class: "num" }, "final count"))),
				el("tbody", {}, d.final.map((p) => el("tr", {}, el("td", {}, p.name),
					el("td", {}, p.key), el("td", { class: "num" }, p.count))))));
		if (!d.series.length && !d.final.length)
			box.append(el("p", { class: "muted", text: "no probe counts stored for this run" }));
	}

	function summary() {
		const entries = Object.entries(S.run.summary);
		$("summary").replaceChildren(entries.length ? el("table", {},
			el("thead", {}, el("tr", {}, el("th", {}, "metric"), el("th", { class: "num" }, "value"),
				el("th", {}, "direction"))),
			el("tbody", {}, entries.map(([m, v]) => {
				const info = S.metrics[m] || {};
				return el("tr", {}, el("td", {}, m), el("td", { class: "num" }, KC.fmt(v, info.unit)),
					el("td", { class: "better" }, KC.betterLabel(info.better)));
			}))) : el("p", { class: "muted", text: "no summary record (the run did not finish)" }));
	}

	function kernel() {
		const k = S.run.kernel;
		const box = $("kernel");
		if (!k) {
			KC.fill(box, el("p", { class: "muted", text: "no kernel recorded" }),
				S.run.kernel_release ? el("p", {}, "guest reported " + S.run.kernel_release) : null);
			return;
		}
		const kv = [["release", k.release || S.run.kernel_release], ["source", k.source],
			["commit", k.tree_oid], ["config sha256", k.config_hash], ["image", k.image_path],
			["build", k.build_status + (k.build_s ? ` in ${KC.fmt(k.build_s, "s")}` : "")],
			["build error", k.build_error]];
		box.replaceChildren(el("dl", { class: "kv" }, kv.filter(([, v]) => v).map(([n, v]) =>
			[el("dt", {}, n), el("dd", {}, v)]).flat(),
			k.has_build_log ? [el("dt", {}, "build log"), el("dd", {},
				el("a", { href: `api/v1/kernels/${k.id}/build-log`, text: "last MiB" }))] : []));
	}

	async function consoleLog() {
		const pre = $("console");
		if (!S.run.has_console) {
			pre.textContent = "no console log stored for this run";
			return;
		}
		try {
			pre.textContent = await KC.api(`api/v1/runs/${id}/console?max_bytes=262144`);
			pre.scrollTop = pre.scrollHeight;
		} catch (e) {
			pre.textContent = "cannot load the console log: " + e.message;
		}
	}

	async function load() {
		if (!Object.keys(S.metrics).length)
			for (const m of (await KC.api("api/v1/metrics")).metrics)
				S.metrics[m.name] = m;
		S.run = await KC.api("api/v1/runs/" + encodeURIComponent(id));
		header();
		metricSelect();
		summary();
		kernel();
		await Promise.all([curve(), probes(), consoleLog()]);
	}

	KC.poll(async () => {
		try {
			await load();
		} catch (e) {
			if (!S.run)
				KC.pageError(e.status === 404 ? `no run ${id}` : `cannot load run ${id}`, e);
			else
				KC.showError($("curve"), e);
		}
	}, () => S.run && KC.liveStates.includes(S.run.status), $("live"));
})();
