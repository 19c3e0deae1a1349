/* kcanary.js - helpers shared by the pages: fetching the API, formatting
 * values with their units and direction, small DOM builders, the colours
 * of variants, uPlot options, polling for live jobs. No build step: plain
 * browser JavaScript, loaded before the page's own script. */
"use strict";

const KC = {};

/* Variant colours: the baseline first; colour-blind safe (Okabe-Ito). */
KC.colors = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"];
KC.color = (i) => KC.colors[i % KC.colors.length];

/* Job and run states in which more data can still arrive. */
KC.liveStates = ["pending", "building", "running"];
KC.POLL_MS = 5000;

KC.api = async function (path) {
	const res = await fetch(path, { cache: "no-store" });
	const ct = res.headers.get("Content-Type") || "";
	const body = ct.includes("json") ? await res.json() : await res.text();
	if (!res.ok) {
		const msg = body && body.error ? body.error : `${res.status} ${res.statusText}`;
		const err = new Error(msg);
		err.status = res.status;
		throw err;
	}
	return body;
};

KC.el = function (tag, attrs, ...kids) {
	const e = document.createElement(tag);
	for (const [k, v] of Object.entries(attrs || {})) {
		if (v === null || v === undefined || v === false)
			continue;
		if (k === "class")
			e.className = v;
		else if (k === "text")
			e.textContent = v;
		else if (k.startsWith("on"))
			e.addEventListener(k.slice(2), v);
		else
			e.setAttribute(k, v);
	}
	for (const kid of kids.flat()) {
		if (kid === null || kid === undefined)
			continue;
		e.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
	}
	return e;
};

/* Replace node's children, skipping null/undefined ones (as KC.el does). */
KC.fill = (node, ...kids) => node.replaceChildren(...kids.flat().filter((k) => k !== null && k !== undefined));

KC.param = (name) => new URLSearchParams(location.search).get(name);

/* v rounded to d decimal places (d < 0: tens, hundreds), half away from
 * zero on v's shortest decimal form, as a reader rounds what they see:
 * 30.25 -> 30.3, 0.15 -> 0.2 (toFixed rounds the binary value: 0.15 is
 * 0.1499..., "0.1"). The same rule as the server's text, markdown and
 * email reports (dec_round in lib/dec_round.c); the result
 * is the number nearest the rounded decimal, so toFixed(d) prints it. */
KC.round = function (v, d) {
	if (!Number.isFinite(v) || v === 0)
		return v;
	const [m, e] = Math.abs(v).toExponential().split("e");   /* shortest digits */
	const dig = m.replace(".", ""), keep = Number(e) + 1 + d;
	if (keep >= dig.length)
		return v;
	if (keep < 0)
		return v < 0 ? -0 : 0;
	const n = BigInt(dig.slice(0, keep) || "0") + (dig[keep] >= "5" ? 1n : 0n);
	return Number(`${v < 0 ? "-" : ""}${n}e${-d}`);
};

/* v rounded to d significant digits by the same rule. */
KC.roundSig = function (v, d) {
	if (!Number.isFinite(v) || v === 0)
		return v;
	return KC.round(v, d - 1 - Number(Math.abs(v).toExponential().split("e")[1]));
};

/* x with d decimals, rounded by KC.round; -0.04 to 1 place is "-0.0", as
 * C's printf writes it (toFixed drops the sign of -0). */
KC.fixed = function (x, d) {
	const r = KC.round(x, d);
	return (Object.is(r, -0) ? "-" : "") + r.toFixed(d);
};

/* A value as the cover-letter table writes it (rep_fmt_value in
 * server/judge/report_data.c): 85.3s for seconds, else 4 significant
 * digits and the unit; bytes in KiB/MiB/GiB. Rounded by KC.round. */
KC.fmt = function (v, unit) {
	if (v === null || v === undefined || Number.isNaN(v))
		return "–";
	if (unit === "s")
		return (Math.abs(KC.round(v, 1)) >= 1000 ? KC.fixed(v, 0) : KC.fixed(v, 1)) + "s";
	if (unit === "bytes" && Math.abs(v) >= 1024) {
		const units = ["KiB", "MiB", "GiB", "TiB"];
		let i = -1, x = v;
		do { x /= 1024; i++; } while (Math.abs(x) >= 1024 && i < units.length - 1);
		return KC.fixed(x, Math.abs(KC.round(x, 1)) >= 100 ? 0 : 1) + " " + units[i];
	}
	const s = String(KC.roundSig(v, 4));
	return unit ? s + " " + unit : s;
};

KC.fmtP = (p) => (p === null || p === undefined) ? "–" : p < 0.001 ? "< 0.001" : KC.fixed(p, 3);

KC.fmtPct = (x) => (x === null || x === undefined) ? "–" : (x > 0 ? "+" : "") + KC.fixed(x, 1) + "%";

/* "↓ lower is better" for a metric's direction (metrics.better). */
KC.betterLabel = function (better) {
	if (better === "lower")
		return "↓ lower is better";
	if (better === "higher")
		return "↑ higher is better";
	return "direction unknown";
};

KC.statusBadge = (s) => KC.el("span", { class: "status " + s, text: s });

/* A job's badge (GET /api/v1/jobs' job): its status, except that a job
 * that ran to its end is no plain green "done" when no run gave a result:
 * "no result" (red) when none did (each failed, or was never run: its
 * kernel failed), "done, N of M runs failed" (amber) when some did. */
KC.jobBadge = function (j) {
	const failed = j.runs_failed || 0, ok = j.runs_ok || 0, tried = failed + ok;
	const skipped = j.runs_skipped || 0;
	if (j.status !== "done" || (ok && !failed) || (!ok && !failed && !skipped))
		return KC.statusBadge(j.status);     /* a job of no runs (kcanary build's) too */
	if (!ok) {
		/* none gave a result: failed, or never run (its kernel failed) */
		const why = [];
		if (failed)
			why.push(`${failed} of ${tried} run${tried === 1 ? "" : "s"} failed`);
		if (skipped)
			why.push(`${skipped} not run`);
		return KC.el("span", { class: "status failed no-result", text: `no result: ${why.join(", ")}` });
	}
	return KC.el("span", { class: "status partial",
		text: `done, ${failed} of ${tried} runs failed` });
};

/* The sampled metric behind a run-level one: worst_lag_s → lag_s. */
KC.sampledMetric = (m) => m.replace(/^(worst|mean)_/, "") || "lag_s";

/* "fs=ext4 mode=removed" → {fs: "ext4", mode: "removed"} */
KC.parseCell = function (cell) {
	const o = {};
	for (const tok of (cell || "").split(/\s+/)) {
		const eq = tok.indexOf("=");
		if (eq > 0)
			o[tok.slice(0, eq)] = tok.slice(eq + 1);
	}
	return o;
};

/* true when cell matches every chosen dimension value ("" = any). */
KC.cellMatches = function (cell, chosen) {
	const c = KC.parseCell(cell);
	return Object.entries(chosen).every(([k, v]) => !v || c[k] === v);
};

/* Smallest two-sided p the exact Mann-Whitney U test can give for n1
 * against n2 runs with no ties: 2 / C(n1+n2, n1) (Mann & Whitney 1947).
 * Used for the plain-language line when the report does not carry it. */
KC.minPossibleP = function (n1, n2) {
	if (!n1 || !n2)
		return 1;
	let c = 1;
	for (let i = 1; i <= n1; i++)
		c = c * (n2 + i) / i;
	return Math.min(1, 2 / c);
};

/* The readout under a chart: the curve nearest the pointer (by its value
 * at the pointer's time, in pixels), named with its value and time, so a
 * curve among many can be told by hovering. {el, plugin}: the element to
 * place under the chart, the uPlot plugin that fills it. */
KC.readout = function (unit) {
	const out = document.createElement("div");
	out.className = "readout muted";
	out.textContent = "point at a curve to name it";
	return { el: out, plugin: {
		hooks: {
			setCursor: [(u) => {
				const i = u.cursor.idx, top = u.cursor.top;
				if (i === null || i === undefined || top === null || top < 0)
					return;
				let best = -1, dist = Infinity;
				for (let k = 1; k < u.series.length; k++) {
					const v = u.data[k][i];
					if (v === null || v === undefined || !u.series[k].show)
						continue;
					const d = Math.abs(u.valToPos(v, "y") - top);
					if (d < dist) {
						dist = d;
						best = k;
					}
				}
				if (best > 0)
					out.textContent = `${u.series[best].label}: ${KC.fmt(u.data[best][i], unit)}` +
						` at t = ${KC.fmt(u.data[0][i], "s")}`;
			}],
		},
	} };
};

/* A uPlot of time curves. series: [{label, color, t:[], v:[]}]; the
 * curves are joined on a shared time axis (uPlot.join), gaps not
 * connected; dragging across zooms in, a double click resets.
 * opts.legend false hides uPlot's legend (shown otherwise, every series);
 * opts.readout (a unit, "" for none) adds KC.readout(). */
KC.curvePlot = function (target, title, series, opts) {
	opts = opts || {};
	const tables = series.map((s) => [s.t, s.v]);
	const data = tables.length ? uPlot.join(tables) : [[]];
	const width = opts.width || Math.min(600, Math.max(320, target.clientWidth || 600));
	const uopts = {
		title: title,
		width: width,
		height: opts.height || 260,
		scales: { x: { time: false } },
		axes: [
			{ label: opts.xlabel || "time (s)" },
			{ label: opts.ylabel || "", size: 60 },
		],
		/* every series in the legend, however many; a caller whose
		 * series are many runs (the job page's overlay) passes false and
		 * names the axis values in its own legend instead */
		legend: { show: opts.legend !== false },
		cursor: { drag: { x: true, y: false } },
		series: [{ label: "t" }].concat(series.map((s) => ({
			label: s.label,
			stroke: s.color,
			width: s.width || 1,
			spanGaps: false,
			points: { show: false },
		}))),
		plugins: (opts.plugins || []).slice(),
	};
	const ro = opts.readout !== undefined ? KC.readout(opts.readout) : null;
	if (ro)
		uopts.plugins.push(ro.plugin);
	const u = new uPlot(uopts, data, target);
	if (ro)
		target.append(ro.el);
	return u;
};

/* A uPlot plugin drawing vertical phase markers [{t, name}] with labels. */
KC.phaseMarkers = function (phases) {
	return {
		hooks: {
			draw: [(u) => {
				const ctx = u.ctx;
				ctx.save();
				ctx.strokeStyle = "#888";
				ctx.fillStyle = "#444";
				ctx.setLineDash([4, 3]);
				ctx.textAlign = "left";
				ctx.textBaseline = "alphabetic";
				ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
				phases.forEach((p, i) => {
					let x = Math.round(u.valToPos(p.t, "x", true));
					/* a phase at t = 0 sits just left of the first sample */
					if (x < u.bbox.left - 2 * devicePixelRatio && p.t === 0)
						x = u.bbox.left;
					if (x < u.bbox.left || x > u.bbox.left + u.bbox.width)
						return;
					ctx.beginPath();
					ctx.moveTo(x, u.bbox.top);
					ctx.lineTo(x, u.bbox.top + u.bbox.height);
					ctx.stroke();
					ctx.fillText(p.name, x + 3 * devicePixelRatio,
						u.bbox.top + (12 + 12 * (i % 3)) * devicePixelRatio);
				});
				ctx.restore();
			}],
		},
	};
};

/* Call fn now and every POLL_MS while live() says the data can change. */
KC.poll = function (fn, live, badge) {
	let timer = null;
	const tick = async () => {
		try {
			await fn();
		} catch (e) {
			console.error(e);
		}
		const on = live();
		if (badge)
			badge.textContent = on ? `live: refreshing every ${KC.POLL_MS / 1000}s` : "";
		if (on)
			timer = setTimeout(tick, KC.POLL_MS);
	};
	tick();
	return () => clearTimeout(timer);
};

/* A page whose object cannot be loaded at all (an unknown id: the API
 * answers 404 with a JSON error): the title says so, the API's own text
 * follows, and nothing is left saying "loading…". */
KC.pageError = function (title, e) {
	document.title = "kcanary: " + title;
	KC.fill(document.querySelector("main"), KC.el("h1", { id: "title", text: title }),
		KC.el("p", { class: "error", id: "load-error", text: e.message }));
};

KC.showError = function (where, e) {
	where.replaceChildren(KC.el("p", { class: "error", text: "cannot load: " + e.message }));
};
