/**
 * CPU kernels for scaled dot-product attention with grouped-query heads, a causal mask that
 * allows a KV-cache prefix, and an optional key-padding mask.
 *
 * The forward pass never stores the `[tq, tk]` probability matrix: it keeps one row of scores,
 * writes the output and the row's log-sum-exp, and the backward pass recomputes each probability
 * as `exp(s − lse)` (the FlashAttention / llm.c recipe). That keeps saved memory at `O(t)` per
 * head, which is what a GPU backend must do too, so both backends save the same tensors. A row
 * that may attend to no key (everything masked, or a causal row before the first key) gets
 * `lse = −Infinity`, a zero output and zero gradients rather than the NaN a naive softmax gives.
 *
 * Query head h reads kv head `floor(h / (heads / kvHeads))`, the grouping of Hugging Face's
 * `repeat_kv`, so pretrained GQA checkpoints line up.
 *
 * @module
 */

import type { HostArray, KernelParams } from "../types.ts";

/** How many leading keys query row i may see before the padding mask applies. */
function visibleKeys(p: KernelParams["attention"], i: number): number {
  return p.causal ? Math.max(0, Math.min(p.tk, p.tk - p.tq + i + 1)) : p.tk;
}

/** `attention`: `o = softmax(scale · q·kᵀ + masks) · v` and the row log-sum-exp. */
export function attention(
  [q, k, v, mask]: HostArray[],
  [o, lse]: HostArray[],
  p: KernelParams["attention"],
): void {
  const Q = q!;
  const K = k!;
  const V = v!;
  const O = o!;
  const L = lse!;
  const { batch, heads, kvHeads, tq, tk, d, scale, hasMask } = p;
  const group = heads / kvHeads;
  const scores = new Float64Array(tk);
  const acc = new Float64Array(d);
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < heads; h++) {
      const kvBase = (b * kvHeads + Math.floor(h / group)) * tk * d;
      for (let i = 0; i < tq; i++) {
        const row = (b * heads + h) * tq + i;
        const qBase = row * d;
        const n = visibleKeys(p, i);
        let max = -Infinity;
        for (let j = 0; j < n; j++) {
          if (hasMask && !mask![b * tk + j]) {
            scores[j] = -Infinity;
            continue;
          }
          let s = 0;
          const kBase = kvBase + j * d;
          for (let c = 0; c < d; c++) s += Q[qBase + c]! * K[kBase + c]!;
          s *= scale;
          scores[j] = s;
          if (s > max || Number.isNaN(s)) max = s;
        }
        if (max === -Infinity) {
          L[row] = -Infinity;
          for (let c = 0; c < d; c++) O[qBase + c] = 0;
          continue;
        }
        acc.fill(0);
        let sum = 0;
        for (let j = 0; j < n; j++) {
          const e = Math.exp(scores[j]! - max);
          if (e === 0) continue;
          sum += e;
          const vBase = kvBase + j * d;
          for (let c = 0; c < d; c++) acc[c]! += e * V[vBase + c]!;
        }
        L[row] = max + Math.log(sum);
        for (let c = 0; c < d; c++) O[qBase + c] = acc[c]! / sum;
      }
    }
  }
}

/**
 * `attention_backward`: with `p = exp(s − lse)`, `D = Σ do·o`, `ds = p · (do·v − D)`:
 * `dq = scale · Σ_j ds·k`, `dk += scale · ds·q`, `dv += p·do`, the last two summed over the
 * query heads that share a kv head.
 */
export function attentionBackward(
  [q, k, v, o, lse, dout, mask]: HostArray[],
  [dq, dk, dv]: HostArray[],
  p: KernelParams["attention_backward"],
): void {
  const Q = q!;
  const K = k!;
  const V = v!;
  const O = o!;
  const L = lse!;
  const DO = dout!;
  const DQ = dq!;
  const { batch, heads, kvHeads, tq, tk, d, scale, hasMask } = p;
  const group = heads / kvHeads;
  // dk and dv sum over query rows and grouped heads; float64 accumulators keep f32 storage from
  // rounding after every term.
  const dkAcc = new Float64Array(dk!.length);
  const dvAcc = new Float64Array(dv!.length);
  const dqRow = new Float64Array(d);
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < heads; h++) {
      const kvBase = (b * kvHeads + Math.floor(h / group)) * tk * d;
      for (let i = 0; i < tq; i++) {
        const row = (b * heads + h) * tq + i;
        const qBase = row * d;
        const l = L[row]!;
        dqRow.fill(0);
        if (l !== -Infinity) {
          let D = 0;
          for (let c = 0; c < d; c++) D += DO[qBase + c]! * O[qBase + c]!;
          const n = visibleKeys(p, i);
          for (let j = 0; j < n; j++) {
            if (hasMask && !mask![b * tk + j]) continue;
            const kBase = kvBase + j * d;
            let s = 0;
            let dp = 0;
            for (let c = 0; c < d; c++) {
              s += Q[qBase + c]! * K[kBase + c]!;
              dp += DO[qBase + c]! * V[kBase + c]!;
            }
            const pr = Math.exp(s * scale - l);
            if (pr === 0) continue;
            const ds = pr * (dp - D);
            for (let c = 0; c < d; c++) {
              dqRow[c]! += ds * K[kBase + c]!;
              dkAcc[kBase + c]! += scale * ds * Q[qBase + c]!;
              dvAcc[kBase + c]! += pr * DO[qBase + c]!;
            }
          }
        }
        for (let c = 0; c < d; c++) DQ[qBase + c] = scale * dqRow[c]!;
      }
    }
  }
  dk!.set(dkAcc);
  dv!.set(dvAcc);
}
