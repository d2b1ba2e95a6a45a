/**
 * Analog clocks: read the time, answered as `H:MM`.
 *
 * Design: a row draws an hour in 1–12 and a minute that is a multiple of `step` (60: whole
 * hours, 15: quarters, 5: the hour marks, 1: any minute). The face ({@link drawClock}) has a
 * dark rim, twelve gray hour marks (the quarters thicker; one-minute marks too when `step` is
 * under 5), optionally the numbers 12, 3, 6 and 9, and two black hands: the hour hand, half
 * the radius long and thick, at `(hour mod 12)·30° + minute/2°`, and the minute hand, 0.82 of
 * the radius and thin, at `minute·6°`. The verifier reads the answer with
 * {@link parseClockTime} (`3:05`, `03:05`, `3:05 pm`, `15:05` and, for twelve o'clock, `0:00`
 * all name the same reading) and compares it with `row.hour` and `row.minute`. Difficulty is
 * `60 / step + (numbers ? 0 : 1)`: the number of minute positions the answer can take, plus
 * one when the numbers are hidden.
 *
 * @module
 */

import { createImage, type RgbImage, toDataUrl } from "@rlvr/image";
import { checkName, checkNumber, checkOptions, show } from "../_check.ts";
import { defineTask, type Task } from "../tasks/task.ts";
import { cleanAnswer, imageSize } from "./_util.ts";
import { drawText, GLYPH_HEIGHT, textWidth } from "./font.ts";
import { COLORS } from "./palette.ts";
import { drawLine, fillCircle } from "./raster.ts";
import type { ImageSizeOption, VisionRow } from "./vision_row.ts";

/** A row of {@link clockTask}; its image is `drawClock(row)`. */
export interface ClockRow extends VisionRow {
  /** The hour shown, 1–12. */
  hour: number;
  /** The minute shown, 0–59. */
  minute: number;
  /** Whether the face shows the numbers 12, 3, 6 and 9. */
  numbers: boolean;
  /** The minute granularity the row was drawn with (a divisor of 60; under 5 adds minute marks). */
  step: number;
}

/** Knobs of {@link clockTask}. */
export interface ClockOptions {
  /** Minute granularity: a divisor of 60 (default 5; 60 gives whole hours, 15 quarters). */
  step?: number;
  /** Draw the numbers 12, 3, 6 and 9 (default true). */
  numbers?: boolean;
  /** Image side or `[width, height]`, at least 56 (default 112). */
  size?: ImageSizeOption;
  /** Task name (default `"clock"`). */
  name?: string;
}

const STEPS = [1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60];

/** The smallest image side a clock is drawn in. */
const MIN_CLOCK_SIDE = 56;

/** A time read from an answer: `hour` in 1–12, `minute` in 0–59. */
export interface ClockTime {
  /** Hour on a 12-hour dial, 1–12. */
  hour: number;
  /** Minute, 0–59. */
  minute: number;
}

/**
 * Reads a clock time: `H:MM` or `HH:MM` (hours 0–23, two-digit minutes), optionally followed
 * by `am`/`pm`; the hour is reduced to a 12-hour dial (`15:05` and `3:05 pm` read as 3:05,
 * `0:30` as 12:30). Returns `null` for anything else (never throws).
 *
 * @example Usage
 * ```ts
 * import { parseClockTime } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseClockTime("03:05"), { hour: 3, minute: 5 });
 * assert.deepEqual(parseClockTime("15:05"), { hour: 3, minute: 5 });
 * assert.deepEqual(parseClockTime("0:30 a.m."), { hour: 12, minute: 30 });
 * assert.equal(parseClockTime("3:5"), null);
 * assert.equal(parseClockTime("3:60"), null);
 * ```
 */
export function parseClockTime(text: string): ClockTime | null {
  const t = cleanAnswer(text);
  if (t === null) return null;
  const m = /^(\d{1,2})\s*:\s*(\d{2})(?:\s*[ap]\.?\s*m\.?)?$/i.exec(t);
  if (m === null) return null;
  const h = Number(m[1]);
  const minute = Number(m[2]);
  if (h > 23 || minute > 59) return null;
  return { hour: h % 12 === 0 ? 12 : h % 12, minute };
}

/** `H:MM`. */
function formatTime(hour: number, minute: number): string {
  return `${hour}:${String(minute).padStart(2, "0")}`;
}

/** The fields {@link drawClock} reads. */
export type ClockDrawing = Pick<
  ClockRow,
  "width" | "height" | "hour" | "minute" | "numbers" | "step"
>;

/** The point at `radius` from the centre in the direction of `degrees` (clockwise from 12). */
function polar(cx: number, cy: number, radius: number, degrees: number): [number, number] {
  const a = (degrees * Math.PI) / 180;
  return [cx + Math.round(radius * Math.sin(a)), cy - Math.round(radius * Math.cos(a))];
}

/**
 * Draws a clock face showing `hour:minute` (see the module doc), centred in the image, of
 * radius `floor(min(width, height) / 2) − 2`; one-minute marks are drawn when `step` is under 5.
 *
 * @example Usage
 * ```ts
 * import { COLORS, drawClock, getPixel } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const image = drawClock({ width: 112, height: 112, hour: 3, minute: 0, numbers: true, step: 5 });
 * assert.deepEqual(getPixel(image, 56 + 20, 56), COLORS.black); // the hour hand points right
 * assert.deepEqual(getPixel(image, 56, 56 - 40), COLORS.black); // the minute hand up
 * ```
 */
export function drawClock(clock: ClockDrawing): RgbImage {
  const owner = "drawClock";
  const { width, height, hour, minute, numbers, step } = checkOptions<ClockDrawing>(
    owner,
    clock,
    "{width, height, hour, minute, numbers, step}",
  );
  checkNumber(owner, "clock.step", step, { min: 1, max: 60, integer: true });
  const minuteMarks = step < 5;
  checkNumber(owner, "clock.hour", hour, { min: 1, max: 12, integer: true });
  checkNumber(owner, "clock.minute", minute, { min: 0, max: 59, integer: true });
  if (typeof numbers !== "boolean") {
    throw new TypeError(`${owner}: clock.numbers must be a boolean, got ${show(numbers)}`);
  }
  const image = createImage(width, height, { fill: COLORS.white });
  const cx = Math.floor(width / 2);
  const cy = Math.floor(height / 2);
  const r = Math.floor(Math.min(width, height) / 2) - 2;
  checkNumber(owner, "the clock radius (from clock.width and clock.height)", r, { min: 20 });
  fillCircle(image, cx, cy, r, COLORS.dark);
  fillCircle(image, cx, cy, r - 2, COLORS.white);
  for (let k = 0; k < 60; k++) {
    const hourMark = k % 5 === 0;
    if (!hourMark && !minuteMarks) continue;
    const [x0, y0] = polar(cx, cy, hourMark ? 0.84 * r : 0.9 * r, k * 6);
    const [x1, y1] = polar(cx, cy, r - 4, k * 6);
    drawLine(image, x0, y0, x1, y1, !hourMark ? 1 : k % 15 === 0 ? 3 : 2, COLORS.gray);
  }
  if (numbers) {
    for (const [label, degrees] of [["12", 0], ["3", 90], ["6", 180], ["9", 270]] as const) {
      const [x, y] = polar(cx, cy, 0.66 * r, degrees);
      const left = x - Math.floor(textWidth(label) / 2);
      drawText(image, label, left, y - Math.floor(GLYPH_HEIGHT / 2), COLORS.gray);
    }
  }
  const hourWidth = Math.max(3, Math.round(r / 14));
  const minuteWidth = Math.max(2, Math.round(r / 27));
  const [hx, hy] = polar(cx, cy, 0.5 * r, (hour % 12) * 30 + minute / 2);
  const [mx, my] = polar(cx, cy, 0.82 * r, minute * 6);
  drawLine(image, cx, cy, hx, hy, hourWidth, COLORS.black);
  drawLine(image, cx, cy, mx, my, minuteWidth, COLORS.black);
  fillCircle(image, cx, cy, hourWidth / 2 + 1, COLORS.black);
  return image;
}

/**
 * The clock-reading task (see the module doc for the knobs and the difficulty).
 *
 * @example Usage
 * ```ts
 * import { clockTask } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const task = clockTask({ step: 15 });
 * const row = task.row(0, 0);
 * assert.equal(row.minute % 15, 0);
 * assert.ok(task.verify(row, row.answer));
 * assert.ok(task.verify(row, `0${row.answer}`.slice(-5))); // "03:45" for "3:45"
 * assert.ok(!task.verify(row, `${row.hour % 12 + 1}:${String(row.minute).padStart(2, "0")}`));
 * ```
 */
export function clockTask(options?: ClockOptions): Task<ClockRow> {
  const owner = "clockTask";
  const opts = checkOptions<ClockOptions>(owner, options, "{step?, numbers?, size?, name?}");
  const step = opts.step ?? 5;
  if (!STEPS.includes(step)) {
    throw new RangeError(
      `${owner}: options.step must be a divisor of 60 (${STEPS.join(", ")}), got ${show(step)}`,
    );
  }
  const numbers = opts.numbers ?? true;
  if (typeof numbers !== "boolean") {
    throw new TypeError(`${owner}: options.numbers must be a boolean, got ${show(numbers)}`);
  }
  const [width, height] = imageSize(owner, "options.size", opts.size, 112);
  if (Math.min(width, height) < MIN_CLOCK_SIDE) {
    throw new RangeError(
      `${owner}: options.size must give sides of at least ${MIN_CLOCK_SIDE} pixels for a ` +
        `readable clock, got ${width}×${height}; raise options.size`,
    );
  }
  const name = checkName(owner, "options.name", opts.name ?? "clock");
  return defineTask<ClockRow>({
    name,
    generate(rng) {
      const hour = rng.int(1, 12);
      const minute = step * rng.int(0, 60 / step - 1);
      const clock = { width, height, hour, minute, numbers, step };
      return {
        ...clock,
        images: [toDataUrl(drawClock(clock))],
        prompt: `The image shows an analog clock: the short, thick hand shows the hour and the ` +
          `long, thin hand the minutes. What time does it show? Give the time as H:MM (for ` +
          `example 3:05) inside <answer></answer>.`,
        answer: formatTime(hour, minute),
        difficulty: 60 / step + (numbers ? 0 : 1),
      };
    },
    key: (row) =>
      `${row.width}x${row.height}|${row.numbers ? "n" : "-"}${row.step < 5 ? "m" : "-"}|` +
      formatTime(row.hour, row.minute),
    verify(row, answer) {
      const got = parseClockTime(answer);
      return got !== null && got.hour === row.hour && got.minute === row.minute;
    },
  });
}
