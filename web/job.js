/* job.js - one job's comparison: the cover-letter table (copied exactly
 * as `kcanary report` prints it), the statistics with a plain-language
 * line, a strip plot of each variant's per-run value, every run's curve
 * overlaid per variant, and a filter for each matrix dimension. Polls
 * while the job is live. */
"use strict";

(function () {
	const el = KC.el;
	const id = KC.param("id");
	const S = {
		job: null, runs: null, report: null, reportErr: null, reportLoaded: false, text: "",
		samples: null,
		chosen: {}, plots: [],
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
		Object.assign(S, { job, runs, samples, curveMetric });
		if (job.kind === "bisect")
			S.bisectLog = await KC.api(base + "/bisect-log").catch(() => null);
		render();
		const [text, report] = await Promise.all([
			KC.api(base + "/report?format=text").catch((e) => "cannot load the report: " + e.message),
			KC.api(base + "/report").catch((e) => { S.reportErr = e; return null; }),
		]);
		Object.assign(S, { text, report, reportLoaded: true });
		$("report-text").textContent = S.text;
		$("copy").disabled = false;
		renderStats();
		renderStrip();
	}

	function chosenRuns() {
		return S.runs.runs.filter((r) => KC.cellMatches(r.cell, S.chosen));
	}

	function renderHeader() {
		const j = S.job;
		document.title = "kcanary: " + j.name;
		$("where").textContent = "job " + j.id;
		KC.fill($("title"),j.name, " ", KC.statusBadge(j.status));
		KC.fill($("meta"),
			`${j.kind} job ${j.id} · metric ${j.metric}`,
			el("span", { class: "better", text: KC.betterLabel(j.better) }),
			` · runs ${j.runs_done}/${j.runs_total} done · created ${j.created_at}` +
			(j.started_at ? ` · started ${j.started_at}` : "") +
			(j.finished_at ? ` · finished ${j.finished_at}` : "") +
			(j.status === "pending" && !j.runs_done ? " · queued: waiting for an executor to run it" : ""),
			j.error ? el("div", { class: "error", text: j.error }) : null);
		document.querySelectorAll(".metric-name").forEach((e) => { e.textContent = j.metric; });
		document.querySelectorAll(".curve-metric").forEach((e) => { e.textContent = S.curveMetric; });
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
			const base = c.variants[0];
			const rows = c.variants.map((v, i) => el("tr", { "data-variant": v.name },
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
				el("thead", {}, el("tr", {}, el("th", {}, "variant"),
					el("th", { class: "num" }, "per run"), el("th", { class: "num" }, "n"),
					el("th", { class: "num" }, "median"),
					el("th", { class: "num" }, "change"),
					el("th", { class: "num" }, "p (Mann-Whitney U)"),
					el("th", { class: "num" }, rep.threshold !== null && rep.threshold !== undefined ?
						`${rep.better === "higher" ? "below" : "over"} ${KC.fmt(rep.threshold, unit)}` :
						"k of n"))),
				el("tbody", {}, rows)));
			for (const v of c.variants.slice(1))
				out.push(plainLine(base, v, rep));
		}
		if (!cells.length)
			out.push(el("p", { class: "muted", text: "no cell matches the filters" }));
		if (cells.some((c) => c.variants.some((v) => (v.runs || []).some((r) => r.derived))))
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
			const good = (dir === "lower") === (rep.better !== "higher");
			text = `${v.name} is ${dir} than ${base.name} (${good ? "better" : "worse"}): median ` +
				`${KC.fmtPct(v.change_pct)}, p = ${KC.fmtP(v.p)} with ${runs(n2)} against ${n1}.`;
			cls = "sig";
		} else {
			text = `${v.name} and ${base.name} are not told apart at p < 0.05 ` +
				`(p = ${KC.fmtP(v.p)}, ${runs(n2)} against ${n1}).`;
			cls = "nosig";
		}
		return el("p", { class: "plain " + cls, text });
	}

	/* SVG strip plot: one column per variant, one dot per run. */
	function renderStrip() {
		const box = $("strip");
		const variants = S.job.variants || [];
		const runs = chosenRuns().filter((r) => r.value !== null);
		const unit = S.runs.unit;
		const W = Math.max(420, 190 * variants.length + 80), H = 300;
		const left = 64, right = 16, top = 14, bottom = 40;
		const vals = runs.map((r) => r.value);
		const thr = S.report && S.report.threshold;
		let lo = Math.min(0, ...vals), hi = Math.max(...vals, thr || 0);
		if (!(hi > lo))
			hi = lo + 1;
		/* round ticks: a step of 1, 2 or 5 times a power of ten */
		const raw = (hi - lo) / 5, mag = Math.pow(10, Math.floor(Math.log10(raw)));
		const step = [1, 2, 5, 10].map((m) => m * mag).find((x) => x >= raw);
		lo = Math.floor(lo / step) * step;
		hi = Math.ceil(hi / step) * step;
		const y = (v) => top + (H - top - bottom) * (1 - (v - lo) / (hi - lo));
		const colW = (W - left - right) / Math.max(1, variants.length);
		const ns = "http://www.w3.org/2000/svg";
		const mk = (tag, attrs, text) => {
			const e = document.createElementNS(ns, tag);
			for (const [k, v] of Object.entries(attrs))
				e.setAttribute(k, v);
			if (text !== undefined)
				e.textContent = text;
			return e;
		};
		const svg = mk("svg", { class: "strip", width: W, height: H, viewBox: `0 0 ${W} ${H}` });
		/* y axis: 5 ticks */
		for (let v = lo; v <= hi + step / 2; v += step) {
			svg.append(mk("line", { x1: left, x2: W - right, y1: y(v), y2: y(v), stroke: "#eee" }));
			svg.append(mk("text", { x: left - 6, y: y(v) + 4, "text-anchor": "end" }, KC.fmt(v, unit)));
		}
		if (thr !== null && thr !== undefined) {
			svg.append(mk("line", { x1: left, x2: W - right, y1: y(thr), y2: y(thr),
				stroke: "#b3261e", "stroke-dasharray": "5 4" }));
			svg.append(mk("text", { x: W - right, y: y(thr) - 4, "text-anchor": "end", fill: "#b3261e" },
				"threshold " + KC.fmt(thr, unit)));
		}
		variants.forEach((v, i) => {
			const cx = left + colW * (i + 0.5);
			const mine = runs.filter((r) => r.variant_id === v.id);
			svg.append(mk("text", { x: cx, y: H - 20, "text-anchor": "middle" }, v.name));
			svg.append(mk("text", { x: cx, y: H - 6, "text-anchor": "middle", fill: "#777" },
				`${mine.length} run${mine.length === 1 ? "" : "s"}`));
			mine.forEach((r, k) => {
				/* deterministic spread so equal values stay visible as separate dots */
				const jitter = mine.length > 1 ? ((k * 0.618) % 1 - 0.5) * Math.min(colW * 0.5, 60) : 0;
				const c = mk("circle", { cx: cx + jitter, cy: y(r.value), r: runs.length > 300 ? 3 : 5,
					fill: KC.color(i), "data-run-id": r.id, class: "run-dot" });
				c.append(mk("title", {}, `run ${r.id} (${r.cell || "no cell"} #${r.repeat}): ` +
					KC.fmt(r.value, unit) + (r.value_source === "samples" ? " (from samples)" : "")));
				c.addEventListener("click", () => { location.href = "run.html?id=" + r.id; });
				svg.append(c);
			});
		});
		svg.append(mk("text", { x: 12, y: top + (H - top - bottom) / 2, "text-anchor": "middle",
			transform: `rotate(-90 12 ${top + (H - top - bottom) / 2})` },
			`${S.runs.metric} (${KC.betterLabel(S.runs.better)})`));
		box.replaceChildren(svg);
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
		(S.job.variants || []).forEach((v, i) => {
			const curves = S.samples.runs.filter((c) => c.variant_id === v.id && keep.has(c.run_id));
			const div = el("div", { class: "curve", "data-variant": v.name },
				el("h3", { text: `${v.name}: ${curves.length} run${curves.length === 1 ? "" : "s"}` }));
			box.append(div);
			if (!curves.length)
				return;
			const series = curves.map((c) => ({
				label: `run ${c.run_id}` + (byRun.get(c.run_id) ? " " + byRun.get(c.run_id).cell : ""),
				color: KC.color(i), t: c.t, v: c.v,
			}));
			S.plots.push(KC.curvePlot(div, "", series, {
				ylabel: `${S.curveMetric} (${S.samples.unit || ""}) ${S.samples.better === "lower" ? "↓" : S.samples.better === "higher" ? "↑" : ""}`,
				width: 560, height: 240, legend: false,
			}));
		});
	}

	function renderBody() {
		renderStats();
		renderStrip();
		renderCurves();
	}

	/* A bisection's event log (GET .../bisect-log; format: the top of
	 * server/bisect_log.c) read into candidates, their runs and verdicts,
	 * the last posterior and the result line. */
	function parseBisectLog(text) {
		const c = new Map(), post = [];
		let result = "", lastPost = null;
		const cand = (i) => {
			if (!c.has(i))
				c.set(i, { idx: i, name: `candidate ${i}`, values: [], skips: 0, verdict: "" });
			return c.get(i);
		};
		for (const line of text.split("\n")) {
			let m;
			if ((m = line.match(/^# candidate (\d+) \S+ (.*)$/)))
				cand(+m[1]).name = m[2];
			else if ((m = line.match(/^run idx=(\d+) .*value=(\S+)/)))
				cand(+m[1]).values.push(+m[2]);
			else if ((m = line.match(/^skip idx=(\d+)/)))
				cand(+m[1]).skips++;
			else if ((m = line.match(/^verdict idx=(\d+) .*verdict=(\w+)/)))
				cand(+m[1]).verdict = m[2];
			else if (line.startsWith("posterior "))
				lastPost = line.slice(10);
			else if (line.startsWith("result "))
				result = line.slice(7);
		}
		for (const tok of (lastPost || "").split(" ")) {
			const m = tok.match(/^(\d+)(?:-(\d+))?:(\S+)$/);
			if (m)
				post.push({ first: +m[1], last: m[2] ? +m[2] : +m[1], p: +m[3] });
		}
		return { cands: [...c.values()].sort((a, b) => a.idx - b.idx), post, result, c };
	}

	/* The bisection: every tested candidate (runs, values, verdict in its
	 * colour), the posterior's top classes as bars, the result. */
	function renderBisect() {
		const box = $("bisect");
		if (!S.job || S.job.kind !== "bisect") {
			box.hidden = true;
			return;
		}
		box.hidden = false;
		if (!S.bisectLog) {
			KC.fill($("bisect-body"), el("p", { class: "muted", text: "no bisection log yet" }));
			return;
		}
		const b = parseBisectLog(S.bisectLog);
		const tested = b.cands.filter((x) => x.values.length || x.skips);
		const fmt = (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(3));
		const name = (i) => (b.c.get(i) ? b.c.get(i).name : `candidate ${i}`);
		KC.fill($("bisect-body"),
			el("p", {}, b.result ? "result: " + b.result : "in progress"),
			el("table", { class: "bisect" },
				el("thead", {}, el("tr", {},
					el("th", { class: "num" }, "idx"), el("th", {}, "candidate"),
					el("th", { class: "num" }, "runs"), el("th", { class: "num" }, "skips"),
					el("th", {}, "verdict"), el("th", {}, S.job.metric))),
				el("tbody", {}, tested.map((x) => el("tr", {},
					el("td", { class: "num" }, String(x.idx)), el("td", {}, x.name),
					el("td", { class: "num" }, String(x.values.length)),
					el("td", { class: "num" }, String(x.skips)),
					el("td", {}, x.verdict ? el("span", { class: "verdict " + x.verdict,
									      text: x.verdict }) : ""),
					el("td", { class: "values" }, x.values.map(fmt).join(" ")))))),
			b.post.length ? el("h3", {}, "Posterior: where the culprit is") : null,
			b.post.map((k) => el("div", { class: "pbar-row" },
				el("span", { class: "pbar-p" }, k.p.toFixed(3)),
				el("span", { class: "pbar", style: `width:${Math.max(1, 300 * k.p)}px` }),
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
			KC.showError($("stats"), e);
			$("title").textContent = e.status === 404 ? `no job '${id}'` : "cannot load the job";
		}
	}, () => S.job && KC.liveStates.includes(S.job.status), $("live"));
})();
