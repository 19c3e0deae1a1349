/* strip.js - the job page's strip plot, drawn from what job.js gathers:
 * one group per cell of the comparison (as the statistics' tables), in
 * it one column per value of the compared axis, one dot per run in that
 * value's colour, and each column's median as a short dark line (its
 * value in the line's tooltip). No column mixes two kernels or two
 * cells. Plain SVG, no library. */
"use strict";

(function () {
	/* The median of numbers xs (the mean of the middle two for an even count). */
	KC.median = function (xs) {
		const v = [...xs].sort((a, b) => a - b), k = v.length >> 1;
		return v.length % 2 ? v[k] : (v[k - 1] + v[k]) / 2;
	};

	/* groups: [{label, cols: [{key, name, color, runs: [{id, value, title}]}]}]
	 * in drawing order (label "" when there is one group); o: {unit,
	 * threshold (null for none), ylabel, onclick(run)}. Returns the <svg>;
	 * dots are circle.run-dot (data-run-id, data-axis-value, data-col),
	 * medians g.median-mark (data-col, data-median). */
	KC.stripPlot = function (groups, o) {
		const mk = KC.svgEl;
		const ncols = groups.reduce((n, g) => n + g.cols.length, 0), gap = 24;
		const left = 64, right = 16, top = groups.some((g) => g.label) ? 34 : 14, bottom = 40;
		const colW = Math.min(170, Math.max(90,
			(1180 - left - right - gap * (groups.length - 1)) / Math.max(1, ncols)));
		const W = Math.max(420, left + right + colW * ncols + gap * (groups.length - 1)), H = 286 + top;
		const vals = groups.flatMap((g) => g.cols.flatMap((c) => c.runs.map((r) => r.value)));
		const thr = o.threshold;
		const { lo, hi, step } = KC.niceRange(Math.min(0, ...vals), Math.max(...vals, thr || 0));
		const y = (v) => top + (H - top - bottom) * (1 - (v - lo) / (hi - lo));
		const svg = mk("svg", { class: "strip", width: W, height: H, viewBox: `0 0 ${W} ${H}` });
		for (let v = lo; v <= hi + step / 2; v += step) {
			svg.append(mk("line", { x1: left, x2: W - right, y1: y(v), y2: y(v), stroke: "#eee" }));
			svg.append(mk("text", { x: left - 6, y: y(v) + 4, "text-anchor": "end" }, KC.fmt(v, o.unit)));
		}
		if (thr !== null && thr !== undefined) {
			svg.append(mk("line", { x1: left, x2: W - right, y1: y(thr), y2: y(thr),
				stroke: "#b3261e", "stroke-dasharray": "5 4" }));
			svg.append(mk("text", { x: W - right, y: y(thr) - 4, "text-anchor": "end", fill: "#b3261e" },
				"threshold " + KC.fmt(thr, o.unit)));
		}
		let x = left;
		groups.forEach((g, gi) => {
			const x0 = x;
			for (const c of g.cols) {
				stripColumn(svg, c, `${gi}:${c.key}`, x + colW / 2, colW, y, H, vals.length, o, g.label);
				x += colW;
			}
			if (g.label) {
				svg.append(mk("text", { x: (x0 + x) / 2, y: 14, "text-anchor": "middle", class: "strip-group" },
					g.label));
				svg.append(mk("line", { x1: x0 + 6, x2: x - 6, y1: 22, y2: 22, stroke: "#999" }));
			}
			if (gi < groups.length - 1)
				svg.append(mk("line", { x1: x + gap / 2, x2: x + gap / 2, y1: top, y2: H - bottom,
					stroke: "#ccc", "stroke-dasharray": "3 3" }));
			x += gap;
		});
		svg.append(mk("text", { x: 12, y: top + (H - top - bottom) / 2, "text-anchor": "middle",
			transform: `rotate(-90 12 ${top + (H - top - bottom) / 2})` }, o.ylabel));
		return svg;
	};

	/* One column at cx: its name and run count under the plot, a dot per run
	 * (spread sideways, deterministically, so equal values stay apart) and
	 * the median line under them. */
	function stripColumn(svg, c, col, cx, colW, y, H, nall, o, group) {
		const mk = KC.svgEl;
		svg.append(mk("text", { x: cx, y: H - 20, "text-anchor": "middle" }, c.name));
		svg.append(mk("text", { x: cx, y: H - 6, "text-anchor": "middle", fill: "#777" },
			`${c.runs.length} run${c.runs.length === 1 ? "" : "s"}`));
		if (c.runs.length) {
			const m = KC.median(c.runs.map((r) => r.value)), half = Math.min(colW * 0.35, 40);
			const mark = mk("g", { class: "median-mark", "data-col": col, "data-median": String(m) });
			mark.append(mk("line", { x1: cx - half, x2: cx + half, y1: y(m), y2: y(m), stroke: "#222",
				"stroke-width": 2.5 }));
			/* a wider invisible line, so the tooltip is easy to reach */
			mark.append(mk("line", { x1: cx - half, x2: cx + half, y1: y(m), y2: y(m), stroke: "transparent",
				"stroke-width": 10 }));
			mark.append(mk("title", {}, `median ${KC.fmt(m, o.unit)} of ${c.runs.length} ` +
				`run${c.runs.length === 1 ? "" : "s"}: ${c.name}${group ? ", " + group : ""}`));
			svg.append(mark);
		}
		const spread = Math.min(colW * 0.5, 60);
		c.runs.forEach((r, k) => {
			const jitter = c.runs.length > 1 ? ((k * 0.618) % 1 - 0.5) * spread : 0;
			const dot = mk("circle", { cx: cx + jitter, cy: y(r.value), r: nall > 300 ? 3 : 5, fill: c.color,
				"data-run-id": r.id, "data-axis-value": String(c.key), "data-col": col, class: "run-dot" });
			dot.append(mk("title", {}, r.title));
			dot.addEventListener("click", () => o.onclick(r));
			svg.append(dot);
		});
	}
})();
