/**
 * Helpers shared by the visual tasks (private): colour and size checks, and the bounded
 * parsers of the answers.
 *
 * @module
 */

import { checkNumber, show } from "../_check.ts";
import { type Knob, knob } from "../tasks/_knob.ts";
import type { Rgb } from "./raster.ts";
import type { ImageSizeOption } from "./vision_row.ts";

/** Answers longer than this (after trimming) are rejected before any parsing. */
export const MAX_ANSWER_LENGTH = 200;

/** Throws a TypeError naming `field` unless `value` is an {@link Rgb}. */
export function checkRgb(owner: string, field: string, value: unknown): Rgb {
  if (
    !Array.isArray(value) || value.length !== 3 ||
    !value.every((v) => Number.isInteger(v) && v >= 0 && v <= 255)
  ) {
    throw new TypeError(
      `${owner}: ${field} must be [r, g, b] with integers in [0, 255], got ${show(value)}`,
    );
  }
  return value as unknown as Rgb;
}

/** Smallest image side the tasks accept. */
export const MIN_SIDE = 28;
/** Largest image side the tasks accept. */
export const MAX_SIDE = 1024;

/** Validates an {@link ImageSizeOption} option and returns `[width, height]`. */
export function imageSize(
  owner: string,
  field: string,
  value: ImageSizeOption | undefined,
  fallback: number,
): [number, number] {
  const v = value ?? fallback;
  const rule = { min: MIN_SIDE, max: MAX_SIDE, integer: true };
  if (typeof v === "number") {
    checkNumber(owner, field, v, rule);
    return [v, v];
  }
  if (!Array.isArray(v) || v.length !== 2) {
    throw new TypeError(
      `${owner}: ${field} must be an image side (integer in [${MIN_SIDE}, ${MAX_SIDE}]; ` +
        `multiples of 28 suit Qwen2-VL) or [width, height], got ${show(v)}`,
    );
  }
  checkNumber(owner, `${field}[0]`, v[0], rule);
  checkNumber(owner, `${field}[1]`, v[1], rule);
  return [v[0], v[1]];
}

/** Trims an answer and drops one trailing full stop; `null` when over the length limit. */
export function cleanAnswer(answer: string): string | null {
  if (typeof answer !== "string" || answer.length > 4 * MAX_ANSWER_LENGTH) return null;
  const t = answer.trim().replace(/\.$/, "").trim();
  return t.length > MAX_ANSWER_LENGTH ? null : t;
}

/**
 * Reads an integer answer: optional sign, at most 9 digits, optionally `.0…` (so `3`, `+3`,
 * `-3`, `3.0` and `3.` parse; `1e3`, `NaN`, `3.5`, `three` do not). `null` when it is not one.
 */
export function parseInteger(answer: string): number | null {
  const t = cleanAnswer(answer);
  if (t === null) return null;
  const m = /^([+-]?)\s*(\d{1,9})(?:\.0*)?$/.exec(t);
  if (m === null) return null;
  const n = Number(m[2]);
  return m[1] === "-" ? -n : n;
}

/** Like `knob`, with a `[min, max]` range as the default. */
export function knobOr(
  owner: string,
  field: string,
  value: Knob | undefined,
  fallback: readonly [number, number],
  lo: number,
  hi: number,
): [number, number] {
  return value === undefined ? [fallback[0], fallback[1]] : knob(owner, field, value, 0, lo, hi);
}
