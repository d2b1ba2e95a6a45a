/**
 * Attention on the CPU through the matmul kernels: the same contract as `./attention.ts` (its
 * oracle), with the four products per (sequence, kv head) run by the WebAssembly SIMD matmul
 * instead of float64 scalar loops, and only the row-wise softmax left to JavaScript.
 *
 * Design decisions:
 * - **Query heads that share a kv head are stacked as rows**: `q` is `[batch, heads, tq, d]`, so
 *   the `group = heads / kvHeads` heads of one kv head are `group·tq` contiguous rows, and one
 *   product `S = Q·Kᵀ` serves them all (Hugging Face's `repeat_kv` without the copy). `dK` and `dV`
 *   then come out summed over the group by the product itself.
 * - **The score block `[group·tq, tk]` is transient**, allocated per call and never saved: the
 *   forward pass keeps only `o` and the row log-sum-exp, and the backward pass recomputes
 *   `P = exp(scale·S − lse)`, as the oracle does.
 * - **Forward bits do not depend on `tq`**, so KV-cached decoding stays bit-exact: every element of
 *   `S` is a sum over `d` in the wasm kernel (independent of `m` and `n`); the softmax of row `i`
 *   reads its visible keys in order; in `O = P·V` the keys row `i` may not see carry `p = +0`,
 *   whose products leave a sum unchanged. The forward products always run the wasm kernel
 *   (`direct`, with no small-product rule, which would switch kernels with `tk`), even when a
 *   native BLAS takes other products. The backward products are marked `gradient: true`, so
 *   `blas: "auto"` may send them to the BLAS.
 * - **Numerics**: f32 sums of products (the oracle sums in float64), exponentials and the
 *   softmax's max and sum in float64; tests bound the difference from the oracle.
 *
 * @module
 */

import type { HostArray, KernelParams } from "../types.ts";
import type { MatmulKernel } from "../wasm/matmul_wasm.ts";

type Params = KernelParams["attention"];

/** How many leading keys query row i may see before the padding mask applies. */
function visibleKeys(p: Params, i: number): number {
  return p.causal ? Math.max(0, Math.min(p.tk, p.tk - p.tq + i + 1)) : p.tk;
}

/**
 * Calls `fn` once per (sequence, kv head) with the offsets of that group: its stacked query rows
 * (`q`, `o` and their gradients), its keys and values, its first lse row and its mask row.
 */
function forEachGroup(
  p: Params,
  fn: (qBase: number, kvBase: number, lseBase: number, maskBase: number) => void,
): void {
  const { batch, heads, kvHeads, tq, tk, d } = p;
  const group = heads / kvHeads;
  for (let b = 0; b < batch; b++) {
    for (let g = 0; g < kvHeads; g++) {
      const row = (b * heads + g * group) * tq;
      fn(row * d, (b * kvHeads + g) * tk * d, row, b * tk);
    }
  }
}

/** A plain product `c = op(a)·op(b)` of one matrix each. */
function product(
  mm: MatmulKernel,
  a: HostArray,
  b: HostArray,
  c: HostArray,
  m: number,
  n: number,
  k: number,
  transA: boolean,
  transB: boolean,
  gradient: boolean,
): void {
  mm([a, b], [c], {
    batch: 1,
    m,
    n,
    k,
    transA,
    transB,
    aBatchStride: 0,
    bBatchStride: 0,
    ...(gradient ? { gradient } : {}),
  });
}

/**
 * Fills `prob` (`[rows, tk]`, rows = the group's heads × tq) with `exp(scale·s − lse)` for the
 * keys each row may see and +0 elsewhere; with `lse === null` it computes each row's lse first
 * (forward) and stores it there.
 */
function probabilities(
  scores: Float32Array,
  prob: Float32Array,
  p: Params,
  rows: number,
  mask: HostArray | undefined,
  maskBase: number,
  lse: HostArray,
  lseBase: number,
  forward: boolean,
): void {
  const { tq, tk, scale, hasMask } = p;
  for (let r = 0; r < rows; r++) {
    const i = r % tq;
    const n = visibleKeys(p, i);
    const base = r * tk;
    prob.fill(0, base, base + tk);
    let l: number;
    if (forward) {
      let max = -Infinity;
      for (let j = 0; j < n; j++) {
        if (hasMask && !mask![maskBase + j]) continue;
        const s = scores[base + j]! * scale;
        if (s > max || Number.isNaN(s)) max = s;
      }
      if (max === -Infinity) {
        lse[lseBase + r] = -Infinity;
        continue;
      }
      let sum = 0;
      for (let j = 0; j < n; j++) {
        if (hasMask && !mask![maskBase + j]) continue;
        sum += Math.exp(scores[base + j]! * scale - max);
      }
      l = max + Math.log(sum);
      lse[lseBase + r] = l;
      // Normalise by the sum, not by exp(−lse), so a row's probabilities add up as the oracle's.
      for (let j = 0; j < n; j++) {
        if (hasMask && !mask![maskBase + j]) continue;
        prob[base + j] = Math.exp(scores[base + j]! * scale - max) / sum;
      }
    } else {
      l = lse[lseBase + r]!;
      if (l === -Infinity) continue;
      for (let j = 0; j < n; j++) {
        if (hasMask && !mask![maskBase + j]) continue;
        prob[base + j] = Math.exp(scores[base + j]! * scale - l);
      }
    }
  }
}

/**
 * `attention` through matmul products (see the module doc); `o` and `lse` as the oracle's.
 *
 * @param direct The wasm matmul with no small-product rule (its bits must not depend on `tk`).
 * @returns The kernel.
 *
 * @example Usage
 * ```ts
 * import { attentionViaMatmul } from "./attention_matmul.ts";
 * import { matmul } from "./matmul.ts";
 * import assert from "node:assert/strict";
 * const kernel = attentionViaMatmul(matmul);
 * const p = { batch: 1, heads: 1, kvHeads: 1, tq: 1, tk: 2, d: 1, scale: 1, causal: false, hasMask: false };
 * const o = new Float32Array(1), lse = new Float32Array(1);
 * kernel([new Float32Array([0]), new Float32Array([1, 2]), new Float32Array([3, 5])], [o, lse], p);
 * assert.equal(o[0], 4); // equal scores: the mean of the values
 * ```
 */
export function attentionViaMatmul(
  direct: MatmulKernel,
): (inputs: HostArray[], outputs: HostArray[], p: Params) => void {
  return ([q, k, v, mask], [o, lse], p) => {
    const { heads, kvHeads, tq, tk, d } = p;
    const rows = (heads / kvHeads) * tq;
    if (rows === 0) return;
    const scores = new Float32Array(rows * tk);
    const prob = new Float32Array(rows * tk);
    forEachGroup(p, (qBase, kvBase, lseBase, maskBase) => {
      const Q = q!.subarray(qBase, qBase + rows * d);
      const K = k!.subarray(kvBase, kvBase + tk * d);
      const V = v!.subarray(kvBase, kvBase + tk * d);
      const O = o!.subarray(qBase, qBase + rows * d);
      product(direct, Q, K, scores, rows, tk, d, false, true, false);
      probabilities(scores, prob, p, rows, mask, maskBase, lse!, lseBase, true);
      product(direct, prob, V, O, rows, d, tk, false, false, false);
    });
  };
}

/**
 * `attention_backward` through matmul products: with `P` recomputed from the saved lse,
 * `dV = Pᵀ·dO`, `dP = dO·Vᵀ`, `dS = P ∘ (dP − D)` with `D = Σ dO·O` per row, `dQ = scale·dS·K`,
 * `dK = scale·dSᵀ·Q`, each product over the group's stacked rows.
 *
 * @param mm The matmul kernel (gradient products: the native BLAS may take them).
 * @returns The kernel.
 *
 * @example Usage
 * ```ts
 * import { attentionBackwardViaMatmul } from "./attention_matmul.ts";
 * import { matmul } from "./matmul.ts";
 * import assert from "node:assert/strict";
 * const kernel = attentionBackwardViaMatmul(matmul);
 * const p = { batch: 1, heads: 1, kvHeads: 1, tq: 1, tk: 2, d: 1, scale: 1, causal: false, hasMask: false };
 * const q = new Float32Array([0]), k = new Float32Array([1, 2]), v = new Float32Array([3, 5]);
 * const o = new Float32Array([4]), lse = new Float32Array([Math.log(2)]); // both scores 0
 * const dq = new Float32Array(1), dk = new Float32Array(2), dv = new Float32Array(2);
 * kernel([q, k, v, o, lse, new Float32Array([1])], [dq, dk, dv], p);
 * assert.deepEqual([...dv], [0.5, 0.5]); // each value had probability ½
 * ```
 */
export function attentionBackwardViaMatmul(
  mm: MatmulKernel,
): (inputs: HostArray[], outputs: HostArray[], p: Params) => void {
  return ([q, k, v, o, lse, dout, mask], [dq, dk, dv], p) => {
    const { heads, kvHeads, tq, tk, d, scale } = p;
    const rows = (heads / kvHeads) * tq;
    if (rows === 0 || tk === 0 || d === 0) {
      dq!.fill(0);
      dk!.fill(0);
      dv!.fill(0);
      return;
    }
    const scores = new Float32Array(rows * tk);
    const prob = new Float32Array(rows * tk);
    const dp = new Float32Array(rows * tk);
    forEachGroup(p, (qBase, kvBase, lseBase, maskBase) => {
      const Q = q!.subarray(qBase, qBase + rows * d);
      const K = k!.subarray(kvBase, kvBase + tk * d);
      const V = v!.subarray(kvBase, kvBase + tk * d);
      const O = o!.subarray(qBase, qBase + rows * d);
      const DO = dout!.subarray(qBase, qBase + rows * d);
      product(mm, Q, K, scores, rows, tk, d, false, true, true);
      probabilities(scores, prob, p, rows, mask, maskBase, lse!, lseBase, false);
      product(mm, DO, V, dp, rows, tk, d, false, true, true);
      // dS = P ∘ (dP − D), in place of dP.
      for (let r = 0; r < rows; r++) {
        let D = 0;
        for (let c = 0; c < d; c++) D += DO[r * d + c]! * O[r * d + c]!;
        const base = r * tk;
        for (let j = 0; j < tk; j++) {
          const pr = prob[base + j]!;
          dp[base + j] = pr === 0 ? 0 : pr * (dp[base + j]! - D);
        }
      }
      const DQ = dq!.subarray(qBase, qBase + rows * d);
      product(mm, dp, K, DQ, rows, d, tk, false, false, true);
      for (let i = 0; i < DQ.length; i++) DQ[i] = scale * DQ[i]!;
      const DK = dk!.subarray(kvBase, kvBase + tk * d);
      product(mm, dp, Q, DK, tk, d, rows, true, false, true);
      for (let i = 0; i < DK.length; i++) DK[i] = scale * DK[i]!;
      const DV = dv!.subarray(kvBase, kvBase + tk * d);
      product(mm, prob, DO, DV, tk, d, rows, true, false, true);
    });
  };
}
