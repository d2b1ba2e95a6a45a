/**
 * Scaled dot-product attention as one fused op: grouped-query heads, a causal mask that allows a
 * KV-cache prefix, and a key-padding mask.
 *
 * Design: the op saves `q, k, v`, the output and one log-sum-exp per query row, never the
 * `[tq, tk]` probabilities; the backward kernel recomputes them (FlashAttention / llm.c). Built
 * from matmul + softmax, attention would save two `[batch, heads, tq, tk]` tensors per layer,
 * which is what limits sequence length in RL fine-tuning. Grouped-query attention is handled by
 * indexing, without repeating k and v in memory; their gradients are summed over the query heads
 * that share them.
 *
 * @module
 */

import { record } from "../autograd.ts";
import { fmtShape } from "../shape.ts";
import type { Tensor } from "../tensor.ts";
import { backendOf, castTo, empty, requireFloat } from "./_util.ts";

/** Options of {@link scaledDotProductAttention}. */
export interface AttentionOptions {
  /**
   * Causal masking (default true): query i sees keys `j <= (tk − tq) + i`, so when `tk > tq` the
   * first `tk − tq` keys are a cached prefix every query sees.
   */
  causal?: boolean;
  /** Multiplier of `q·k` (default `1 / sqrt(headDim)`). */
  scale?: number;
  /**
   * Key-padding mask `[batch, tk]`, bool (or i32 0/1, as a Hugging Face `attention_mask`): keys
   * where it is false/0 are ignored by every query.
   */
  mask?: Tensor;
}

/**
 * Attention `softmax(scale · q·kᵀ + mask) · v` over the last two axes, with
 * `q` `[batch, heads, tq, headDim]` and `k`, `v` `[batch, kvHeads, tk, headDim]`, where
 * `heads % kvHeads == 0` (query head h uses kv head `floor(h / (heads / kvHeads))`). A query that
 * may see no key outputs zeros and receives zero gradients. Gradients flow to q, k and v.
 *
 * @param q Queries `[batch, heads, tq, headDim]`.
 * @param k Keys `[batch, kvHeads, tk, headDim]`.
 * @param v Values `[batch, kvHeads, tk, headDim]`.
 * @param options Causal flag, scale and key-padding mask.
 * @returns The attended values `[batch, heads, tq, headDim]`.
 *
 * @example Usage
 * ```ts
 * import { scaledDotProductAttention, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * // Two keys with equal scores: the second query averages both values, the first sees only one.
 * const q = tensor([0, 0, 0, 0], { shape: [1, 1, 2, 2] });
 * const k = tensor([1, 0, 0, 1], { shape: [1, 1, 2, 2] });
 * const v = tensor([2, 4, 6, 8], { shape: [1, 1, 2, 2] });
 * const o = scaledDotProductAttention(q, k, v);
 * assert.deepEqual(await o.toArray(), [[[[2, 4], [4, 6]]]]);
 * ```
 */
export function scaledDotProductAttention(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  options: AttentionOptions = {},
): Tensor {
  const op = "scaledDotProductAttention";
  requireFloat(op, q, "q");
  requireFloat(op, k, "k");
  requireFloat(op, v, "v");
  backendOf(op, q, k, v);
  for (const [name, t] of [["q", q], ["k", k], ["v", v]] as const) {
    if (t.ndim !== 4) {
      throw new RangeError(
        `${op}: ${name} must be [batch, heads, t, headDim], got ${fmtShape(t.shape)}`,
      );
    }
  }
  const [batch, heads, tq, d] = q.shape as [number, number, number, number];
  const [kb, kvHeads, tk, kd] = k.shape as [number, number, number, number];
  const qs = fmtShape(q.shape);
  const ks = fmtShape(k.shape);
  if (k.shape.some((n, i) => n !== v.shape[i])) {
    throw new RangeError(`${op}: k ${ks} and v ${fmtShape(v.shape)} must have the same shape`);
  }
  if (kb !== batch || kd !== d) {
    throw new RangeError(
      `${op}: k ${ks} must match q ${qs} in batch (${batch}) and headDim (${d})`,
    );
  }
  if (kvHeads === 0 ? heads !== 0 : heads % kvHeads !== 0) {
    throw new RangeError(
      `${op}: q has ${heads} heads, which is not a multiple of the ${kvHeads} kv heads of k ${ks}`,
    );
  }
  const causal = options.causal ?? true;
  const scale = options.scale ?? 1 / Math.sqrt(d);
  if (!Number.isFinite(scale)) {
    throw new RangeError(
      `${op}: scale must be finite, got ${scale}; pass options.scale when headDim is 0`,
    );
  }
  let mask: Tensor | null = null;
  if (options.mask !== undefined) {
    const m = options.mask;
    backendOf(op, q, m);
    if (m.dtype === "f32") {
      throw new TypeError(`${op}: mask must be bool or i32 (1 = attend, 0 = padding), got f32`);
    }
    if (m.ndim !== 2 || m.shape[0] !== batch || m.shape[1] !== tk) {
      const ms = fmtShape(m.shape);
      throw new RangeError(
        `${op}: mask shape ${ms} must be [batch, tk] = [${batch},${tk}] for k ${ks}`,
      );
    }
    mask = castTo(m, "bool");
  }
  const params = { batch, heads, kvHeads, tq, tk, d, scale, causal, hasMask: mask !== null };
  const extra = mask === null ? [] : [mask];
  const o = empty(q.backend, q.shape, "f32");
  const lse = empty(q.backend, [batch, heads, tq], "f32");
  q.backend.run("attention", [q.buffer, k.buffer, v.buffer, ...extra.map((t) => t.buffer)], [
    o.buffer,
    lse.buffer,
  ], params);
  record(op, o, [q, k, v], [q, k, v, o, lse, ...extra], (g, [sq, sk, sv, so, sl, sm]) => {
    const dq = empty(g.backend, q.shape, "f32");
    const dk = empty(g.backend, k.shape, "f32");
    const dv = empty(g.backend, v.shape, "f32");
    const inputs = [sq!, sk!, sv!, so!, sl!, g, ...(sm === undefined ? [] : [sm])];
    g.backend.run("attention_backward", inputs.map((t) => t.buffer), [
      dq.buffer,
      dk.buffer,
      dv.buffer,
    ], params);
    return [dq, dk, dv];
  });
  lse.dispose();
  if (mask !== null && mask !== options.mask) mask.dispose();
  return o;
}
