/**
 * RMSNorm and LayerNorm over the last axis, each one fused kernel forward and one backward.
 *
 * Design: a composition of elementwise ops would save five or six full-size intermediates for
 * backward; the fused kernels save only the input and one or two numbers per row (`rstd`,
 * `mean`), the layout llm.c and Apex use, so a GPU backend can implement the same catalogue
 * entries with the same memory. The weight and bias gradients come out of the same backward
 * kernel as the input gradient.
 *
 * @module
 */

import { record } from "../autograd.ts";
import { full } from "../creation.ts";
import { fmtShape, sizeOf } from "../shape.ts";
import type { Tensor } from "../tensor.ts";
import { backendOf, empty, requireFloat } from "./_util.ts";

function checkNormArgs(op: string, x: Tensor, eps: number): number {
  requireFloat(op, x, "x");
  if (x.ndim < 1) {
    throw new RangeError(
      `${op}: x must have at least one axis to normalise, got a scalar; reshape it to [1]`,
    );
  }
  if (!(Number.isFinite(eps) && eps >= 0)) {
    throw new RangeError(`${op}: eps must be a finite number >= 0, got ${eps}`);
  }
  return x.shape[x.ndim - 1]!;
}

function checkAffine(op: string, name: string, p: Tensor, x: Tensor, cols: number): void {
  requireFloat(op, p, name);
  backendOf(op, x, p);
  if (p.ndim !== 1 || p.shape[0] !== cols) {
    const ps = fmtShape(p.shape);
    const xs = fmtShape(x.shape);
    throw new RangeError(
      `${op}: ${name} shape ${ps} must equal the last axis of x ${xs} (${cols}); ` +
        `pass a 1-D ${name} of length ${cols}`,
    );
  }
}

/**
 * Root-mean-square normalisation over the last axis (Llama, Qwen2):
 * `y = x / sqrt(mean(x², -1) + eps) · weight`. Gradients flow to `x` and `weight`.
 *
 * @param x Input `[..., d]` (f32).
 * @param weight Per-feature gain `[d]`.
 * @param eps Added to the mean square before the square root (default 1e-6, as Qwen2).
 * @returns The normalised tensor, shaped like `x`.
 *
 * @example Usage
 * ```ts
 * import { rmsNorm, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * // Row [2, 2] has mean square 4, so with eps = 0 it is divided by exactly 2.
 * const y = await rmsNorm(tensor([[2, 2], [0, 4]]), tensor([1, 0.5]), 0).toArray() as number[][];
 * assert.deepEqual(y[0], [1, 0.5]);
 * assert.ok(Math.abs(y[1]![1]! - 0.5 * Math.SQRT2) < 1e-6);
 * ```
 */
export function rmsNorm(x: Tensor, weight: Tensor, eps = 1e-6): Tensor {
  const cols = checkNormArgs("rmsNorm", x, eps);
  checkAffine("rmsNorm", "weight", weight, x, cols);
  const rowShape = x.shape.slice(0, -1);
  const rows = sizeOf(rowShape);
  const y = empty(x.backend, x.shape, "f32");
  const rstd = empty(x.backend, rowShape, "f32");
  x.backend.run("rms_norm", [x.buffer, weight.buffer], [y.buffer, rstd.buffer], {
    rows,
    cols,
    eps,
  });
  record("rmsNorm", y, [x, weight], [x, weight, rstd], (g, [sx, sw, sr]) => {
    const dx = empty(g.backend, x.shape, "f32");
    const dw = empty(g.backend, weight.shape, "f32");
    g.backend.run(
      "rms_norm_backward",
      [sx!.buffer, sw!.buffer, sr!.buffer, g.buffer],
      [dx.buffer, dw.buffer],
      { rows, cols },
    );
    return [dx, dw];
  });
  rstd.dispose();
  return y;
}

/**
 * Layer normalisation over the last axis with the biased variance, as `torch.nn.LayerNorm`:
 * `y = (x − mean) / sqrt(var + eps) · weight + bias`. Omitted `weight`/`bias` act as ones/zeros
 * and receive no gradient.
 *
 * @param x Input `[..., d]` (f32).
 * @param weight Per-feature gain `[d]` (default ones).
 * @param bias Per-feature shift `[d]` (default zeros).
 * @param eps Added to the variance before the square root (default 1e-5, as PyTorch).
 * @returns The normalised tensor, shaped like `x`.
 *
 * @example Usage
 * ```ts
 * import { layerNorm, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * // Row [1, 3]: mean 2, variance 1, so with eps = 0 it normalises to [-1, 1] exactly.
 * const y = layerNorm(tensor([[1, 3]]), tensor([2, 2]), tensor([0.5, 0.5]), 0);
 * assert.deepEqual(await y.toArray(), [[-1.5, 2.5]]);
 * ```
 */
export function layerNorm(x: Tensor, weight?: Tensor, bias?: Tensor, eps = 1e-5): Tensor {
  const cols = checkNormArgs("layerNorm", x, eps);
  if (weight !== undefined) checkAffine("layerNorm", "weight", weight, x, cols);
  if (bias !== undefined) checkAffine("layerNorm", "bias", bias, x, cols);
  const w = weight ?? full([cols], 1, { backend: x.backend });
  const b = bias ?? full([cols], 0, { backend: x.backend });
  const rowShape = x.shape.slice(0, -1);
  const rows = sizeOf(rowShape);
  const y = empty(x.backend, x.shape, "f32");
  const mean = empty(x.backend, rowShape, "f32");
  const rstd = empty(x.backend, rowShape, "f32");
  x.backend.run(
    "layer_norm",
    [x.buffer, w.buffer, b.buffer],
    [y.buffer, mean.buffer, rstd.buffer],
    {
      rows,
      cols,
      eps,
    },
  );
  // The stand-in ones/zeros are listed as inputs so gradients keep their positions; they never
  // require grad, so autograd drops whatever is returned for them.
  record("layerNorm", y, [x, w, b], [x, w, mean, rstd], (g, [sx, sw, sm, sr]) => {
    const dx = empty(g.backend, x.shape, "f32");
    const dw = empty(g.backend, [cols], "f32");
    const db = empty(g.backend, [cols], "f32");
    g.backend.run(
      "layer_norm_backward",
      [sx!.buffer, sw!.buffer, sm!.buffer, sr!.buffer, g.buffer],
      [dx.buffer, dw.buffer, db.buffer],
      { rows, cols },
    );
    return [dx, weight === undefined ? null : dw, bias === undefined ? null : db];
  });
  mean.dispose();
  rstd.dispose();
  if (w !== weight) w.dispose();
  if (b !== bias) b.dispose();
  return y;
}
