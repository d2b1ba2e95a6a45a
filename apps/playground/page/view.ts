/**
 * What the playground page shows, as markup and text computed from the run's records: the five
 * live plots, the before/after table of held-out completions and the progress line. The page's
 * entry (`app.ts`) puts them into the document; nothing here touches it, so it runs in Deno too.
 *
 * @module
 */

import type { EvalRecord, StepMetrics } from "../../train/run/records.ts";
import { type PlotSeries, plotSvg } from "./plot.ts";
import type { BeforeAfterRow } from "./samples.ts";
import { escapeXml } from "./plot.ts";

/** A plot of the page: the element id it goes into and its markup. */
export interface Panel {
  /** The id of its container (`plot-reward`, ...). */
  id: string;
  /** The SVG markup. */
  svg: string;
}

/** The metrics the page plots per step: key, title, colour. */
export const STEP_PLOTS: readonly { id: string; key: string; title: string; color: string }[] =
  Object.freeze([
    { id: "plot-reward", key: "reward/mean", title: "reward (mean per step)", color: "#1f77b4" },
    { id: "plot-entropy", key: "entropy", title: "entropy", color: "#9467bd" },
    {
      id: "plot-length",
      key: "response_length/mean",
      title: "response length (tokens)",
      color: "#8c564b",
    },
    { id: "plot-loss", key: "pg_loss", title: "policy loss (pg_loss)", color: "#d62728" },
  ]);

function series(
  records: readonly StepMetrics[],
  key: string,
): (readonly [number, number | null])[] {
  return records.map((r) => [r.step, typeof r[key] === "number" ? r[key] as number : null]);
}

/**
 * The page's plots for the records so far: reward, held-out pass@1 (and pass@k) at each
 * evaluation, entropy, response length, policy loss; the x axis spans the run's steps.
 *
 * @param records The step records.
 * @param evals The evaluation records.
 * @param steps `trainer.steps` (the x axis' end).
 * @returns One panel per plot, held-out pass@1 second.
 *
 * @example Usage
 * ```ts
 * import { plotPanels } from "./view.ts";
 * import assert from "node:assert/strict";
 * const panels = plotPanels(
 *   [{ step: 1, "reward/mean": 0.5, entropy: 0.4, "response_length/mean": 3, pg_loss: 0 }],
 *   [{ step: 0, "pass@1": 0.3, "pass@k": 0.8, k: 8, n: 8 }],
 *   30,
 * );
 * assert.deepEqual(panels.map((p) => p.id), [
 *   "plot-reward", "plot-pass", "plot-entropy", "plot-length", "plot-loss",
 * ]);
 * assert.match(panels[1]!.svg, /pass@1/);
 * ```
 */
export function plotPanels(
  records: readonly StepMetrics[],
  evals: readonly EvalRecord[],
  steps: number,
): Panel[] {
  const xDomain = [0, Math.max(1, steps)] as const;
  const panels = STEP_PLOTS.map((p) => ({
    id: p.id,
    svg: plotSvg([{ label: p.key, color: p.color, points: series(records, p.key) }], {
      title: p.title,
      xDomain,
    }),
  }));
  const k = evals.at(-1)?.k;
  const pass: PlotSeries[] = [
    {
      label: "pass@1",
      color: "#2ca02c",
      dots: true,
      points: evals.map((e) => [e.step, e["pass@1"]] as const),
    },
    {
      label: `pass@${k ?? "k"}`,
      color: "#98df8a",
      dots: true,
      points: evals.map((e) => [e.step, e["pass@k"]] as const),
    },
  ];
  panels.splice(1, 0, {
    id: "plot-pass",
    svg: plotSvg(pass, {
      title: "held-out pass@1 and pass@k",
      xDomain,
      yDomain: [0, 1],
      empty: "waiting for the first evaluation",
    }),
  });
  return panels;
}

/**
 * A duration as the page shows it: `12.3 s`, `4 min 05 s`.
 *
 * @param ms Milliseconds.
 * @returns The text.
 *
 * @example Usage
 * ```ts
 * import { formatDuration } from "./view.ts";
 * import assert from "node:assert/strict";
 * assert.equal(formatDuration(12_345), "12.3 s");
 * assert.equal(formatDuration(245_000), "4 min 05 s");
 * ```
 */
export function formatDuration(ms: number): string {
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${String(Math.floor(s - 60 * m)).padStart(2, "0")} s`;
}

/**
 * The progress line: `step 12/30 · 4.1 s · running`.
 *
 * @param p The steps completed, `trainer.steps`, the time spent running and the status.
 * @returns The text.
 *
 * @example Usage
 * ```ts
 * import { progressText } from "./view.ts";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   progressText({ completed: 12, steps: 30, elapsedMs: 4100, status: "running" }),
 *   "step 12/30 · 4.1 s · running",
 * );
 * ```
 */
export function progressText(
  p: { completed: number; steps: number; elapsedMs: number; status: string },
): string {
  return `step ${p.completed}/${p.steps} · ${formatDuration(p.elapsedMs)} · ${p.status}`;
}

function completionCell(c: BeforeAfterRow["before"]): string {
  const ok = c.reward >= 1;
  return `<td class="completion ${ok ? "solved" : "wrong"}"><code>${
    escapeXml(c.completion)
  }</code> <span class="mark">${ok ? "✓" : "✗"}</span></td>`;
}

/**
 * The before/after table's body rows: prompt, answer, the completion at the first evaluation and
 * at the latest one, each marked solved or not.
 *
 * @param rows The rows (`beforeAfter`).
 * @returns `<tr>` markup (empty when there are no rows).
 *
 * @example Usage
 * ```ts
 * import { samplesHtml } from "./view.ts";
 * import assert from "node:assert/strict";
 * const html = samplesHtml([{
 *   problem: 0, prompt: "<|user|>1+1=", answer: "2",
 *   before: { step: 0, completion: "3", reward: 0 }, after: { step: 30, completion: "2", reward: 1 },
 * }]);
 * assert.match(html, /&lt;\|user\|&gt;1\+1=/);
 * assert.match(html, /class="completion solved"><code>2<\/code>/);
 * ```
 */
export function samplesHtml(rows: readonly BeforeAfterRow[]): string {
  return rows.map((r) =>
    `<tr><td class="num">${r.problem}</td><td><code>${escapeXml(r.prompt)}</code></td>` +
    `<td><code>${escapeXml(r.answer ?? "—")}</code></td>${completionCell(r.before)}${
      completionCell(r.after)
    }</tr>`
  ).join("");
}

/**
 * Records as JSON Lines: one `JSON.stringify` per line, each ending with a newline.
 *
 * @param records The records.
 * @returns The text.
 *
 * @example Usage
 * ```ts
 * import { jsonl } from "./view.ts";
 * import assert from "node:assert/strict";
 * assert.equal(jsonl([{ step: 1, "reward/mean": 0.5 }]), '{"step":1,"reward/mean":0.5}\n');
 * ```
 */
export function jsonl(records: readonly unknown[]): string {
  return records.map((r) => JSON.stringify(r) + "\n").join("");
}
