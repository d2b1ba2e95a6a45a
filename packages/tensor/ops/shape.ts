/**
 * Shape ops: reshape (a free view), permute/transpose, narrow/slice, concat/stack, expand,
 * squeeze/unsqueeze/flatten, each with its backward.
 *
 * Everything except reshape materialises a contiguous copy through the strided `copy` kernel;
 * keeping every tensor contiguous keeps every other kernel simple. Matmul takes transpose flags
 * so the hot path needs no transpose copies.
 *
 * @module
 */

import { record } from "../autograd.ts";
import { fmtShape, normAxis, type Shape, sizeOf, stridesOf } from "../shape.ts";
import type { Tensor } from "../tensor.ts";
import { backendOf, empty } from "./_util.ts";

/**
 * Same values with a new shape; one dimension may be −1 (inferred). No copy.
 *
 * @example Usage
 * ```ts
 * import { reshape, arange } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await reshape(arange(6), [2, -1]).toArray(), [[0, 1, 2], [3, 4, 5]]);
 * ```
 */
export function reshape(x: Tensor, shape: readonly number[]): Tensor {
  const inferred = shape.filter((d) => d === -1).length;
  const known = sizeOf(shape.filter((d) => d !== -1));
  if (inferred > 1 || shape.some((d) => !Number.isInteger(d) || d < -1)) {
    throw new RangeError(
      `reshape: invalid target shape ${fmtShape(shape)} for ${fmtShape(x.shape)}`,
    );
  }
  const resolved = inferred === 1 && known > 0
    ? shape.map((d) => (d === -1 ? x.size / known : d))
    : [...shape];
  if (sizeOf(resolved) !== x.size || resolved.some((d) => !Number.isInteger(d) || d < 0)) {
    throw new RangeError(
      `reshape: cannot view ${fmtShape(x.shape)} (${x.size} elements) as ${fmtShape(shape)}`,
    );
  }
  const out = x.share(resolved);
  return record("reshape", out, [x], [], (g) => [g.reshape(...x.shape)]);
}

function permuteCopy(x: Tensor, axes: readonly number[]): Tensor {
  const outShape = axes.map((a) => x.shape[a]!);
  const src = stridesOf(x.shape);
  const out = empty(x.backend, outShape, x.dtype);
  x.backend.run("copy", [x.buffer], [out.buffer], {
    shape: outShape,
    inStrides: axes.map((a) => src[a]!),
    inOffset: 0,
    outStrides: stridesOf(outShape),
    outOffset: 0,
  });
  return out;
}

/**
 * Reorders axes: output axis i is input axis `axes[i]`.
 *
 * @example Usage
 * ```ts
 * import { permute, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await permute(tensor([[1, 2, 3]]), [1, 0]).toArray(), [[1], [2], [3]]);
 * ```
 */
export function permute(x: Tensor, axes: readonly number[]): Tensor {
  const norm = axes.map((a) => normAxis(a, x.ndim, "permute"));
  if (norm.length !== x.ndim || new Set(norm).size !== x.ndim) {
    throw new RangeError(
      `permute: axes ${JSON.stringify(axes)} are not a permutation of ${x.ndim} axes of ${
        fmtShape(x.shape)
      }`,
    );
  }
  if (norm.every((a, i) => a === i)) return reshape(x, x.shape);
  // Axes of size 1 can move freely: when the other axes keep their order the bytes are already
  // in the permuted layout (decoding's [batch, 1, heads, d] → [batch, heads, 1, d]), so a view
  // does instead of a copy.
  const kept = norm.filter((a) => x.shape[a] !== 1);
  if (kept.every((a, i) => i === 0 || kept[i - 1]! < a)) {
    return reshape(x, norm.map((a) => x.shape[a]!));
  }
  const out = permuteCopy(x, norm);
  const inverse = new Array<number>(norm.length);
  norm.forEach((a, i) => (inverse[a] = i));
  return record("permute", out, [x], [], (g) => [permute(g, inverse)]);
}

/**
 * Swaps axes `a` and `b`.
 *
 * @example Usage
 * ```ts
 * import { transpose, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await transpose(tensor([[1, 2], [3, 4]]), 0, 1).toArray(), [[1, 3], [2, 4]]);
 * ```
 */
export function transpose(x: Tensor, a = -2, b = -1): Tensor {
  const axes = [...Array(x.ndim).keys()];
  const i = normAxis(a, x.ndim, "transpose");
  const j = normAxis(b, x.ndim, "transpose");
  [axes[i], axes[j]] = [axes[j]!, axes[i]!];
  return permute(x, axes);
}

/** Copies `src` into the region of `dst` that starts at `start` along `axis` (internal). */
function copyInto(dst: Tensor, src: Tensor, axis: number, start: number): void {
  const strides = stridesOf(dst.shape);
  dst.backend.run("copy", [src.buffer], [dst.buffer], {
    shape: src.shape,
    inStrides: stridesOf(src.shape),
    inOffset: 0,
    outStrides: strides,
    outOffset: start * (strides[axis] ?? 0),
  });
}

/**
 * `length` entries of `axis` starting at `start`.
 *
 * @example Usage
 * ```ts
 * import { narrow, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await narrow(tensor([[1, 2, 3], [4, 5, 6]]), 1, 1, 2).toArray(), [[2, 3], [5, 6]]);
 * ```
 */
export function narrow(x: Tensor, axis: number, start: number, length: number): Tensor {
  const ax = normAxis(axis, x.ndim, "narrow");
  const dim = x.shape[ax]!;
  if (
    !Number.isInteger(start) || !Number.isInteger(length) || start < 0 || length < 0 ||
    start + length > dim
  ) {
    throw new RangeError(
      `narrow: range start=${start} length=${length} does not fit axis ${axis} of size ${dim} in ${
        fmtShape(x.shape)
      }`,
    );
  }
  const outShape = x.shape.map((d, i) => (i === ax ? length : d));
  const strides = stridesOf(x.shape);
  const out = empty(x.backend, outShape, x.dtype);
  x.backend.run("copy", [x.buffer], [out.buffer], {
    shape: outShape,
    inStrides: strides,
    inOffset: start * strides[ax]!,
    outStrides: stridesOf(outShape),
    outOffset: 0,
  });
  return record("narrow", out, [x], [], (g) => {
    const dx = empty(g.backend, x.shape, g.dtype);
    copyInto(dx, g, ax, start);
    return [dx];
  });
}

/**
 * Python-style slicing: one `[start, end)` pair per leading axis (negative indices count from the
 * end, ends are clamped), `null` keeps an axis whole.
 *
 * @example Usage
 * ```ts
 * import { slice, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await slice(tensor([[1, 2, 3], [4, 5, 6]]), [null, [-2, 3]]).toArray(), [[2, 3], [5, 6]]);
 * ```
 */
export function slice(x: Tensor, ranges: readonly (readonly [number, number] | null)[]): Tensor {
  if (ranges.length > x.ndim) {
    throw new RangeError(
      `slice: ${ranges.length} ranges given for ${fmtShape(x.shape)} with ${x.ndim} axes`,
    );
  }
  let cur = x;
  ranges.forEach((r, ax) => {
    if (r === null) return;
    const dim = x.shape[ax]!;
    const fix = (v: number) => Math.min(Math.max(v < 0 ? v + dim : v, 0), dim);
    const s = fix(r[0]);
    const e = Math.max(fix(r[1]), s);
    if (s === 0 && e === dim) return;
    const next = narrow(cur, ax, s, e - s);
    if (cur !== x) cur.dispose();
    cur = next;
  });
  return cur === x ? reshape(x, x.shape) : cur;
}

/**
 * Joins tensors along an existing axis.
 *
 * @example Usage
 * ```ts
 * import { concat, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await concat([tensor([[1]]), tensor([[2, 3]])], 1).toArray(), [[1, 2, 3]]);
 * ```
 */
export function concat(xs: readonly Tensor[], axis = 0): Tensor {
  if (xs.length === 0) throw new RangeError("concat: need at least one tensor");
  const first = xs[0]!;
  const ax = normAxis(axis, first.ndim, "concat");
  const backend = backendOf("concat", ...xs);
  for (const t of xs) {
    const ok = t.ndim === first.ndim && t.dtype === first.dtype &&
      t.shape.every((d, i) => i === ax || d === first.shape[i]);
    if (!ok) {
      throw new RangeError(
        `concat: cannot join ${fmtShape(first.shape)} ${first.dtype} with ${
          fmtShape(t.shape)
        } ${t.dtype} along axis ${axis}`,
      );
    }
  }
  const total = xs.reduce((s, t) => s + t.shape[ax]!, 0);
  const outShape = first.shape.map((d, i) => (i === ax ? total : d));
  const out = empty(backend, outShape, first.dtype);
  const starts: number[] = [];
  let at = 0;
  for (const t of xs) {
    starts.push(at);
    copyInto(out, t, ax, at);
    at += t.shape[ax]!;
  }
  return record(
    "concat",
    out,
    xs,
    [],
    (g) => xs.map((t, i) => (t.requiresGrad ? narrow(g, ax, starts[i]!, t.shape[ax]!) : null)),
  );
}

/**
 * Joins tensors of equal shape along a new axis.
 *
 * @example Usage
 * ```ts
 * import { stack, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await stack([tensor([1, 2]), tensor([3, 4])], 1).toArray(), [[1, 3], [2, 4]]);
 * ```
 */
export function stack(xs: readonly Tensor[], axis = 0): Tensor {
  if (xs.length === 0) throw new RangeError("stack: need at least one tensor");
  const ax = normAxis(axis, xs[0]!.ndim + 1, "stack");
  const parts = xs.map((t) => unsqueeze(t, ax));
  const out = concat(parts, ax);
  for (const p of parts) p.dispose();
  return out;
}

/**
 * Inserts an axis of size 1 at `axis`.
 *
 * @example Usage
 * ```ts
 * import { unsqueeze, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(unsqueeze(tensor([1, 2]), 0).shape, [1, 2]);
 * ```
 */
export function unsqueeze(x: Tensor, axis: number): Tensor {
  const ax = normAxis(axis, x.ndim + 1, "unsqueeze");
  const shape = [...x.shape];
  shape.splice(ax, 0, 1);
  return reshape(x, shape);
}

/**
 * Removes axis `axis` of size 1, or every size-1 axis when omitted.
 *
 * @example Usage
 * ```ts
 * import { squeeze, zeros } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(squeeze(zeros([1, 3, 1])).shape, [3]);
 * ```
 */
export function squeeze(x: Tensor, axis?: number): Tensor {
  if (axis === undefined) return reshape(x, x.shape.filter((d) => d !== 1));
  const ax = normAxis(axis, x.ndim, "squeeze");
  if (x.shape[ax] !== 1) {
    throw new RangeError(
      `squeeze: axis ${axis} of ${fmtShape(x.shape)} has size ${x.shape[ax]}, not 1`,
    );
  }
  return reshape(x, x.shape.filter((_, i) => i !== ax));
}

/**
 * Merges axes `start..end` (inclusive) into one.
 *
 * @example Usage
 * ```ts
 * import { flatten, zeros } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(flatten(zeros([2, 3, 4]), 1).shape, [2, 12]);
 * ```
 */
export function flatten(x: Tensor, start = 0, end = -1): Tensor {
  if (x.ndim === 0) return reshape(x, [1]);
  const s = normAxis(start, x.ndim, "flatten");
  const e = normAxis(end, x.ndim, "flatten");
  if (e < s) throw new RangeError(`flatten: end axis ${end} comes before start axis ${start}`);
  return reshape(x, [
    ...x.shape.slice(0, s),
    sizeOf(x.shape.slice(s, e + 1)),
    ...x.shape.slice(e + 1),
  ]);
}

/**
 * Broadcasts `x` to `shape` as a real copy (−1 keeps a dimension); the backward sums over the
 * stretched axes.
 *
 * @example Usage
 * ```ts
 * import { expand, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await expand(tensor([[1], [2]]), [2, 3]).toArray(), [[1, 1, 1], [2, 2, 2]]);
 * ```
 */
export function expand(x: Tensor, shape: Shape): Tensor {
  const lead = shape.length - x.ndim;
  const target = shape.map((d, i) => (d === -1 && i >= lead ? x.shape[i - lead]! : d));
  if (lead < 0 || x.shape.some((d, i) => d !== 1 && d !== target[i + lead])) {
    throw new RangeError(`expand: cannot broadcast ${fmtShape(x.shape)} to ${fmtShape(shape)}`);
  }
  const src = stridesOf(x.shape);
  const out = empty(x.backend, target, x.dtype);
  x.backend.run("copy", [x.buffer], [out.buffer], {
    shape: target,
    inStrides: target.map((_, i) => (i < lead || x.shape[i - lead] === 1 ? 0 : src[i - lead]!)),
    inOffset: 0,
    outStrides: stridesOf(target),
    outOffset: 0,
  });
  return record("expand", out, [x], [], (g) => {
    const axes = target.map((_, i) => i).filter((i) =>
      i < lead || (x.shape[i - lead] === 1 && target[i] !== 1)
    );
    const s = axes.length > 0 ? g.sum(axes, true) : g.share();
    return [s.reshape(...x.shape)];
  });
}
