/**
 * Axis-aligned boxes in pixel coordinates: intersection over union and a lenient, bounded
 * parser of the boxes a model writes.
 *
 * Design: a box is `[x1, y1, x2, y2]` in pixel-edge coordinates (the image's top-left corner is
 * `(0, 0)`, x to the right, y downwards), `x1 < x2` and `y1 < y2`; the box of a `w × h` block of
 * pixels starting at pixel `(x, y)` is `[x, y, x + w, y + h]`. A box written with the last
 * pixel inclusive (`x + w − 1`) differs by one pixel a side, which costs little IoU at the
 * sizes the tasks draw. {@link parseBox} accepts the four numbers with commas or spaces, with or
 * without brackets (`10,20,30,40`, `[10, 20, 30, 40]`, `(10,20),(30,40)`), rejects anything
 * else, and reads at most 200 characters, so a hostile answer costs nothing.
 *
 * @module
 */

import { show } from "../_check.ts";
import { cleanAnswer } from "./_util.ts";

/** A box `[x1, y1, x2, y2]`: top-left and bottom-right corners in pixel-edge coordinates. */
export type Box = readonly [number, number, number, number];

function checkBox(owner: string, field: string, value: unknown): Box {
  if (
    !Array.isArray(value) || value.length !== 4 || !value.every(Number.isFinite) ||
    !(value[0] < value[2]) || !(value[1] < value[3])
  ) {
    throw new TypeError(
      `${owner}: ${field} must be a box [x1, y1, x2, y2] of finite numbers with x1 < x2 and ` +
        `y1 < y2, got ${show(value)}`,
    );
  }
  return value as unknown as Box;
}

/**
 * Intersection over union of two boxes: the area they share divided by the area either
 * covers, in [0, 1] (1 for equal boxes, 0 for disjoint or merely touching ones).
 *
 * @example Usage
 * ```ts
 * import { boxIou } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * assert.equal(boxIou([0, 0, 10, 10], [0, 0, 10, 10]), 1);
 * assert.equal(boxIou([0, 0, 10, 10], [5, 0, 15, 10]), 50 / 150);
 * assert.equal(boxIou([0, 0, 10, 10], [10, 0, 20, 10]), 0);
 * ```
 */
export function boxIou(a: Box, b: Box): number {
  checkBox("boxIou", "a", a);
  checkBox("boxIou", "b", b);
  const w = Math.min(a[2], b[2]) - Math.max(a[0], b[0]);
  const h = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
  if (w <= 0 || h <= 0) return 0;
  const inter = w * h;
  const union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return Math.min(1, inter / union);
}

const NUMBER = /^[+-]?(?:\d{1,7}(?:\.\d{0,6})?|\.\d{1,6})$/;

/**
 * Reads a box from an answer: exactly four numbers (at most 7 integer digits each, decimals
 * allowed) separated by commas and/or spaces, optionally in brackets or as two points (also inside
 * Qwen2-VL's `<|box_start|>…<|box_end|>`), forming a box with `x1 < x2` and `y1 < y2`. Returns `null` for anything else (never throws).
 *
 * @example Usage
 * ```ts
 * import { parseBox } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseBox("10,20,30,40"), [10, 20, 30, 40]);
 * assert.deepEqual(parseBox("[10.5, 20, 30, 40]"), [10.5, 20, 30, 40]);
 * assert.deepEqual(parseBox("(10,20),(30,40)"), [10, 20, 30, 40]);
 * assert.equal(parseBox("30,40,10,20"), null); // corners swapped
 * assert.equal(parseBox("1e999,0,1,1"), null);
 * ```
 */
export function parseBox(answer: string): Box | null {
  const t = cleanAnswer(answer);
  if (t === null) return null;
  const inner = t.replace(/^<\|box_start\|>|<\|box_end\|>$/g, "");
  if (!/^[\d.+\-,\s()[\]]*$/.test(inner)) return null;
  const parts = inner.replace(/[()[\]]/g, " ").split(/[\s,]+/).filter((p) => p !== "");
  if (parts.length !== 4 || !parts.every((p) => NUMBER.test(p))) return null;
  const [x1, y1, x2, y2] = parts.map(Number) as [number, number, number, number];
  return x1 < x2 && y1 < y2 ? [x1, y1, x2, y2] : null;
}
