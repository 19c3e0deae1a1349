/* job.js - one job's comparison along a chosen axis (the variant by
 * default): the cover-letter table (copied exactly as `kcanary report`
 * prints it), CSV/JSON export links, the statistics with a
 * plain-language line, a strip plot and an ECDF of the per-run value,
 * every run's curve on one chart, coloured by the axis value, each lab
 * host's progress when the runs span hosts, the table of runs (with the
 * host that ran each), the revision x patch-prefix grid of a series job, and a
 * filter for each matrix dimension. Polls while the job is live. */
"use strict";

(function () {
	const el = KC.el;
	const id = KC.param("id");
	const S = {
		job: null, runs: null, report: null, reportErr: null, reportLoaded: false, text: "",
		samples: null, grid: null,
		chosen: {}, plots: [],
		/* the compared axis (kcanary report --by): "variant", a matrix
		 * dimension or "sysctl" (all of them); kept in the URL (?by=) so
		 * that a view can be linked; without ?by= the job's own (its
		 * stored `by`, as `kcanary report JOB` uses), set once the job is
		 * loaded */
		by: KC.param("by") || "variant",
	};
	const $ = (x) => document.getElementById(x);

	if (!id) {
		$("title").textContent = "no job given (job.html?id=N)";
		return;
	}

	/* The job, its runs and curves first (fast), drawn at once; then the
	 * report, whose first build can take seconds on a big job. */
	async function load() {
		const base = "api/v1/jobs/" + encodeURIComponent(id);
		const job = await KC.api(base);
		const curveMetric = KC.sampledMetric(job.metric);
		const [runs, samples] = await Promise.all([
			KC.api(base + "/runs"),
			KC.api(base + "/samples?metric=" + encodeURIComponent(curveMetric) +
				"&max_points=240").catch(() => null),
		]);
		/* the lab's hosts (state, slots) for the per-host progress; the page
		 * works without them */
		const lab = runHosts(runs).length > 1 ? await KC.api("api/v1/lab").catch(() => null) : null;
		Object.assign(S, { job, runs, samples, curveMetric, lab });
		if (!KC.param("by"))
			S.by = storedBy();
		if (job.kind === "bisect")
			[S.bisect, S.bisectVariants] = await Promise.all([
				KC.api(base + "/bisect-log?format=json").catch(() => null),
				KC.api(base + "/variants").then((v) => v.variants).catch(() => null),
			]);
		render();
		await loadReport();
		await loadGrid();
	}

	/* The job's stored axis (compare --by, [job] by): the whole of it
	 * when it is one axis, its first of two (the page compares along
	 * one); "variant" when it has none. */
	function storedBy() {
		const b = (S.job && S.job.spec && S.job.spec.by) || "variant";
		return b.split(",")[0];
	}

	/* The report along the chosen axis (?by=; the job's own axis asks for
	 * nothing, so the text is exactly `kcanary report JOB`'s). */
	async function loadReport() {
		const base = "api/v1/jobs/" + encodeURIComponent(id);
		const own = (S.job.spec && S.job.spec.by) || "variant";
		const by = S.by !== own ? "by=" + encodeURIComponent(S.by) : "";
		const [text, report] = await Promise.all([
			KC.api(base + "/report?format=text" + (by ? "&" + by : ""))
				.catch((e) => "cannot load the report: " + e.message),
			KC.api(base + "/report" + (by ? "?" + by : "")).catch((e) => { S.reportErr = e; return null; }),
		]);
		Object.assign(S, { text, report, reportLoaded: true });
		$("report-text").textContent = S.text;
		$("copy").disabled = false;
		renderRootfsMark();
		renderStats();
		/* drawn before the report came, in the job's order of values: now
		 * in the report's (the baseline first), the strip plot's colours */
		renderCurves();
		renderStrip();
		renderEcdf();
		renderRuns();
		renderExport();
	}

	/* --rootfs host: the guests ran the host's own userland, which no
	 * image pins; the report says so and so does the page. */
	function renderRootfsMark() {
		const m = $("rootfs-mark"), rf = S.report && S.report.rootfs;
		m.hidden = !(rf && rf.reproducible === false);
		m.textContent = m.hidden ? "" : `${rf.mark}: the guests ran the host's own userland ` +
			`(dpkg package list sha256 ${String(rf.packages_sha256).slice(0, 12)})` +
			(rf.changed_during_job ? ", which changed during the job" : "");
	}

	/* The revision x patch-prefix report of a job with series variants
	 * (both parts vary); nothing for any other job. */
	async function loadGrid() {
		if (!axes().includes("revision") || !axes().includes("patches")) {
			S.grid = null;
			return;
		}
		S.grid = await KC.api("api/v1/jobs/" + encodeURIComponent(id) +
			"/report?by=revision,patches").catch(() => null);
		renderGrid();
	}

	/* The axes a job can be compared along: its variants and every matrix
	 * dimension with more than one value. */
	function axes() {
		const dims = Object.entries(S.job.dimensions || {}).filter(([, v]) => v.length > 1)
			.map(([k]) => k);
		/* parts of the variant (a --prefixes job's revision x patch prefix:
		 * only when a variant is named as a series revision, "+ vN ...")
		 * and the host, when they vary */
		const series = (S.job.variants || []).some((v) => /^\+ v\d+( |$)/.test(v.name || ""));
		const more = (series ? ["revision", "patches", "host"] : ["host"]).filter((a) =>
			new Set(S.runs.runs.map((r) => partOf(r, a))).size > 1);
		/* every sysctl together, as `--by sysctl` compares them */
		const sysctl = dims.some((k) => k.startsWith("sysctl.")) ? ["sysctl"] : [];
		return ["variant"].concat(dims, sysctl, more);
	}

	/* A series variant's revision or patch prefix from its name, as
	 * server/judge/report_axis.c reads it ("+ v6 1-2": v6, 1-2; "+ v6": all;
	 * anything else: base, none); the run's host. */
	function partOf(r, axis) {
		if (axis === "host")
			return r.host || "-";
		const name = r.variant || "";
		if (!name.startsWith("+ "))
			return axis === "revision" ? "base" : "none";
		const rest = name.slice(2), sp = rest.indexOf(" ");
		if (axis === "revision")
			return sp < 0 ? rest : rest.slice(0, sp);
		return sp < 0 || sp === rest.length - 1 ? "all" : rest.slice(sp + 1);
	}

	/* A run's value on the axis, and the axis' values in order: the
	 * variants in their order, a dimension's values as the report orders
	 * them (its "values", the baseline first) or as the job lists them. */
	function axisValueOf(r) {
		if (S.by === "variant")
			return r.variant_id;
		if (["revision", "patches", "host"].includes(S.by))
			return partOf(r, S.by);
		if (S.by === "sysctl") /* "k=v k=v", as server/judge/report_axis.c's sysctls_of() */
			return Object.entries(KC.parseCell(r.cell)).filter(([k]) => k.startsWith("sysctl."))
				.map(([k, v]) => `${k.slice(7)}=${v}`).join(" ");
		return KC.parseCell(r.cell)[S.by];
	}
	function axisValues() {
		if (S.by === "variant")
			return (S.job.variants || []).map((v) => ({ key: v.id, name: v.name }));
		const rep = S.report && S.report.by === S.by ? S.report.values : null;
		const seen = [...new Set(S.runs.runs.map(axisValueOf))];
		const vals = rep || (S.job.dimensions || {})[S.by] || seen;
		const label = (v) => S.by === "revision" || S.by === "sysctl" ? v :
			S.by === "patches" ? `patches ${v}` : `${S.by}=${v}`;
		return vals.map((v) => ({ key: v, name: label(v) }));
	}

	function renderAxis() {
		const box = $("axis");
		const list = axes();
		if (!list.includes(S.by))
			S.by = list.includes(storedBy()) ? storedBy() : "variant";
		if (list.length < 2) {
			box.replaceChildren();
			return;
		}
		if (box.querySelector("select"))
			return;
		const sel = el("select", { id: "axis-select", onchange: async (ev) => {
			S.by = ev.target.value;
			const u = new URL(location.href);
			if (S.by === storedBy())
				u.searchParams.delete("by");
			else
				u.searchParams.set("by", S.by);
			history.replaceState(null, "", u);
			S.reportLoaded = false;
			renderStats();
			await loadReport();
			renderCurves();
		} }, list.map((a) => el("option", { value: a, selected: a === S.by ? "selected" : null }, a)));
		box.replaceChildren(el("label", {}, "compare along ", sel));
	}

	function chosenRuns() {
		return S.runs.runs.filter((r) => KC.cellMatches(r.cell, S.chosen));
	}

	function renderHeader() {
		const j = S.job;
		document.title = "kcanary: " + j.name;
		$("where").textContent = "job " + j.id;
		KC.fill($("title"),j.name, " ", KC.jobBadge(j));
		KC.fill($("meta"),
			`${j.kind} job ${j.id} · metric ${j.metric}`,
			el("span", { class: "better", text: KC.betterLabel(j.better) }),
			` · runs ${j.runs_done}/${j.runs_total} done · created ${j.created_at}` +
			(j.started_at ? ` · started ${j.started_at}` : "") +
			(j.finished_at ? ` · finished ${j.finished_at}` : "") +
			(j.status === "pending" && !j.runs_done ? " · queued: waiting for an executor to run it" : ""),
			j.error ? el("div", { class: "error", text: j.error }) : null,
			overheadLine(j.overhead));
		document.querySelectorAll(".metric-name").forEach((e) => { e.textContent = j.metric; });
		document.querySelectorAll(".curve-metric").forEach((e) => { e.textContent = S.curveMetric; });
	}

	/* Where the finished runs' wall time went (GET /api/v1/jobs/ID's
	 * "overhead", the report footer's line): median per run. */
	function overheadLine(o) {
		if (!o) return null;
		const parts = Object.entries(o.phases_s).filter(([k]) => k !== "workload")
			.map(([k, s]) => `${k} ${KC.fixed(s, 1)} s`).join(", ");
		return el("div", { id: "overhead", class: "overhead" },
			`overhead: median ${KC.fixed(o.overhead_s, 1)} s of ${KC.fixed(o.wall_s, 1)} s wall per run ` +
			`(${KC.fixed(100 * o.ratio, 0)}%, ${o.runs} runs): ${parts}; workload ${KC.fixed(o.phases_s.workload, 1)} s`);
	}

	/* One run's overhead cell: its time outside the workload, the phases
	 * in the tooltip. */
	function runOverhead(o) {
		if (!o) return el("span", { class: "muted", text: "–" });
		const tip = Object.entries(o.phases_ms).map(([k, ms]) => `${k} ${KC.fixed(ms / 1000, 1)} s`).join(", ");
		return el("span", { title: tip, text: `${KC.fixed(o.overhead_ms / 1000, 1)} s of ${KC.fixed(o.wall_ms / 1000, 1)} s` });
	}

	/* A select per matrix dimension that varies; the fixed ones are listed. */
	function renderFilters() {
		const box = $("filters");
		if (box.childElementCount)
			return; /* keep the user's choice across refreshes */
		const fixed = [];
		for (const [dim, values] of Object.entries(S.job.dimensions || {})) {
			if (values.length < 2) {
				fixed.push(`${dim}=${values[0]}`);
				continue;
			}
			const sel = el("select", { "data-dim": dim, onchange: (ev) => {
				S.chosen[dim] = ev.target.value;
				renderBody();
			} }, el("option", { value: "" }, "all"), values.map((v) => el("option", { value: v }, v)));
			box.append(el("label", {}, dim + " ", sel));
		}
		if (fixed.length)
			box.append(el("span", { class: "muted", text: "same in every run: " + fixed.join(" ") }));
	}

	/* One table per matrix cell, then the plain-language line of each
	 * comparison with the baseline. */
	function renderStats() {
		const box = $("stats");
		const rep = S.report;
		if (!S.reportLoaded) {
			box.replaceChildren(el("p", { class: "muted", text: "building the report…" }));
			return;
		}
		if (!rep) {
			box.replaceChildren(el("p", { class: "error", text: "no statistics: " +
				(S.reportErr ? S.reportErr.message : "the report is empty") }));
			return;
		}
		const unit = rep.unit || S.job.unit;
		const cells = (rep.cells || []).filter((c) => KC.cellMatches(c.cell, S.chosen));
		const out = [];
		for (const c of cells) {
			const groups = c.groups || c.variants;
			const base = groups[0];
			const rows = groups.map((v, i) => el("tr", { "data-variant": v.name },
				el("td", {}, el("span", { style: `color:${KC.color(i)}`, text: "● " }), v.name),
				el("td", { class: "num values" }, perRun(v.runs || [], unit)),
				el("td", { class: "num" }, v.n),
				el("td", { class: "num median" }, KC.fmt(v.median, unit)),
				el("td", { class: "num" }, i ? KC.fmtPct(v.change_pct) : "baseline"),
				el("td", { class: "num" }, i ? KC.fmtP(v.p) : ""),
				el("td", { class: "num" }, v.worse_than_threshold !== undefined ?
					`${v.worse_than_threshold} of ${v.n}` : "–")));
			out.push(el("h3", { text: c.title || c.cell || "all runs" }));
			out.push(el("table", { class: "stats" },
				el("thead", {}, el("tr", {}, el("th", {}, rep.by || "variant"),
					el("th", { class: "num" }, "per run"), el("th", { class: "num" }, "n"),
					el("th", { class: "num" }, "median"),
					el("th", { class: "num" }, "change"),
					el("th", { class: "num p-head" }, groups.some((v) => v.stratified_by_host) ?
						"p (van Elteren, by lab host)" : "p (Mann-Whitney U)"),
					el("th", { class: "num" }, rep.threshold !== null && rep.threshold !== undefined ?
						`${rep.better === "higher" ? "below" : "over"} ${KC.fmt(rep.threshold, unit)}` :
						"k of n"))),
				el("tbody", {}, rows)));
			for (const v of groups.slice(1))
				out.push(seqLine(c, base, v, rep) || plainLine(base, v, rep));
		}
		if (!cells.length)
			out.push(el("p", { class: "muted", text: "no cell matches the filters" }));
		if (cells.some((c) => (c.groups || c.variants).some((v) => (v.runs || []).some((r) => r.derived))))
			out.push(el("p", { class: "muted", text: "* derived from the run's samples (no summary " +
				"record: the run did not finish)" }));
		box.replaceChildren(...out);
	}

	/* The per-run values of a row: all of them up to a dozen, else the
	 * first dozen and a count (the strip plot shows every run). */
	const PER_RUN_SHOWN = 12;
	function perRun(runs, unit) {
		const txt = runs.slice(0, PER_RUN_SHOWN).map((r) => r.value === null || r.value === undefined ?
			r.status : KC.fmt(r.value, unit) + (r.derived ? "*" : ""));
		if (runs.length > PER_RUN_SHOWN)
			txt.push(`… ${runs.length - PER_RUN_SHOWN} more`);
		return txt.join(" ");
	}

	/* A --repeat auto job's decided comparison: its answer is the
	 * sequential test's stop line (the report's "sequential" object),
	 * not what the fixed-sample p can reach. null when there is none. */
	function seqLine(c, base, v, rep) {
		const seq = rep.sequential;
		if (!seq || !seq.own_metric_and_axis)
			return null;
		const x = (seq.comparisons || []).find((k) => k.cell === c.cell && k.value === v.name &&
			k.baseline === base.name);
		if (!x || (x.decision !== "difference" && x.decision !== "equivalent"))
			return null;
		/* a difference is better or worse by the side of 0 its interval is on */
		let cls = "nosig";
		if (x.decision === "difference") {
			const ci = x.ci_pct || [];
			const side = ci[0] > 0 ? "higher" : ci[1] < 0 ? "lower" : null;
			cls = "sig" + (side ? " is-" + verdict(side, rep) : "");
		}
		return el("p", { class: "plain seq " + cls,
			text: `${v.name} vs ${base.name}: ${x.text} (anytime-valid test, ` +
				`${seq.blocks} of at most ${seq.max_blocks} blocks run).` });
	}

	/* "better" or "worse": a value that is `dir` ("higher" or "lower")
	 * than the baseline's, for a metric where rep.better says which way is
	 * good (lower unless it says "higher"). The verdict's colour. */
	function verdict(dir, rep) {
		return (dir === "lower") === (rep.better !== "higher") ? "better" : "worse";
	}

	function plainLine(base, v, rep) {
		const n1 = base.n, n2 = v.n;
		const minp = v.min_possible_p !== undefined ? v.min_possible_p : KC.minPossibleP(n1, n2);
		const runs = (n) => `${n} run${n === 1 ? "" : "s"}`;
		let text, cls;
		if (!n1 || !n2) {
			text = `${v.name}: no comparison yet (${runs(n2)} against ${runs(n1)}).`;
			cls = "nosig";
		} else if (minp >= 0.05) {
			text = `${runs(n2)} against ${n1} cannot reach p < 0.05: the smallest p the test ` +
				`can give is ${minp.toFixed(2)}` +
				(rep.runs_needed_for_p05 ? `; ${rep.runs_needed_for_p05} runs each can.` : ".");
			cls = "nosig";
		} else if (v.p !== undefined && v.p < 0.05) {
			const dir = v.change_pct < 0 ? "lower" : "higher";
			const which = verdict(dir, rep);
			text = `${v.name} is ${dir} than ${base.name} (${which}): median ` +
				`${KC.fmtPct(v.change_pct)}, p = ${KC.fmtP(v.p)} with ${runs(n2)} against ${n1}.`;
			cls = "sig is-" + which;
		} else {
			text = `${v.name} and ${base.name} are not told apart at p < 0.05 ` +
				`(p = ${KC.fmtP(v.p)}, ${runs(n2)} against ${n1}).`;
			cls = "nosig";
		}
		return el("p", { class: "plain " + cls, text });
	}

	/* The strip plot (plots.js, drawn by Observable Plot): one group per cell of the report along
	 * the axis, in it a column per value (the report's groups, so no
	 * column mixes two kernels or two cells), one dot per run of the
	 * chosen cells in its value's colour, each column's median marked. */
	function renderStrip() {
		const box = $("strip");
		const vals = axisValues(), unit = S.runs.unit, rep = S.report;
		const legend = el("div", { class: "legend", id: "strip-legend" }, vals.map((v, i) =>
			el("span", { class: "legend-item", "data-axis-value": String(v.key) },
				el("span", { class: "swatch", style: `background:${KC.color(i)}` }), v.name)));
		if (!S.reportLoaded || !rep) {
			box.replaceChildren(legend, el("p", { class: "muted", text: S.reportLoaded ?
				"no report, so no strip plot" : "building the report…" }));
			return;
		}
		const shown = new Map(chosenRuns().filter((r) => r.value !== null).map((r) => [r.id, r]));
		const cells = (rep.cells || []).map((c) => ({ title: cellLabel(c.title),
			cols: stripCols(c.groups || c.variants, vals, shown) })).filter((c) => c.cols.length);
		/* a group is named by what sets its cell apart from the others */
		const common = cells.length ? cells[0].title.filter((p) => cells.every((c) => c.title.includes(p))) : [];
		const groups = cells.map((c) => ({ label: cells.length > 1 ?
			c.title.filter((p) => !common.includes(p)).join(", ") : "", cols: c.cols }));
		box.replaceChildren(legend, groups.length ? KC.stripPlot(groups, { unit, threshold: rep.threshold,
			ylabel: `${S.runs.metric} (${KC.betterLabel(S.runs.better)})`,
			onclick: (r) => { location.href = "run.html?id=" + r.id; } }) :
			el("p", { class: "muted", text: "no run has a value yet" }));
	}

	/* A report cell's groups as strip columns: each value's name, its
	 * colour (its place among the axis values) and its shown runs' dots. */
	function stripCols(groups, vals, shown) {
		const cols = [];
		for (const g of groups) {
			const i = vals.findIndex((v) => v.key === (g.variant_id !== undefined ? g.variant_id : g.value));
			const runs = (g.runs || []).map((x) => shown.get(x.run_id)).filter((r) => r);
			if (i < 0 || !runs.length)
				continue;
			/* a bisection's variants are "<sha12> <subject>": the sha fits */
			cols.push({ key: vals[i].key, color: KC.color(i), runs: runs.map(stripDot),
				name: S.job.kind === "bisect" ? vals[i].name.split(" ")[0] : vals[i].name });
		}
		return cols;
	}

	/* The parts of a report cell's title, "Worst lag … (base, wb-handover,
	 * ext4)": ["base", "wb-handover", "ext4"]. */
	function cellLabel(title) {
		const m = /\(([^()]*)\)$/.exec(title || "");
		return m ? m[1].split(", ") : [title || "all runs"];
	}

	/* A run as a strip-plot dot: its value and tooltip. */
	function stripDot(r) {
		return { id: r.id, value: r.value, title: `run ${r.id} (${r.variant}, ${r.cell || "no cell"} ` +
			`#${r.repeat}): ` + KC.fmt(r.value, S.runs.unit) + (r.value_source === "samples" ?
			" (from samples)" : r.value_source === "median of samples" ? " (median of the run's samples)" : "") };
	}

	function renderCurves() {
		const box = $("curves");
		S.plots.forEach((p) => p.destroy());
		S.plots = [];
		box.replaceChildren();
		if (!S.samples) {
			box.append(el("p", { class: "muted", text: `no ${S.curveMetric} samples` }));
			return;
		}
		const keep = new Set(chosenRuns().map((r) => r.id));
		const byRun = new Map(S.runs.runs.map((r) => [r.id, r]));
		const ylabel = `${S.curveMetric} (${S.samples.unit || ""}) ${S.samples.better === "lower" ? "↓" : S.samples.better === "higher" ? "↑" : ""}`;
		/* every run's curve on one chart, coloured by its value on the
		 * compared axis (the variant by default), as the strip plot's dots */
		const vals = axisValues();
		const curves = S.samples.runs.filter((c) => keep.has(c.run_id) && byRun.get(c.run_id));
		const div = el("div", { class: "curve", "data-axis": S.by },
			el("h3", { text: `${curves.length} run${curves.length === 1 ? "" : "s"}, coloured by ${S.by}` }),
			el("div", { class: "legend" }, vals.map((v, i) => el("span", { class: "legend-item",
				"data-axis-value": String(v.key) },
				el("span", { class: "swatch", style: `background:${KC.color(i)}` }), v.name))));
		box.append(div);
		const series = curves.map((c) => {
			const r = byRun.get(c.run_id);
			const i = vals.findIndex((v) => v.key === axisValueOf(r));
			return { label: `run ${c.run_id} ${r.variant} ${r.cell}`, color: KC.color(Math.max(0, i)),
				t: c.t, v: c.v };
		});
		if (series.length)
			S.plots.push(KC.curvePlot(div, "", series, { ylabel, width: 760, height: 280, legend: false,
				readout: S.samples.unit || "" }));
	}

	/* The ECDF of the headline metric (plots.js, drawn by Observable
	 * Plot), one chart per cell of the report (as the statistics: runs of
	 * different cells are never pooled), one step line per value of the
	 * axis in the strip plot's colour: the share of that value's runs at
	 * or below x, each run a dot that hovering names. The x scale is
	 * shared. */
	function renderEcdf() {
		const box = $("ecdf");
		const rep = S.report;
		if (!S.reportLoaded || !rep) {
			box.replaceChildren(el("p", { class: "muted", text: S.reportLoaded ? "no report" : "building the report…" }));
			return;
		}
		const vals = axisValues();
		const unit = rep.unit || S.runs.unit;
		const keyOf = (g) => (g.variant_id !== undefined ? g.variant_id : g.value);
		const byId = new Map(S.runs.runs.map((r) => [r.id, r]));
		const cells = (rep.cells || []).filter((c) => KC.cellMatches(c.cell, S.chosen)).map((c) => ({
			title: c.title || c.cell || "all runs",
			lines: (c.groups || c.variants).map((g) => {
				const i = Math.max(0, vals.findIndex((v) => v.key === keyOf(g)));
				return { key: keyOf(g), name: g.name, color: KC.color(i),
					runs: (g.runs || []).filter((r) => r.value !== null && r.value !== undefined).map((r) =>
						byId.get(r.run_id) ? { ...stripDot(byId.get(r.run_id)), value: r.value } :
							{ id: r.run_id, value: r.value, title: `run ${r.run_id}: ${KC.fmt(r.value, unit)}` }) };
			}).filter((l) => l.runs.length),
		})).filter((c) => c.lines.length);
		const xs = cells.flatMap((c) => c.lines.flatMap((l) => l.runs.map((r) => r.value)));
		if (!xs.length) {
			box.replaceChildren(el("p", { class: "muted", text: "no run has a value yet" }));
			return;
		}
		const domain = d3.nice(Math.min(0, ...xs), Math.max(...xs), 5);
		const charts = cells.map((c) => el("div", { class: "ecdf-cell" }, el("h3", { text: c.title }),
			KC.ecdfPlot(c.lines, { unit, domain, xlabel: rep.metric || S.runs.metric,
				onclick: (r) => { location.href = "run.html?id=" + r.id; } })));
		box.replaceChildren(el("div", { class: "legend", id: "ecdf-legend" }, vals.map((v, i) =>
			el("span", { class: "legend-item", "data-axis-value": String(v.key) },
				el("span", { class: "swatch", style: `background:${KC.color(i)}` }), v.name))),
			el("div", { class: "curves" }, charts));
	}

	/* run id -> its final probe counts ({name: {key: count}}), from the
	 * report's per-run entries (null until the report is loaded). */
	function probesByRun() {
		const m = new Map();
		for (const c of (S.report && S.report.cells) || [])
			for (const g of c.groups || c.variants || [])
				for (const r of g.runs || [])
					m.set(r.run_id, r.probes || {});
		return S.report ? m : null;
	}

	/* The lab hosts the job's runs were placed on, in order of first run. */
	function runHosts(runs) {
		return [...new Set(runs.runs.map((r) => r.lab_host).filter((h) => h))];
	}

	/* A job whose runs span lab hosts: each host's progress (runs done,
	 * running, its share of the planned runs; state and slots from
	 * GET /api/v1/lab when the host is stored) and the runs no host has
	 * taken yet. Hidden on one host. */
	function renderLab() {
		const sec = $("lab"), hosts = runHosts(S.runs);
		sec.hidden = hosts.length < 2;
		if (sec.hidden) {
			$("lab-body").replaceChildren();
			return;
		}
		const all = S.runs.runs, stored = new Map(((S.lab && S.lab.hosts) || []).map((h) => [h.name, h]));
		const ended = (r) => r.status !== "pending" && r.status !== "running";
		const unplaced = all.filter((r) => !r.lab_host && !ended(r)).length;
		const rows = hosts.map((h) => {
			const mine = all.filter((r) => r.lab_host === h), info = stored.get(h);
			const done = mine.filter(ended).length, running = mine.filter((r) => r.status === "running").length;
			const infra = mine.filter((r) => r.status === "infra").length;
			return el("tr", { "data-host": h },
				el("td", {}, h),
				el("td", {}, info ? KC.statusBadge(info.state) : el("span", { class: "muted", text: "–" })),
				el("td", { class: "num" }, info ? String(info.slots) : "–"),
				el("td", { class: "num done" }, String(done)),
				el("td", { class: "num running" }, String(running)),
				el("td", { class: "num planned" }, `${done + running}/${all.length}`),
				el("td", { class: "num" }, infra ? `${infra} infra` : "–"));
		});
		KC.fill($("lab-body"),
			el("table", { class: "runs", id: "lab-hosts" },
				el("thead", {}, el("tr", {}, el("th", {}, "host"), el("th", {}, "state"),
					el("th", { class: "num" }, "slots"), el("th", { class: "num" }, "done"),
					el("th", { class: "num" }, "running"), el("th", { class: "num" }, "taken/planned"),
					el("th", { class: "num" }, "host faults"))),
				el("tbody", {}, rows)),
			el("div", { id: "lab-unplaced", class: "muted" },
				`${all.length} runs planned; ${unplaced} not placed yet (a free host takes a whole` +
				" block, one run of every variant × cell, so host differences fall on every variant alike)"));
	}

	/* One row per run: its page, its value on the axis, cell, status,
	 * the lab host that ran it, headline value, probe counts and a link
	 * to its raw console log. */
	function renderRuns() {
		const box = $("runs");
		const vals = axisValues();
		const probes = probesByRun();
		const unit = S.runs.unit;
		const rows = chosenRuns().map((r) => {
			const i = vals.findIndex((v) => v.key === axisValueOf(r));
			const p = probes ? probes.get(r.id) : null;
			const ptxt = !probes ? "…" : !p || !Object.keys(p).length ? "–" :
				Object.entries(p).map(([name, keys]) => Object.entries(keys)
					.map(([k, n]) => `${name}[${k}] ${n}`).join(" ")).join(" ");
			return el("tr", { "data-run-id": String(r.id) },
				el("td", { class: "num" }, el("a", { class: "run-link", href: "run.html?id=" + r.id }, String(r.id))),
				el("td", {}, el("span", { style: `color:${KC.color(Math.max(0, i))}`, text: "● " }),
					i >= 0 ? vals[i].name : String(axisValueOf(r))),
				el("td", {}, r.cell || "–"),
				el("td", {}, KC.statusBadge(r.status)),
				/* a guest's run: the lab host it ran on; a fleet host's
				 * passive run: that host */
				el("td", { class: "host" }, r.lab_host ||
					(KC.parseCell(r.cell).workload === "passive" && r.host) || "–"),
				el("td", { class: "num" }, KC.fmt(r.value, unit) + (r.value_source === "samples" ? "*" :
					r.value_source === "median of samples" ? " (median)" : "")),
				el("td", { class: "probes" }, ptxt),
				el("td", { class: "num overhead" }, runOverhead(r.overhead)),
				el("td", {}, r.has_console ? el("a", { class: "console-link",
					href: `api/v1/runs/${r.id}/console` }, "console") : el("span", { class: "muted", text: "no console" })));
		});
		box.replaceChildren(el("table", { class: "runs", id: "runs-table" },
			el("thead", {}, el("tr", {}, el("th", { class: "num" }, "run"), el("th", {}, S.by),
				el("th", {}, "cell"), el("th", {}, "status"), el("th", {}, "host"),
				el("th", { class: "num" }, S.runs.metric),
				el("th", {}, "probe counts"), el("th", { class: "num" }, "overhead"), el("th", {}, "raw"))),
			el("tbody", {}, rows)));
	}

	/* The report as CSV and JSON along the current axis (the API's report
	 * route, ?by= as the page's). */
	function renderExport() {
		const q = `api/v1/jobs/${encodeURIComponent(id)}/report?by=${encodeURIComponent(S.by)}`;
		KC.fill($("export"), "export the report along ", el("b", { text: S.by }), ": ",
			el("a", { id: "export-csv", href: q + "&format=csv" }, "CSV"), " · ",
			el("a", { id: "export-json", href: q + "&format=json" }, "JSON"));
	}

	/* A job with series variants: the revision x patch-prefix grid
	 * (report ?by=revision,patches), one table per matrix cell: each
	 * pair's median, runs and change against the baseline pair. */
	function renderGrid() {
		const sec = $("grid");
		const rep = S.grid;
		if (!rep || !rep.values || !rep.values_b) {
			sec.hidden = true;
			return;
		}
		sec.hidden = false;
		const unit = rep.unit || S.job.unit;
		const out = [];
		for (const c of (rep.cells || []).filter((x) => KC.cellMatches(x.cell, S.chosen))) {
			const groups = c.groups || [];
			const base = groups[0];
			out.push(el("h3", { text: c.title || c.cell || "all runs" }));
			out.push(el("table", { class: "grid", "data-cell": c.cell || "" },
				el("thead", {}, el("tr", {}, el("th", {}, "revision × patches"),
					rep.values_b.map((b) => el("th", { class: "num" }, b)))),
				el("tbody", {}, rep.values.map((a) => el("tr", { "data-revision": a },
					el("th", {}, a),
					rep.values_b.map((b) => {
						const g = groups.find((x) => x.a === a && x.b === b);
						if (!g || !g.n)
							return el("td", { class: "num muted", "data-patches": b }, "–");
						return el("td", { class: "num", "data-patches": b },
							el("div", { class: "median" }, KC.fmt(g.median, unit)),
							el("div", { class: "muted" }, `${g.n} run${g.n === 1 ? "" : "s"}` +
								(g === base ? ", baseline" :
									`, ${KC.fmtPct(g.change_pct)} p=${KC.fmtP(g.p)}`)));
					}))))));
		}
		KC.fill($("grid-body"), out);
	}

	function renderBody() {
		renderStats();
		renderStrip();
		renderEcdf();
		renderCurves();
		renderLab();
		renderRuns();
		renderExport();
		renderGrid();
	}

	/* A bisection as the API reads it from its event log (GET
	 * .../bisect-log?format=json, docs/api.md): candidates (name, sha,
	 * subject, runs by phase, skips, last verdict, median), the config,
	 * the last endpoints line, the culprit check, the last posterior and
	 * the result (null while it runs), with each candidate by idx in c. */
	function bisectView(j) {
		const cands = j.candidates.map((x) => Object.assign({}, x, {
			name: x.name === null ? `candidate ${x.idx}` : x.name,
			subject: x.subject === null ? undefined : x.subject, verdict: x.verdict || "" }));
		return { cands, c: new Map(cands.map((x) => [x.idx, x])), post: j.posterior, result: j.result,
			 config: j.config, endpoints: j.endpoints, check: j.check, n: j.config.n };
	}

	const plural = (n, one, many) => `${n} ${n === 1 ? one : (many || one + "s")}`;
	/* p-values of a handful of runs: two significant digits, not "< 0.001" */
	const fmtP2 = (p) => (typeof p !== "number" || !Number.isFinite(p) ? "–" : p >= 0.01 ? p.toFixed(3) : p.toPrecision(2));
	/* seconds as "2 h 13 min 42 s" */
	function fmtWall(s) {
		s = Math.round(s);
		const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, r = s % 60;
		return (h ? `${h} h ` : "") + (h || m ? `${m} min ` : "") + `${r} s`;
	}

	/* The variant of candidate x (the variants API names it like the log). */
	function bisectVariant(x) {
		return (S.bisectVariants || []).find((v) => v.name === x.name) || null;
	}

	/* One commit as a kernel developer reads it: short sha and subject,
	 * then author, date, full sha and position. */
	function commitBlock(b, i) {
		const x = b.c.get(i) || { idx: i, name: `candidate ${i}`, sha: "", subject: `candidate ${i}` };
		const v = bisectVariant(x);
		const spec = v && v.spec && typeof v.spec === "object" ? v.spec : {};
		const sub = [];
		if (spec.author)
			sub.push(spec.author);
		if (spec.author_time)
			sub.push(new Date(spec.author_time * 1000).toISOString().replace("T", " ").slice(0, 16) + " UTC");
		sub.push(x.sha ? `commit ${x.sha}` : "prebuilt image");
		sub.push(`candidate ${i} of 0..${b.n - 1}`);
		return el("div", { class: "commit", "data-idx": String(i) },
			el("div", { class: "commit-head" },
				x.sha ? el("code", { class: "sha", text: x.sha.slice(0, 12) }) : null,
				x.sha ? " " : null,
				el("span", { class: "subject", text: x.subject || x.name })),
			el("div", { class: "commit-meta muted", text: sub.join(" · ") }));
	}

	/* Why a candidate could not be measured: its variant's build error,
	 * else its last failed run's status and error. */
	function skipWhy(x) {
		const v = bisectVariant(x);
		if (v && v.status !== "ok" && v.status !== "pending")
			return v.status + (v.error ? ": " + v.error : "");
		const runs = (S.runs && S.runs.runs || []).filter((r) => v && r.variant_id === v.id &&
								      r.status !== "ok");
		const r = runs[runs.length - 1];
		return r ? "run " + r.status + (r.error ? ": " + r.error : "") : "";
	}

	/* The answer: the culprit, the range, or why there is none. */
	function bisectAnswer(b) {
		const r = b.result, fix = b.config.find_fix, unit = S.job.unit;
		const bad = fix ? "fixed" : "bad";
		if (!r) {
			const live = KC.liveStates.includes(S.job.status);
			return el("div", { class: "bisect-answer pending" },
				el("div", { class: "answer-head", text: live ?
					"In progress: no answer yet" :
					`No culprit: the bisection stopped before a result (job ${S.job.status}` +
					(S.job.error ? `: ${S.job.error}` : "") + ")" }));
		}
		const first = +r.first, last = +r.last, prob = +r.prob;
		const commits = [];
		for (let i = first; i <= last; i++)
			commits.push(commitBlock(b, i));
		const failed = r.check === "failed";
		if (r.outcome === "found" || r.outcome === "range") {
			const head = (r.outcome === "found" ? (fix ? "The fix" : "Culprit") :
				`Culprit range: one of ${last - first + 1} commits`) +
				(failed ? ": FAILED the culprit check, not a result" : "");
			return el("div", { class: "bisect-answer " + (failed ? "failed" : "found") },
				el("div", { class: "answer-head", text: head }), commits);
		}
		let why = "";
		const ep = b.endpoints || {};
		const ends = [b.c.get(0), b.c.get(b.n - 1)];
		const nruns = (x) => (x ? x.runs.length : 0), med = (x) => (x ? x.median : null);
		if (r.outcome === "no-difference")
			why = `the endpoints do not differ: ${nruns(ends[0])} vs ${nruns(ends[1])} runs, medians ` +
				`${KC.fmt(med(ends[0]), unit)} and ${KC.fmt(med(ends[1]), unit)}, ` +
				`Mann-Whitney p = ${fmtP2(ep.p !== undefined ? ep.p : r.endpoint_p)}`;
		else if (r.outcome === "wrong-direction")
			why = `the endpoints differ the other way: candidate ${b.n - 1} (median ` +
				`${KC.fmt(med(ends[1]), unit)}) is ${fix ? "worse" : "better"} than candidate 0 ` +
				`(median ${KC.fmt(med(ends[0]), unit)})${fix ? "; drop --find-fix?" : "; use --find-fix?"}`;
		else if (r.outcome === "endpoint-skip") {
			const x = [b.c.get(0), b.c.get(b.n - 1)].find((y) => y && y.skips) || b.c.get(0);
			const end = x && x.idx === 0 ? (fix ? "bad" : "good") : (fix ? "good" : "bad");
			const w = x ? skipWhy(x) : "";
			why = `the ${end} end (candidate ${x ? x.idx : "?"}${x ? ", " + x.name : ""}) cannot be ` +
				`measured` + (w ? `: ${w}` : "");
		} else if (r.outcome === "undecided")
			why = `the run budget (${b.config.max_runs} runs) was spent below confidence ` +
				`${(+b.config.confidence).toFixed(2)}; best guess (p = ${prob.toFixed(3)}):`;
		else
			why = `outcome '${r.outcome}'`;
		return el("div", { class: "bisect-answer none" },
			el("div", { class: "answer-head", text: "No culprit: " + why }),
			r.outcome === "undecided" ? commits : null);
	}

	function outcomeWords(b) {
		const r = b.result, fix = b.config.find_fix;
		if (!r)
			return KC.liveStates.includes(S.job.status) ? "in progress" : "stopped before a result";
		const first = +r.first, last = +r.last, p = (+r.prob).toFixed(3);
		switch (r.outcome) {
		case "found":
			return `found: the first ${fix ? "fixed" : "bad"} commit is candidate ${first} ` +
				`(posterior p = ${p})` + (r.check === "failed" ? ", but it FAILED the culprit check" : "");
		case "range":
			return `range: the culprit is one of candidates ${first}..${last} (p = ${p}); ` +
				(last - 1 > first ? `candidates ${first}..${last - 1} could not` :
				 `candidate ${first} could not`) + " be tested (skip), so no run can split them";
		case "undecided":
			return `undecided: the run budget was spent before one commit reached confidence ` +
				`${(+b.config.confidence).toFixed(2)}`;
		case "no-difference": return "no-difference: the endpoints do not differ, so there is nothing to bisect";
		case "wrong-direction": return "wrong-direction: the endpoints differ the other way";
		case "endpoint-skip": return "endpoint-skip: an endpoint cannot be measured, so nothing can be compared";
		}
		return r.outcome;
	}

	function checkLine(b) {
		const k = b.check, r = b.result, unit = S.job.unit;
		const cand = (i) => {
			const x = b.c.get(+i);
			return `candidate ${i}` + (x && x.sha ? ` (${x.sha.slice(0, 12)})` : "");
		};
		if (!k) {
			const why = !r ? "not yet" :
				r.outcome !== "found" && r.outcome !== "range" ? "not run: no culprit to check" :
				b.config.check_runs === 0 ? "not run (--check-runs 0)" : "not run";
			return el("span", { class: "check none", text: why });
		}
		if (k["not-run"])
			return el("span", {}, `parent ${cand(k.parent)} vs culprit ${cand(k.culprit)}: `,
				el("span", { class: "check none", text: `not run: ${k["not-run"].replace(/-/g, " ")}` }));
		const shift = k.shift;
		return el("span", {},
			`parent ${cand(k.parent)} median ${KC.fmt(k.median_parent, unit)} ` +
			`(${plural(+k.n_parent, "run")}) vs culprit ${cand(k.culprit)} median ` +
			`${KC.fmt(k.median_culprit, unit)} (${plural(+k.n_culprit, "run")}), shift ` +
			`${shift > 0 ? "+" : ""}${KC.fmt(shift, unit)} (Hodges-Lehmann), Mann-Whitney ` +
			`p = ${fmtP2(k.p)}: `,
			el("span", { class: "check " + (k.passed === 1 ? "passed" : "failed"),
				     text: k.passed === 1 ? "passed" : "FAILED" }));
	}

	/* Builds: one variant per prepared candidate; boots: one stored run per
	 * guest; runs and skips: the log's run and skip lines (what `kcanary
	 * bisect` prints as totals); wall: the job's start to its end. */
	function totalsLine(b) {
		const vs = S.bisectVariants || [];
		const failedBuilds = vs.filter((v) => v.status === "build-failed" || v.status === "apply-failed").length;
		const byPhase = {};
		let runs = 0, skips = 0;
		for (const x of b.cands) {
			runs += x.runs.length;
			skips += x.skips;
			for (const y of x.runs)
				byPhase[y.phase] = (byPhase[y.phase] || 0) + 1;
		}
		const parts = ["endpoint", "search", "check"].filter((ph) => byPhase[ph])
			.map((ph) => `${byPhase[ph]} ${ph}`);
		const boots = S.runs ? S.runs.runs.length : 0;
		const j = S.job;
		let wall = "";
		if (j.started_at) {
			const end = j.finished_at ? Date.parse(j.finished_at) : Date.now();
			wall = `, wall ${fmtWall((end - Date.parse(j.started_at)) / 1000)}` +
				(j.finished_at ? "" : " so far");
		}
		return `${plural(vs.length, "build")} (${failedBuilds} failed), ${plural(boots, "boot")}, ` +
			`${plural(runs, "run")} with a value` + (parts.length ? ` (${parts.join(" + ")})` : "") +
			`, ${plural(skips, "skip")}${wall}`;
	}

	const VERDICT_COLOR = { good: "#1b6e2d", bad: "#b3261e", unsure: "#c78a00", skip: "#888", "": "#1f5fa8" };

	/* The metric of every run against the candidate's position (plots.js,
	 * drawn by Observable Plot), dots in the verdict's colour (check runs
	 * hollow), the culprit's left edge marked. */
	function bisectChart(b, tested) {
		const unit = S.job.unit;
		const pts = [];
		for (const x of tested)
			for (const y of x.runs) {
				const check = y.phase === "check", c = VERDICT_COLOR[x.verdict] || VERDICT_COLOR[""];
				pts.push({ x: x.idx, v: y.value, fill: check ? "#fff" : c, stroke: c,
					title: `${x.name}: ${KC.fmt(y.value, unit)}${check ? " (check run)" : ""}` });
			}
		if (!pts.length || b.n < 2)
			return null;
		const r = b.result;
		return KC.bisectPlot(pts, b.n, r && (r.outcome === "found" || r.outcome === "range") ? r : null, unit,
			S.job.metric);
	}

	/* The bisection: the answer, the outcome, the culprit check, the
	 * totals, every tested candidate (runs, values, verdict in its colour),
	 * the metric per candidate and the posterior's top classes as bars. */
	function renderBisect() {
		const box = $("bisect");
		if (!S.job || S.job.kind !== "bisect") {
			box.hidden = true;
			return;
		}
		box.hidden = false;
		if (!S.bisect) {
			KC.fill($("bisect-body"), el("p", { class: "muted", text: "no bisection log yet" }));
			return;
		}
		const b = bisectView(S.bisect);
		const unit = S.job.unit;
		const tested = b.cands.filter((x) => x.runs.length || x.skips);
		const name = (i) => (b.c.get(i) ? b.c.get(i).name : `candidate ${i}`);
		const r = b.result;
		const inCulprit = (i) => r && (r.outcome === "found" || r.outcome === "range") &&
			i >= +r.first && i <= +r.last;
		const cfg = b.config;
		const search = (cfg.strategy === "binary" ? (cfg.fixed_repeats ?
			`binary search, ${cfg.fixed_repeats} runs per commit` : "binary search with adaptive repeats (SPRT)") :
			"probabilistic bisection") +
			`, confidence ${(+cfg.confidence).toFixed(2)}, budget ${cfg.max_runs} runs, ` +
			`${b.n} candidates; looking for the ${cfg.find_fix ? "fix" : "regression"} ` +
			`(${!cfg.higher_is_worse ? "lower" : "higher"} ${S.job.metric} is worse)`;
		const ep = b.endpoints;
		KC.fill($("bisect-body"),
			bisectAnswer(b),
			el("dl", { class: "kv bisect-facts" },
				el("dt", {}, "outcome"), el("dd", { class: "outcome" }, outcomeWords(b)),
				el("dt", {}, "search"), el("dd", {}, search),
				ep ? el("dt", {}, "endpoints") : null,
				ep ? el("dd", {}, `${ep.n_old} vs ${ep.n_new} runs, Mann-Whitney p = ${fmtP2(ep.p)}: ` +
					`${ep.compare}`) : null,
				el("dt", {}, "culprit check"), el("dd", { class: "check-line" }, checkLine(b)),
				el("dt", {}, "totals"), el("dd", { class: "totals" }, totalsLine(b))),
			el("h3", {}, `Tested candidates (${S.job.metric})`),
			el("table", { class: "bisect" },
				el("thead", {}, el("tr", {},
					el("th", { class: "num" }, "idx"), el("th", {}, "commit"), el("th", {}, "subject"),
					el("th", { class: "num" }, "runs"), el("th", { class: "num" }, "skips"),
					el("th", { class: "num" }, "median"), el("th", {}, "verdict"),
					el("th", {}, "values (check runs after |)"))),
				el("tbody", {}, tested.map((x) => {
					/* an endpoint that cannot be measured stops the engine
					 * before verdicts: it is a skip all the same */
					const verdict = x.verdict || (x.skips ? "skip" : "");
					const main = x.runs.filter((y) => y.phase !== "check").map((y) => KC.fmt(y.value, unit));
					const chk = x.runs.filter((y) => y.phase === "check").map((y) => KC.fmt(y.value, unit));
					const why = x.skips ? skipWhy(x) : "";
					return el("tr", { class: inCulprit(x.idx) ? "culprit" : null, "data-idx": String(x.idx) },
						el("td", { class: "num" }, String(x.idx)),
						el("td", {}, x.sha ? el("code", { class: "sha", text: x.sha.slice(0, 12) }) : "–"),
						el("td", { class: "subject" }, x.subject || x.name),
						el("td", { class: "num" }, String(x.runs.length)),
						el("td", { class: "num" }, String(x.skips)),
						el("td", { class: "num" }, x.runs.length ?
							KC.fmt(x.median, unit) : "–"),
						el("td", {}, verdict ? el("span", { class: "verdict " + verdict, text: verdict }) : "–"),
						el("td", { class: "values" }, main.join(" ") + (chk.length ? " | " + chk.join(" ") : ""),
							why ? el("div", { class: "why", text: why }) : null));
				}))),
			el("h3", {}, `${S.job.metric} per candidate, one dot per run`),
			bisectChart(b, tested),
			b.post.length ? el("h3", {}, "Posterior: where the culprit is (top classes)") : null,
			b.post.map((k) => el("div", { class: "pbar-row" },
				el("span", { class: "pbar-p" }, k.prob.toFixed(3)),
				el("span", { class: "pbar-track" },
					el("span", { class: "pbar", style: `width:${Math.max(1, Math.round(300 * k.prob))}px` })),
				el("span", {}, k.first === k.last ? `${k.first} ${name(k.first)}` :
					`${k.first}..${k.last} (range, split only by skips) ${name(k.first)} ..`))));
	}

	function render() {
		renderHeader();
		renderBisect();
		$("copy").disabled = !S.reportLoaded;
		if (S.reportLoaded)
			$("report-text").textContent = S.text;
		renderFilters();
		renderAxis();
		renderBody();
	}

	$("copy").addEventListener("click", async () => {
		try {
			await navigator.clipboard.writeText(S.text);
		} catch (e) {
			/* no clipboard API (plain http on another host): select the text instead */
			const ta = el("textarea", { style: "position:fixed;left:-9999px" });
			ta.value = S.text;
			document.body.append(ta);
			ta.select();
			document.execCommand("copy");
			ta.remove();
		}
		$("copied").textContent = "copied";
		setTimeout(() => { $("copied").textContent = ""; }, 2000);
	});

	KC.poll(async () => {
		try {
			await load();
		} catch (e) {
			/* no job at all (an unknown id): say so and stop; a job that
			 * was shown keeps its page, the error above its statistics */
			if (!S.job)
				KC.pageError(e.status === 404 ? `no job ${id}` : `cannot load job ${id}`, e);
			else
				KC.showError($("stats"), e);
		}
	}, () => S.job && KC.liveStates.includes(S.job.status), $("live"));
})();
