/**
 * Difficulty knobs shared by the task generators (private): a knob is a number or an inclusive
 * `[min, max]` range drawn per row.
 *
 * @module
 */

import { checkNumber, show } from "../_check.ts";
import type { Rng } from "./rng.ts";

/** A fixed integer or an inclusive `[min, max]` range drawn uniformly per row. */
export type Knob = number | readonly [number, number];

/** Validates a knob against `[lo, hi]` and returns it as a range. */
export function knob(
  owner: string,
  field: string,
  value: Knob | undefined,
  fallback: number,
  lo: number,
  hi: number,
): [number, number] {
  const v = value ?? fallback;
  if (typeof v === "number") {
    checkNumber(owner, field, v, { min: lo, max: hi, integer: true });
    return [v, v];
  }
  if (!Array.isArray(v) || v.length !== 2) {
    throw new TypeError(
      `${owner}: ${field} must be an integer in [${lo}, ${hi}] or a range [min, max], got ${
        show(v)
      }`,
    );
  }
  const a = checkNumber(owner, `${field}[0]`, v[0], { min: lo, max: hi, integer: true });
  checkNumber(owner, `${field}[1]`, v[1], { min: a, max: hi, integer: true });
  return [v[0], v[1]];
}

/** Draws a value of a range. */
export function draw(rng: Rng, range: readonly [number, number]): number {
  return rng.int(range[0], range[1]);
}
