/**
 * Batched matrix multiplication with NumPy batch broadcasting and transposed-operand flags.
 *
 * `transA`/`transB` read an operand as its transpose without copying it; the backward pass uses
 * the same flags (`dA = dC·Bᵀ` is an NT product, `dB = Aᵀ·dC` a TN product), which is why the
 * backend kernel takes them.
 *
 * @module
 */

import { record } from "../autograd.ts";
import { fmtShape, sameShape, sizeOf } from "../shape.ts";
import type { Tensor } from "../tensor.ts";
import { backendOf, empty, requireFloat, unbroadcast } from "./_util.ts";
import { noGrad } from "../runtime.ts";
import { broadcastShapes } from "../shape.ts";

/** Options of {@link matmul}. */
export interface MatmulOptions {
  /** Use the transpose of the last two axes of `a`. */
  transA?: boolean;
  /** Use the transpose of the last two axes of `b`. */
  transB?: boolean;
  /**
   * Marks a product whose result only feeds gradients, as the products of `matmul`'s own
   * backward pass are: a hand-written backward (a recomputing node, say) sets it for its
   * products so that a CPU backend under `blas: "auto"` may run them on the native BLAS, whose
   * bits differ from the forward kernel's. Default false: the forward kernel, whose bits the
   * sampler and the learner share.
   */
  gradient?: boolean;
}

/**
 * `op(a) · op(b)` over the last two axes, broadcasting leading (batch) axes. 1-D operands are
 * treated as a row (for `a`) or a column (for `b`) vector and that axis is dropped from the
 * result, as in `torch.matmul`.
 *
 * @example Usage
 * ```ts
 * import { matmul, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const a = tensor([[1, 2], [3, 4]]);
 * const b = tensor([[5], [6]]);
 * assert.deepEqual(await matmul(a, b).toArray(), [[17], [39]]);
 * assert.deepEqual(await matmul(a, a, { transB: true }).toArray(), [[5, 11], [11, 25]]);
 * ```
 */
export function matmul(a: Tensor, b: Tensor, options: MatmulOptions = {}): Tensor {
  return product(a, b, options, options.gradient ?? false);
}

// `gradient` marks the backward pass's products (see `KernelParams.matmul.gradient`).
function product(a: Tensor, b: Tensor, options: MatmulOptions, gradient: boolean): Tensor {
  requireFloat("matmul", a, "a");
  requireFloat("matmul", b, "b");
  backendOf("matmul", a, b);
  const transA = options.transA ?? false;
  const transB = options.transB ?? false;
  if (a.ndim === 0 || b.ndim === 0) {
    throw new RangeError(
      `matmul: cannot multiply ${fmtShape(a.shape)} by ${
        fmtShape(b.shape)
      }: scalars have no matrix axes`,
    );
  }
  // Promote vectors to matrices, remembering which axes to drop at the end.
  const a2 = a.ndim === 1 ? a.reshape(1, a.size) : a;
  const b2 = b.ndim === 1 ? b.reshape(b.size, 1) : b;
  const [ar, ac] = a2.shape.slice(-2) as [number, number];
  const [br, bc] = b2.shape.slice(-2) as [number, number];
  const [m, k] = transA && a.ndim > 1 ? [ac, ar] : [ar, ac];
  const [kb, n] = transB && b.ndim > 1 ? [bc, br] : [br, bc];
  if (k !== kb) {
    const opA = transA ? `${fmtShape(a.shape)}ᵀ` : fmtShape(a.shape);
    const opB = transB ? `${fmtShape(b.shape)}ᵀ` : fmtShape(b.shape);
    throw new RangeError(
      `matmul: cannot multiply ${opA} by ${opB} (inner dimensions ${k} and ${kb} differ)`,
    );
  }
  const aBatch = a2.shape.slice(0, -2);
  const bBatch = b2.shape.slice(0, -2);
  const batchShape = broadcastShapes(aBatch, bBatch, "matmul");
  const batch = sizeOf(batchShape);
  // An operand whose batch differs from the full batch is either broadcast whole (stride 0)
  // or, for partial broadcasting, materialised by expand.
  const fit = (t: Tensor, tb: readonly number[]): [Tensor, number] => {
    if (sameShape(tb, batchShape)) return [t, t.shape.at(-1)! * t.shape.at(-2)!];
    if (sizeOf(tb) === 1) return [t, 0];
    return [
      noGrad(() => t.expand(...batchShape, t.shape.at(-2)!, t.shape.at(-1)!)),
      t.shape.at(-1)! * t.shape.at(-2)!,
    ];
  };
  const [A, aStride] = fit(a2, aBatch);
  const [B, bStride] = fit(b2, bBatch);
  const outShape = [...batchShape, m, n];
  const raw = empty(a.backend, outShape, "f32");
  a.backend.run("matmul", [A.buffer, B.buffer], [raw.buffer], {
    batch,
    m,
    n,
    k,
    transA: transA && a.ndim > 1,
    transB: transB && b.ndim > 1,
    aBatchStride: aStride,
    bBatchStride: bStride,
    ...(gradient ? { gradient } : {}),
  });
  for (const t of [A, B, a2, b2]) if (t !== a && t !== b && !t.isDisposed) t.dispose();
  const finalShape = [...batchShape, ...(a.ndim === 1 ? [] : [m]), ...(b.ndim === 1 ? [] : [n])];
  const out = finalShape.length === outShape.length ? raw : raw.share(finalShape);
  if (out !== raw) raw.dispose();
  const tA = transA && a.ndim > 1;
  const tB = transB && b.ndim > 1;
  return record("matmul", out, [a, b], [a, b], (g, [sa, sb]) => {
    const G = g.reshape(...outShape);
    const A2 = a.ndim === 1 ? sa!.reshape(1, a.size) : sa!;
    const B2 = b.ndim === 1 ? sb!.reshape(b.size, 1) : sb!;
    let da: Tensor | null = null;
    let db: Tensor | null = null;
    if (a.requiresGrad) {
      const d = tA
        ? product(B2, G, { transA: tB, transB: true }, true)
        : product(G, B2, { transB: !tB }, true);
      da = unbroadcast(d, A2.shape).reshape(...a.shape);
    }
    if (b.requiresGrad) {
      const d = tB
        ? product(G, A2, { transA: true, transB: tA }, true)
        : product(A2, G, { transA: !tA }, true);
      db = unbroadcast(d, B2.shape).reshape(...b.shape);
    }
    return [da, db];
  });
}
