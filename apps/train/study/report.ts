/**
 * `report.html` of a study: the claim, the verdict and the rule it came from, the comparisons
 * with their per-seed differences and intervals, every arm's numbers, and plots where each arm
 * is its seed mean with a band from the lowest to the highest seed.
 *
 * Design decisions: as the run report (`report/report.ts`), one self-contained page, inline CSS
 * and SVG from `report/plot.ts`, a Content-Security-Policy that forbids any load, every text
 * escaped, no timestamp. Seeds are aligned by step; a step some seed lacks is averaged over the
 * seeds that have it.
 *
 * @module
 */

import { writeFileAtomic } from "../run/atomic.ts";
import { escapeXml, linePlot, type Series } from "../report/plot.ts";
import { pageHead } from "../report/report.ts";
import type { Study } from "./studies.ts";
import type { ArmCurves, StudyResult } from "./study.ts";

const CSS = `
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1040px;color:#222;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 10px;border-bottom:1px solid #ddd;padding-bottom:4px}
.muted{color:#666;font-size:13px}
.verdict{font-size:18px;font-weight:700}
.warn{background:#fff4d6;border:1px solid #e8c66a;padding:8px;border-radius:4px}
table{border-collapse:collapse;font-size:13px}
td,th{padding:3px 12px 3px 0;border-bottom:1px solid #eee;text-align:left;font-variant-numeric:tabular-nums}
.plots{display:grid;grid-template-columns:repeat(auto-fill,minmax(480px,1fr));gap:12px}
.plots svg{border:1px solid #eee;border-radius:4px;max-width:100%;height:auto}
`;

/**
 * Seed mean per x, with the band from the lowest to the highest seed.
 *
 * @example Usage
 * ```ts
 * import { seedBand } from "./report.ts";
 * import assert from "node:assert/strict";
 * const s = seedBand("arm", [[[0, 1], [1, 3]], [[0, 3], [1, null]]]);
 * assert.deepEqual(s.points, [[0, 2], [1, 3]]);
 * assert.deepEqual(s.band, [[0, 1, 3], [1, 3, 3]]);
 * ```
 */
export function seedBand(
  name: string,
  perSeed: readonly (readonly (readonly [number, number | null])[])[],
): Series {
  const byX = new Map<number, number[]>();
  for (const points of perSeed) {
    for (const [x, y] of points) {
      if (y === null || !Number.isFinite(y)) continue;
      const list = byX.get(x) ?? [];
      list.push(y);
      byX.set(x, list);
    }
  }
  const xs = [...byX.keys()].sort((a, b) => a - b);
  return {
    name,
    points: xs.map((x) => {
      const v = byX.get(x)!;
      return [x, v.reduce((a, b) => a + b, 0) / v.length] as const;
    }),
    band: xs.map((x) => {
      const v = byX.get(x)!;
      return [x, Math.min(...v), Math.max(...v)] as const;
    }),
  };
}

const fmt = (
  x: number,
) => (Number.isFinite(x) ? (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(3)) : "n/a");

/**
 * The study page (see the module doc).
 *
 * @example Usage
 * ```ts ignore
 * import { renderStudyReport } from "./report.ts";
 * const html = renderStudyReport(study, result, curves);
 * ```
 */
export function renderStudyReport(
  study: Study,
  result: StudyResult,
  curves: Record<string, ArmCurves>,
): string {
  const arms = study.arms.filter((a) => a.train !== false).map((a) => a.name);
  const plots: string[] = [
    linePlot({
      title: "held-out pass@1",
      series: arms.map((a) => seedBand(a, curves[a]!.passAt1)),
      emptyText: "no evaluations",
    }),
    ...study.plots.map((key) =>
      linePlot({
        title: key,
        series: arms.map((a) => seedBand(a, curves[a]!.metrics[key] ?? [])),
      })
    ),
  ];
  if (study.passK !== undefined) {
    plots.push(linePlot({
      title: "pass@k of the final policies (x: log2 k)",
      xLabel: "log2 k",
      series: study.arms.map((a) =>
        seedBand(
          a.name,
          (curves[a.name]!.passK ?? []).map((c) => c.map(([k, p]) => [Math.log2(k), p] as const)),
        )
      ),
    }));
  }
  const comparisons = result.comparisons.map((c) =>
    `<tr><td>${escapeXml(c.metric)}</td><td>${escapeXml(c.b)} − ${escapeXml(c.a)}</td><td>${
      escapeXml(c.claim + (c.claim === ">=" ? ` −${c.margin ?? 0}` : " 0"))
    }</td><td>${c.differences.map(fmt).join(", ")}</td><td>${fmt(c.interval.mean)} [${
      fmt(c.interval.low)
    }, ${fmt(c.interval.high)}]</td><td>${c.outcome}</td></tr>`
  ).join("");
  const keys = [...new Set(Object.values(result.numbers).flatMap((n) => Object.keys(n)))].sort();
  const numbers = keys.map((k) =>
    `<tr><td>${escapeXml(k)}</td>${
      result.arms.map((a) => {
        const v = result.numbers[a]?.[k];
        if (v === undefined) return "<td></td>";
        const mean = v.reduce((x, y) => x + y, 0) / v.length;
        return `<td title="${escapeXml(v.map(fmt).join(", "))}">${fmt(mean)}</td>`;
      }).join("")
    }</tr>`
  ).join("");
  const name = escapeXml(study.name);
  return `${pageHead(`rlvr study ${name}`, CSS)}
<h1>rlvr study ${name}</h1>
<p>${escapeXml(study.claim)}</p>
<p class="muted">${escapeXml(study.source)}</p>
${
    result.quick
      ? `<p class="warn">A --quick run: one training step on tiny batches, to test the pipeline. Its verdict means nothing.</p>`
      : ""
  }
<p class="verdict">Verdict: ${escapeXml(result.verdict)}</p>
<p class="muted">${escapeXml(result.rule)}</p>
<p class="muted">Seeds ${result.seeds.join(", ")}; ${result.wallS.toFixed(0)} s; <code>${
    escapeXml(result.command)
  }</code></p>
<h2>Comparisons</h2>
<table><tr><th>metric</th><th>difference</th><th>claim</th><th>per seed</th><th>mean [95% CI]</th><th>outcome</th></tr>${comparisons}</table>
<h2>Curves (seed mean, band: lowest to highest seed)</h2>
<div class="plots">
${plots.join("\n")}
</div>
<h2>Numbers (seed mean; hover for the seeds)</h2>
<table><tr><th></th>${
    result.arms.map((a) => `<th>${escapeXml(a)}</th>`).join("")
  }</tr>${numbers}</table>
<h2>Scale</h2>
<p>${escapeXml(result.scaleNote)}</p>
</body>
</html>
`;
}

/** Writes {@link renderStudyReport} to `path` atomically. */
export async function writeStudyReport(
  path: string,
  study: Study,
  result: StudyResult,
  curves: Record<string, ArmCurves>,
): Promise<void> {
  await writeFileAtomic(path, renderStudyReport(study, result, curves));
}
