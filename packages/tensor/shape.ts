/**
 * Shape arithmetic: sizes, contiguous strides, broadcasting and axis normalisation.
 *
 * Every tensor is stored contiguously in row-major (C) order; views exist only for reshape.
 * Broadcasting follows NumPy/PyTorch: shapes are right-aligned and a dimension of 1 stretches.
 *
 * @module
 */

/** A tensor shape: non-negative integer dimensions, outermost first. */
export type Shape = readonly number[];

/** Number of elements of a shape (1 for a scalar `[]`).  *
 * @example Usage
 * ```ts
 * import { sizeOf } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.equal(sizeOf([2, 3, 4]), 24);
 * assert.equal(sizeOf([]), 1);
 * ```
 */
export function sizeOf(shape: Shape): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** Row-major strides of a contiguous tensor of this shape.  *
 * @example Usage
 * ```ts
 * import { stridesOf } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(stridesOf([2, 3, 4]), [12, 4, 1]);
 * ```
 */
export function stridesOf(shape: Shape): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i]!;
  }
  return strides;
}

/** Formats a shape as `[2,3]` for error messages.  *
 * @example Usage
 * ```ts
 * import { fmtShape } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.equal(fmtShape([2, 3]), "[2,3]");
 * ```
 */
export function fmtShape(shape: Shape): string {
  return `[${shape.join(",")}]`;
}

/** Throws unless every dimension is a non-negative integer.  *
 * @example Usage
 * ```ts
 * import { assertShape } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.throws(() => assertShape([2, -1], "zeros"), /zeros: shape \[2,-1\] has invalid dimension -1/);
 * ```
 */
export function assertShape(shape: Shape, op: string): void {
  if (!Array.isArray(shape)) {
    throw new TypeError(`${op}: shape must be an array of integers, got ${String(shape)}`);
  }
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 0) {
      throw new RangeError(
        `${op}: shape ${
          JSON.stringify(shape)
        } has invalid dimension ${d}; dimensions must be integers >= 0`,
      );
    }
  }
}

/** Broadcast result shape of two shapes, or an error naming both and the op.  *
 * @example Usage
 * ```ts
 * import { broadcastShapes } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(broadcastShapes([3, 1], [4], "add"), [3, 4]);
 * ```
 */
export function broadcastShapes(a: Shape, b: Shape, op: string): number[] {
  const n = Math.max(a.length, b.length);
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const da = a[a.length - n + i] ?? 1;
    const db = b[b.length - n + i] ?? 1;
    if (da !== db && da !== 1 && db !== 1) {
      throw new RangeError(
        `${op}: cannot broadcast ${fmtShape(a)} with ${
          fmtShape(b)
        } (dimension ${i}: ${da} vs ${db})`,
      );
    }
    out[i] = da === 1 ? db : da;
  }
  return out;
}

/**
 * Strides for reading a tensor of shape `from` as if it had the (broadcast) shape `to`:
 * stretched dimensions get stride 0.
 *
 * @example Usage
 * ```ts
 * import { broadcastStrides } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(broadcastStrides([3, 1], [2, 3, 4]), [0, 1, 0]);
 * ```
 */
export function broadcastStrides(from: Shape, to: Shape): number[] {
  const src = stridesOf(from);
  const out = new Array<number>(to.length).fill(0);
  const offset = to.length - from.length;
  for (let i = 0; i < from.length; i++) {
    out[offset + i] = from[i] === 1 ? 0 : src[i]!;
  }
  return out;
}

/** Normalises a possibly negative axis against `ndim`, or throws naming the op.  *
 * @example Usage
 * ```ts
 * import { normAxis } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.equal(normAxis(-1, 3, "sum"), 2);
 * ```
 */
export function normAxis(axis: number, ndim: number, op: string): number {
  const a = axis < 0 ? axis + ndim : axis;
  if (!Number.isInteger(axis) || a < 0 || a >= Math.max(ndim, 1)) {
    throw new RangeError(
      `${op}: axis ${axis} is out of range for a tensor with ${ndim} dimensions; use -${ndim}..${
        ndim - 1
      }`,
    );
  }
  return a;
}

/** Normalises a list of axes (or all axes when undefined), sorted and deduplicated.  *
 * @example Usage
 * ```ts
 * import { normAxes } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(normAxes([-1, 0], 3, "sum"), [0, 2]);
 * assert.deepEqual(normAxes(undefined, 2, "sum"), [0, 1]);
 * ```
 */
export function normAxes(
  axes: number | readonly number[] | undefined,
  ndim: number,
  op: string,
): number[] {
  if (axes === undefined) return [...Array(ndim).keys()];
  const list = typeof axes === "number" ? [axes] : axes;
  const out = [...new Set(list.map((a) => normAxis(a, ndim, op)))].sort((x, y) => x - y);
  if (out.length !== list.length) {
    throw new RangeError(`${op}: axes ${JSON.stringify(list)} name the same axis twice`);
  }
  return out;
}

/** True when two shapes are equal.  *
 * @example Usage
 * ```ts
 * import { sameShape } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.ok(sameShape([2, 3], [2, 3]));
 * assert.ok(!sameShape([2, 3], [3, 2]));
 * ```
 */
export function sameShape(a: Shape, b: Shape): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}
