/**
 * Softmax, log-softmax and log-sum-exp along any axis, shifted by the row maximum so that large
 * logits never overflow. Backward passes reuse the forward output, never the input.
 *
 * @module
 */

import { record } from "../autograd.ts";
import type { Tensor } from "../tensor.ts";
import { empty, requireFloat } from "./_util.ts";
import { alongLastAxis } from "./reduce.ts";
import { normAxis } from "../shape.ts";
import { noGrad } from "../runtime.ts";
import { permute } from "./shape.ts";

function softmaxRows(x: Tensor, rows: number, cols: number, log: boolean): Tensor {
  const out = empty(x.backend, x.shape, "f32");
  x.backend.run("softmax", [x.buffer], [out.buffer], { rows, cols, log });
  return record(log ? "logSoftmax" : "softmax", out, [x], [out], (g, [y]) => {
    const dx = empty(g.backend, g.shape, "f32");
    g.backend.run("softmax_backward", [y!.buffer, g.buffer], [dx.buffer], { rows, cols, log });
    return [dx];
  });
}

/**
 * Softmax along `axis` (default last).
 *
 * @example Usage
 * ```ts
 * import { softmax, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await softmax(tensor([0, 0])).toArray(), [0.5, 0.5]);
 * ```
 */
export function softmax(x: Tensor, axis = -1): Tensor {
  requireFloat("softmax", x);
  return alongLastAxis(x, axis, "softmax", (t, rows, cols) => softmaxRows(t, rows, cols, false));
}

/**
 * Log-softmax along `axis` (default last).
 *
 * @example Usage
 * ```ts
 * import { logSoftmax, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const v = await logSoftmax(tensor([0, 0])).toArray() as number[];
 * assert.ok(Math.abs(v[0]! - Math.log(0.5)) < 1e-6);
 * ```
 */
export function logSoftmax(x: Tensor, axis = -1): Tensor {
  requireFloat("logSoftmax", x);
  return alongLastAxis(x, axis, "logSoftmax", (t, rows, cols) => softmaxRows(t, rows, cols, true));
}

/**
 * `log Σ exp(x)` along `axis`; its gradient is the softmax.
 *
 * @example Usage
 * ```ts
 * import { logsumexp, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const v = await logsumexp(tensor([1000, 1000])).item();
 * assert.ok(Math.abs(v - (1000 + Math.log(2))) < 1e-3);
 * ```
 */
export function logsumexp(x: Tensor, axis = -1, keepdim = false): Tensor {
  requireFloat("logsumexp", x);
  const ax = normAxis(axis, x.ndim, "logsumexp");
  const keptShape = x.shape.map((d, i) => (i === ax ? 1 : d));
  const outShape = keepdim ? keptShape : x.shape.filter((_, i) => i !== ax);
  // Move the axis last keeping the others in order, so the rows come out in output order.
  const order = [...[...Array(x.ndim).keys()].filter((i) => i !== ax), ax];
  const moved = ax === x.ndim - 1 ? x : noGrad(() => permute(x, order));
  const cols = x.shape[ax]!;
  const out = empty(x.backend, outShape, "f32");
  x.backend.run("logsumexp", [moved.buffer], [out.buffer], { rows: out.size, cols });
  if (moved !== x) moved.dispose();
  return record("logsumexp", out, [x], [x, out], (g, [sx, so]) => {
    const kept = so!.reshape(...keptShape);
    return [sx!.sub(kept).exp().mul(g.reshape(...keptShape))];
  });
}
