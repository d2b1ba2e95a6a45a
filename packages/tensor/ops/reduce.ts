/**
 * Reductions (sum, mean, max, min, variance, argmax, argmin) over any set of axes, with keepdim,
 * and cumulative sums.
 *
 * Reduced axes are moved last by one permute copy (skipped when they already are), so the
 * backend needs only a last-axis kernel. `max`/`min` split the gradient evenly between tied
 * maxima (PyTorch's `amax` rule).
 *
 * @module
 */

import { record } from "../autograd.ts";
import type { ReduceOp } from "../backend/types.ts";
import { normAxes, normAxis, sizeOf } from "../shape.ts";
import type { Tensor } from "../tensor.ts";
import { castTo, empty } from "./_util.ts";
import { permute } from "./shape.ts";
import { noGrad } from "../runtime.ts";

interface Plan {
  axes: number[];
  outer: number;
  inner: number;
  keptShape: number[];
  outShape: number[];
}

function plan(
  x: Tensor,
  axis: number | readonly number[] | undefined,
  keepdim: boolean,
  op: string,
): Plan {
  const axes = normAxes(axis, x.ndim, op);
  const inner = sizeOf(axes.map((a) => x.shape[a]!));
  const keptShape = x.shape.map((d, i) => (axes.includes(i) ? 1 : d));
  const outShape = keepdim ? keptShape : x.shape.filter((_, i) => !axes.includes(i));
  return {
    axes,
    inner,
    outer: inner === 0 ? sizeOf(keptShape) : x.size / inner,
    keptShape,
    outShape,
  };
}

/** Runs the reduce kernel with the reduced axes moved last. */
function reduceRaw(x: Tensor, p: Plan, op: ReduceOp): Tensor {
  const rest = [...Array(x.ndim).keys()].filter((i) => !p.axes.includes(i));
  const order = [...rest, ...p.axes];
  const moved = order.every((a, i) => a === i) ? x : noGrad(() => permute(x, order));
  const out = empty(x.backend, p.outShape, op === "argmax" || op === "argmin" ? "i32" : x.dtype);
  if (p.inner === 0 && op !== "sum") {
    throw new RangeError(
      `${op}: cannot reduce over an empty axis of a tensor with shape [${x.shape}]`,
    );
  }
  x.backend.run("reduce", [moved.buffer], [out.buffer], { op, outer: p.outer, inner: p.inner });
  if (moved !== x) moved.dispose();
  return out;
}

/**
 * Sum over `axis` (a number, a list, or all axes when omitted).
 *
 * @example Usage
 * ```ts
 * import { sum, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const x = tensor([[1, 2], [3, 4]]);
 * assert.deepEqual(await sum(x, 0).toArray(), [4, 6]);
 * assert.deepEqual(await sum(x, 1, true).toArray(), [[3], [7]]);
 * assert.equal(await sum(x).item(), 10);
 * ```
 */
export function sum(x: Tensor, axis?: number | readonly number[], keepdim = false): Tensor {
  const p = plan(x, axis, keepdim, "sum");
  const src = x.dtype === "bool" ? castTo(x, "i32") : x;
  const out = reduceRaw(src, p, "sum");
  if (src !== x) src.dispose();
  return record("sum", out, [x], [], (g) => [g.reshape(...p.keptShape).expand(...x.shape)]);
}

/**
 * Mean over `axis` (all axes when omitted).
 *
 * @example Usage
 * ```ts
 * import { mean, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await mean(tensor([[1, 2], [3, 4]]), 1).toArray(), [1.5, 3.5]);
 * ```
 */
export function mean(x: Tensor, axis?: number | readonly number[], keepdim = false): Tensor {
  const p = plan(x, axis, keepdim, "mean");
  const src = x.dtype === "f32" ? x : x.cast("f32");
  const s = sum(src, axis, keepdim);
  const out = s.div(p.inner);
  s.dispose();
  if (src !== x) src.dispose();
  return out;
}

function extremum(
  x: Tensor,
  axis: number | readonly number[] | undefined,
  keepdim: boolean,
  op: "max" | "min",
): Tensor {
  const p = plan(x, axis, keepdim, op);
  const out = reduceRaw(x, p, op);
  return record(op, out, [x], [x, out], (g, [sx, so]) => {
    const hit = sx!.eq(so!.reshape(...p.keptShape)).cast("f32");
    const count = hit.sum(p.axes, true);
    return [hit.div(count).mul(g.reshape(...p.keptShape))];
  });
}

/**
 * Maximum over `axis`; tied maxima share the gradient evenly.
 *
 * @example Usage
 * ```ts
 * import { max, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await max(tensor([[1, 5], [7, 2]]), 1).toArray(), [5, 7]);
 * ```
 */
export function max(x: Tensor, axis?: number | readonly number[], keepdim = false): Tensor {
  return extremum(x, axis, keepdim, "max");
}

/**
 * Minimum over `axis`; tied minima share the gradient evenly.
 *
 * @example Usage
 * ```ts
 * import { min, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await min(tensor([[1, 5], [7, 2]]), 1).toArray(), [1, 2]);
 * ```
 */
export function min(x: Tensor, axis?: number | readonly number[], keepdim = false): Tensor {
  return extremum(x, axis, keepdim, "min");
}

/** Options of {@link variance}. */
export interface VarOptions {
  /** Subtracted from the count in the denominator: 1 (default) is unbiased, like `torch.var`. */
  correction?: number;
  /** Keep reduced axes with size 1. */
  keepdim?: boolean;
}

/**
 * Variance over `axis`: `Σ(x − mean)² / (n − correction)`.
 *
 * @example Usage
 * ```ts
 * import { variance, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.equal(await variance(tensor([1, 3])).item(), 2);
 * assert.equal(await variance(tensor([1, 3]), 0, { correction: 0 }).item(), 1);
 * ```
 */
export function variance(
  x: Tensor,
  axis?: number | readonly number[],
  options: VarOptions = {},
): Tensor {
  const p = plan(x, axis, options.keepdim ?? false, "var");
  const correction = options.correction ?? 1;
  const m = mean(x, axis, true);
  const d = x.sub(m);
  const sq = d.mul(d);
  const s = sum(sq, axis, options.keepdim ?? false);
  const out = s.div(Math.max(p.inner - correction, 0));
  for (const t of [m, d, sq, s]) t.dispose();
  return out;
}

function argExt(x: Tensor, axis: number, keepdim: boolean, op: "argmax" | "argmin"): Tensor {
  const p = plan(x, normAxis(axis, x.ndim, op), keepdim, op);
  return reduceRaw(x, p, op);
}

/**
 * Index of the first maximum along `axis`, as i32 (no gradient).
 *
 * @example Usage
 * ```ts
 * import { argmax, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await argmax(tensor([[1, 5, 2], [9, 0, 9]])).toArray(), [1, 0]);
 * ```
 */
export function argmax(x: Tensor, axis = -1, keepdim = false): Tensor {
  return argExt(x, axis, keepdim, "argmax");
}

/**
 * Index of the first minimum along `axis`, as i32 (no gradient).
 *
 * @example Usage
 * ```ts
 * import { argmin, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await argmin(tensor([[1, 5, 0]])).toArray(), [2]);
 * ```
 */
export function argmin(x: Tensor, axis = -1, keepdim = false): Tensor {
  return argExt(x, axis, keepdim, "argmin");
}

/** Moves `axis` last, runs `fn` on the `[outer, inner]` view, moves it back (internal). */
export function alongLastAxis(
  x: Tensor,
  axis: number,
  op: string,
  fn: (t: Tensor, outer: number, inner: number) => Tensor,
): Tensor {
  const ax = normAxis(axis, x.ndim, op);
  const last = x.ndim - 1;
  if (ax === last || x.ndim === 0) {
    const inner = x.ndim === 0 ? 1 : x.shape[last]!;
    return fn(x, inner === 0 ? 0 : x.size / inner, inner);
  }
  const order = [...Array(x.ndim).keys()];
  [order[ax], order[last]] = [order[last]!, order[ax]!];
  const moved = permute(x, order);
  const y = fn(moved, moved.size / moved.shape[last]!, moved.shape[last]!);
  const out = permute(y, order);
  moved.dispose();
  y.dispose();
  return out;
}

/**
 * Inclusive cumulative sum along `axis`; its backward is the reversed cumulative sum.
 *
 * @example Usage
 * ```ts
 * import { cumsum, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await cumsum(tensor([[1, 2, 3]]), 1).toArray(), [[1, 3, 6]]);
 * ```
 */
export function cumsum(x: Tensor, axis = -1): Tensor {
  return alongLastAxis(x, axis, "cumsum", (t, outer, inner) => scan(t, outer, inner, false));
}

function scan(x: Tensor, outer: number, inner: number, reverse: boolean): Tensor {
  const src = x.dtype === "bool" ? castTo(x, "i32") : x;
  const out = empty(x.backend, x.shape, src.dtype);
  x.backend.run("cumsum", [src.buffer], [out.buffer], { outer, inner, reverse });
  if (src !== x) src.dispose();
  return record("cumsum", out, [x], [], (g) => [scan(g, outer, inner, !reverse)]);
}
