/**
 * Bar charts: bars labelled A, B, C … with their values written above them; the question asks
 * which bar is the tallest (a letter) or by how much one bar exceeds another (an integer).
 *
 * Design: a row draws `bars` integer values in `[1, maxValue]` and one bar colour, and asks one
 * of `questions`. "tallest" rows have a unique largest value; "difference" rows compare two
 * bars of different values, the larger first, so the answer is a positive integer. The chart
 * ({@link drawBarChart}) has a black baseline, the letters under it and each value in digits
 * above its bar; a bar of value `v` is `floor(v · plotHeight / maxValue)` pixels tall, which is
 * strictly increasing in `v` (the options are refused when the plot has fewer pixel rows than
 * `maxValue`), so the picture ranks the bars exactly. The verifier recomputes the answer from
 * `row.values`: the letter of the unique maximum (case-insensitive, `C` or `bar C`), or the
 * difference. Difficulty is `bars + digits(maxValue) + (question === "difference" ? 2 : 0)`.
 *
 * @module
 */

import { createImage, type RgbImage, toDataUrl } from "@rlvr/image";
import { checkChoice, checkName, checkNumber, checkOptions, show } from "../_check.ts";
import { draw, type Knob } from "../tasks/_knob.ts";
import type { Rng } from "../tasks/rng.ts";
import { defineTask, type Task } from "../tasks/task.ts";
import { cleanAnswer, imageSize, knobOr, parseInteger } from "./_util.ts";
import { drawText, GLYPH_HEIGHT, textWidth } from "./font.ts";
import { COLORS, SHAPE_COLORS, type ShapeColor } from "./palette.ts";
import { fillRect } from "./raster.ts";
import type { ImageSizeOption, VisionRow } from "./vision_row.ts";

/** What a bar-chart row asks. */
export type BarQuestion = "tallest" | "difference";

/** The bar-chart questions. */
const QUESTIONS: readonly BarQuestion[] = ["tallest", "difference"];

/** A row of {@link barChartTask}; its image is `drawBarChart(row)`. */
export interface BarChartRow extends VisionRow {
  /** Bar labels, left to right: `A`, `B`, `C` … */
  labels: string[];
  /** Bar values (integers in [1, maxValue]), in the order of `labels`. */
  values: number[];
  /** The value of a full-height bar (the chart's scale). */
  maxValue: number;
  /** The bars' colour. */
  color: ShapeColor;
  /** What the row asks. */
  question: BarQuestion;
  /** For "difference": the labels of the two bars, the larger first; `null` for "tallest". */
  compare: [string, string] | null;
}

/** Knobs of {@link barChartTask}. */
export interface BarChartOptions {
  /** Bars per chart, 2–12 (default `[3, 5]`); a range is drawn per row. */
  bars?: Knob;
  /** Largest bar value (integer 2–999, default 9); values are drawn in [1, maxValue]. */
  maxValue?: number;
  /** Questions to draw from (non-empty subset of `"tallest"`, `"difference"`; default both). */
  questions?: readonly BarQuestion[];
  /** Image side or `[width, height]` (default 112). */
  size?: ImageSizeOption;
  /** Task name (default `"bar_chart"`). */
  name?: string;
}

/** Pixel geometry of a chart. */
interface Geometry {
  baseline: number;
  plotHeight: number;
  slot: number;
  left: number;
  barWidth: number;
}

const MARGIN = 2;
const GAP = 2;

function geometry(width: number, height: number, bars: number): Geometry {
  const plotTop = MARGIN + GLYPH_HEIGHT + GAP;
  const baseline = height - MARGIN - GLYPH_HEIGHT - GAP - 1;
  const slot = Math.floor((width - 2 * MARGIN) / bars);
  return {
    baseline,
    plotHeight: baseline - plotTop,
    slot,
    left: MARGIN + Math.floor((width - 2 * MARGIN - bars * slot) / 2),
    barWidth: slot - Math.max(2, Math.floor(slot / 4)),
  };
}

/** The fields {@link drawBarChart} reads. */
export type BarChart = Pick<
  BarChartRow,
  "width" | "height" | "labels" | "values" | "maxValue" | "color"
>;

/**
 * Draws a chart: a white canvas, a black baseline, bar `i` in `color` with `labels[i]` under it
 * and `values[i]` above it.
 *
 * @example Usage
 * ```ts
 * import { COLORS, drawBarChart, getPixel } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const image = drawBarChart({
 *   width: 112, height: 112, labels: ["A", "B"], values: [3, 9], maxValue: 9, color: "blue",
 * });
 * assert.deepEqual(getPixel(image, 84, 95), COLORS.blue); // inside bar B
 * ```
 */
export function drawBarChart(chart: BarChart): RgbImage {
  const owner = "drawBarChart";
  const { width, height, labels, values, maxValue, color } = checkOptions<BarChart>(
    owner,
    chart,
    "{width, height, labels, values, maxValue, color}",
  );
  if (!Array.isArray(values) || !Array.isArray(labels) || values.length !== labels.length) {
    throw new TypeError(
      `${owner}: chart.values and chart.labels must be arrays of the same length, got ` +
        `${show(values)} and ${show(labels)}`,
    );
  }
  checkChoice(owner, "chart.color", color, SHAPE_COLORS);
  checkNumber(owner, "chart.maxValue", maxValue, { min: 1, integer: true });
  const image = createImage(width, height, { fill: COLORS.white });
  const g = geometry(width, height, values.length);
  const ink = COLORS.black;
  fillRect(image, MARGIN, g.baseline, width - 2 * MARGIN, 1, ink);
  for (const [i, v] of values.entries()) {
    checkNumber(owner, `chart.values[${i}]`, v, { min: 0, max: maxValue, integer: true });
    const slot = g.left + i * g.slot;
    const h = Math.floor((v * g.plotHeight) / maxValue);
    fillRect(
      image,
      slot + Math.floor((g.slot - g.barWidth) / 2),
      g.baseline - h,
      g.barWidth,
      h,
      COLORS[color],
    );
    const centre = (text: string) => slot + Math.floor((g.slot - textWidth(text)) / 2);
    drawText(image, labels[i]!, centre(labels[i]!), g.baseline + 1 + GAP, ink);
    drawText(image, String(v), centre(String(v)), g.baseline - h - GAP - GLYPH_HEIGHT, ink);
  }
  return image;
}

function drawValues(rng: Rng, n: number, maxValue: number, question: BarQuestion): number[] {
  for (let attempt = 0;; attempt++) {
    const values = Array.from({ length: n }, () => rng.int(1, maxValue));
    const top = Math.max(...values);
    const ok = question === "tallest"
      ? values.filter((v) => v === top).length === 1
      : values.some((v) => v !== top);
    if (ok) return values;
    if (attempt >= 50) {
      // Rare (few values, many bars): make the first bar the unique maximum.
      values.forEach((v, i) => (values[i] = i === 0 ? maxValue : Math.min(v, maxValue - 1)));
      return values;
    }
  }
}

/**
 * The bar-chart task (see the module doc for the knobs and the difficulty).
 *
 * @example Usage
 * ```ts
 * import { barChartTask } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const task = barChartTask({ bars: 4, maxValue: 20, questions: ["tallest"] });
 * const row = task.row(3, 0);
 * const best = row.labels[row.values.indexOf(Math.max(...row.values))]!;
 * assert.equal(row.answer, best);
 * assert.ok(task.verify(row, `bar ${best.toLowerCase()}`));
 * assert.ok(!task.verify(row, row.labels.find((l) => l !== best)!));
 * ```
 */
export function barChartTask(options?: BarChartOptions): Task<BarChartRow> {
  const owner = "barChartTask";
  const opts = checkOptions<BarChartOptions>(
    owner,
    options,
    "{bars?, maxValue?, questions?, size?, name?}",
  );
  const bars = knobOr(owner, "options.bars", opts.bars, [3, 5], 2, 12);
  const maxValue = checkNumber(owner, "options.maxValue", opts.maxValue ?? 9, {
    min: 2,
    max: 999,
    integer: true,
  });
  const questions = opts.questions ?? QUESTIONS;
  if (
    !Array.isArray(questions) || questions.length === 0 ||
    questions.some((q) => !QUESTIONS.includes(q))
  ) {
    throw new TypeError(
      `${owner}: options.questions must be a non-empty array of "tallest", "difference", got ${
        show(questions)
      }`,
    );
  }
  const [width, height] = imageSize(owner, "options.size", opts.size, 112);
  const name = checkName(owner, "options.name", opts.name ?? "bar_chart");
  const g = geometry(width, height, bars[1]);
  if (g.plotHeight < maxValue) {
    throw new RangeError(
      `${owner}: a ${height}-pixel-high chart has ${g.plotHeight} pixel rows for the bars, ` +
        `fewer than options.maxValue = ${maxValue}, so different values could look equal; ` +
        `raise options.size or lower options.maxValue`,
    );
  }
  const widest = textWidth(String(maxValue));
  if (widest > g.slot - 2 || g.barWidth < 3) {
    throw new RangeError(
      `${owner}: ${bars[1]} bars (options.bars) leave ${g.slot} pixels a bar in a ` +
        `${width}-pixel-wide chart, too narrow for values of ${String(maxValue).length} digits ` +
        `(${widest} pixels); raise options.size, lower options.bars or lower options.maxValue`,
    );
  }
  return defineTask<BarChartRow>({
    name,
    generate(rng) {
      const n = draw(rng, bars);
      const question = rng.pick(questions);
      const values = drawValues(rng, n, maxValue, question);
      const labels = values.map((_, i) => String.fromCharCode(65 + i));
      const color = rng.pick(SHAPE_COLORS);
      const chart = { width, height, labels, values, maxValue, color };
      const image = toDataUrl(drawBarChart(chart));
      const intro = `The image is a bar chart with bars labelled ${labels.join(", ")}; ` +
        `each bar's value is written above it.`;
      const digits = String(maxValue).length;
      if (question === "tallest") {
        const best = labels[values.indexOf(Math.max(...values))]!;
        return {
          ...chart,
          images: [image],
          question,
          compare: null,
          prompt: `${intro} Which bar is the tallest? Give its letter inside <answer></answer>.`,
          answer: best,
          difficulty: n + digits,
        };
      }
      const i = rng.int(0, n - 1);
      const j = rng.pick(values.map((_, k) => k).filter((k) => values[k] !== values[i]));
      const [hi, lo] = values[i]! > values[j]! ? [i, j] : [j, i];
      return {
        ...chart,
        images: [image],
        question,
        compare: [labels[hi]!, labels[lo]!],
        prompt: `${intro} By how much does the value of bar ${labels[hi]} exceed the value ` +
          `of bar ${labels[lo]}? Give the number inside <answer></answer>.`,
        answer: String(values[hi]! - values[lo]!),
        difficulty: n + digits + 2,
      };
    },
    key: (row) =>
      `${row.width}x${row.height}|${row.maxValue}|${row.color}|${row.values.join(",")}|` +
      `${row.question}|${row.compare?.join(">") ?? ""}`,
    verify(row, answer) {
      if (row.question === "tallest") {
        const t = cleanAnswer(answer);
        if (t === null) return false;
        const letter = t.replace(/^bar\s+/i, "").toUpperCase();
        const k = row.labels.indexOf(letter);
        const top = Math.max(...row.values);
        return k >= 0 && row.values[k] === top &&
          row.values.filter((v) => v === top).length === 1;
      }
      const [a, b] = row.compare ?? [];
      const got = parseInteger(answer);
      const va = row.values[row.labels.indexOf(a ?? "")];
      const vb = row.values[row.labels.indexOf(b ?? "")];
      return got !== null && va !== undefined && vb !== undefined && got === va - vb;
    },
  });
}
