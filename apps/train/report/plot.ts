/**
 * Line plots as inline SVG strings, generated in TypeScript with no plotting library, so the
 * report is one self-contained file that any browser renders without scripts.
 *
 * Design decisions: axes use "nice" 1-2-5 ticks; a value that is null, not finite or beyond
 * ±1e100 breaks the line (a gap, never a drop to zero); an optional band (e.g. mean ± std) is drawn under its
 * line; a series with a single point is drawn as a dot; a flat series gets a padded y range
 * so it is visible. Every text is XML-escaped, and every number written into the SVG is
 * finite (rounded to 0.01 px), so the output is well-formed for any input.
 *
 * @module
 */

/** One line of a plot. */
export interface Series {
  /** Legend label. */
  name: string;
  /** `[x, y]` points in x order; a null or non-finite y is a gap. */
  points: readonly (readonly [number, number | null])[];
  /** Stroke colour (CSS); default from a palette. */
  color?: string;
  /** Shaded band `[x, low, high]` drawn under the line (e.g. mean ± std). */
  band?: readonly (readonly [number, number | null, number | null])[];
}

/** Options of {@link linePlot}. */
export interface PlotOptions {
  /** Title above the plot (also the SVG's accessible name). */
  title: string;
  /** The lines. */
  series: readonly Series[];
  /** X axis label (default `step`). */
  xLabel?: string;
  /** Width in px (default 480). */
  width?: number;
  /** Height in px (default 260). */
  height?: number;
  /** Shown instead of lines when no series has a finite point (default `no data`). */
  emptyText?: string;
}

/** Colour-blind-safe palette (Okabe-Ito). */
export const PALETTE: readonly string[] = Object.freeze([
  "#0072B2",
  "#D55E00",
  "#009E73",
  "#CC79A7",
  "#E69F00",
  "#56B4E9",
]);

/**
 * XML-escapes text for element content and attribute values.
 *
 * @example Usage
 * ```ts
 * import { escapeXml } from "./plot.ts";
 * import assert from "node:assert/strict";
 * assert.equal(escapeXml(`<a href="x">&'`), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
 * ```
 */
export function escapeXml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) =>
      c === "&"
        ? "&amp;"
        : c === "<"
        ? "&lt;"
        : c === ">"
        ? "&gt;"
        : c === '"'
        ? "&quot;"
        : "&#39;",
  );
}

/**
 * About `count` evenly spaced round ticks (steps of 1, 2 or 5 × 10^k) covering `[lo, hi]`:
 * the first tick is <= lo and the last >= hi.
 *
 * @example Usage
 * ```ts
 * import { niceTicks } from "./plot.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(niceTicks(0, 1, 5), [0, 0.2, 0.4, 0.6, 0.8, 1]);
 * assert.deepEqual(niceTicks(3, 97, 4), [0, 50, 100]);
 * ```
 */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!Number.isFinite(lo) || !Number.isFinite(hi) || hi < lo) {
    throw new RangeError(`niceTicks: need finite lo <= hi, got [${lo}, ${hi}]`);
  }
  if (hi === lo) return [lo];
  const raw = (hi - lo) / Math.max(1, count);
  if (!Number.isFinite(raw) || raw < 1e-300) {
    throw new RangeError(
      `niceTicks: the span of [${lo}, ${hi}] is too large or too small to divide`,
    );
  }
  let exp = Math.floor(Math.log10(raw));
  let mult = [1, 2, 5, 10].find((m) => m * 10 ** exp >= raw * (1 - 1e-9))!;
  if (mult === 10) [mult, exp] = [1, exp + 1];
  const step = mult * 10 ** exp;
  const first = Math.floor(lo / step + 1e-9);
  const last = Math.ceil(hi / step - 1e-9);
  // tick i is the decimal i·mult·10^exp; dividing the integer i·mult by 10^-exp gives the
  // double nearest to it (no 0.30000000000000004), where adding steps would drift.
  const tick = (i: number) => exp >= 0 ? i * mult * 10 ** exp : (i * mult) / 10 ** -exp;
  const ticks: number[] = [];
  for (let i = first; i <= last; i++) ticks.push(tick(i));
  return ticks;
}

/**
 * A short label for tick `value` given the tick spacing `step`.
 *
 * @example Usage
 * ```ts
 * import { formatTick } from "./plot.ts";
 * import assert from "node:assert/strict";
 * assert.equal(formatTick(0.4, 0.2), "0.4");
 * assert.equal(formatTick(2e-6, 1e-6), "2e-6");
 * assert.equal(formatTick(150000, 50000), "1.5e+5");
 * assert.equal(formatTick(40, 20), "40");
 * ```
 */
export function formatTick(value: number, step: number): string {
  if (value === 0) return "0";
  const big = Math.abs(value) >= 1e5;
  const small = Math.abs(step) < 1e-3;
  if (big || small) {
    const digits = Math.floor(Math.log10(Math.abs(value))) -
      Math.floor(Math.log10(Math.abs(step)) + 1e-9);
    return value.toExponential(Math.max(0, Math.min(3, digits)))
      .replace(/(\.\d*?)0+e/, "$1e")
      .replace(/\.e/, "e");
  }
  const decimals = Math.max(0, -Math.floor(Math.log10(Math.abs(step)) + 1e-9));
  return value.toFixed(decimals);
}

/** Beyond this magnitude a value is drawn as a gap: spans of such values overflow. */
const LIMIT = 1e100;

function isNum(x: number | null | undefined): x is number {
  return typeof x === "number" && Number.isFinite(x) && Math.abs(x) <= LIMIT;
}

/** A range padded when it is empty or too narrow to divide into ticks. */
function padRange(lo: number, hi: number, fallback: number): [number, number] {
  const scale = Math.max(Math.abs(lo), Math.abs(hi));
  if (hi - lo > 1e-9 * scale && hi - lo > 1e-200) return [lo, hi];
  const pad = scale > 1e-200 ? scale * 0.1 : fallback;
  return [lo - pad, hi + pad];
}

function r2(x: number): string {
  return String(Math.round(x * 100) / 100);
}

/** Splits points into runs of consecutive finite values. */
function runs<T>(
  points: readonly T[],
  ok: (p: T) => boolean,
): T[][] {
  const out: T[][] = [];
  let cur: T[] = [];
  for (const p of points) {
    if (ok(p)) {
      cur.push(p);
    } else if (cur.length > 0) {
      out.push(cur);
      cur = [];
    }
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/**
 * Renders a line plot as an `<svg class="plot">` element (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { linePlot } from "./plot.ts";
 * import assert from "node:assert/strict";
 * const svg = linePlot({
 *   title: "reward",
 *   series: [{ name: "mean", points: [[1, 0.1], [2, null], [3, 0.4], [4, 0.5]] }],
 * });
 * assert.match(svg, /^<svg class="plot"/);
 * assert.equal((svg.match(/<path class="line"/g) ?? []).length, 1);
 * assert.equal((svg.match(/<circle class="dot"/g) ?? []).length, 1); // [1, 0.1] stands alone
 * assert.ok(!/NaN|Infinity/.test(svg));
 * ```
 */
export function linePlot(options: PlotOptions): string {
  const width = options.width ?? 480;
  const height = options.height ?? 260;
  const margin = { left: 56, right: 12, top: 28, bottom: 40 };
  const legendRows = options.series.length > 1 ? 1 : 0;
  const plotW = width - margin.left - margin.right;
  const plotH = height - margin.top - margin.bottom - legendRows * 16;
  const title = escapeXml(options.title);

  const xs: number[] = [];
  const ys: number[] = [];
  for (const s of options.series) {
    for (const [x, y] of s.points) {
      if (isNum(x) && isNum(y)) {
        xs.push(x);
        ys.push(y);
      }
    }
    for (const [x, lo, hi] of s.band ?? []) {
      if (!isNum(x)) continue;
      if (isNum(lo)) ys.push(lo);
      if (isNum(hi)) ys.push(hi);
    }
  }

  const parts: string[] = [
    `<svg class="plot" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${title}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`,
    `<title>${title}</title>`,
    `<rect class="bg" x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text class="title" x="${margin.left}" y="18" font-size="14" font-weight="600" fill="#222">${title}</text>`,
  ];
  if (xs.length === 0) {
    parts.push(
      `<rect x="${margin.left}" y="${margin.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#ccc"/>`,
      `<text class="empty" x="${r2(margin.left + plotW / 2)}" y="${
        r2(margin.top + plotH / 2)
      }" text-anchor="middle" font-size="12" fill="#777">${
        escapeXml(options.emptyText ?? "no data")
      }</text>`,
      "</svg>",
    );
    return parts.join("");
  }

  let [x0, x1] = Math.min(...xs) === Math.max(...xs)
    ? [Math.min(...xs) - 1, Math.max(...xs) + 1]
    : padRange(Math.min(...xs), Math.max(...xs), 1);
  let [y0, y1] = padRange(Math.min(...ys), Math.max(...ys), 1);
  const yTicks = niceTicks(y0, y1, 4);
  const xTicks = niceTicks(x0, x1, 5);
  [y0, y1] = [yTicks[0]!, yTicks.at(-1)!];
  [x0, x1] = [Math.min(x0, xTicks[0]!), Math.max(x1, xTicks.at(-1)!)];
  const sx = (x: number) => margin.left + ((x - x0) / (x1 - x0)) * plotW;
  const sy = (y: number) => margin.top + plotH - ((y - y0) / (y1 - y0)) * plotH;
  const yStep = yTicks.length > 1 ? yTicks[1]! - yTicks[0]! : 1;
  const xStep = xTicks.length > 1 ? xTicks[1]! - xTicks[0]! : 1;

  parts.push(`<g class="grid" stroke="#e5e5e5" stroke-width="1">`);
  for (const t of yTicks) {
    parts.push(
      `<line x1="${margin.left}" x2="${margin.left + plotW}" y1="${r2(sy(t))}" y2="${r2(sy(t))}"/>`,
    );
  }
  parts.push(`</g><g class="axis" font-size="11" fill="#444">`);
  for (const t of yTicks) {
    parts.push(
      `<text x="${margin.left - 6}" y="${r2(sy(t) + 4)}" text-anchor="end">${
        escapeXml(formatTick(t, yStep))
      }</text>`,
    );
  }
  for (const t of xTicks) {
    if (t < x0 || t > x1) continue;
    parts.push(
      `<text x="${r2(sx(t))}" y="${margin.top + plotH + 16}" text-anchor="middle">${
        escapeXml(formatTick(t, xStep))
      }</text>`,
    );
  }
  parts.push(
    `<text x="${r2(margin.left + plotW / 2)}" y="${margin.top + plotH + 32}" text-anchor="middle">${
      escapeXml(options.xLabel ?? "step")
    }</text></g>`,
    `<rect x="${margin.left}" y="${margin.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#999"/>`,
  );

  options.series.forEach((s, i) => {
    const color = escapeXml(s.color ?? PALETTE[i % PALETTE.length]!);
    for (const run of runs(s.band ?? [], ([x, lo, hi]) => isNum(x) && isNum(lo) && isNum(hi))) {
      const upper = run.map(([x, , hi]) => `${r2(sx(x))},${r2(sy(hi!))}`);
      const lower = run.map(([x, lo]) => `${r2(sx(x))},${r2(sy(lo!))}`).reverse();
      parts.push(
        `<polygon class="band" points="${
          [...upper, ...lower].join(" ")
        }" fill="${color}" fill-opacity="0.15" stroke="none"/>`,
      );
    }
    for (const run of runs(s.points, ([x, y]) => isNum(x) && isNum(y))) {
      if (run.length === 1) {
        const [x, y] = run[0]!;
        parts.push(
          `<circle class="dot" cx="${r2(sx(x))}" cy="${r2(sy(y!))}" r="2.5" fill="${color}"/>`,
        );
        continue;
      }
      const d = run.map(([x, y], j) => `${j === 0 ? "M" : "L"}${r2(sx(x))},${r2(sy(y!))}`).join("");
      parts.push(
        `<path class="line" d="${d}" fill="none" stroke="${color}" stroke-width="1.75" stroke-linejoin="round"/>`,
      );
    }
  });

  if (legendRows > 0) {
    let lx = margin.left;
    const ly = height - 8;
    options.series.forEach((s, i) => {
      const color = escapeXml(s.color ?? PALETTE[i % PALETTE.length]!);
      parts.push(
        `<g class="legend"><rect x="${lx}" y="${
          ly - 9
        }" width="14" height="3" fill="${color}"/><text x="${lx + 18}" y="${
          ly - 4
        }" font-size="11" fill="#333">${escapeXml(s.name)}</text></g>`,
      );
      lx += 30 + s.name.length * 6.5;
    });
  }
  parts.push("</svg>");
  return parts.join("");
}
