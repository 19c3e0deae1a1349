// check.js - drive Debian's chromium through kcanary serve's pages
// (tests/integration/t_web.sh prepares the store and the server).
//
//   node check.js URL OUTDIR EXPECT.json
//
// EXPECT.json: {"job": name, "job_id": N, "runs": N, "variants": N,
//   "numbers": ["85.3s", …], "filter": {"dim": "fs", "value": "xfs", "runs": N},
//   "run_id": N, "pending_id": N, "live": {"cmd": [argv…]},
//   "stored_by": {"job_id": N, "by": AXIS, "runs": N, "legend": "a|b", "sysctl_legend": "a|b"},
//   "lab": {"job_id": N, "hosts": [first, second], "p_line": "p: van Elteren, …",
//           "progress": {HOST: {"done": N, "running": N, "state": S, "slots": S}}},
//   "strip_medians": {"variant": ["52.1s", …], "fs": […]} (the strip plot's columns in order),
//   "probes": {"run_id": N, "series": ["name = key", …]} (a run with more than four),
//   "bisect": [{"job_id": N, "log": stored log, "cands": "IDX SHA TIME SUBJECT"
//               lines, "wall": "2 h 13 min 42 s", "shot": "bisect.png"}, …]}
// The bisection pages are checked against the stored log read here with
// plain regexps (not the page's parser) and the fixture's candidates.
// Screenshots go to OUTDIR. Exits 1 with a message on the first failure.
"use strict";

const { chromium } = require("playwright-core");
const fs = require("fs");
const path = require("path");
const { execFileSync } = require("child_process");

const [base, outdir, expectFile] = process.argv.slice(2);
const want = JSON.parse(fs.readFileSync(expectFile, "utf8"));

function check(cond, msg) {
	if (!cond) {
		console.error("FAIL: " + msg);
		process.exitCode = 1;
		throw new Error(msg);
	}
	console.log("ok: " + msg);
}

// Pixels of a canvas close to an RGB colour (the curve's stroke).
async function colouredPixels(page, selector, rgb) {
	return page.$eval(selector, (c, rgb) => {
		const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
		let n = 0;
		for (let i = 0; i < d.length; i += 4)
			if (d[i + 3] > 200 && Math.abs(d[i] - rgb[0]) < 40 &&
			    Math.abs(d[i + 1] - rgb[1]) < 40 && Math.abs(d[i + 2] - rgb[2]) < 40)
				n++;
		return n;
	}, rgb);
}

/* key=value fields of the last log line starting with keyword */
function logLine(log, keyword) {
	const lines = log.split("\n").filter((l) => l.startsWith(keyword + " "));
	if (!lines.length)
		return null;
	return Object.fromEntries(lines[lines.length - 1].split(" ").slice(1)
		.filter((t) => t.includes("=")).map((t) => [t.slice(0, t.indexOf("=")), t.slice(t.indexOf("=") + 1)]));
}

async function checkBisect(page, bj) {
	const log = fs.readFileSync(bj.log, "utf8");
	const cands = new Map(fs.readFileSync(bj.cands, "utf8").trim().split("\n").map((l) => {
		const [idx, sha, time, ...subj] = l.split(" ");
		return [+idx, { sha, time: +time, subject: subj.join(" ") }];
	}));
	const res = logLine(log, "result"), chk = logLine(log, "check");
	const runLines = log.split("\n").filter((l) => l.startsWith("run "));
	const skipLines = log.split("\n").filter((l) => l.startsWith("skip "));
	const idxOf = (l) => +l.match(/ idx=(\d+)/)[1];
	const tested = [...new Set(runLines.concat(skipLines).map(idxOf))];
	const failedBuilds = tested.filter((i) => !runLines.some((l) => idxOf(l) === i));
	const verdicts = new Map();
	for (const l of log.split("\n").filter((x) => x.startsWith("verdict ")))
		verdicts.set(idxOf(l), l.match(/ verdict=(\w+)/)[1]);
	const tag = `job ${bj.job_id}`;

	await page.goto(`${base}/job.html?id=${bj.job_id}`);
	await page.waitForSelector("#bisect .bisect-answer");
	const answer = await page.locator(".bisect-answer").innerText();
	const culprit = res && (res.outcome === "found" || res.outcome === "range");
	const valuesOf = (i) => runLines.filter((l) => idxOf(l) === i).map((l) => +l.match(/ value=(\S+)/)[1]);
	const median = (xs) => {
		const v = [...xs].sort((x, y) => x - y), k = v.length >> 1;
		return v.length % 2 ? v[k] : (v[k - 1] + v[k]) / 2;
	};
	const secs = (v) => (+v).toFixed(1) + "s";
	check(res !== null, `${tag}: the fixture's log has a result (${res && res.outcome})`);
	const outcome = await page.locator("dd.outcome").innerText();
	const checkText = await page.locator("dd.check-line").innerText();
	if (culprit) {
		check(answer.startsWith(res.outcome === "found" ? "Culprit\n" : `Culprit range: one of ${+res.last - +res.first + 1} commits`),
			`${tag}: the answer says '${answer.split("\n")[0]}'`);
		for (let i = +res.first; i <= +res.last; i++) {
			const c = cands.get(i);
			const date = new Date(c.time * 1000).toISOString().replace("T", " ").slice(0, 16) + " UTC";
			check(answer.includes(`${c.sha.slice(0, 12)} ${c.subject}`), `${tag}: the answer names ${c.sha.slice(0, 12)} ${c.subject}`);
			check(answer.includes(`Dev Eloper <dev@example.org> · ${date} · commit ${c.sha}`),
				`${tag}: with its author (as text: <dev@example.org> kept), date ${date} and full sha`);
		}
		check(outcome.startsWith(res.outcome + ":") && outcome.includes(`p = ${(+res.prob).toFixed(3)}`),
			`${tag}: the outcome in words: '${outcome}'`);
		check(checkText.includes(`parent candidate ${chk.parent} (${cands.get(+chk.parent).sha.slice(0, 12)}) median ` +
			`${secs(chk.median_parent)} (${chk.n_parent} runs)`) &&
			checkText.includes(`culprit candidate ${chk.culprit} (${cands.get(+chk.culprit).sha.slice(0, 12)}) median ` +
			`${secs(chk.median_culprit)} (${chk.n_culprit} runs)`) &&
			checkText.includes(`shift +${secs(chk.shift)}`) && checkText.endsWith(chk.passed === "1" ? "passed" : "FAILED"),
			`${tag}: the culprit check line: '${checkText}'`);
	} else {
		const v0 = valuesOf(0), v1 = valuesOf(cands.size - 1);
		const why = `No culprit: the endpoints do not differ: ${v0.length} vs ${v1.length} runs, medians ` +
			`${secs(median(v0))} and ${secs(median(v1))}, Mann-Whitney p = ${(+res.endpoint_p).toFixed(3)}`;
		check(res.outcome === "no-difference" && answer === why, `${tag}: the answer says why there is no culprit: '${answer}'`);
		check(outcome.startsWith("no-difference: "), `${tag}: the outcome in words: '${outcome}'`);
		check(checkText === "not run: no culprit to check", `${tag}: the culprit check: '${checkText}'`);
	}
	const totals = await page.locator("dd.totals").innerText();
	const wantTotals = `${tested.length} builds (${failedBuilds.length} failed), ${runLines.length} boots, ` +
		`${runLines.length} runs with a value`;
	check(totals.startsWith(wantTotals) && totals.includes(`${skipLines.length} skip`) && totals.endsWith(`wall ${bj.wall}`),
		`${tag}: totals '${totals}' (want '${wantTotals} … ${skipLines.length} skips … wall ${bj.wall}')`);
	const rows = page.locator("table.bisect tbody tr");
	check(await rows.count() === tested.length, `${tag}: one table row per tested candidate (${tested.length})`);
	for (const i of tested) {
		const row = page.locator(`table.bisect tbody tr[data-idx="${i}"]`);
		const cells = await row.locator("td").allInnerTexts();
		const c = cands.get(i);
		const nruns = runLines.filter((l) => idxOf(l) === i).length;
		const verdict = verdicts.get(i) || (skipLines.some((l) => idxOf(l) === i) ? "skip" : "–");
		check(cells[1] === c.sha.slice(0, 12) && cells[2] === c.subject && cells[3] === String(nruns) &&
			cells[6] === verdict, `${tag}: row ${i}: ${cells.slice(0, 7).join(" | ")}`);
	}
	const colour = async (v) => !culprit ? "" : page.locator(`table.bisect span.verdict.${v}`).first()
		.evaluate((e) => getComputedStyle(e).color);
	if (culprit)
		check(await colour("good") === "rgb(27, 110, 45)" && await colour("bad") === "rgb(179, 38, 30)" &&
			await colour("skip") === "rgb(85, 85, 85)", `${tag}: verdicts in their colours (good green, bad red, skip grey)`);
	const culpritRows = await page.locator("table.bisect tbody tr.culprit").count();
	check(culpritRows === (culprit ? tested.filter((i) => i >= +res.first && i <= +res.last).length : 0),
		`${tag}: the culprit's row(s) stand out (${culpritRows})`);
	const dots = await page.locator("svg.bisect-chart circle.bisect-dot").count();
	check(dots === runLines.length, `${tag}: the chart has one dot per run (${dots})`);
	if (dots) {   /* Plot's tip names the pointed run's candidate and value */
		await page.locator("svg.bisect-chart circle.bisect-dot").first().hover({ force: true });
		const tip = await page.waitForFunction(() => {
			const t = document.querySelector('svg.bisect-chart g[aria-label="tip"]');
			return t && t.textContent.replace(/\u200b/g, "").trim() ? t.textContent.replace(/\u200b/g, "") : null;
		}, null, { timeout: 5000 }).then((h) => h.jsonValue()).catch(() => "");
		check(/: \d+(\.\d+)?s( \(check run\))?$/.test(tip.trim()) &&
			(await page.locator("table.bisect td.subject").allInnerTexts()).some((x) => tip.replace(/\s+/g, "").includes(x.replace(/\s+/g, ""))),
			`${tag}: pointing at a dot names its candidate and value: '${tip.trim()}'`);
		await page.mouse.move(0, 0);
	}
	const post = (log.split("\n").filter((l) => l.startsWith("posterior ")).pop() || "posterior").split(" ").slice(1);
	const bars = await page.locator(".pbar-row").allInnerTexts();
	check(bars.length === post.length && (!bars.length || bars[0].startsWith((+post[0].split(":")[1]).toFixed(3))),
		`${tag}: one posterior bar per class of the last posterior (${bars.length})` +
		(bars.length ? `, first ${bars[0].replace(/\s+/g, " ")}` : ""));
	check(!/\bnull\b|\bundefined\b|NaN/.test(await page.locator("#bisect").innerText()),
		`${tag}: no 'null', 'undefined' or 'NaN' in the bisection`);
	await page.screenshot({ path: path.join(outdir, bj.shot), fullPage: true });
}

// The ECDF: one chart per cell of the report along the axis (cells are
// never pooled), in each one step line per value of the axis, in that
// value's strip colour, with as many steps as the report has runs there.
async function checkEcdf(page, nvalues, by) {
	const rep = await (await page.request.get(`${base}/api/v1/jobs/${want.job_id}/report?by=${by}`)).json();
	const charts = await page.$$eval("svg.ecdf", (svgs) => svgs.map((svg) =>
		[...svg.querySelectorAll("path.ecdf-series")].map((p) => ({ v: p.getAttribute("data-axis-value"),
			stroke: p.getAttribute("stroke"), n: +p.getAttribute("data-n") }))));
	const dots = await page.$$eval("svg.strip circle.run-dot", (cs) => cs.map((c) =>
		({ v: c.getAttribute("data-axis-value"), fill: c.getAttribute("fill") })));
	check(charts.length === rep.cells.length, `by ${by}: one ECDF per cell of the report (${charts.length})`);
	await checkCurveColours(page, `by ${by}`);
	for (const [k, series] of charts.entries()) {
		const groups = rep.cells[k].groups || rep.cells[k].variants;
		const ns = groups.map((g) => g.runs.filter((r) => r.value !== null).length).join(",");
		check(series.length === nvalues && new Set(series.map((s) => s.stroke)).size === nvalues &&
			series.every((s) => dots.some((d) => d.v === s.v) && dots.filter((d) => d.v === s.v).every((d) => d.fill === s.stroke)) &&
			series.map((s) => s.n).join(",") === ns,
			`by ${by}: ECDF of '${rep.cells[k].title || rep.cells[k].cell}': one line per value ` +
			`(${series.map((s) => `${s.v} ${s.stroke} n=${s.n}`).join(", ")}; report n ${ns}), each in its strip-plot colour`);
	}
}

// The curves' legend gives each value of the axis the colour its dots have
// in the strip plot (the curves are drawn before the report, whose order
// of values -- the baseline first -- they must follow once it is there).
async function checkCurveColours(page, tag) {
	const swatch = (sel) => page.$$eval(sel, (items) => items.map((it) => ({
		v: it.getAttribute("data-axis-value"),
		c: (/background:\s*([^;]+)/.exec(it.querySelector(".swatch").getAttribute("style")) || [])[1] })));
	const curve = await swatch(".curve .legend .legend-item");
	const dots = await page.$$eval("svg.strip circle.run-dot", (cs) => cs.map((c) =>
		({ v: c.getAttribute("data-axis-value"), fill: c.getAttribute("fill") })));
	const bad = curve.filter((l) => !dots.some((d) => d.v === l.v) || dots.some((d) => d.v === l.v && d.fill !== l.c));
	check(curve.length > 0 && !bad.length, `${tag}: each curve colour is its value's strip colour ` +
		`(${curve.map((l) => `${l.v} ${l.c}`).join(", ")}${bad.length ? "; differ: " + bad.map((l) => l.v).join(", ") : ""})`);
}

// The strip plot never pools (issue 35 item 3): its dots, grouped by the
// column they are drawn in (data-col), each hold runs of one variant and
// one cell (the API's runs, not the page's grouping), the columns' dots do
// not overlap sideways, and each column has one median line over its dots
// at the median of those runs' values (want: the medians in drawing
// order as the fixture's numbers give them, or null).
async function checkStripColumns(page, jobId, tag, wantMedians) {
	const api = new Map((await (await page.request.get(`${base}/api/v1/jobs/${jobId}/runs`)).json()).runs
		.map((r) => [r.id, r]));
	const dots = await page.$$eval("svg.strip circle.run-dot", (cs) => cs.map((c) => ({
		id: +c.getAttribute("data-run-id"), col: String(c.getAttribute("data-col")), cx: +c.getAttribute("cx") })));
	const marks = await page.$$eval("svg.strip line.median-mark", (ls) => ls.map((l) => ({
		col: l.getAttribute("data-col"), median: +l.getAttribute("data-median"),
		x1: +l.getAttribute("x1"), x2: +l.getAttribute("x2"),
		title: l.querySelector("title").textContent })));
	const cols = [...new Set(dots.map((d) => d.col))];
	const mixed = cols.filter((c) => {
		const runs = dots.filter((d) => d.col === c).map((d) => api.get(d.id));
		return new Set(runs.map((r) => r.variant)).size > 1 || new Set(runs.map((r) => r.cell)).size > 1;
	});
	check(dots.length && !mixed.length, `${tag}: no strip column mixes two variants or two cells ` +
		`(${cols.length} columns${mixed.length ? "; mixed: " + mixed.join(", ") : ""})`);
	const span = cols.map((c) => {
		const xs = dots.filter((d) => d.col === c).map((d) => d.cx);
		return { c, lo: Math.min(...xs), hi: Math.max(...xs) };
	}).sort((a, b) => a.lo - b.lo);
	check(span.every((s, k) => !k || span[k - 1].hi < s.lo), `${tag}: the columns' dots do not overlap sideways`);
	const median = (xs) => {
		const v = [...xs].sort((x, y) => x - y), k = v.length >> 1;
		return v.length % 2 ? v[k] : (v[k - 1] + v[k]) / 2;
	};
	const got = [];
	for (const s of span) {
		const m = marks.filter((x) => x.col === s.c);
		const want = median(dots.filter((d) => d.col === s.c).map((d) => api.get(d.id).value));
		check(m.length === 1 && Math.abs(m[0].median - want) < 1e-9 && m[0].x1 <= s.lo && m[0].x2 >= s.hi &&
			m[0].title.startsWith(`median ${want.toFixed(1)}s of `),
			`${tag}: column ${s.c}: one median line at ${want} over its dots ('${m.length ? m[0].title : "none"}')`);
		got.push(want.toFixed(1) + "s");
	}
	if (wantMedians)
		check(got.join(" ") === wantMedians.join(" "), `${tag}: the columns' medians are the fixture's (${got.join(" ")})`);
}

// The strip plot and the ECDF are Observable Plot's (issue 35 item 11):
// each is a Plot <svg> (its class plot-…, its marks' groups named by
// aria-label), and pointing at a dot shows Plot's tip naming that dot's
// run with its value, variant and cell as the API has them.
async function checkPlotHover(page, tag) {
	const api = new Map((await (await page.request.get(`${base}/api/v1/jobs/${want.job_id}/runs`)).json()).runs
		.map((r) => [r.id, r]));
	for (const [chart, dot] of [["svg.strip", "circle.run-dot"], ["svg.ecdf", "circle.ecdf-dot"]]) {
		const lib = await page.$$eval(chart, (svgs) => svgs.map((s) =>
			[...s.classList].some((c) => /^plot-/.test(c)) && !!s.querySelector('g[aria-label="dot"]')));
		check(lib.length > 0 && lib.every((x) => x), `${tag}: ${chart} is drawn by Observable Plot (${lib.length} charts)`);
		const d = page.locator(`${chart} ${dot}`).nth(1);
		const rid = +(await d.getAttribute("data-run-id"));
		await d.hover({ force: true });
		const tip = await page.waitForFunction((sel) => {
			const t = document.querySelector(`${sel} g[aria-label="tip"]`);
			/* the tip's lines (Plot wraps long ones and marks where with U+200B) */
			const ls = t ? [...t.querySelectorAll("tspan")].map((x) => x.textContent.replace(/\u200b/g, "")) : [];
			return ls.join("").trim() ? ls.join(" ").replace(/\s+/g, " ") : null;
		}, chart, { timeout: 5000 }).then((h) => h.jsonValue()).catch(() => "");
		const r = api.get(rid);
		const v = /\): (-?[\d.]+)s/.exec(tip);
		const flat = (x) => x.replace(/\s+/g, "");   /* Plot wraps lines at spaces or after '-' */
		check(r && flat(tip).startsWith(flat(`run ${rid} (${r.variant}, ${r.cell || "no cell"} #`)) &&
			v && Math.abs(+v[1] - r.value) <= 0.051,
			`${tag}: pointing at a dot of ${chart} names its run: '${tip.replace(/\s+/g, " ")}'`);
		await page.locator(chart).first().screenshot({ path: path.join(outdir, `tip-${chart.slice(4)}.png`) });
		await page.mouse.move(0, 0);
	}
	// and clicking a strip dot opens its run's page
	const d = page.locator("svg.strip circle.run-dot").nth(2), rid = await d.getAttribute("data-run-id");
	await d.hover({ force: true });
	await d.click({ force: true });
	const opened = await page.waitForURL(new RegExp(`run\\.html\\?id=${rid}$`), { timeout: 5000 })
		.then(() => true).catch(() => false);
	check(opened, `${tag}: clicking run ${rid}'s dot opens its page (${page.url()})`);
	await page.goBack();
	await page.waitForSelector("svg.strip circle.run-dot");
	await page.waitForSelector("svg.ecdf");
}

// The runs table: one row per run, its axis value, value and probe counts
// as the API has them; every link answers 200, the console ones with text.
async function checkRuns(page, by) {
	await page.waitForFunction(() => document.querySelector("#runs-table") &&
		!document.querySelector("#runs-table td.probes").textContent.includes("…"));
	const api = await (await page.request.get(`${base}/api/v1/jobs/${want.job_id}/runs`)).json();
	const rep = await (await page.request.get(`${base}/api/v1/jobs/${want.job_id}/report`)).json();
	const probes = new Map();
	for (const c of rep.cells)
		for (const v of c.variants)
			for (const r of v.runs)
				probes.set(r.run_id, r.probes);
	const rows = await page.$$eval("#runs-table tbody tr", (trs) => trs.map((tr) => ({
		id: +tr.getAttribute("data-run-id"),
		cells: [...tr.querySelectorAll("td")].map((td) => td.innerText.trim()),
		links: [...tr.querySelectorAll("a")].map((a) => ({ cls: a.className, href: a.href })),
	})));
	check(rows.length === api.runs.length && rows.every((r, i) => r.id === api.runs[i].id),
		`by ${by}: the runs table has one row per run, in run order (${rows.length})`);
	const head = await page.locator("#runs-table thead th").allInnerTexts();
	check(head[1] === by, `by ${by}: the runs table's axis column is '${head[1]}'`);
	for (const r of rows) {
		const a = api.runs.find((x) => x.id === r.id);
		const axisText = by === "variant" ? a.variant : `${by}=${a[by]}`;
		const counts = Object.values(probes.get(r.id) || {}).flatMap((k) => Object.values(k)).join(" ");
		const shown = r.cells[6].split(" ").filter((t) => /^\d+$/.test(t)).join(" ");
		check(r.cells[0] === String(r.id) && r.cells[1].endsWith(axisText) && r.cells[2] === a.cell &&
			r.cells[3] === a.status && r.cells[4] === (a.lab_host || "–") &&
			r.cells[5] === (+a.value).toFixed(1) + "s" && shown === counts,
			`by ${by}: run ${r.id}: ${r.cells.slice(1, 7).join(" | ")}`);
		const run = r.links.find((l) => l.cls === "run-link");
		check(run && new URL(run.href).pathname.endsWith("/run.html") && new URL(run.href).searchParams.get("id") === String(r.id),
			`by ${by}: run ${r.id} links its page`);
		check(r.cells[7] === want.run_overhead && a.overhead && a.overhead.phases_ms.boot === 30000,
			`by ${by}: run ${r.id}'s overhead cell is '${r.cells[7]}'`);
		check(!!r.links.find((l) => l.cls === "console-link") === a.has_console,
			`by ${by}: run ${r.id} links a console exactly when one is stored (${a.has_console})`);
		if (by !== "variant")
			continue;
		for (const l of r.links) {
			const res = await page.request.get(l.href);
			const body = await res.text();
			check(res.status() === 200 && (l.cls !== "console-link" ||
				(res.headers()["content-type"].startsWith("text/plain") && (r.id !== want.run_id || body.includes(want.console)))),
				`run ${r.id}'s ${l.cls} ${l.href} answers ${res.status()} ${res.headers()["content-type"]}`);
		}
	}
	check(rows.some((r) => r.links.some((l) => l.cls === "console-link")), "at least one run links its console");
}

// The export links: the report along the page's axis as CSV and JSON.
async function checkExport(page, by, csvHead) {
	const hrefs = await page.$$eval("#export a", (as) => as.map((a) => a.href));
	check(hrefs.length === 2 && hrefs.every((h) => new URL(h).searchParams.get("by") === by),
		`the export links carry ?by=${by} (${hrefs.join(" ")})`);
	const csv = await page.request.get(await page.locator("#export-csv").evaluate((a) => a.href));
	const lines = (await csv.text()).trim().split("\n");
	check(csv.status() === 200 && csv.headers()["content-type"].startsWith("text/csv") &&
		lines[0] === csvHead && lines.length === want.runs + 1,
		`the CSV link answers ${csv.status()} ${csv.headers()["content-type"]}, header '${lines[0]}', ${lines.length - 1} runs`);
	const js = await page.request.get(await page.locator("#export-json").evaluate((a) => a.href));
	const j = await js.json();
	check(js.status() === 200 && j.by === by && j.text === execFileSync(want.kcanary,
		["report", String(want.job_id), "--by", by], { env: process.env }).toString(),
		`the JSON link answers ${js.status()} with by '${j.by}' and the text of \`kcanary report --by ${by}\``);
}

// The revision x patch-prefix grid of a series job: one table per cell,
// each pair's median as the API's report ?by=revision,patches has it.
async function checkGrid(page) {
	await page.waitForSelector("#grid:not([hidden]) table.grid");
	const rep = await (await page.request.get(`${base}/api/v1/jobs/${want.job_id}/report?by=revision,patches`)).json();
	const tables = await page.$$eval("table.grid", (ts) => ts.map((t) => ({
		cell: t.getAttribute("data-cell"),
		cols: [...t.querySelectorAll("thead th")].slice(1).map((th) => th.innerText),
		rows: [...t.querySelectorAll("tbody tr")].map((tr) => ({ a: tr.getAttribute("data-revision"),
			tds: [...tr.querySelectorAll("td")].map((td) => ({ b: td.getAttribute("data-patches"),
				median: (td.querySelector(".median") || td).innerText.trim() })) })),
	})));
	check(tables.length === rep.cells.length && tables.every((t) => t.cols.join("|") === "none|2/3" &&
		t.rows.map((r) => r.a).join("|") === "base|v6"),
		`the grid: ${tables.length} tables, revisions ${tables[0].rows.map((r) => r.a).join(", ")} x patches ${tables[0].cols.join(", ")}`);
	const shown = [];
	for (const [k, c] of rep.cells.entries())
		for (const r of tables[k].rows)
			for (const td of r.tds) {
				const g = c.groups.find((x) => x.a === r.a && x.b === td.b);
				const wantText = g && g.n ? (+g.median).toFixed(1) + "s" : "–";
				check(td.median === wantText, `grid ${c.cell}: ${r.a} x ${td.b} shows ${td.median} (want ${wantText})`);
				shown.push(td.median);
			}
	check(shown.includes("52.1s") && shown.includes("1.2s"), "the grid has the fixture's base and v6 2/3 medians");
}

(async () => {
	const profile = fs.mkdtempSync(path.join(outdir, "profile-"));
	// playwright passes the fresh profile as --user-data-dir
	const ctx = await chromium.launchPersistentContext(profile, {
		executablePath: "/usr/bin/chromium",
		headless: true,
		viewport: { width: 1300, height: 1000 },
		args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync"],
	});
	let failed = false;
	try {
		await ctx.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
		const page = await ctx.newPage();
		const errors = [];
		page.on("pageerror", (e) => errors.push(e.message));
		page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
		page.on("response", (r) => { if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`); });

		// 1. the jobs list shows the job
		await page.goto(base + "/");
		await page.waitForSelector("#jobs-table");
		const row = page.locator(`tr[data-job-id="${want.job_id}"]`);
		check(await row.count() === 1, "the jobs list has a row for the fixture job");
		const rowText = await row.innerText();
		check(rowText.includes(want.job), `the row names the job '${want.job}'`);
		check(rowText.includes(`${want.runs}/${want.runs}`), `the row says ${want.runs}/${want.runs} runs done`);
		// issue 35 item 5: the failed count, the report's change and p, started (the
		// columns: id name kind status variants runs failed change p started headline)
		{
			const api = (await (await page.request.get(`${base}/api/v1/jobs`)).json()).jobs
				.find((x) => x.id === want.job_id);
			const cells = await row.locator("td").allInnerTexts();
			const p = !api.change ? "–" : api.change.p < 0.001 ? "< 0.001" : api.change.p.toFixed(3);
			check(cells[6] === String(api.runs_failed), `the row's failed column is ${api.runs_failed}: '${cells[6]}'`);
			check(cells[8] === p, `the row's p column is the API's headline p ${p}: '${cells[8]}'`);
			check(!api.change || /^[+-]?\d+\.\d%/.test(cells[7]), `the row's change column is a percentage: '${cells[7]}'`);
			check(cells[9] !== "not started" && cells[9] === (api.started_at || "–"),
				`the row's started column is the API's started_at '${api.started_at}': '${cells[9]}'`);
			check(api.runs_failed > 0 || cells[3] === api.status, `the row's badge is '${api.status}': '${cells[3]}'`);
		}
		// a done job whose runs were all skipped has no result (job 11)
		{
			const badge = (await page.locator('tr[data-job-id="11"] td').allInnerTexts())[3] || "";
			check(badge.startsWith("no result") && badge.includes("2 not run"),
				`the all-skipped job's badge says it has no result: '${badge}'`);
		}
		await page.screenshot({ path: path.join(outdir, "jobs.png"), fullPage: true });

		// 2. the comparison page: the table with the fixture's numbers, one dot per run
		await row.locator("a.job-link").click();
		await page.waitForSelector("table.stats");
		await page.waitForFunction(() => document.querySelectorAll(".curve canvas").length > 0);
		const apiText = await (await page.request.get(`${base}/api/v1/jobs/${want.job_id}/report?format=text`)).text();
		const shown = await page.locator("#report-text").textContent();
		check(shown === apiText, "the cover-letter block is exactly the report's text");
		const cliText = execFileSync(want.kcanary, ["report", String(want.job_id)],
			{ env: process.env }).toString();
		check(apiText === cliText, "the API's text report is byte-for-byte `kcanary report`");
		check(await page.locator("#rootfs-mark").isHidden(), "a job on the initramfs has no rootfs mark");
		const stats = await page.locator("#stats").innerText();
		for (const n of want.numbers)
			check(stats.includes(n), `the statistics table shows ${n}`);
		check(/cannot reach p < 0.05/.test(stats), "the plain-language line says 3 against 3 cannot reach p < 0.05");
		// a curve among the 12 is named by pointing at it
		await page.locator(".curve .u-over").hover();
		await page.waitForFunction(() => /^run \d+ /.test((document.querySelector(".curve .readout") || {}).textContent || ""));
		const ro = await page.locator(".curve .readout").innerText();
		check(/^run \d+ \+? ?[^:]+: [\d.]+s at t = [\d.]+s$/.test(ro), `pointing at the curves names one: '${ro}'`);
		// and zoomed by dragging across them (uPlot), reset by a double click
		/* uPlot draws its axes on the canvas: compare what it drew */
		const xTicks = () => page.$eval(".curve canvas", (c) => c.toDataURL());
		const t0 = await xTicks(), ob = await page.locator(".curve .u-over").boundingBox();
		await page.mouse.move(ob.x + ob.width * 0.2, ob.y + ob.height / 2);
		await page.mouse.down();
		await page.mouse.move(ob.x + ob.width * 0.45, ob.y + ob.height / 2, { steps: 5 });
		await page.mouse.up();
		const t1 = await xTicks();
		await page.locator(".curve .u-over").dblclick();
		const t2 = await xTicks();
		check(t1 !== t0 && t2 === t0, `dragging across the curves zooms in, a double click resets (canvas PNG of ${t0.length} -> ${t1.length} -> ${t2.length} bytes)`);
		check(/lower is better/.test(await page.locator("#meta").innerText()), "the metric's direction is shown");
		// where the runs' time went (issue 19 item 5): the report footer's line
		const ovLine = (await page.locator("#overhead").innerText()).trim();
		check(ovLine === want.overhead, `the job's overhead line is shown: '${ovLine}'`);
		check(cliText.replace(/\n +/g, " ").includes(want.overhead), "the report's footer says the same overhead");
		const dots = await page.locator("svg.strip circle.run-dot").count();
		check(dots === want.runs, `the strip plot has one dot per run (${dots} of ${want.runs})`);
		await checkStripColumns(page, want.job_id, "by variant", want.strip_medians.variant);
		await checkPlotHover(page, "by variant");
		// the variant axis overlays like any other: one chart, a colour per variant
		await page.waitForSelector('.curve[data-axis="variant"] canvas');
		const curves = await page.locator(".curve canvas").count();
		const vlegend = await page.locator('.curve[data-axis="variant"] .legend-item').allInnerTexts();
		check(curves === 1 && vlegend.length === want.variants,
			`every run's curve on one chart with a legend of the ${want.variants} variants (${curves} charts: ${vlegend.join(", ")})`);
		const vBlue = await colouredPixels(page, ".curve canvas", [0x00, 0x72, 0xb2]);
		const vOrange = await colouredPixels(page, ".curve canvas", [0xd5, 0x5e, 0x00]);
		const vGreen = await colouredPixels(page, ".curve canvas", [0x00, 0x9e, 0x73]);
		check(vBlue > 100 && vOrange > 100 && vGreen === 0,
			`one colour per variant on the chart (${vBlue} base, ${vOrange} + v6 2/3, ${vGreen} of a third colour)`);
		await checkEcdf(page, want.variants, "variant");
		await checkRuns(page, "variant");
		check(await page.locator("#lab").isHidden() &&
			await page.locator("table.stats th.p-head").first().innerText() === "p (Mann-Whitney U)",
			"a job on one host shows no per-host progress, and its p is Mann-Whitney's");
		await checkExport(page, "variant", "cell,variant,repeat,run_id,status,metric,value,derived");
		await checkGrid(page);
		await page.locator("#copy").click();
		await page.waitForSelector("#copied:has-text('copied')");
		const clip = await page.evaluate(() => navigator.clipboard.readText());
		check(clip === cliText, "'copy as text' puts exactly `kcanary report`'s text on the clipboard");
		check(!/\bnull\b|\bundefined\b|NaN/.test(await page.locator("main").innerText()),
			"no 'null', 'undefined' or 'NaN' on the comparison page");
		await page.screenshot({ path: path.join(outdir, "job.png"), fullPage: true });

		// filters: one matrix dimension narrows the dots
		await page.selectOption(`select[data-dim="${want.filter.dim}"]`, want.filter.value);
		const fdots = await page.locator("svg.strip circle.run-dot").count();
		check(fdots === want.filter.runs, `filter ${want.filter.dim}=${want.filter.value} leaves ${fdots} dots (want ${want.filter.runs})`);
		const tables = await page.locator("table.stats").count();
		check(tables === 1, `the filter leaves one statistics table (${tables})`);
		await page.screenshot({ path: path.join(outdir, "job-filtered.png"), fullPage: true });

		// the axis picker: compare along fs instead of the variants; the
		// table, the cover letter and the dots follow, and the URL keeps it
		await page.goto(`${base}/job.html?id=${want.job_id}`);
		await page.waitForSelector("#axis-select");
		await page.waitForSelector("table.stats");
		await page.selectOption("#axis-select", "fs");
		await page.waitForFunction(() => document.querySelector("#report-text").textContent.includes("fs=ext4"));
		await page.waitForSelector("table.stats");
		check(new URL(page.url()).searchParams.get("by") === "fs", `the URL keeps the axis (${page.url()})`);
		const byText = execFileSync(want.kcanary, ["report", String(want.job_id), "--by", "fs"],
			{ env: process.env }).toString();
		check(await page.locator("#report-text").textContent() === byText,
			"the cover-letter block is exactly `kcanary report JOB --by fs`");
		const legend = await page.locator("#strip-legend .legend-item").allInnerTexts();
		check(legend.join("|") === "fs=ext4|fs=xfs", `the strip plot's legend names the axis values (${legend.join(", ")})`);
		const fills = await page.$$eval("svg.strip circle.run-dot", (cs) => cs.map((c) =>
			c.getAttribute("data-axis-value") + " " + c.getAttribute("fill")));
		const byValue = {};
		for (const f of fills) {
			const [v, colour] = f.split(" ");
			(byValue[v] = byValue[v] || new Set()).add(colour);
		}
		check(fills.length === want.runs && Object.keys(byValue).join(",") === "ext4,xfs" &&
			byValue.ext4.size === 1 && byValue.xfs.size === 1 &&
			[...byValue.ext4][0] !== [...byValue.xfs][0],
			`one dot per run (${fills.length}), each coloured by its fs, one colour per value`);
		await checkStripColumns(page, want.job_id, "by fs", want.strip_medians.fs);
		check(await page.locator(`#strip-legend .legend-item[data-axis-value="xfs"] .swatch`)
			.evaluate((e) => e.style.background) === "rgb(213, 94, 0)", "the legend's colour is the xfs dots' colour");
		const head = await page.locator("table.stats thead th").first().innerText();
		const rowsBy = await page.locator("table.stats tbody tr td:first-child").allInnerTexts();
		check(head === "fs" && rowsBy.some((t) => t.includes("fs=ext4")) && rowsBy.some((t) => t.includes("fs=xfs")),
			`the statistics compare fs=ext4 with fs=xfs (${rowsBy.join(", ")})`);
		const axisStats = await page.locator("#stats").innerText();
		check(/base: ?|\(base|base/.test(axisStats) && await page.locator("table.stats").count() === 2,
			"one table per variant, the variant now a cell");
		await page.waitForFunction(() => document.querySelectorAll(".curve canvas").length === 1);
		const cxfs = await page.locator('.curve[data-axis="fs"] h3').innerText();
		check(cxfs === `${want.runs} runs, coloured by fs`, `every run's curve on one chart, coloured by fs ('${cxfs}')`);
		const orange = await colouredPixels(page, ".curve canvas", [0xd5, 0x5e, 0x00]);
		const blueC = await colouredPixels(page, ".curve canvas", [0x00, 0x72, 0xb2]);
		check(orange > 100 && blueC > 100, `the chart has curves of both colours (${blueC} ext4, ${orange} xfs pixels)`);
		await checkEcdf(page, 2, "fs");
		await checkRuns(page, "fs");
		await checkExport(page, "fs", "cell,variant,repeat,run_id,status,metric,value,derived,fs");

		await page.screenshot({ path: path.join(outdir, "job-by-fs.png"), fullPage: true });
		// a part of the variant as the axis: the revision (base, v6)
		await page.selectOption("#axis-select", "revision");
		await page.waitForFunction(() => document.querySelector("#report-text").textContent.includes("  v6 "));
		const revLegend = await page.locator("#strip-legend .legend-item").allInnerTexts();
		check(revLegend.join("|") === "base|v6" && new URL(page.url()).searchParams.get("by") === "revision",
			`--by revision in the page: legend ${revLegend.join(", ")}`);
		check(await page.locator("#report-text").textContent() === execFileSync(want.kcanary,
			["report", String(want.job_id), "--by", "revision"], { env: process.env }).toString(),
			"the cover-letter block is exactly `kcanary report JOB --by revision`");
		await page.goto(`${base}/job.html?id=${want.job_id}&by=fs`);
		await page.waitForFunction(() => document.querySelector("#report-text").textContent.includes("fs=ext4"));
		check(await page.locator("#axis-select").inputValue() === "fs" &&
			await page.locator("#strip-legend .legend-item").count() === 2,
			"a linked view (?by=fs) opens on that axis");

		// a job's stored axis (compare --by, [job] by): the page opened
		// without ?by= compares along it, as `kcanary report JOB` does; the
		// picker offers the whole-sysctl axis beside the one sysctl, and
		// the variants need an explicit ?by=variant then
		{
			const sb = want.stored_by;
			const report = (...a) => execFileSync(want.kcanary, ["report", String(sb.job_id), ...a],
				{ env: process.env }).toString();
			const th = () => page.locator("table.stats thead th").first().innerText();
			await page.goto(`${base}/job.html?id=${sb.job_id}`);
			await page.waitForSelector("#axis-select");
			await page.waitForSelector("table.stats");
			const picked = await page.locator("#axis-select").inputValue();
			check(picked === sb.by, `without ?by= the picker shows the job's stored axis '${sb.by}' (${picked})`);
			const opts = await page.locator("#axis-select option").allInnerTexts();
			check(opts.includes("sysctl") && opts.includes(sb.by),
				`the picker offers both 'sysctl' and '${sb.by}' (${opts.join(", ")})`);
			check(await th() === sb.by, `the statistics compare along ${sb.by} ('${await th()}')`);
			const lg = await page.locator("#strip-legend .legend-item").allInnerTexts();
			check(lg.join("|") === sb.legend, `the strip plot is along the stored axis (${lg.join(", ")})`);
			await checkCurveColours(page, `job ${sb.job_id} along ${sb.by}`);
			check(await page.locator("#report-text").textContent() === report(),
				"the cover letter is exactly `kcanary report JOB` (its stored axis)");
			const mark = await page.locator("#rootfs-mark").innerText();
			check(await page.locator("#rootfs-mark").isVisible() && mark === sb.mark,
				`a --rootfs host job is marked not reproducible ('${mark}')`);
			check(report().includes("rootfs: host (not reproducible)"), "so is its text report");
			await page.selectOption("#axis-select", "sysctl");
			await page.waitForFunction(() => (document.querySelector("table.stats thead th") || {}).textContent === "sysctl");
			check(new URL(page.url()).searchParams.get("by") === "sysctl", `the URL keeps by=sysctl (${page.url()})`);
			check(await page.locator("#report-text").textContent() === report("--by", "sysctl"),
				"along sysctl the cover letter is exactly `kcanary report JOB --by sysctl`");
			const lgs = await page.locator("#strip-legend .legend-item").allInnerTexts();
			check(lgs.join("|") === sb.sysctl_legend, `along sysctl the legend names every sysctl (${lgs.join(", ")})`);
			const sdots = await page.locator("svg.strip circle.run-dot").count();
			check(sdots === sb.runs, `along sysctl one dot per run (${sdots})`);
			await checkStripColumns(page, sb.job_id, `job ${sb.job_id} along sysctl`, null);
			await page.selectOption("#axis-select", "variant");
			await page.waitForFunction(() => (document.querySelector("table.stats thead th") || {}).textContent === "variant");
			check(new URL(page.url()).searchParams.get("by") === "variant", `the URL asks for the variants (${page.url()})`);
			check(await page.locator("#report-text").textContent() === report("--by", "variant"),
				"along the variants the cover letter is `kcanary report JOB --by variant`");
			await page.screenshot({ path: path.join(outdir, "job-stored-by.png"), fullPage: true });
		}

		// a job whose runs span two lab hosts: the runs table names each
		// run's host, and each host's progress is shown, counted here from
		// the API's runs; the cover letter is stratified by host
		{
			const lj = want.lab;
			await page.goto(`${base}/job.html?id=${lj.job_id}`);
			await page.waitForSelector("#runs-table");
			await page.waitForSelector("#lab-hosts");
			const api = await (await page.request.get(`${base}/api/v1/jobs/${lj.job_id}/runs`)).json();
			const hostCol = await page.$$eval("#runs-table tbody tr", (trs) => trs.map((tr) =>
				[+tr.getAttribute("data-run-id"), tr.querySelector("td.host").innerText.trim()]));
			const head = await page.locator("#runs-table thead th").allInnerTexts();
			check(head[4] === "host" && hostCol.length === api.runs.length &&
				hostCol.every(([rid, h], i) => rid === api.runs[i].id && h === api.runs[i].lab_host),
				`the runs table's host column names each run's lab host (${hostCol.map((x) => x[1]).join(" ")})`);
			check(new Set(hostCol.map((x) => x[1])).size === 2 && hostCol.every((x) => lj.hosts.includes(x[1])),
				`the runs ran on ${lj.hosts.join(" and ")}`);
			const rows = await page.$$eval("#lab-hosts tbody tr", (trs) => trs.map((tr) => ({
				host: tr.getAttribute("data-host"),
				cells: [...tr.querySelectorAll("td")].map((td) => td.innerText.trim()) })));
			check(rows.map((r) => r.host).join(",") === lj.hosts.join(","),
				`one progress row per host, in order of first run (${rows.map((r) => r.host).join(", ")})`);
			for (const r of rows) {
				const mine = api.runs.filter((x) => x.lab_host === r.host);
				const running = mine.filter((x) => x.status === "running").length;
				const done = mine.length - running - mine.filter((x) => x.status === "pending").length;
				const w = lj.progress[r.host];
				check(r.cells[3] === String(done) && r.cells[4] === String(running) &&
					r.cells[5] === `${done + running}/${api.runs.length}` &&
					done === w.done && running === w.running && r.cells[1] === w.state && r.cells[2] === w.slots,
					`${r.host}: ${r.cells.join(" | ")} (want ${w.done} done, ${w.running} running, state ${w.state})`);
			}
			const unplaced = await page.locator("#lab-unplaced").innerText();
			check(unplaced.startsWith(`${api.runs.length} runs planned; 0 not placed yet`),
				`the planned runs are counted ('${unplaced.slice(0, 40)}…')`);
			await page.waitForSelector("table.stats");
			const ph = await page.locator("table.stats th.p-head").innerText();
			check(ph === "p (van Elteren, by lab host)", `the statistics name the stratified test ('${ph}')`);
			const text = await page.locator("#report-text").textContent();
			check(text.includes(lj.p_line) && text === execFileSync(want.kcanary, ["report", String(lj.job_id)],
				{ env: process.env }).toString(), `the cover letter says '${lj.p_line}'`);
			await page.screenshot({ path: path.join(outdir, "job-lab.png"), fullPage: true });
		}

		// a --repeat auto job the sequential test decided: the plain line
		// is its stop line, not what the fixed-sample p cannot reach
		{
			const sj = want.sequential;
			await page.goto(`${base}/job.html?id=${sj.job_id}`);
			await page.waitForSelector("table.stats");
			const plain = await page.locator("#stats p.plain").allInnerTexts();
			check(plain.length === 1 && plain[0] === sj.line, `the decided comparison says '${plain[0]}'`);
			// lower lag is better: the decided difference is an improvement, in the good colour
			const seqColour = await page.locator("#stats p.plain").evaluate((e) => getComputedStyle(e).color);
			check(seqColour === "rgb(27, 110, 45)", `the improvement is in the good colour (${seqColour})`);
			check(!/cannot reach p < 0.05/.test(await page.locator("#stats").innerText()),
				"a decided sequential job does not say 3 against 3 cannot reach p < 0.05");
		}

		// a significant regression reads as worse, in the bad colour (not green)
		{
			const rj = want.regression;
			await page.goto(`${base}/job.html?id=${rj.job_id}`);
			await page.waitForSelector("table.stats");
			const p = page.locator("#stats p.plain");
			const text = await p.innerText();
			check(text.startsWith(rj.start) && text.includes(rj.p), `the regression's line says '${text}'`);
			const colour = await p.evaluate((e) => getComputedStyle(e).color);
			check(colour === "rgb(179, 38, 30)", `a regression is in the bad colour (${colour})`);
			// its variants are a base and a kernel, not a series' revisions: no revision x patch grid
			await page.waitForFunction(() => !document.querySelector("#axis-select") ||
				document.querySelectorAll("#axis-select option").length > 0);
			const opts = await page.locator("#axis-select option").allInnerTexts();
			check(await page.locator("#grid").isHidden() && !opts.includes("revision"),
				`a job that is not a series job has no revision x patch grid (axes: ${opts.join(", ") || "variant only"})`);
		}

		// an unknown job or run (issue 35 item 3): the page says there is
		// none, with the API's 404 text, and nothing stays on "loading…"
		for (const [kind, route, nid] of [["job", "jobs", 99], ["run", "runs", 99999]]) {
			const nerr = errors.length;
			const res = await page.request.get(`${base}/api/v1/${route}/${nid}`);
			const why = (await res.json()).error;
			await page.goto(`${base}/${kind}.html?id=${nid}`);
			await page.waitForFunction(() => !document.querySelector("main").innerText.includes("loading…"),
				null, { timeout: 5000 }).catch(() => {});
			const h1 = await page.locator("h1").innerText();
			const text = await page.locator("main").innerText();
			check(res.status() === 404 && h1 === `no ${kind} ${nid}` && text.includes(why) && !text.includes("loading…"),
				`${kind}.html?id=${nid} says '${h1}' and the API's '${why}', not loading… ('${text.replace(/\s+/g, " ").slice(0, 80)}')`);
			// the page's own 404 answers are expected here, not errors
			const extra = errors.splice(nerr);
			check(extra.every((x) => /404/.test(x)), `only the expected 404s (${extra.length})`);
		}

		// 3. the run page draws a curve
		await page.goto(`${base}/run.html?id=${want.run_id}`);
		await page.waitForSelector("#curve canvas");
		await page.waitForFunction(() => document.querySelector("#console").textContent !== "loading…");
		const blue = await colouredPixels(page, "#curve canvas", [0x00, 0x72, 0xb2]);
		check(blue > 200, `the run's curve is drawn (${blue} curve-coloured pixels)`);
		const probes = await page.locator("#probes canvas").count();
		check(probes === 1, "the probe counts are plotted");
		const phases = await page.locator("#curve").innerText();
		check(/rmdir_old at 30\.0s/.test(phases), "the phase markers are listed");
		check((await page.locator("#console").textContent()).includes(want.console),
			"the console log is shown");
		check(/lower is better/.test(await page.locator("#summary").innerText()),
			"the summary shows each metric's direction");
		check(!/\bnull\b|\bundefined\b|NaN/.test(await page.locator("main").innerText()),
			"no 'null', 'undefined' or 'NaN' on the run page");
		await page.screenshot({ path: path.join(outdir, "run.png"), fullPage: true });

		// a run with six probe series: the probe chart's legend names each one
		// (it was dropped above four series), wrapped within the chart's width
		{
			const pr = want.probes;
			await page.goto(`${base}/run.html?id=${pr.run_id}`);
			await page.waitForSelector("#probes canvas");
			const names = await page.$$eval("#probes .u-legend .u-series .u-label", (ls) => ls.map((l) => l.textContent));
			const fits = await page.$eval("#probes .uplot", (u) => {
				const box = u.getBoundingClientRect();
				return [...u.querySelectorAll(".u-legend .u-series")].every((s) => {
					const r = s.getBoundingClientRect();
					return r.width > 0 && r.left >= box.left - 1 && r.right <= box.right + 1;
				});
			});
			check(names.slice(1).join("|") === pr.series.join("|") && fits,
				`the probe chart's legend names all ${pr.series.length} series within the chart (${names.slice(1).join(", ")})`);
			await page.screenshot({ path: path.join(outdir, "run-probes.png"), fullPage: true });
		}

		// a submitted job nothing has run yet: listed, and its page says so
		await page.goto(base + "/");
		await page.waitForSelector(`tr[data-job-id="${want.pending_id}"]`);
		check(/submitted[\s\S]*pending[\s\S]*0\/4/.test(await page.locator(`tr[data-job-id="${want.pending_id}"]`).innerText()),
			"the submitted job is listed as pending with 0/4 runs done");
		await page.goto(`${base}/job.html?id=${want.pending_id}`);
		await page.waitForFunction(() => document.querySelector("#stats").textContent.length > 0 &&
			!document.querySelector("#stats").textContent.includes("building the report"));
		check(/queued/.test(await page.locator("#meta").innerText()), "its page says it is queued");
		check(await page.locator("svg.strip circle.run-dot").count() === 0, "and shows no dots");
		await page.screenshot({ path: path.join(outdir, "job-pending.png"), fullPage: true });

		// bisections: the answer, the check, the totals, every tested candidate
		for (const bj of want.bisect)
			await checkBisect(page, bj);

		// 4. live: a running job's page picks up a new run without reload
		execFileSync("sqlite3", [want.db, `UPDATE jobs SET status = 'running' WHERE id = ${want.job_id}`]);
		await page.goto(`${base}/job.html?id=${want.job_id}`);
		await page.waitForSelector("svg.strip circle.run-dot");
		// the badge is set once the whole load (report and grid too) is
		// done, after the dots: wait for it rather than race it
		await page.waitForFunction(() => /live/.test(document.querySelector("#live").textContent),
			null, { timeout: 15000 }).catch(() => {});
		check(/live/.test(await page.locator("#live").innerText()), "a running job's page says it is live");
		const before = await page.locator("svg.strip circle.run-dot").count();
		execFileSync(want.live.cmd[0], want.live.cmd.slice(1), { env: process.env, stdio: "ignore" });
		await page.waitForFunction((n) => document.querySelectorAll("svg.strip circle.run-dot").length > n,
			before, { timeout: 15000 });
		check(true, `the page grew from ${before} dots without a reload`);
		await page.screenshot({ path: path.join(outdir, "job-live.png"), fullPage: true });

		check(errors.length === 0, "no JavaScript errors" + (errors.length ? ": " + errors.join("; ") : ""));
	} catch (e) {
		failed = true;
		if (!process.exitCode)
			console.error("FAIL: " + e.message);
	} finally {
		await ctx.close();
		fs.rmSync(profile, { recursive: true, force: true });
	}
	// no process.exit(): it can cut off stdout when that is a pipe
	process.exitCode = failed ? 1 : 0;
})();
