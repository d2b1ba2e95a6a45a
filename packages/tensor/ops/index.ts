/**
 * Index ops: `gather` along an axis (token log-probs, top-k picks), `indexSelect` of whole
 * slices, and `embedding` lookup. Their backward passes are scatter-adds, so repeated indices
 * (the same token twice in a batch) accumulate their gradients.
 *
 * @module
 */

import { record } from "../autograd.ts";
import { fmtShape, normAxis, sizeOf } from "../shape.ts";
import type { Tensor } from "../tensor.ts";
import { backendOf, empty, requireIndex } from "./_util.ts";
import { permute } from "./shape.ts";
import { noGrad } from "../runtime.ts";

function moveLast(x: Tensor, ax: number): { t: Tensor; order: number[] } {
  const order = [...Array(x.ndim).keys()];
  const last = x.ndim - 1;
  [order[ax], order[last]] = [order[last]!, order[ax]!];
  return { t: ax === last ? x : noGrad(() => permute(x, order)), order };
}

/**
 * `out[..., j, ...] = x[..., index[..., j, ...], ...]` along `axis`; `index` (i32) has the shape
 * of `x` except along `axis`.
 *
 * @example Usage
 * ```ts
 * import { gather, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const x = tensor([[10, 11, 12], [20, 21, 22]]);
 * const idx = tensor([[2], [0]], { dtype: "i32" });
 * assert.deepEqual(await gather(x, idx, 1).toArray(), [[12], [20]]);
 * ```
 */
export function gather(x: Tensor, index: Tensor, axis = -1): Tensor {
  requireIndex("gather", index);
  backendOf("gather", x, index);
  const ax = normAxis(axis, x.ndim, "gather");
  if (index.ndim !== x.ndim || index.shape.some((d, i) => i !== ax && d !== x.shape[i])) {
    throw new RangeError(
      `gather: index shape ${fmtShape(index.shape)} must match input ${
        fmtShape(x.shape)
      } except along axis ${axis}`,
    );
  }
  const xs = moveLast(x, ax);
  const is = moveLast(index, ax);
  const n = x.shape[ax]!;
  const m = index.shape[ax]!;
  const outer = m === 0 ? 0 : is.t.size / m;
  const raw = empty(x.backend, is.t.shape, x.dtype);
  x.backend.run("gather", [xs.t.buffer, is.t.buffer], [raw.buffer], { outer, n, m });
  const out = ax === x.ndim - 1 ? raw : noGrad(() => permute(raw, xs.order));
  if (out !== raw) raw.dispose();
  if (xs.t !== x) xs.t.dispose();
  record("gather", out, [x], [is.t], (g, [idx]) => {
    const gl = ax === x.ndim - 1 ? g.share() : permute(g, xs.order);
    const dx = empty(g.backend, xs.t.shape, "f32");
    g.backend.run("scatter_add", [idx!.buffer, gl.buffer], [dx.buffer], { outer, n, m });
    return [ax === x.ndim - 1 ? dx : permute(dx, xs.order)];
  });
  if (is.t !== index) is.t.dispose();
  return out;
}

/**
 * Selects entries of `axis` by a 1-D i32 `index` (repeats allowed).
 *
 * @example Usage
 * ```ts
 * import { indexSelect, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const x = tensor([[1, 2], [3, 4], [5, 6]]);
 * assert.deepEqual(await indexSelect(x, 0, tensor([2, 0, 2], { dtype: "i32" })).toArray(), [[5, 6], [1, 2], [5, 6]]);
 * ```
 */
export function indexSelect(x: Tensor, axis: number, index: Tensor): Tensor {
  requireIndex("indexSelect", index);
  backendOf("indexSelect", x, index);
  if (index.ndim !== 1) {
    throw new RangeError(
      `indexSelect: index must be 1-D, got shape ${fmtShape(index.shape)}; flatten it first`,
    );
  }
  const ax = normAxis(axis, x.ndim, "indexSelect");
  const outer = sizeOf(x.shape.slice(0, ax));
  const n = x.shape[ax]!;
  const inner = sizeOf(x.shape.slice(ax + 1));
  const m = index.size;
  const outShape = x.shape.map((d, i) => (i === ax ? m : d));
  const out = empty(x.backend, outShape, x.dtype);
  x.backend.run("index_select", [x.buffer, index.buffer], [out.buffer], { outer, n, inner, m });
  return record("indexSelect", out, [x], [index], (g, [idx]) => {
    const dx = empty(g.backend, x.shape, "f32");
    g.backend.run("index_add", [idx!.buffer, g.buffer], [dx.buffer], { outer, n, inner, m });
    return [dx];
  });
}

/**
 * Embedding lookup: rows of `weight` `[vocab, dim]` for i32 `ids` of any shape, giving
 * `[...ids.shape, dim]`. The backward scatter-adds into the rows that were used.
 *
 * @example Usage
 * ```ts
 * import { embedding, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const w = tensor([[0, 0], [1, 1], [2, 2]]);
 * const ids = tensor([[1, 2]], { dtype: "i32" });
 * assert.deepEqual(await embedding(w, ids).toArray(), [[[1, 1], [2, 2]]]);
 * ```
 */
export function embedding(weight: Tensor, ids: Tensor): Tensor {
  if (weight.ndim !== 2) {
    throw new RangeError(`embedding: weight must be [vocab, dim], got ${fmtShape(weight.shape)}`);
  }
  const flat = ids.reshape(ids.size);
  const rows = indexSelect(weight, 0, flat);
  const out = rows.reshape(...ids.shape, weight.shape[1]!);
  flat.dispose();
  rows.dispose();
  return out;
}
