/**
 * CPU kernel for rotary position embeddings in the "rotate half" layout of Hugging Face Llama and
 * Qwen2: feature i of the first half of the rotated block pairs with feature i + rot/2, not with
 * its neighbour (the GPT-NeoX/Meta interleaved layout would silently scramble pretrained weights).
 *
 * One kernel serves forward and backward: a rotation's transpose is the rotation by the negative
 * angle, so the backward pass is the same loop with `sin` negated (`inverse`). That identity holds
 * for any table values, not only for `cos² + sin² = 1`, so the gradient stays exact even for
 * hand-made tables.
 *
 * @module
 */

import type { HostArray, KernelParams } from "../types.ts";

/** `rope`: rotates the first `rot` features of every `[batch, heads, t]` row of x. */
export function rope([x, cos, sin]: HostArray[], [y]: HostArray[], p: KernelParams["rope"]): void {
  const X = x!;
  const C = cos!;
  const S = sin!;
  const Y = y!;
  const { batch, heads, t, d, rot, tableBatch, inverse } = p;
  const half = rot / 2;
  const sign = inverse ? -1 : 1;
  for (let b = 0; b < batch; b++) {
    const tb = tableBatch === 1 ? 0 : b;
    for (let h = 0; h < heads; h++) {
      for (let i = 0; i < t; i++) {
        const base = ((b * heads + h) * t + i) * d;
        const tab = (tb * t + i) * half;
        for (let j = 0; j < half; j++) {
          const c = C[tab + j]!;
          const s = sign * S[tab + j]!;
          const x1 = X[base + j]!;
          const x2 = X[base + half + j]!;
          Y[base + j] = x1 * c - x2 * s;
          Y[base + half + j] = x2 * c + x1 * s;
        }
        for (let j = rot; j < d; j++) Y[base + j] = X[base + j]!;
      }
    }
  }
}
