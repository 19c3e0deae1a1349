/* plots.js - the job page's point charts, drawn by Observable Plot
 * (web/vendor/plot-0.6.17, over d3 7.9.0; the time curves are uPlot's, in
 * kcanary.js): the strip plot, the ECDF and the bisection's chart. Plot
 * draws SVG: each chart's axes, scales and marks are Plot's, and hovering
 * a point shows Plot's tip naming it (run, value, variant, cell). This
 * file only lays the data out and tags the drawn elements (data-*
 * attributes, classes) so that the page and its tests can find them. */
"use strict";

(function () {
	/* The median of numbers xs (the mean of the middle two for an even count). */
	KC.median = function (xs) {
		const v = [...xs].sort((a, b) => a - b), k = v.length >> 1;
		return v.length % 2 ? v[k] : (v[k - 1] + v[k]) / 2;
	};

	/* A Plot render transform that gives each element Plot drew for a
	 * datum of data (a circle, a line; a line's path holds a series and
	 * is tagged by its first datum) the class cls and the attributes
	 * attrs(datum) returns. */
	function tagged(data, cls, attrs) {
		return function (index, scales, values, dims, ctx, next) {
			const g = next(index, scales, values, dims, ctx);
			for (const e of g.children) {
				const i = Array.isArray(e.__data__) ? e.__data__[0] : e.__data__;
				if (typeof i !== "number")
					continue;
				e.classList.add(cls);
				for (const [k, v] of Object.entries(attrs(data[i])))
					e.setAttribute(k, v);
			}
			return g;
		};
	}

	/* The run the pointer is on (Plot's svg.value, set by the tip's
	 * pointer) opens on a click: fn(datum). */
	function onPick(svg, fn) {
		svg.addEventListener("click", () => {
			if (svg.value && svg.value.id !== undefined)
				fn(svg.value);
		});
	}

	/* Plot's tip, wide enough for a run's cell on one or two lines */
	const TIP = { lineWidth: 40 };

	const yTicks = (unit) => ({ grid: true, tickFormat: (v) => KC.fmt(v, unit) });

	/* groups: [{label, cols: [{key, name, color, runs: [{id, value, title}]}]}]
	 * in drawing order (label "" when there is one group); o: {unit,
	 * threshold (null for none), ylabel, onclick(run)}. One column per
	 * cols entry, its dots spread sideways (deterministically, so equal
	 * values stay apart) around the column's place on a linear x scale, a
	 * gap between groups. Returns Plot's <svg class="strip">: dots are
	 * circle.run-dot (data-run-id, data-axis-value, data-col), each
	 * column's median a line.median-mark (data-col, data-median, a
	 * <title> with its value). */
	KC.stripPlot = function (groups, o) {
		const ticks = new Map(), dots = [], meds = [], heads = [], seps = [];
		let pos = 0;
		groups.forEach((g, gi) => {
			const first = pos;
			for (const c of g.cols) {
				const col = `${gi}:${c.key}`, n = c.runs.length;
				ticks.set(pos, `${c.name}\n${n} run${n === 1 ? "" : "s"}`);
				c.runs.forEach((r, k) => dots.push({ ...r, col, key: c.key, color: c.color,
					x: pos + (n > 1 ? ((k * 0.618) % 1 - 0.5) * 0.5 : 0) }));
				if (n) {
					const m = KC.median(c.runs.map((r) => r.value));
					meds.push({ col, m, x1: pos - 0.35, x2: pos + 0.35, title: `median ${KC.fmt(m, o.unit)} ` +
						`of ${n} run${n === 1 ? "" : "s"}: ${c.name}${g.label ? ", " + g.label : ""}` });
				}
				pos += 1;
			}
			if (g.label)
				heads.push({ x: (first + pos - 1) / 2, label: g.label });
			if (gi < groups.length - 1)
				seps.push(pos - 0.25);
			pos += 0.5;
		});
		const last = pos - 1.5, thr = o.threshold, hasThr = thr !== null && thr !== undefined;
		const vals = dots.map((d) => d.value);
		const colW = Math.min(170, Math.max(90, (1180 - 80 - 24 * (groups.length - 1)) / Math.max(1, ticks.size)));
		const svg = Plot.plot({
			width: Math.max(420, 80 + colW * (last + 1)), height: 286 + (heads.length ? 20 : 0),
			marginLeft: 64, marginRight: 16, marginTop: heads.length ? 34 : 14, marginBottom: 44,
			x: { domain: [-0.5, last + 0.5], axis: null },
			y: { domain: [Math.min(0, ...vals), Math.max(...vals, hasThr ? thr : 0)], nice: true,
				label: o.ylabel, labelAnchor: "center", labelArrow: "none", ...yTicks(o.unit) },
			color: { type: "identity" },
			marks: [
				Plot.axisX([...ticks.keys()], { tickFormat: (p) => ticks.get(p), tickSize: 0, label: null }),
				Plot.ruleX(seps, { stroke: "#ccc", strokeDasharray: "3 3" }),
				Plot.text(heads, { x: "x", text: "label", frameAnchor: "top", dy: -22, fontWeight: "bold" }),
				hasThr ? Plot.ruleY([thr], { stroke: "#b3261e", strokeDasharray: "5 4" }) : null,
				hasThr ? Plot.text([thr], { y: (d) => d, frameAnchor: "right", textAnchor: "end", dy: -6,
					fill: "#b3261e", text: (d) => "threshold " + KC.fmt(d, o.unit) }) : null,
				/* a wide invisible line under each median, so its tooltip is easy to reach */
				Plot.ruleY(meds, { y: "m", x1: "x1", x2: "x2", stroke: "transparent", strokeWidth: 10,
					title: "title" }),
				Plot.ruleY(meds, { y: "m", x1: "x1", x2: "x2", stroke: "#222", strokeWidth: 2.5, title: "title",
					render: tagged(meds, "median-mark", (d) => ({ "data-col": d.col, "data-median": String(d.m) })) }),
				Plot.dot(dots, { x: "x", y: "value", fill: "color", r: dots.length > 300 ? 3 : 5,
					stroke: "#fff", strokeWidth: 0.8, fillOpacity: 0.75, title: "title", tip: TIP,
					render: tagged(dots, "run-dot", (d) => ({ "data-run-id": d.id,
						"data-axis-value": String(d.key), "data-col": d.col })) }),
			],
		});
		svg.classList.add("strip");
		onPick(svg, o.onclick);
		return svg;
	};

	/* One ECDF: lines [{key, name, color, runs: [{id, value, title}]}] (a
	 * line per compared value, runs in any order); o: {unit, xlabel,
	 * domain: [lo, hi] shared by the cell charts, onclick(run)}. Each
	 * value's share of runs at or below x is a step line (every run a
	 * step, nothing binned), each run a dot at its step (hover names it).
	 * Returns Plot's <svg class="ecdf">: a path.ecdf-series per line
	 * (data-axis-value, data-n = its runs), circle.ecdf-dot per run. */
	KC.ecdfPlot = function (lines, o) {
		const steps = [], pts = [];
		for (const l of lines) {
			const rs = [...l.runs].sort((a, b) => a.value - b.value), n = rs.length;
			const at = (x, f) => ({ x, f, key: l.key, color: l.color, n });
			steps.push(at(o.domain[0], 0));
			rs.forEach((r, k) => {
				steps.push(at(r.value, (k + 1) / n));
				pts.push({ ...r, f: (k + 1) / n, color: l.color, key: l.key,
					title: `${r.title}\n${k + 1} of ${n} ${l.name} runs at or below` });
			});
			steps.push(at(o.domain[1], 1));
		}
		const svg = Plot.plot({
			width: 560, height: 230, marginLeft: 56, marginRight: 28, marginBottom: 40,
			x: { domain: o.domain, label: o.xlabel, tickFormat: (v) => KC.fmt(v, o.unit) },
			y: { domain: [0, 1], grid: true, label: "share of runs at or below", tickFormat: ".2f" },
			color: { type: "identity" },
			marks: [
				Plot.line(steps, { x: "x", y: "f", z: "key", stroke: "color", strokeWidth: 2, curve: "step-after",
					render: tagged(steps, "ecdf-series", (d) => ({ "data-axis-value": String(d.key),
						"data-n": String(d.n) })) }),
				Plot.dot(pts, { x: "value", y: "f", fill: "color", r: 3, title: "title", tip: TIP,
					render: tagged(pts, "ecdf-dot", (d) => ({ "data-run-id": d.id,
						"data-axis-value": String(d.key) })) }),
			],
		});
		svg.classList.add("ecdf");
		onPick(svg, o.onclick);
		return svg;
	};

	/* The bisection's chart: pts [{x: candidate index, v, fill, stroke,
	 * title}] (a dot per run, spread sideways within its candidate), n
	 * candidates, culprit {first, last} or null, unit, ylabel. Returns Plot's
	 * <svg class="bisect-chart">, dots circle.bisect-dot. */
	KC.bisectPlot = function (pts, n, culprit, unit, ylabel) {
		const seen = new Map();
		const dots = pts.map((p) => {
			const k = seen.get(p.x) || 0;
			seen.set(p.x, k + 1);
			return { ...p, jx: p.x + ((k * 0.618) % 1 - 0.5) * 6 * (n - 1) / 680 };
		});
		const edge = culprit ? +culprit.first - 0.5 : null;
		const svg = Plot.plot({
			width: 760, height: 250, marginLeft: 60, marginRight: 30, marginTop: 22, marginBottom: 34,
			x: { domain: [-0.5, n - 0.5], ticks: [0, n - 1], tickFormat: (i) => `candidate ${i}`,
				label: "candidate (history order); hollow dots: culprit-check runs" },
			y: { domain: [Math.min(0, ...pts.map((p) => p.v)), Math.max(...pts.map((p) => p.v))],
				label: ylabel, ...yTicks(unit) },
			color: { type: "identity" },
			marks: [
				culprit ? Plot.ruleX([edge], { stroke: "#b3261e", strokeDasharray: "4 3" }) : null,
				culprit ? Plot.text([edge], { x: (d) => d, frameAnchor: "top", dy: -12, fill: "#b3261e",
					text: () => `culprit ${culprit.first === culprit.last ? culprit.first :
						culprit.first + ".." + culprit.last}` }) : null,
				Plot.dot(dots, { x: "jx", y: "v", fill: "fill", stroke: "stroke", strokeWidth: 1.5, r: 4,
					title: "title", tip: TIP, render: tagged(dots, "bisect-dot", () => ({})) }),
			],
		});
		svg.classList.add("bisect-chart");
		return svg;
	};
})();
