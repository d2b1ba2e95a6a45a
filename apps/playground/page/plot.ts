/**
 * Small line plots for the playground page, drawn as SVG markup: linear scales, round tick
 * values, one polyline per series (a gap where a value is missing), axes with ticks, a title
 * and a legend.
 *
 * Design decisions:
 * - **Markup, not DOM calls**: {@link plotSvg} returns the SVG as a string, so the page sets it
 *   with one `innerHTML` per plot and per step, and the whole module runs (and is tested) in
 *   Deno without a document.
 * - **The y range follows the data** ({@link paddedExtent}): a flat series gets a range around
 *   its value, so a constant reward of 0 is a line in the middle, not a division by zero; a
 *   series may pin the range (`yDomain`, e.g. [0, 1] for pass@1).
 * - Text is escaped (titles and labels come from metric names).
 *
 * @module
 */

/** One line of a plot: its points `[x, y]`, y null where there is no value. */
export interface PlotSeries {
  /** The legend's text. */
  label: string;
  /** A CSS colour. */
  color: string;
  /** The points, x increasing. */
  points: readonly (readonly [number, number | null])[];
  /** Draw a dot at each point (for sparse series such as evaluations; default false). */
  dots?: boolean;
}

/** Options of {@link plotSvg}. */
export interface PlotOptions {
  /** The plot's title. */
  title: string;
  /** Width and height in CSS pixels (default 320×180). */
  width?: number;
  /** Height in CSS pixels. */
  height?: number;
  /** The x range (default: the data's, from 0). */
  xDomain?: readonly [number, number];
  /** The y range (default: the data's, padded). */
  yDomain?: readonly [number, number];
  /** Text shown when there are no points yet (default "waiting for the first step"). */
  empty?: string;
}

/**
 * A linear map from `domain` to `range` (either may be decreasing: a y axis maps up to down);
 * a degenerate domain maps everything to the middle of the range.
 *
 * @param domain The data interval.
 * @param range The pixel interval.
 * @returns The map.
 *
 * @example Usage
 * ```ts
 * import { linearScale } from "./plot.ts";
 * import assert from "node:assert/strict";
 * const y = linearScale([0, 1], [100, 0]); // up is smaller in SVG
 * assert.equal(y(0), 100);
 * assert.equal(y(0.25), 75);
 * assert.equal(linearScale([3, 3], [0, 10])(3), 5);
 * ```
 */
export function linearScale(
  domain: readonly [number, number],
  range: readonly [number, number],
): (x: number) => number {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  if (d1 === d0) return () => (r0 + r1) / 2;
  const k = (r1 - r0) / (d1 - d0);
  return (x) => r0 + (x - d0) * k;
}

/**
 * Round tick values covering `[lo, hi]`: steps of 1, 2 or 5 times a power of ten, about `count`
 * of them, each a multiple of the step, within the interval.
 *
 * @param lo The interval's start.
 * @param hi Its end (>= lo).
 * @param count About how many ticks (default 5).
 * @returns The ticks, increasing.
 *
 * @example Usage
 * ```ts
 * import { niceTicks } from "./plot.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(niceTicks(0, 1), [0, 0.2, 0.4, 0.6, 0.8, 1]);
 * assert.deepEqual(niceTicks(0, 30, 3), [0, 10, 20, 30]);
 * assert.deepEqual(niceTicks(2, 2), [2]);
 * ```
 */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!(Number.isFinite(lo) && Number.isFinite(hi)) || hi < lo) return [];
  if (hi === lo) return [lo];
  const raw = (hi - lo) / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const ticks: number[] = [];
  const first = Math.ceil(lo / step - 1e-9);
  for (let i = first; i * step <= hi + step * 1e-9; i++) {
    // Rounded to the step's decimals, so 0.6000000000000001 is 0.6.
    const decimals = Math.max(0, -Math.floor(Math.log10(step)));
    ticks.push(Number((i * step).toFixed(decimals)));
  }
  return ticks;
}

/**
 * The range of the finite values, padded by `pad` of its width on each side (a flat range gets
 * ±`pad`·max(1, |value|) around its value); [0, 1] when there are none.
 *
 * @param values The values (nulls and non-finite ones skipped).
 * @param pad The padding, as a fraction (default 0.05).
 * @returns `[lo, hi]`, `lo < hi`.
 *
 * @example Usage
 * ```ts
 * import { paddedExtent } from "./plot.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(paddedExtent([0, 10], 0.1), [-1, 11]);
 * assert.deepEqual(paddedExtent([2, 2], 0.5), [1, 3]);
 * assert.deepEqual(paddedExtent([null]), [0, 1]);
 * ```
 */
export function paddedExtent(values: readonly (number | null)[], pad = 0.05): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (v === null || !Number.isFinite(v)) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (lo === Infinity) return [0, 1];
  if (lo === hi) {
    const d = pad * Math.max(1, Math.abs(lo));
    return [lo - d, hi + d];
  }
  const d = (hi - lo) * pad;
  return [lo - d, hi + d];
}

/**
 * Escapes text for SVG/HTML markup.
 *
 * @param text Any text.
 * @returns The text with `&`, `<`, `>`, `"` and `'` escaped.
 *
 * @example Usage
 * ```ts
 * import { escapeXml } from "./plot.ts";
 * import assert from "node:assert/strict";
 * assert.equal(escapeXml('a<b & "c"'), "a&lt;b &amp; &quot;c&quot;");
 * ```
 */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => XML_ENTITIES[c]!);
}

const XML_ENTITIES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

function tickText(v: number): string {
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e4 || a < 1e-3) return v.toExponential(0);
  return String(Number(v.toPrecision(4)));
}

/**
 * One plot as SVG markup: the series as polylines over linear scales (see the module doc), the
 * axes with {@link niceTicks}, the title, and a legend when there are several lines.
 *
 * @param series The lines.
 * @param options Title, size and ranges.
 * @returns The `<svg>` element's markup.
 *
 * @example Usage
 * ```ts
 * import { plotSvg } from "./plot.ts";
 * import assert from "node:assert/strict";
 * const svg = plotSvg([{ label: "reward", color: "#1f77b4", points: [[1, 0.2], [2, 0.4]] }], {
 *   title: "reward/mean",
 * });
 * assert.match(svg, /^<svg [^>]*viewBox="0 0 320 180"/);
 * assert.match(svg, /<polyline [^>]*points="[\d.]+,[\d.]+ [\d.]+,[\d.]+"/);
 * ```
 */
export function plotSvg(series: readonly PlotSeries[], options: PlotOptions): string {
  const width = options.width ?? 320;
  const height = options.height ?? 180;
  const margin = { left: 44, right: 8, top: series.length > 1 ? 32 : 22, bottom: 22 };
  const x0 = margin.left, x1 = width - margin.right;
  const y0 = height - margin.bottom, y1 = margin.top;
  const all = series.flatMap((s) => s.points);
  const xs = all.map(([x]) => x);
  const ys = all.map(([, y]) => y);
  const xDomain = options.xDomain ??
    [Math.min(0, ...xs), Math.max(1, ...xs)] as const;
  const yDomain = options.yDomain ?? paddedExtent(ys);
  const sx = linearScale(xDomain, [x0, x1]);
  const sy = linearScale(yDomain, [y0, y1]);
  const px = (v: number) => sx(v).toFixed(1);
  const py = (v: number) => sy(v).toFixed(1);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" ` +
    `height="${height}" role="img" aria-label="${escapeXml(options.title)}">`,
    `<text x="${x0}" y="14" class="plot-title">${escapeXml(options.title)}</text>`,
    `<line x1="${x0}" y1="${y0}" x2="${x1}" y2="${y0}" class="plot-axis"/>`,
    `<line x1="${x0}" y1="${y0}" x2="${x0}" y2="${y1}" class="plot-axis"/>`,
  ];
  for (const t of niceTicks(yDomain[0], yDomain[1], 4)) {
    parts.push(
      `<line x1="${x0}" y1="${py(t)}" x2="${x1}" y2="${py(t)}" class="plot-grid"/>`,
      `<text x="${x0 - 4}" y="${py(t)}" class="plot-tick plot-tick-y">${tickText(t)}</text>`,
    );
  }
  for (const t of niceTicks(xDomain[0], xDomain[1], 5)) {
    parts.push(
      `<text x="${px(t)}" y="${y0 + 14}" class="plot-tick plot-tick-x">${tickText(t)}</text>`,
    );
  }
  if (all.every(([, y]) => y === null || !Number.isFinite(y))) {
    parts.push(
      `<text x="${(x0 + x1) / 2}" y="${(y0 + y1) / 2}" class="plot-empty">${
        escapeXml(options.empty ?? "waiting for the first step")
      }</text>`,
    );
  }
  if (series.length > 1) {
    // A legend for several lines, right-aligned on its own row under the title.
    let legendX = x1;
    for (const s of [...series].reverse()) {
      parts.push(
        `<text x="${legendX}" y="${margin.top - 2}" class="plot-legend" text-anchor="end" ` +
          `fill="${escapeXml(s.color)}">${escapeXml(s.label)}</text>`,
      );
      legendX -= 10 + 6 * s.label.length;
    }
  }
  for (const s of series) {
    // Runs of consecutive finite points: a missing value breaks the line; a point alone (no
    // finite neighbour) is a dot.
    const color = escapeXml(s.color);
    const dot = (p: string) => {
      const [cx, cy] = p.split(",");
      parts.push(`<circle cx="${cx}" cy="${cy}" r="2.5" fill="${color}"/>`);
    };
    let run: string[] = [];
    const flush = () => {
      if (run.length > 1) {
        parts.push(
          `<polyline points="${run.join(" ")}" fill="none" stroke="${color}" stroke-width="1.5"/>`,
        );
      }
      if (s.dots) run.forEach(dot);
      else if (run.length === 1) dot(run[0]!);
      run = [];
    };
    for (const [x, y] of s.points) {
      if (y === null || !Number.isFinite(y)) flush();
      else run.push(`${px(x)},${py(y)}`);
    }
    flush();
  }
  parts.push("</svg>");
  return parts.join("");
}
