/**
 * CPU kernel for one AdamW step over a flat parameter buffer (Loshchilov & Hutter, 2019).
 *
 * Weight decay is decoupled: `p ← p − lr·wd·p` before the Adam update, not folded into the
 * gradient. Bias corrections arrive precomputed so the kernel is stateless.
 *
 * @module
 */

import type { HostArray, KernelParams } from "../types.ts";

/** `adamw`: updates param, m and v in place from grad. */
export function adamw(
  [g]: HostArray[],
  [param, m, v]: HostArray[],
  p: KernelParams["adamw"],
): void {
  const G = g!;
  const P = param!;
  const M = m!;
  const V = v!;
  const { lr, beta1, beta2, eps, weightDecay, bc1, bc2 } = p;
  for (let i = 0; i < P.length; i++) {
    const gi = G[i]!;
    const mi = beta1 * M[i]! + (1 - beta1) * gi;
    const vi = beta2 * V[i]! + (1 - beta2) * gi * gi;
    M[i] = mi;
    V[i] = vi;
    const update = (mi / bc1) / (Math.sqrt(vi / bc2) + eps);
    P[i] = P[i]! - lr * (update + weightDecay * P[i]!);
  }
}
